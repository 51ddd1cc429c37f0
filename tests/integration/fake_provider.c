/*
 * fake_provider — a provider for the integration tests (docs/providers-contract.md, "Fake
 * provider"). Listens on 127.0.0.1 at a kernel-chosen port, prints "PORT <n>" on stdout and
 * serves until SIGTERM (or SIGINT), one thread per connection so that slow calls do not
 * hold each other up.
 *
 *   POST /dc/<mode>         a decision_context_advisory_retrieve_response_v0, good or broken
 *   POST /sp/<mode>         a semantic_preference_provider_response_v0, good or broken
 *   GET  /dc|sp/<mode>/doctor   the doctor answer ({"ok": true, "protocol": ...} or broken)
 *   GET  /_last/<dc|sp>/<mode>  {"body", "traceparent", "content_type", "count"} of the last
 *                               POST to that mode; 404 before any
 *
 * FAKE_SLOW_MS (default 3000) is how long the slow modes sleep. Every item content carries
 * the marker FAKE-CONTENT-7f3a and every resource ref is fake-private-ref-<n>, so that the
 * tests can look for them where they must not appear.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>

#define PROTO_DC "decision_context_advisory_provider_v0"
#define PROTO_SP "semantic_preference_provider_v0"
#define DC_RESPONSE "decision_context_advisory_retrieve_response_v0"
#define SP_RESPONSE "semantic_preference_provider_response_v0"
#define CONTENT_MARKER "FAKE-CONTENT-7f3a"

#define FAKE_BODY_MAX (4u << 20) /* a larger request body is answered 413 */
#define FAKE_OVERSIZE (2u << 20) /* the oversize modes answer this many bytes and more */
#define FAKE_RECORDS 128         /* distinct (prefix, mode) pairs remembered */
#define FAKE_MODE_MAX 64
#define FAKE_SLOW_DEFAULT_MS 3000L
#define FAKE_SP_MANY 25
#define FAKE_SP_ITEM_TOO_LARGE 2001 /* RG_SP_SUMMARY_MAX + 1 */

static atomic_bool stopping;
static long slow_ms = FAKE_SLOW_DEFAULT_MS;

/* ---------------------------------------------------------------- modes */

static const char *const dc_modes[] = {
    "good",
    "full",
    "unavailable",
    "unknown_field",
    "missing_field",
    "string_score",
    "nan_score",
    "inf_score",
    "big_score",
    "items_on_unavailable",
    "status_mismatch",
    "too_many",
    "ok_false",
    "slow",
    "http500",
    "http500_oversize",
    "oversize",
    "not_json",
    "redirect",
    "doctor_fail",
    "doctor_bad",
    "doctor_mismatch",
    "doctor_slow",
    NULL,
};

static const char *const sp_modes[] = {
    "good",
    "no_inventory",
    "read_only",
    "many",
    "unknown_field",
    "item_too_large",
    "bad_inventory",
    "http500",
    "slow",
    "oversize",
    "not_json",
    "redirect",
    "doctor_fail",
    "doctor_bad",
    "doctor_mismatch",
    "doctor_slow",
    NULL,
};

static bool mode_known(const char *const *modes, const char *mode)
{
	for (size_t i = 0; modes[i]; i++) {
		if (strcmp(modes[i], mode) == 0)
			return true;
	}
	return false;
}

/* sleeps FAKE_SLOW_MS in short slices, returning early when the process is stopping */
static void slow_down(void)
{
	for (long left = slow_ms; left > 0 && !atomic_load(&stopping); left -= 50) {
		long step = left < 50 ? left : 50;
		struct timespec ts = {0, step * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		}
	}
}

/* ---------------------------------------------------------------- the last POST per mode */

struct record {
	char key[8 + FAKE_MODE_MAX]; /* "dc/<mode>" */
	char *body;
	size_t body_len;
	char *traceparent;  /* NULL: not sent */
	char *content_type; /* NULL: not sent */
	long count;
};

static struct record records[FAKE_RECORDS];
static size_t nrecords;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void record_post(const char *key, const char *body, size_t len, const char *traceparent,
			const char *content_type)
{
	pthread_mutex_lock(&records_lock);
	struct record *r = NULL;
	for (size_t i = 0; i < nrecords && !r; i++) {
		if (strcmp(records[i].key, key) == 0)
			r = &records[i];
	}
	if (!r && nrecords < FAKE_RECORDS) {
		r = &records[nrecords++];
		snprintf(r->key, sizeof r->key, "%s", key);
	}
	if (r) {
		free(r->body);
		free(r->traceparent);
		free(r->content_type);
		r->body = malloc(len + 1);
		if (r->body) {
			memcpy(r->body, body, len);
			r->body[len] = '\0';
		}
		r->body_len = r->body ? len : 0;
		r->traceparent = dup_or_null(traceparent);
		r->content_type = dup_or_null(content_type);
		r->count++;
	}
	pthread_mutex_unlock(&records_lock);
}

