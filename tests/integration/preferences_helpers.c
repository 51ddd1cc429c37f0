/* it_preferences_* shared helpers (preferences_helpers.h): texts, journals and requests,
 * intent_hash, views, the server and its group setup, and test_privacy's sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "preferences_helpers.h"

struct it_server srv;
char *tenant_a, *tenant_b;
char *admin_a, *admin_b;
char *rw_a, *rw_b;
char *reader_a;
char *writer_a;
char *other_a;

static const char *const log_env[] = {"RECALLGATE_LOG_LEVEL=debug", NULL};

/* ================================================================ small helpers */

/* new: exactly n bytes: prefix (cut at n) then `fill` */
char *text_of(const char *prefix, size_t n, char fill)
{
	size_t p = strlen(prefix);
	char *s = malloc(n + 1);
	assert_non_null(s);
	if (p > n)
		p = n;
	memcpy(s, prefix, p);
	memset(s + p, fill, n - p);
	s[n] = '\0';
	return s;
}

/* the view shows the expires_at that was sent (the same string, or the same instant in the
 * API's millisecond form when whole seconds were sent) */
bool same_expiry(const char *got, const char *sent)
{
	if (!got || !sent)
		return false;
	if (strcmp(got, sent) == 0)
		return true;
	size_t n = strlen(sent);
	return n == 20 && sent[19] == 'Z' && strlen(got) == 24 && strncmp(got, sent, 19) == 0 &&
	       strcmp(got + 19, ".000Z") == 0;
}

bool contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}

bool has_marker(const char *body)
{
	return contains(body, M_STMT) || contains(body, M_QUOTE) || contains(body, M_SREF);
}

/* ================================================================ journals and requests */

void journal_fresh(struct journal *j)
{
	char *g = it_unique("goal");
	char *a = it_unique("agent");
	snprintf(j->goal, sizeof j->goal, "%s", g);
	snprintf(j->agent, sizeof j->agent, "%s", a);
	free(g);
	free(a);
}

void key_path(const struct journal *j, const char *key, enum action act, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/goals/%s/agents/%s/preferences/%s%s", j->goal, j->agent, key,
		 act == RETIRE ? "/retire" : "");
}

void view_path(const struct journal *j, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/goals/%s/agents/%s/preferences", j->goal, j->agent);
}

/* new: the request body */
json_t *pw_body(enum action act, const struct pw *w)
{
	json_t *b = json_object();
	if (act == REMEMBER)
		json_object_set_new(b, "statement", json_string(w->statement));
	json_object_set_new(b, "source_ref", json_string(w->source_ref));
	json_object_set_new(b, "source_quote", json_string(w->source_quote));
	json_object_set_new(b, "expected_revision",
			    w->expected == EXP_NULL ? json_null() : json_integer(w->expected));
	json_object_set_new(b, "operation_id", json_string(w->operation_id));
	if (act == REMEMBER && w->expires_at)
		json_object_set_new(b, "expires_at", json_string(w->expires_at));
	json_object_set_new(b, "execute", json_boolean(w->execute));
	return b;
}

void send_json(const char *method, const char *path, const char *token, const json_t *body,
	       const char *const *headers, struct it_resp *r)
{
	it_request_json(&srv, method, path, token, body, headers, r);
}

void pref_send(const char *token, const struct journal *j, enum action act, const char *key,
	       const struct pw *w, const char *const *headers, struct it_resp *r)
{
	char path[1024];
	key_path(j, key, act, path, sizeof path);
	json_t *b = pw_body(act, w);
	send_json(act == REMEMBER ? "PUT" : "POST", path, token, b, headers, r);
	json_decref(b);
}

