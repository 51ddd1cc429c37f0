/* The decision-context contract (openapi/openapi.yaml "Decision context"): summaries safe to
 * show, scope normalisation, provider_ref, the request and the validation of the response. */
#include "core/provider.h"

#include <stdint.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/provider_internal.h"

#define DC_REQUEST_SCHEMA "decision_context_advisory_retrieve_request_v0"
#define DC_RESPONSE_SCHEMA "decision_context_advisory_retrieve_response_v0"
#define CODEX_THREAD_PREFIX "codex://threads/"
#define HOST_SESSION_PREFIX "host-session:codex:"
#define CODEX_THREAD_ID_MAX 256

static bool word_is_url(const char *w, size_t n)
{
	return pv_contains(w, n, "://") || pv_starts_with_ci(w, n, "www.") ||
	       pv_starts_with_ci(w, n, "mailto:") || pv_starts_with_ci(w, n, "file:");
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
	while (ext < n && pv_is_alnum(w[n - 1 - ext]))
		ext++;
	return ext >= 1 && ext <= 8 && ext < n && w[n - 1 - ext] == '.';
}

static bool word_is_path(const char *w, size_t n)
{
	if (n >= 2 && w[0] == '/' && w[1] != '/') /* a word holds no space */
		return true;
	if (pv_starts_with_ci(w, n, "~/") || pv_starts_with_ci(w, n, "./") ||
	    pv_starts_with_ci(w, n, "../"))
		return true;
	if (n >= 3 && pv_is_alpha(w[0]) && w[1] == ':' && (w[2] == '\\' || w[2] == '/'))
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
		while (pv_is_space(*p))
			p++;
		const char *end = p;
		while (*end && !pv_is_space(*end))
			end++;
		const char *b = p, *e = end;
		p = end;
		while (b < e && pv_in_set(*b, lead))
			b++;
		while (e > b && pv_in_set(e[-1], trail))
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
		    !(pv_is_alnum(id[n]) || id[n] == '.' || id[n] == '_' || id[n] == ':' ||
		      id[n] == '-'))
			return false;
	return n > 0;
}

bool core_dc_scope_normalise(const char *scope_ref, char *out, size_t n)
{
	size_t k = strlen(CODEX_THREAD_PREFIX);
	if (strncmp(scope_ref, CODEX_THREAD_PREFIX, k) == 0 && codex_thread_id_valid(scope_ref + k))
		return pv_write_joined(out, n, HOST_SESSION_PREFIX, strlen(HOST_SESSION_PREFIX),
				       scope_ref + k);
	return pv_write_joined(out, n, scope_ref, strlen(scope_ref), "");
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
	static const struct pv_shape_whys whys = {"an item is not an object",
						  "an item has an unknown member",
						  "an item lacks a member"};
	const char *why = pv_shape_problem(item, members, 4, &whys);
	const json_t *score = json_object_get(item, "score");
	if (why)
		return why;
	if (!pv_str_bytes(json_object_get(item, "resource_ref"), 1, RG_DC_RESOURCE_REF_MAX))
		return "an item's resource_ref is not a string of 1..512 bytes";
	if (!pv_str_bytes(json_object_get(item, "summary"), 1, RG_DC_SUMMARY_MAX))
		return "an item's summary is not a string of 1..220 bytes";
	if (!pv_str_bytes(json_object_get(item, "content"), 1, RG_DC_CONTENT_MAX))
		return "an item's content is not a string of 1..16000 bytes";
	/* jansson holds no NaN or infinity: its parser and json_real refuse them. */
	if (!json_is_number(score) && !json_is_null(score))
		return "an item's score is not a number or null";
	return NULL;
}

static bool has_space(const char *s)
{
	for (; *s; s++)
		if (pv_is_space(*s))
			return true;
	return false;
}

/* NULL when resp is a valid response; else the rule it breaks. */
static const char *dc_response_problem(const json_t *resp, int max_results)
{
	static const char *const members[] = {"schema_version", "ok", "status", "reason_code",
					      "items", NULL};
	static const struct pv_shape_whys whys = {"the response is not an object",
						  "the response has an unknown member",
						  "the response lacks a member"};
	if (resp == NULL)
		return "the response is not JSON";
	const char *why = pv_shape_problem(resp, members, 5, &whys);
	const json_t *status = json_object_get(resp, "status");
	const json_t *reason = json_object_get(resp, "reason_code");
	const json_t *items = json_object_get(resp, "items");
	size_t i;
	json_t *item;
	if (why)
		return why;
	if (!pv_str_is(json_object_get(resp, "schema_version"), DC_RESPONSE_SCHEMA))
		return "schema_version is not " DC_RESPONSE_SCHEMA;
	if (!json_is_true(json_object_get(resp, "ok")))
		return "ok is not true";
	if (!json_is_array(items))
		return "items is not an array";
	if (pv_str_is(status, "completed")) {
		if (!json_is_null(reason))
			return "status completed with a reason_code that is not null";
		if (json_array_size(items) > (size_t)(max_results < 0 ? 0 : max_results))
			return "more items than max_results";
		json_array_foreach(items, i, item)
			if ((why = dc_item_problem(item)) != NULL)
				return why;
		return NULL;
	}
	if (pv_str_is(status, "unavailable")) {
		if (json_is_null(reason))
			return "status unavailable with a null reason_code";
		if (!pv_str_bytes(reason, 1, RG_DC_REASON_MAX))
			return "reason_code is not a string of 1..120 bytes";
		if (has_space(json_string_value(reason)))
			return "reason_code pv_contains whitespace";
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
		v = pv_str_is(json_object_get(resp, "status"), "completed") ? CORE_DC_COMPLETED
									: CORE_DC_UNAVAILABLE;
	if (reason_code)
		*reason_code = v == CORE_DC_UNAVAILABLE
				       ? json_string_value(json_object_get(resp, "reason_code"))
				       : NULL;
	if (why)
		*why = problem;
	return v;
}