/* new: the /_last answer for key, or NULL before any POST */
static json_t *record_json(const char *key)
{
	json_t *out = NULL;
	pthread_mutex_lock(&records_lock);
	for (size_t i = 0; i < nrecords; i++) {
		const struct record *r = &records[i];
		if (strcmp(r->key, key) != 0)
			continue;
		/* a body that is not UTF-8 (or holds a NUL) cannot be a JSON string: null */
		json_t *body = r->body ? json_stringn(r->body, r->body_len) : NULL;
		out = json_pack(
		    "{s:o, s:o, s:o, s:I}", "body", body ? body : json_null(), "traceparent",
		    r->traceparent ? json_string(r->traceparent) : json_null(), "content_type",
		    r->content_type ? json_string(r->content_type) : json_null(), "count",
		    (json_int_t)r->count);
		break;
	}
	pthread_mutex_unlock(&records_lock);
	return out;
}

static void records_free(void)
{
	for (size_t i = 0; i < nrecords; i++) {
		free(records[i].body);
		free(records[i].traceparent);
		free(records[i].content_type);
	}
	nrecords = 0;
}

/* ---------------------------------------------------------------- replies */

/* body: copied */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     size_t len, const char *location)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (location)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, location);
	enum MHD_Result rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, text, strlen(text), NULL);
}

/* j: steals */
static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return reply_text(c, 500, "{\"error\":\"fake: cannot build the answer\"}");
	enum MHD_Result rc = reply_text(c, status, text);
	free(text);
	return rc;
}

/* j (steals) with the first string member "__RAW__" replaced by the literal raw: for
 * answers that JSON cannot express (NaN, 1e999) */
static enum MHD_Result reply_json_raw(struct MHD_Connection *c, json_t *j, const char *raw)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	const char *at = text ? strstr(text, "\"__RAW__\"") : NULL;
	if (!at) {
		free(text);
		return reply_text(c, 500, "{\"error\":\"fake: cannot build the answer\"}");
	}
	size_t head = (size_t)(at - text), tail = strlen(at + 9), rl = strlen(raw);
	char *out = malloc(head + rl + tail + 1);
	enum MHD_Result rc = MHD_NO;
	if (out) {
		memcpy(out, text, head);
		memcpy(out + head, raw, rl);
		memcpy(out + head + rl, at + 9, tail + 1);
		rc = reply_text(c, 200, out);
	}
	free(out);
	free(text);
	return rc;
}

/* a JSON object of at least FAKE_OVERSIZE bytes (valid JSON: the size alone is wrong) */
static enum MHD_Result reply_oversize(struct MHD_Connection *c, const char *schema)
{
	size_t n = FAKE_OVERSIZE + 1024;
	char *pad = malloc(n + 1);
	if (!pad)
		return MHD_NO;
	memset(pad, 'x', n);
	pad[n] = '\0';
	json_t *j = json_pack("{s:s, s:s}", "schema_version", schema, "padding", pad);
	free(pad);
	return reply_json(c, 200, j);
}

/* ---------------------------------------------------------------- decision context */

/* new: item n (1-based); odd items score 0.5, even ones null */
static json_t *dc_item(int n)
{
	char ref[48], summary[64], content[96];
	snprintf(ref, sizeof ref, "fake-private-ref-%d", n);
	snprintf(summary, sizeof summary, "Generic advisory summary %d", n);
	snprintf(content, sizeof content, "%s transient exact content %d", CONTENT_MARKER, n);
	return json_pack("{s:s, s:s, s:s, s:o}", "resource_ref", ref, "summary", summary, "content",
			 content, "score", n % 2 ? json_real(0.5) : json_null());
}

static json_t *dc_items(int n)
{
	json_t *a = json_array();
	for (int i = 1; i <= n; i++)
		json_array_append_new(a, dc_item(i));
	return a;
}

static json_t *dc_completed(int nitems)
{
	return json_pack("{s:s, s:b, s:s, s:n, s:o}", "schema_version", DC_RESPONSE, "ok", 1,
			 "status", "completed", "reason_code", "items", dc_items(nitems));
}

