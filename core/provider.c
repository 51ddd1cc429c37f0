#include "core/provider.h"

#include <stdint.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"

#define DC_REQUEST_SCHEMA "decision_context_advisory_retrieve_request_v0"
#define DC_RESPONSE_SCHEMA "decision_context_advisory_retrieve_response_v0"
#define SP_REQUEST_SCHEMA "semantic_preference_provider_request_v0"
#define SP_RESPONSE_SCHEMA "semantic_preference_provider_response_v0"
#define SP_GUIDANCE_SCHEMA "semantic_preference_maintenance_guidance_v0"
#define CODEX_THREAD_PREFIX "codex://threads/"
#define HOST_SESSION_PREFIX "host-session:codex:"
#define CODEX_THREAD_ID_MAX 256
#define SURFACE_MAX 128
#define CONTEXT_KEY_MAX 64

/* ---- small shared checks --------------------------------------------------------- */

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_alpha(char c)
{
	return is_lower(c) || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

/* ASCII whitespace: what separates summary words and what a reason_code may not hold. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Case-insensitive (ASCII) "w[0..n) starts with prefix". */
static bool starts_with_ci(const char *w, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	if (n < k)
		return false;
	for (size_t i = 0; i < k; i++) {
		char a = w[i], b = prefix[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

static bool contains(const char *w, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(w + i, needle, k) == 0)
			return true;
	return false;
}

/* out[n] = a[0..alen) + b; on overflow out is "" (when n > 0) and the answer false. */
static bool write_joined(char *out, size_t n, const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	if (alen >= n || blen >= n - alen) {
		if (n > 0)
			out[0] = '\0';
		return false;
	}
	memmove(out, a, alen);
	memcpy(out + alen, b, blen + 1);
	return true;
}

/* A JSON string of min..max bytes. */
static bool str_bytes(const json_t *v, size_t min, size_t max)
{
	if (!json_is_string(v))
		return false;
	size_t n = json_string_length(v);
	return n >= min && n <= max;
}

static bool str_is(const json_t *v, const char *want)
{
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

/* A JSON string from the NULL-terminated set. */
static bool str_in(const json_t *v, const char *const *set)
{
	for (; *set; set++)
		if (str_is(v, *set))
			return true;
	return false;
}

/* What shape_problem says about one level of a document. */
struct shape_whys {
	const char *not_object, *unknown, *missing;
};

/* NULL when o is an object whose members are exactly names[0..n_required) plus any of the
 * rest of names (NULL-terminated); else the matching why. Unknown members are reported
 * before missing ones. */
static const char *shape_problem(const json_t *o, const char *const *names, size_t n_required,
				 const struct shape_whys *whys)
{
	size_t present = 0;
	bool missing = false;
	if (!json_is_object(o))
		return whys->not_object;
	for (size_t i = 0; names[i]; i++) {
		if (json_object_get(o, names[i]))
			present++;
		else if (i < n_required)
			missing = true;
	}
	if (json_object_size(o) > present)
		return whys->unknown;
	return missing ? whys->missing : NULL;
}

/* Inserts s[0..len) into the bytewise-sorted array of strings `arr` unless already there.
 * Arrays here hold at most a few dozen strings (API.md §8 bounds): a linear scan is enough. */
static void insert_sorted_unique(json_t *arr, const char *s, size_t len)
{
	size_t i;
	if (s == NULL)
		return;
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		size_t elen = json_string_length(e);
		int c = memcmp(json_string_value(e), s, elen < len ? elen : len);
		if (c == 0 && elen == len)
			return;
		if (c > 0 || (c == 0 && elen > len))
			break;
	}
	json_array_insert_new(arr, i, json_stringn(s, len));
}

/* ---- registry ------------------------------------------------------------------- */

const char *core_provider_permission(const char *protocol)
{
	if (protocol == NULL)
		return NULL;
	if (strcmp(protocol, RG_PROTO_DC) == 0)
		return RG_PERM_DC;
	if (strcmp(protocol, RG_PROTO_SP) == 0)
		return RG_PERM_SP;
	return NULL;
}

bool core_provider_url_valid(const char *url)
{
	size_t len, skip;
	if (url == NULL || (len = strlen(url)) > RG_PROVIDER_URL_MAX)
		return false;
	if (starts_with_ci(url, len, "http://"))
		skip = 7;
	else if (starts_with_ci(url, len, "https://"))
		skip = 8;
	else
		return false;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '#')
			return false;
	const char *authority = url + skip;
	size_t authority_len = strcspn(authority, "/");
	if (memchr(authority, '@', authority_len) != NULL)
		return false;
	return strcspn(authority, "/?:") > 0;
}

bool core_provider_doctor_url(const char *endpoint_url, const char *doctor_url, char *out,
			      size_t n)
{
	if (doctor_url != NULL)
		return write_joined(out, n, doctor_url, strlen(doctor_url), "");
	size_t len = strlen(endpoint_url);
	if (len > 0 && endpoint_url[len - 1] == '/')
		len--;
	return write_joined(out, n, endpoint_url, len, "/doctor");
}

enum core_resolve core_provider_resolve(const struct core_provider_cand *cands, size_t n,
					const char *protocol, const char *explicit_id,
					size_t *chosen)
{
	size_t found = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct core_provider_cand *c = &cands[i];
		if (strcmp(c->protocol, protocol) != 0)
			continue;
		if (explicit_id != NULL && strcmp(c->extension_id, explicit_id) == 0) {
			if (!c->enabled)
				return CORE_RESOLVE_DISABLED;
			if (!c->ready)
				return CORE_RESOLVE_NOT_READY;
			found = i;
			count = 1;
			break; /* extension ids are unique in a tenant */
		}
		if (explicit_id == NULL && c->enabled && c->ready && count++ == 0)
			found = i;
	}
	if (count == 0)
		return CORE_RESOLVE_MISSING;
	if (count > 1)
		return CORE_RESOLVE_AMBIGUOUS;
	if (chosen)
		*chosen = found;
	return CORE_RESOLVE_OK;
}

const char *core_resolve_reason(enum core_resolve r)
{
	switch (r) {
	case CORE_RESOLVE_OK:
		return NULL;
	case CORE_RESOLVE_MISSING:
		return "provider_missing";
	case CORE_RESOLVE_AMBIGUOUS:
		return "provider_ambiguous";
	case CORE_RESOLVE_DISABLED:
		return "provider_disabled";
	case CORE_RESOLVE_NOT_READY:
		return "provider_not_ready";
	}
	return NULL;
}

/* ---- doctor ---------------------------------------------------------------------- */

enum core_doctor core_doctor_check(const json_t *answer, const char *protocol)
{
	const json_t *proto = json_object_get(answer, "protocol");
	if (!json_is_object(answer) || !json_is_true(json_object_get(answer, "ok")) ||
	    !json_is_string(proto))
		return CORE_DOCTOR_INVALID;
	return protocol && str_is(proto, protocol) ? CORE_DOCTOR_OK : CORE_DOCTOR_MISMATCH;
}

/* ---- decision context (§7) ------------------------------------------------------- */

static bool word_is_url(const char *w, size_t n)
{
	return contains(w, n, "://") || starts_with_ci(w, n, "www.") ||
	       starts_with_ci(w, n, "mailto:") || starts_with_ci(w, n, "file:");
}

/* x@y.z: an '@' past the word's first byte, then a '.' with bytes on both sides (the first
 * such '@' leaves the most room for the '.'). */
static bool word_is_email(const char *w, size_t n)
{
	const char *at = n > 1 ? memchr(w + 1, '@', n - 1) : NULL;
	if (at == NULL)
		return false;
	for (size_t j = (size_t)(at - w) + 2; j + 1 < n; j++)
		if (w[j] == '.')
			return true;
	return false;
}

/* The last '/'-segment ends in '.' + 1..8 ASCII letters or digits ("src/main.c"). */
static bool last_segment_has_extension(const char *w, size_t n)
{
	size_t ext = 0;
	while (ext < n && is_alnum(w[n - 1 - ext]))
		ext++;
	return ext >= 1 && ext <= 8 && ext < n && w[n - 1 - ext] == '.';
}

static bool word_is_path(const char *w, size_t n)
{
	if (n >= 2 && w[0] == '/' && w[1] != '/') /* a word holds no space */
		return true;
	if (starts_with_ci(w, n, "~/") || starts_with_ci(w, n, "./") ||
	    starts_with_ci(w, n, "../"))
		return true;
	if (n >= 3 && is_alpha(w[0]) && w[1] == ':' && (w[2] == '\\' || w[2] == '/'))
		return true;
	if (memchr(w, '\\', n) != NULL)
		return true;
	return memchr(w, '/', n) != NULL && last_segment_has_extension(w, n);
}

bool core_dc_summary_public_safe(const char *s)
{
	static const char lead[] = "\"'`([{<", trail[] = "\"'`>}]).,;:!?";
	if (s == NULL)
		return false;
	for (const char *p = s; *p;) {
		while (is_space(*p))
			p++;
		const char *end = p;
		while (*end && !is_space(*end))
			end++;
		const char *b = p, *e = end;
		p = end;
		while (b < e && in_set(*b, lead))
			b++;
		while (e > b && in_set(e[-1], trail))
			e--;
		size_t n = (size_t)(e - b);
		if (n > 0 && (word_is_url(b, n) || word_is_email(b, n) || word_is_path(b, n)))
			return false;
	}
	return true;
}

static bool codex_thread_id_valid(const char *id)
{
	size_t n = 0;
	for (; id[n]; n++)
		if (n >= CODEX_THREAD_ID_MAX ||
		    !(is_alnum(id[n]) || id[n] == '.' || id[n] == '_' || id[n] == ':' || id[n] == '-'))
			return false;
	return n > 0;
}

bool core_dc_scope_normalise(const char *scope_ref, char *out, size_t n)
{
	size_t k = strlen(CODEX_THREAD_PREFIX);
	if (strncmp(scope_ref, CODEX_THREAD_PREFIX, k) == 0 && codex_thread_id_valid(scope_ref + k))
		return write_joined(out, n, HOST_SESSION_PREFIX, strlen(HOST_SESSION_PREFIX),
				    scope_ref + k);
	return write_joined(out, n, scope_ref, strlen(scope_ref), "");
}

void core_dc_provider_ref(const char *extension_id, const char *namespace_,
			  const char *resource_ref, char out[RG_PROVIDER_REF_SIZE])
{
	char buf[RG_MAX_ID_BYTES + 1 + RG_DC_NAMESPACE_MAX + 1 + RG_DC_RESOURCE_REF_MAX];
	char hex[RG_SHA256_HEX_LEN + 1];
	size_t a = strlen(extension_id), b = strlen(namespace_), c = strlen(resource_ref);
	out[0] = '\0';
	if (a > RG_MAX_ID_BYTES || b > RG_DC_NAMESPACE_MAX || c > RG_DC_RESOURCE_REF_MAX)
		return;
	memcpy(buf, extension_id, a);
	buf[a] = '\n';
	memcpy(buf + a + 1, namespace_, b);
	buf[a + 1 + b] = '\n';
	memcpy(buf + a + 1 + b + 1, resource_ref, c);
	core_sha256_hex(buf, a + b + c + 2, hex);
	memcpy(out, "provider-", 9);
	memcpy(out + 9, hex, 20);
	out[29] = '\0';
}

double core_dc_deadline_seconds(double request_timeout, int provider_timeout)
{
	double p = (double)provider_timeout;
	return request_timeout < p ? request_timeout : p;
}

/* timeout_seconds as the seed writes it: 30, not 30.0; 2.5 stays a real. */
static json_t *number_value(double v)
{
	if (v >= -9007199254740992.0 && v <= 9007199254740992.0 && (double)(json_int_t)v == v)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *core_dc_request(const char *namespace_, const char *scope_ref, const char *query,
			const char *query_summary, int max_results, double timeout_seconds,
			const char *observed_at)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:o, s:s}", "schema_version",
			 DC_REQUEST_SCHEMA, "operation", "retrieve", "namespace", namespace_,
			 "scope_ref", scope_ref, "query", query, "query_summary", query_summary,
			 "max_results", max_results, "timeout_seconds", number_value(timeout_seconds),
			 "observed_at", observed_at);
}