/* "sha256:" + hex SHA-256 of the compact, key-sorted intent object (contract: intent_hash) */
void intent_hash(enum action act, const char *key, const struct pw *w, char out[80])
{
	json_t *o = json_object();
	json_object_set_new(o, "action", json_string(act == REMEMBER ? "remember" : "retire"));
	json_object_set_new(o, "expected_revision",
			    w->expected == EXP_NULL ? json_null() : json_integer(w->expected));
	json_object_set_new(o, "expires_at",
			    act == REMEMBER && w->expires_at ? json_string(w->expires_at)
							     : json_null());
	json_object_set_new(o, "key", json_string(key));
	json_object_set_new(o, "operation_id", json_string(w->operation_id));
	json_object_set_new(o, "source_quote", json_string(w->source_quote));
	json_object_set_new(o, "source_ref", json_string(w->source_ref));
	json_object_set_new(o, "statement",
			    act == REMEMBER ? json_string(w->statement) : json_null());
	char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_non_null(text);
	assert_int_equal(EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	memcpy(out, "sha256:", 7);
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
	free(text);
	json_decref(o);
}

/* ================================================================ views */

long long rev_of(const json_t *view)
{
	const json_t *r = json_object_get(view, "revision");
	return json_is_integer(r) ? (long long)json_integer_value(r) : EXP_NULL;
}

/* borrowed: the entry of `key` in the view, or NULL */
const json_t *entry_of(const json_t *view, const char *key)
{
	size_t i;
	const json_t *e;
	json_array_foreach (json_object_get(view, "entries"), i, e) {
		if (it_json_str_is(e, "key", key))
			return e;
	}
	return NULL;
}

size_t entry_count(const json_t *view)
{
	return json_array_size(json_object_get(view, "entries"));
}

/* The view's shape (openapi/openapi.yaml "Preferences" and the contract's "Shapes"). */
void check_view(const json_t *v, const char *what)
{
	static const char *const members[] = {"key",          "state",      "statement",
					      "source_ref",   "expires_at", "entry_revision",
					      "operation_id", "updated_at"};
	char *text = json_dumps(v, JSON_COMPACT);
	IT_CHECK(json_is_object(v) && json_object_size(v) == 3 && json_object_get(v, "revision") &&
		     json_object_get(v, "authority") && json_object_get(v, "entries"),
		 "%s: the view is not exactly {revision, authority, entries}: %s", what,
		 text ? text : "?");
	const json_t *rev = json_object_get(v, "revision");
	IT_CHECK(json_is_null(rev) || (json_is_integer(rev) && json_integer_value(rev) >= 1),
		 "%s: revision is neither null nor an integer >= 1: %s", what, text);
	IT_CHECK(it_json_str_is(v, "authority", "advisory_only"),
		 "%s: authority is not advisory_only: %s", what, text);
	const json_t *entries = json_object_get(v, "entries");
	IT_CHECK(json_is_array(entries), "%s: entries is not an array: %s", what, text);
	IT_CHECK(!json_is_null(rev) || json_array_size(entries) == 0,
		 "%s: revision null with entries: %s", what, text);
	const char *prev = NULL;
	size_t i;
	const json_t *e;
	json_array_foreach (entries, i, e) {
		IT_CHECK(json_is_object(e) && json_object_size(e) == 8,
			 "%s: entry %zu is not an object of 8 members: %s", what, i, text);
		for (size_t m = 0; m < sizeof members / sizeof *members; m++)
			IT_CHECK(json_object_get(e, members[m]) != NULL,
				 "%s: entry %zu lacks %s: %s", what, i, members[m], text);
		const char *key = it_json_str(e, "key");
		IT_CHECK(key != NULL, "%s: entry %zu has no key string", what, i);
		IT_CHECK(!prev || strcmp(prev, key) < 0,
			 "%s: entries are not sorted by key (\"%s\" before \"%s\")", what, prev,
			 key);
		const char *state = it_json_str(e, "state");
		bool active = state && strcmp(state, "active") == 0;
		bool retired = state && strcmp(state, "retired") == 0;
		bool expired = state && strcmp(state, "expired") == 0;
		IT_CHECK(active || retired || expired, "%s: entry %s has state %s", what, key,
			 state ? state : "(none)");
		const json_t *st = json_object_get(e, "statement");
		IT_CHECK(active ? json_is_string(st) : json_is_null(st),
			 "%s: entry %s (%s): statement must be %s: %s", what, key, state,
			 active ? "a string" : "null", text);
		IT_CHECK(json_is_string(json_object_get(e, "source_ref")),
			 "%s: entry %s: source_ref is not a string", what, key);
		const json_t *exp = json_object_get(e, "expires_at");
		IT_CHECK(retired ? json_is_null(exp) : (json_is_null(exp) || json_is_string(exp)),
			 "%s: entry %s: expires_at is wrong for state %s", what, key, state);
		IT_CHECK(!expired || json_is_string(exp), "%s: expired entry %s has no expires_at",
			 what, key);
		long long er = it_json_int(e, "entry_revision", -1);
		IT_CHECK(er >= 1 && (json_is_null(rev) || er <= json_integer_value(rev)),
			 "%s: entry %s: entry_revision %lld out of range", what, key, er);
		IT_CHECK(it_json_str(e, "operation_id") != NULL,
			 "%s: entry %s: operation_id is not a string", what, key);
		IT_CHECK(it_is_timestamp_ms(it_json_str(e, "updated_at")),
			 "%s: entry %s: updated_at is not RFC 3339 UTC with milliseconds", what,
			 key);
		prev = key;
	}
	free(text);
}

/* the Content-Type is exactly `want` (case-insensitive), charset included */
void expect_content_type(const struct it_resp *r, const char *want)
{
	const char *ct = it_resp_header(r, "Content-Type");
	IT_CHECK(ct && strcasecmp(ct, want) == 0, "%s: Content-Type is \"%s\", expected \"%s\"",
		 r->desc, ct ? ct : "none", want);
}

/* the ETag names revision `rev` (EXP_NULL or 0: no ETag at all) */
void expect_etag(const struct it_resp *r, long long rev)
{
	const char *etag = it_resp_header(r, "ETag");
	if (rev == EXP_NULL || rev == 0) {
		IT_CHECK(etag == NULL, "%s: ETag %s for a never-written journal", r->desc, etag);
	} else {
		char want[40];
		snprintf(want, sizeof want, "\"%lld\"", rev);
		IT_CHECK(etag && strcmp(etag, want) == 0, "%s: ETag is %s, expected %s", r->desc,
			 etag ? etag : "none", want);
	}
}

/* GET the view with `token` into r (200, shape and ETag checked) */
void view_get(const char *token, const struct journal *j, struct it_resp *r)
{
	char path[512];
	view_path(j, path, sizeof path);
	it_request(&srv, "GET", path, token, NULL, NULL, r);
	IT_STATUS(r, 200);
	expect_content_type(r, "application/json; charset=utf-8");
	check_view(r->json, r->desc);
	expect_etag(r, rev_of(r->json));
}

/* new: the current view (read with rw_a) */
json_t *view_now(const struct journal *j)
{
	struct it_resp r;
	view_get(rw_a, j, &r);
	json_t *v = json_deep_copy(r.json);
	it_resp_free(&r);
	return v;
}

void expect_view_equal(const struct journal *j, const json_t *want, const char *why)
{
	json_t *now = view_now(j);
	if (!json_equal(now, want)) {
		char *a = json_dumps(want, JSON_COMPACT), *b = json_dumps(now, JSON_COMPACT);
		fprintf(stderr, "  expected view: %s\n  got view:      %s\n", a, b);
		free(a);
		free(b);
		json_decref(now);
		IT_FAIL("%s: the view changed", why);
	}
	json_decref(now);
}

/* ================================================================ setup */

int group_setup(void **state)
{
	(void)state;
	if (it_server_start(&srv, log_env) != 0)
		return -1;
	tenant_a = it_unique("pref-a");
	tenant_b = it_unique("pref-b");
	admin_a = it_token(tenant_a, "admin", "it-admin");
	admin_b = it_token(tenant_b, "admin", "it-admin");
	rw_a = it_token(tenant_a, "preferences:read,preferences:write", "it-rw");
	rw_b = it_token(tenant_b, "preferences:read,preferences:write", "it-rw");
	reader_a = it_token(tenant_a, "preferences:read", "it-reader");
	writer_a = it_token(tenant_a, "preferences:write", "it-writer");
	other_a = it_token(tenant_a,
			   "memory:read,memory:write,memory:admin,assent:grant,providers:admin,"
			   "decision_context.read,semantic_preferences:use,envelopes:read,"
			   "envelopes:write,audit:read,events:read",
			   "it-other");
	return admin_a && admin_b && rw_a && rw_b && reader_a && writer_a && other_a ? 0 : -1;
}

int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	char **owned[] = {&tenant_a, &tenant_b, &admin_a,  &admin_b, &rw_a,
			  &rw_b,     &reader_a, &writer_a, &other_a};
	for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) {
		free(*owned[i]);
		*owned[i] = NULL;
	}
	return rc;
}