static json_t *dc_unavailable(int nitems)
{
	return json_pack("{s:s, s:b, s:s, s:s, s:o}", "schema_version", DC_RESPONSE, "ok", 1,
			 "status", "unavailable", "reason_code", "index_offline", "items",
			 dc_items(nitems));
}

/* max_results of the request body, 8 when absent or not an integer; at most 64 */
static int dc_max_results(const char *body, size_t len)
{
	json_t *req = json_loadb(body, len, 0, NULL);
	json_t *v = json_object_get(req, "max_results");
	json_int_t n = json_is_integer(v) ? json_integer_value(v) : 8;
	json_decref(req);
	return n < 0 ? 0 : n > 64 ? 64 : (int)n;
}

static enum MHD_Result dc_answer(struct MHD_Connection *c, const char *mode, const char *body,
				 size_t len)
{
	json_t *j;
	if (strcmp(mode, "full") == 0)
		return reply_json(c, 200, dc_completed(dc_max_results(body, len)));
	if (strcmp(mode, "too_many") == 0)
		return reply_json(c, 200, dc_completed(dc_max_results(body, len) + 1));
	if (strcmp(mode, "unavailable") == 0)
		return reply_json(c, 200, dc_unavailable(0));
	if (strcmp(mode, "items_on_unavailable") == 0)
		return reply_json(c, 200, dc_unavailable(2));
	if (strcmp(mode, "unknown_field") == 0) {
		j = dc_completed(2);
		json_object_set_new(j, "debug", json_string("extra member"));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "missing_field") == 0) {
		j = dc_completed(2);
		json_object_del(j, "reason_code");
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "string_score") == 0) {
		j = dc_completed(2);
		json_object_set_new(json_array_get(json_object_get(j, "items"), 0), "score",
				    json_string("0.5"));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "nan_score") == 0 || strcmp(mode, "inf_score") == 0) {
		j = dc_completed(2);
		json_object_set_new(json_array_get(json_object_get(j, "items"), 0), "score",
				    json_string("__RAW__"));
		return reply_json_raw(c, j, mode[0] == 'n' ? "NaN" : "1e999");
	}
	if (strcmp(mode, "big_score") == 0) { /* finite, but past what an integer can hold */
		j = dc_completed(2);
		json_object_set_new(json_array_get(json_object_get(j, "items"), 0), "score",
				    json_string("__RAW__"));
		return reply_json_raw(c, j, "1e20");
	}
	if (strcmp(mode, "status_mismatch") == 0) {
		j = dc_completed(2);
		json_object_set_new(j, "reason_code", json_string("index_offline"));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "ok_false") == 0) {
		j = dc_completed(2);
		json_object_set_new(j, "ok", json_false());
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "http500") == 0)
		return reply_text(c, 500, "{\"error\":\"fake provider failure\"}");
	if (strcmp(mode, "oversize") == 0)
		return reply_oversize(c, DC_RESPONSE);
	if (strcmp(mode, "http500_oversize") == 0) { /* a non-2xx answer past the cap */
		size_t n = FAKE_OVERSIZE + 1024;
		char *big = malloc(n);
		if (!big)
			return MHD_NO;
		memset(big, 'x', n);
		enum MHD_Result rc = reply(c, 500, big, n, NULL);
		free(big);
		return rc;
	}
	if (strcmp(mode, "not_json") == 0)
		return reply_text(c, 200, "<html>fake: this is not JSON</html>");
	if (strcmp(mode, "redirect") == 0)
		return reply(c, 302, "{}", 2, "/dc/good");
	if (strcmp(mode, "slow") == 0)
		slow_down();
	/* good, slow, doctor_*: only their doctor differs */
	return reply_json(c, 200, dc_completed(2));
}

/* ---------------------------------------------------------------- semantic preferences */

static json_t *sp_items(int n)
{
	json_t *a = json_array();
	for (int i = 1; i <= n; i++) {
		char ref[48], summary[64];
		snprintf(ref, sizeof ref, "fake-pref-ref-%d", i);
		snprintf(summary, sizeof summary, "Preference summary %d", i);
		json_array_append_new(
		    a, json_pack("{s:s, s:s}", "preference_ref", ref, "summary", summary));
	}
	return a;
}

/* new: one corpus_inventory entry; triggers: a JSON array text */
static json_t *sp_corpus(const char *id, const char *write_mode, const char *triggers,
			 const char *closure)
{
	json_t *t = json_loads(triggers, 0, NULL);
	return json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:o, s:s}", "corpus_id", id, "scope_ref",
			 "fake-private-scope", "read_role", "primary", "write_mode", write_mode,
			 "write_actor_ref", "source_of_truth", "repository_revision",
			 "writeback_triggers", t ? t : json_array(), "closure_policy", closure);
}