static const char *dc_item_problem(const json_t *item)
{
	static const char *const members[] = {"resource_ref", "summary", "content", "score", NULL};
	static const struct shape_whys whys = {"an item is not an object",
					       "an item has an unknown member",
					       "an item lacks a member"};
	const char *why = shape_problem(item, members, 4, &whys);
	const json_t *score = json_object_get(item, "score");
	if (why)
		return why;
	if (!str_bytes(json_object_get(item, "resource_ref"), 1, RG_DC_RESOURCE_REF_MAX))
		return "an item's resource_ref is not a string of 1..512 bytes";
	if (!str_bytes(json_object_get(item, "summary"), 1, RG_DC_SUMMARY_MAX))
		return "an item's summary is not a string of 1..220 bytes";
	if (!str_bytes(json_object_get(item, "content"), 1, RG_DC_CONTENT_MAX))
		return "an item's content is not a string of 1..16000 bytes";
	/* jansson holds no NaN or infinity: its parser and json_real refuse them. */
	if (!json_is_number(score) && !json_is_null(score))
		return "an item's score is not a number or null";
	return NULL;
}

static bool has_space(const char *s)
{
	for (; *s; s++)
		if (is_space(*s))
			return true;
	return false;
}

/* NULL when resp is a valid response; else the rule it breaks. */
static const char *dc_response_problem(const json_t *resp, int max_results)
{
	static const char *const members[] = {"schema_version", "ok", "status", "reason_code",
					      "items", NULL};
	static const struct shape_whys whys = {"the response is not an object",
					       "the response has an unknown member",
					       "the response lacks a member"};
	if (resp == NULL)
		return "the response is not JSON";
	const char *why = shape_problem(resp, members, 5, &whys);
	const json_t *status = json_object_get(resp, "status");
	const json_t *reason = json_object_get(resp, "reason_code");
	const json_t *items = json_object_get(resp, "items");
	size_t i;
	json_t *item;
	if (why)
		return why;
	if (!str_is(json_object_get(resp, "schema_version"), DC_RESPONSE_SCHEMA))
		return "schema_version is not " DC_RESPONSE_SCHEMA;
	if (!json_is_true(json_object_get(resp, "ok")))
		return "ok is not true";
	if (!json_is_array(items))
		return "items is not an array";
	if (str_is(status, "completed")) {
		if (!json_is_null(reason))
			return "status completed with a reason_code that is not null";
		if (json_array_size(items) > (size_t)(max_results < 0 ? 0 : max_results))
			return "more items than max_results";
		json_array_foreach(items, i, item)
			if ((why = dc_item_problem(item)) != NULL)
				return why;
		return NULL;
	}
	if (str_is(status, "unavailable")) {
		if (json_is_null(reason))
			return "status unavailable with a null reason_code";
		if (!str_bytes(reason, 1, RG_DC_REASON_MAX))
			return "reason_code is not a string of 1..120 bytes";
		if (has_space(json_string_value(reason)))
			return "reason_code contains whitespace";
		if (json_array_size(items) != 0)
			return "status unavailable with items";
		return NULL;
	}
	return "status is neither completed nor unavailable";
}