/* true while group_teardown_privacy's sweep runs: a failed check jumps out of it */
static bool sweep_unfinished;

int group_teardown_privacy(void **state)
{
	if (srv.pid > 0) {
		sweep_unfinished = true;
		expect_no_private(admin_a, "tenant A");
		expect_server_private();
		sweep_unfinished = false;
	}
	return group_teardown(state);
}

int prefs_exit_status(int cmocka_rc)
{
	if (sweep_unfinished)
		(void)group_teardown(NULL);
	if (cmocka_rc != 0)
		return cmocka_rc;
	return sweep_unfinished ? 1 : 0;
}

/* ================================================================ privacy */

void expect_no_private(const char *token, const char *what)
{
	char *cursor = NULL;
	size_t records = 0;
	for (int page = 0;; page++) {
		char path[1024];
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(path, sizeof path,
				 "/v1/audit?resource_type=preference_journal&limit=200&after=%s",
				 esc);
			free(esc);
		} else {
			snprintf(path, sizeof path,
				 "/v1/audit?resource_type=preference_journal&limit=200");
		}
		struct it_resp r;
		it_request(&srv, "GET", path, token, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(!has_marker(r.body),
			 "%s: the preference_journal audit records hold a statement, quote or "
			 "source_ref: %s",
			 what, r.body);
		size_t i;
		const json_t *rec;
		json_array_foreach (json_object_get(r.json, "items"), i, rec) {
			const json_t *d = json_object_get(rec, "details");
			const char *action = it_json_str(rec, "action");
			IT_CHECK(action && (strcmp(action, "preference.remembered") == 0 ||
					    strcmp(action, "preference.retired") == 0),
				 "%s: unexpected action %s", what, action ? action : "(none)");
			IT_CHECK(json_is_object(d) && json_object_size(d) == 3 &&
				     it_json_str(d, "key") && it_json_str(d, "operation_id") &&
				     it_is_sha256_ref(it_json_str(d, "intent_hash")),
				 "%s: details is not {key, operation_id, intent_hash}", what);
			records++;
		}
		const json_t *next = json_object_get(r.json, "next_cursor");
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
		IT_CHECK(page < 100, "audit pagination does not end");
	}
	IT_CHECK(records > 0, "%s: no preference_journal audit records at all", what);
}

void expect_server_private(void)
{
	struct it_resp r;
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!has_marker(r.body), "/metrics holds private text");
	it_resp_free(&r);

	/* the whole server log, flushed by a clean stop */
	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);
	size_t len = 0;
	char *log = it_log_read(&srv, &len);
	IT_CHECK(log != NULL && len > 0, "no server log at %s", srv.log_path);
	const char *markers[] = {M_STMT, M_QUOTE, M_SREF};
	for (size_t i = 0; i < 3; i++) {
		const char *hit = memmem(log, len, markers[i], strlen(markers[i]));
		if (hit) {
			const char *from = hit - log > 200 ? hit - 200 : log;
			fprintf(stderr, "  log excerpt: %.400s\n", from);
		}
		IT_CHECK(hit == NULL, "the server log %s contains %s text", srv.log_path,
			 markers[i]);
	}
	free(log);
}