/* new: a response with n items and the given inventory (steals; NULL: none) */
static json_t *sp_response(int n, json_t *inventory)
{
	json_t *j = json_pack("{s:s, s:o}", "schema_version", SP_RESPONSE, "items", sp_items(n));
	if (inventory)
		json_object_set_new(j, "corpus_inventory", inventory);
	return j;
}

/* good: one provider_managed corpus (triggers in reverse order) and one read_only */
static json_t *sp_good(void)
{
	return sp_response(
	    2, json_pack("[o, o]",
			 sp_corpus("project_prefs", "provider_managed",
				   "[\"source_truth_changed\", \"explicit_feedback\"]",
				   "write_wait_l2_read_scoped_recall"),
			 sp_corpus("team_notes", "read_only", "[\"explicit_feedback\"]", "none")));
}

static enum MHD_Result sp_answer(struct MHD_Connection *c, const char *mode)
{
	json_t *j;
	if (strcmp(mode, "no_inventory") == 0)
		return reply_json(c, 200, sp_response(2, NULL));
	if (strcmp(mode, "read_only") == 0)
		return reply_json(
		    c, 200,
		    sp_response(2, json_pack("[o, o]",
					     sp_corpus("team_notes", "read_only",
						       "[\"explicit_feedback\"]", "none"),
					     sp_corpus("archive", "read_only", "[]", "none"))));
	if (strcmp(mode, "many") == 0)
		/* two provider_managed corpora out of order, so the guidance must sort */
		return reply_json(
		    c, 200,
		    sp_response(FAKE_SP_MANY,
				json_pack("[o, o]",
					  sp_corpus("zeta_corpus", "provider_managed",
						    "[\"explicit_feedback\"]", "none"),
					  sp_corpus("alpha_corpus", "provider_managed",
						    "[\"source_truth_changed\"]",
						    "write_wait_l2_read_scoped_recall"))));
	if (strcmp(mode, "unknown_field") == 0) {
		j = sp_good();
		json_object_set_new(j, "debug", json_string("extra member"));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "item_too_large") == 0) {
		char big[FAKE_SP_ITEM_TOO_LARGE + 1];
		memset(big, 'p', FAKE_SP_ITEM_TOO_LARGE);
		big[FAKE_SP_ITEM_TOO_LARGE] = '\0';
		j = sp_good();
		json_object_set_new(json_array_get(json_object_get(j, "items"), 0), "summary",
				    json_string(big));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "bad_inventory") == 0) {
		j = sp_good();
		json_object_set_new(json_array_get(json_object_get(j, "corpus_inventory"), 0),
				    "read_role", json_string("owner"));
		return reply_json(c, 200, j);
	}
	if (strcmp(mode, "http500") == 0)
		return reply_text(c, 500, "{\"error\":\"fake provider failure\"}");
	if (strcmp(mode, "oversize") == 0)
		return reply_oversize(c, SP_RESPONSE);
	if (strcmp(mode, "not_json") == 0)
		return reply_text(c, 200, "<html>fake: this is not JSON</html>");
	if (strcmp(mode, "redirect") == 0)
		return reply(c, 302, "{}", 2, "/sp/good");
	if (strcmp(mode, "slow") == 0)
		slow_down();
	return reply_json(c, 200, sp_good());
}

/* ---------------------------------------------------------------- doctor */

static enum MHD_Result doctor_answer(struct MHD_Connection *c, bool dc, const char *mode)
{
	const char *proto = dc ? PROTO_DC : PROTO_SP;
	if (strcmp(mode, "doctor_fail") == 0)
		return reply_text(c, 500, "{\"ok\":false}");
	if (strcmp(mode, "doctor_bad") == 0)
		return reply_text(c, 200, "fake: not JSON at all");
	if (strcmp(mode, "doctor_mismatch") == 0)
		proto = dc ? PROTO_SP : PROTO_DC;
	if (strcmp(mode, "doctor_slow") == 0)
		slow_down();
	return reply_json(c, 200, json_pack("{s:b, s:s}", "ok", 1, "protocol", proto));
}

/* ---------------------------------------------------------------- routing */

struct conn {
	char *data;
	size_t len;
	size_t cap;
	bool too_big;
};