enum core_dc_verdict core_dc_validate_response(const json_t *resp, int max_results,
					       const char **reason_code, const char **why)
{
	const char *problem = dc_response_problem(resp, max_results);
	enum core_dc_verdict v = CORE_DC_INVALID;
	if (problem == NULL)
		v = str_is(json_object_get(resp, "status"), "completed") ? CORE_DC_COMPLETED
									: CORE_DC_UNAVAILABLE;
	if (reason_code)
		*reason_code = v == CORE_DC_UNAVAILABLE
				       ? json_string_value(json_object_get(resp, "reason_code"))
				       : NULL;
	if (why)
		*why = problem;
	return v;
}

/* ---- semantic preferences (§8) --------------------------------------------------- */

/* [a-z][a-z0-9_-]* over s[0..n) */
static bool sp_word(const char *s, size_t n)
{
	if (n == 0 || !is_lower(s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(is_lower(s[i]) || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

bool core_sp_surface_valid(const char *s)
{
	if (s == NULL || strlen(s) > SURFACE_MAX)
		return false;
	size_t words = 0;
	for (const char *p = s;; p++) {
		size_t n = strcspn(p, ".");
		if (!sp_word(p, n))
			return false;
		words++;
		p += n;
		if (*p == '\0')
			break;
	}
	return words >= 2;
}

bool core_sp_context_key_valid(const char *s)
{
	return s != NULL && strlen(s) <= CONTEXT_KEY_MAX && sp_word(s, strlen(s));
}

json_t *core_sp_request(const char *surface, const char *query, int limit,
			const json_t *context)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:o}", "schema_version", SP_REQUEST_SCHEMA,
			 "surface", surface, "query", query, "limit", limit, "context",
			 context ? json_deep_copy(context) : json_object());
}

const char *core_sp_failure_name(enum core_sp_failure f)
{
	switch (f) {
	case CORE_SP_OK:
		return NULL;
	case CORE_SP_INVALID_RESPONSE:
		return "invalid_response";
	case CORE_SP_ITEM_TOO_LARGE:
		return "item_too_large";
	case CORE_SP_INVALID_CORPUS_INVENTORY:
		return "invalid_corpus_inventory";
	}
	return NULL;
}

static const char *const read_roles[] = {"primary", "fallback", "reference", NULL};
static const char *const write_modes[] = {"read_only", "provider_managed", NULL};
static const char *const writeback_triggers[] = {"explicit_feedback", "source_truth_changed",
						 NULL};
static const char *const closure_policies[] = {"none", "write_wait_l2_read_scoped_recall", NULL};

static const char *inventory_entry_problem(const json_t *e)
{
	static const char *const members[] = {"corpus_id", "scope_ref", "read_role", "write_mode",
					      "source_of_truth", "writeback_triggers",
					      "closure_policy", "write_actor_ref", NULL};
	static const struct shape_whys whys = {"an inventory entry is not an object",
					       "an inventory entry has an unknown member",
					       "an inventory entry lacks a member"};
	const char *why = shape_problem(e, members, 7, &whys);
	const json_t *actor = json_object_get(e, "write_actor_ref");
	const json_t *triggers = json_object_get(e, "writeback_triggers");
	size_t i;
	json_t *t;
	if (why)
		return why;
	if (!core_id_valid(json_string_value(json_object_get(e, "corpus_id"))))
		return "corpus_id is not an id";
	if (!str_bytes(json_object_get(e, "scope_ref"), 1, RG_SP_TEXT_MAX))
		return "scope_ref is not a string of 1..512 bytes";
	if (!str_in(json_object_get(e, "read_role"), read_roles))
		return "read_role is not primary, fallback or reference";
	if (!str_in(json_object_get(e, "write_mode"), write_modes))
		return "write_mode is not read_only or provider_managed";
	if (actor && !json_is_null(actor) && !str_bytes(actor, 1, RG_SP_TEXT_MAX))
		return "write_actor_ref is not null or a string of 1..512 bytes";
	if (!str_bytes(json_object_get(e, "source_of_truth"), 1, RG_SP_TEXT_MAX))
		return "source_of_truth is not a string of 1..512 bytes";
	if (!json_is_array(triggers))
		return "writeback_triggers is not an array";
	json_array_foreach(triggers, i, t) {
		if (!str_in(t, writeback_triggers))
			return "a writeback trigger is not explicit_feedback or source_truth_changed";
		for (size_t j = 0; j < i; j++)
			if (json_equal(t, json_array_get(triggers, j)))
				return "writeback_triggers repeats a trigger";
	}
	if (!str_in(json_object_get(e, "closure_policy"), closure_policies))
		return "closure_policy is not none or write_wait_l2_read_scoped_recall";
	return NULL;
}

static const char *inventory_problem(const json_t *inv)
{
	size_t i;
	json_t *e;
	const char *why;
	if (!json_is_array(inv))
		return "corpus_inventory is not an array";
	if (json_array_size(inv) > RG_SP_INVENTORY_MAX)
		return "corpus_inventory has more than 20 entries";
	json_array_foreach(inv, i, e)
		if ((why = inventory_entry_problem(e)) != NULL)
			return why;
	return NULL;
}

/* The response's verdict; the precedence is invalid_response, then item_too_large, then
 * invalid_corpus_inventory, wherever in the response each fault lies. */
static enum core_sp_failure sp_response_problem(const json_t *resp, const char **why)
{
	static const char *const members[] = {"schema_version", "items", "corpus_inventory", NULL};
	static const char *const item_members[] = {"preference_ref", "summary", NULL};
	static const struct shape_whys whys = {"the response is not an object",
					       "the response has an unknown member",
					       "the response lacks a member"};
	static const struct shape_whys item_whys = {"an item is not an object",
						    "an item has an unknown member",
						    "an item lacks a member"};
	const json_t *items = json_object_get(resp, "items");
	const json_t *inv = json_object_get(resp, "corpus_inventory");
	const char *too_large = NULL;
	size_t i;
	json_t *item;
	if ((*why = shape_problem(resp, members, 2, &whys)) != NULL)
		return CORE_SP_INVALID_RESPONSE;
	if (!str_is(json_object_get(resp, "schema_version"), SP_RESPONSE_SCHEMA))
		*why = "schema_version is not " SP_RESPONSE_SCHEMA;
	else if (!json_is_array(items))
		*why = "items is not an array";
	else if (json_array_size(items) > RG_SP_ITEMS_MAX)
		*why = "more than 100 items";
	if (*why)
		return CORE_SP_INVALID_RESPONSE;
	json_array_foreach(items, i, item) {
		const json_t *ref = json_object_get(item, "preference_ref");
		const json_t *summary = json_object_get(item, "summary");
		if ((*why = shape_problem(item, item_members, 2, &item_whys)) != NULL)
			return CORE_SP_INVALID_RESPONSE;
		if (!str_bytes(ref, 1, SIZE_MAX) || !str_bytes(summary, 1, SIZE_MAX)) {
			*why = "an item's preference_ref or summary is not a non-empty string";
			return CORE_SP_INVALID_RESPONSE;
		}
		if (too_large == NULL && json_string_length(ref) > RG_SP_PREF_REF_MAX)
			too_large = "an item's preference_ref is over 512 bytes";
		if (too_large == NULL && json_string_length(summary) > RG_SP_SUMMARY_MAX)
			too_large = "an item's summary is over 2000 bytes";
	}
	if ((*why = too_large) != NULL)
		return CORE_SP_ITEM_TOO_LARGE;
	if (inv && (*why = inventory_problem(inv)) != NULL)
		return CORE_SP_INVALID_CORPUS_INVENTORY;
	return CORE_SP_OK;
}

enum core_sp_failure core_sp_validate_response(const json_t *resp, int limit,
					       json_t **items_out, bool *truncated,
					       const char **why)
{
	const char *problem = NULL;
	enum core_sp_failure f = sp_response_problem(resp, &problem);
	const json_t *items = json_object_get(resp, "items");
	size_t keep = limit < 0 ? 0 : (size_t)limit;
	if (items_out)
		*items_out = NULL;
	if (truncated)
		*truncated = f == CORE_SP_OK && json_array_size(items) > keep;
	if (why)
		*why = problem;
	if (f != CORE_SP_OK || items_out == NULL)
		return f;
	*items_out = json_array();
	for (size_t i = 0; i < json_array_size(items) && i < keep; i++)
		json_array_append_new(*items_out, json_deep_copy(json_array_get(items, i)));
	return f;
}

json_t *core_sp_guidance(const json_t *inventory)
{
	json_t *ids = json_array(), *triggers = json_array(), *policies = json_array();
	size_t i, k;
	json_t *e, *t;
	json_array_foreach(inventory, i, e) {
		const json_t *id = json_object_get(e, "corpus_id");
		const json_t *policy = json_object_get(e, "closure_policy");
		if (!str_is(json_object_get(e, "write_mode"), "provider_managed"))
			continue;
		insert_sorted_unique(ids, json_string_value(id), json_string_length(id));
		json_array_foreach(json_object_get(e, "writeback_triggers"), k, t)
			insert_sorted_unique(triggers, json_string_value(t), json_string_length(t));
		insert_sorted_unique(policies, json_string_value(policy), json_string_length(policy));
	}
	if (json_array_size(ids) == 0) {
		json_decref(ids);
		json_decref(triggers);
		json_decref(policies);
		return json_null();
	}
	return json_pack("{s:s, s:o, s:o, s:o, s:[ss]}", "schema_version", SP_GUIDANCE_SCHEMA,
			 "corpus_ids", ids, "writeback_triggers", triggers, "closure_policies",
			 policies, "closure_outcomes", "verified", "no_write_rationale");
}

void core_digest16(const char *ref, char out[RG_DIGEST16_SIZE])
{
	char hex[RG_SHA256_HEX_LEN + 1];
	core_sha256_hex(ref, strlen(ref), hex);
	memcpy(out, hex, RG_DIGEST16_SIZE - 1);
	out[RG_DIGEST16_SIZE - 1] = '\0';
}

json_t *core_sp_digests(const json_t *refs)
{
	json_t *out = json_array(), *r;
	size_t i;
	json_array_foreach(refs, i, r) {
		char d[RG_DIGEST16_SIZE];
		if (!json_is_string(r))
			continue;
		core_digest16(json_string_value(r), d);
		insert_sorted_unique(out, d, RG_DIGEST16_SIZE - 1);
	}
	return out;
}

json_t *core_sorted_unique(const json_t *strings)
{
	json_t *out = json_array(), *s;
	size_t i;
	json_array_foreach(strings, i, s)
		if (json_is_string(s))
			insert_sorted_unique(out, json_string_value(s), json_string_length(s));
	return out;
}