static bool conn_append(struct conn *st, const char *src, size_t n)
{
	if (st->too_big || st->len + n > FAKE_BODY_MAX) {
		st->too_big = true;
		return true;
	}
	if (st->len + n + 1 > st->cap) {
		size_t cap = st->cap ? st->cap : 4096;
		while (cap < st->len + n + 1)
			cap *= 2;
		char *p = realloc(st->data, cap);
		if (!p)
			return false;
		st->data = p;
		st->cap = cap;
	}
	memcpy(st->data + st->len, src, n);
	st->len += n;
	st->data[st->len] = '\0';
	return true;
}

/* a mode name: 1..FAKE_MODE_MAX bytes of [a-z0-9_] */
static bool mode_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > FAKE_MODE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	return true;
}

static enum MHD_Result route(struct MHD_Connection *c, const char *url, const char *method,
			     struct conn *st)
{
	bool is_get = strcmp(method, "GET") == 0, is_post = strcmp(method, "POST") == 0;
	char mode[FAKE_MODE_MAX + 1], key[8 + FAKE_MODE_MAX];

	if (strncmp(url, "/_last/", 7) == 0) {
		const char *p = url + 7;
		if (!is_get)
			return reply_text(c, 405, "{\"error\":\"method\"}");
		if ((strncmp(p, "dc/", 3) != 0 && strncmp(p, "sp/", 3) != 0) ||
		    !mode_name_ok(p + 3, strlen(p + 3)))
			return reply_text(c, 404, "{\"error\":\"no such path\"}");
		json_t *j = record_json(p);
		return j ? reply_json(c, 200, j)
			 : reply_text(c, 404, "{\"error\":\"nothing posted yet\"}");
	}

	bool dc = strncmp(url, "/dc/", 4) == 0;
	if (!dc && strncmp(url, "/sp/", 4) != 0)
		return reply_text(c, 404, "{\"error\":\"no such path\"}");
	const char *p = url + 4;
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);
	if (!mode_name_ok(p, n))
		return reply_text(c, 404, "{\"error\":\"no such mode\"}");
	memcpy(mode, p, n);
	mode[n] = '\0';
	if (!mode_known(dc ? dc_modes : sp_modes, mode))
		return reply_text(c, 404, "{\"error\":\"no such mode\"}");

	if (slash) {
		if (strcmp(slash, "/doctor") != 0)
			return reply_text(c, 404, "{\"error\":\"no such path\"}");
		if (!is_get)
			return reply_text(c, 405, "{\"error\":\"method\"}");
		return doctor_answer(c, dc, mode);
	}
	if (!is_post)
		return reply_text(c, 405, "{\"error\":\"method\"}");
	if (st->too_big)
		return reply_text(c, 413, "{\"error\":\"body too large\"}");
	snprintf(key, sizeof key, "%s/%s", dc ? "dc" : "sp", mode);
	record_post(key, st->data ? st->data : "", st->len,
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "traceparent"),
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"));
	return dc ? dc_answer(c, mode, st->data ? st->data : "", st->len) : sp_answer(c, mode);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	struct conn *st = *con_cls;
	if (!st) {
		st = calloc(1, sizeof *st);
		if (!st)
			return MHD_NO;
		*con_cls = st;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!conn_append(st, upload_data, *upload_size))
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	return route(c, url, method, st);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	struct conn *st = *con_cls;
	if (st) {
		free(st->data);
		free(st);
	}
	*con_cls = NULL;
}

int main(void)
{
	const char *slow = getenv("FAKE_SLOW_MS");
	if (slow && *slow) {
		char *end = NULL;
		long v = strtol(slow, &end, 10);
		if (!end || *end || v < 0 || v > 600000) {
			fprintf(stderr, "fake_provider: FAKE_SLOW_MS must be 0..600000\n");
			return 2;
		}
		slow_ms = v;
	}
	signal(SIGPIPE, SIG_IGN);
	json_object_seed(0);

	/* SIGTERM and SIGINT are taken by sigwait below; blocked before any thread starts so
	 * that no connection thread receives them */
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &stop_set, NULL) != 0) {
		fprintf(stderr, "fake_provider: cannot block signals\n");
		return 1;
	}

	struct sockaddr_in addr;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_port = 0;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
	    NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "fake_provider: cannot start the daemon on 127.0.0.1\n");
		return 1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || info->port == 0) {
		fprintf(stderr, "fake_provider: cannot tell the bound port\n");
		MHD_stop_daemon(d);
		return 1;
	}
	printf("PORT %u\n", (unsigned)info->port);
	fflush(stdout);

	int sig = 0;
	while (sigwait(&stop_set, &sig) != 0) {
	}
	atomic_store(&stopping, true);
	MHD_stop_daemon(d);
	records_free();
	return 0;
}
