/*
 * it_preferences — explicit agent preferences end to end (API.md §0 and §5,
 * docs/preferences-contract.md, the seed's "Explicit Agent preferences" … "Fresh-turn
 * adoption"): the seed's table of user intents as data (remember, replace with the negative,
 * a one-time exception, forget, a quoted example), the compare-and-swap race on the journal
 * revision (16 writers, one winner, one history item, one audit record), uncertain-write
 * retry (replay with the original receipt and the current view; changed same-id → conflict;
 * stale → conflict), preview writes nothing, capacity (64 keys, 32 KiB at the byte),
 * expiry, retirement rules, the history walk, isolation between agents, goals and tenants,
 * every field bound at its edge, scopes, If-Match, and privacy of statements, quotes and
 * source references (audit, metrics, server log).
 *
 * Every test uses its own journal (a unique goal and agent), so the tests do not depend on
 * each other's writes; the privacy test runs last and looks at everything the others wrote.
 * Every statement, quote and source_ref carries STMT-MARKER / QUOTE-MARKER / SREF-MARKER so
 * that the privacy assertions mean something.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "harness.h"

#define RACERS 16
#define EXP_NULL LLONG_MIN /* expected_revision: null (and "revision: null" in a view) */
#define MAX_KEYS 64
#define MAX_BYTES 32768

#define M_STMT "STMT-MARKER"
#define M_QUOTE "QUOTE-MARKER"
#define M_SREF "SREF-MARKER"

enum action { REMEMBER, RETIRE };

static struct it_server srv;
static char *tenant_a, *tenant_b;
static char *admin_a, *admin_b; /* admin: audit reads */
static char *rw_a, *rw_b;       /* preferences:read,preferences:write */
static char *reader_a;          /* preferences:read */
static char *writer_a;          /* preferences:write */
static char *other_a;           /* every scope but admin and preferences:* */

static const char *const log_env[] = {"RECALLGATE_LOG_LEVEL=debug", NULL};

/* ================================================================ small helpers */

/* new: exactly n bytes: prefix (cut at n) then `fill` */
static char *text_of(const char *prefix, size_t n, char fill)
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

/* new: prefix followed by `count` copies of the UTF-8 sequence `unit` */
static char *repeat_utf8(const char *prefix, const char *unit, size_t count)
{
	size_t p = strlen(prefix), u = strlen(unit);
	char *s = malloc(p + u * count + 1);
	assert_non_null(s);
	memcpy(s, prefix, p);
	for (size_t i = 0; i < count; i++)
		memcpy(s + p + i * u, unit, u);
	s[p + u * count] = '\0';
	return s;
}

/* the view shows the expires_at that was sent (the same string, or the same instant in the
 * API's millisecond form when whole seconds were sent) */
static bool same_expiry(const char *got, const char *sent)
{
	if (!got || !sent)
		return false;
	if (strcmp(got, sent) == 0)
		return true;
	size_t n = strlen(sent);
	return n == 20 && sent[19] == 'Z' && strlen(got) == 24 && strncmp(got, sent, 19) == 0 &&
	       strcmp(got + 19, ".000Z") == 0;
}

static bool contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}

static bool has_marker(const char *body)
{
	return contains(body, M_STMT) || contains(body, M_QUOTE) || contains(body, M_SREF);
}

/* ================================================================ journals and requests */

struct journal {
	char goal[96];
	char agent[96];
};

static void journal_fresh(struct journal *j)
{
	char *g = it_unique("goal");
	char *a = it_unique("agent");
	snprintf(j->goal, sizeof j->goal, "%s", g);
	snprintf(j->agent, sizeof j->agent, "%s", a);
	free(g);
	free(a);
}

static void key_path(const struct journal *j, const char *key, enum action act, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/goals/%s/agents/%s/preferences/%s%s", j->goal, j->agent, key,
		 act == RETIRE ? "/retire" : "");
}

static void view_path(const struct journal *j, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/goals/%s/agents/%s/preferences", j->goal, j->agent);
}

/* the arguments of one remember or retire */
struct pw {
	const char *statement; /* remember only */
	const char *source_ref;
	const char *source_quote;
	long long expected; /* EXP_NULL: null */
	const char *operation_id;
	const char *expires_at; /* remember only; NULL: absent */
	bool execute;
};

/* new: the request body */
static json_t *pw_body(enum action act, const struct pw *w)
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

static void send_json(const char *method, const char *path, const char *token, const json_t *body,
		      const char *const *headers, struct it_resp *r)
{
	it_request_json(&srv, method, path, token, body, headers, r);
}

static void pref_send(const char *token, const struct journal *j, enum action act, const char *key,
		      const struct pw *w, const char *const *headers, struct it_resp *r)
{
	char path[1024];
	key_path(j, key, act, path, sizeof path);
	json_t *b = pw_body(act, w);
	send_json(act == REMEMBER ? "PUT" : "POST", path, token, b, headers, r);
	json_decref(b);
}

/* "sha256:" + hex SHA-256 of the compact, key-sorted intent object (contract: intent_hash) */
static void intent_hash(enum action act, const char *key, const struct pw *w, char out[80])
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

static long long rev_of(const json_t *view)
{
	const json_t *r = json_object_get(view, "revision");
	return json_is_integer(r) ? (long long)json_integer_value(r) : EXP_NULL;
}

/* borrowed: the entry of `key` in the view, or NULL */
static const json_t *entry_of(const json_t *view, const char *key)
{
	size_t i;
	const json_t *e;
	json_array_foreach (json_object_get(view, "entries"), i, e) {
		if (it_json_str_is(e, "key", key))
			return e;
	}
	return NULL;
}

static size_t entry_count(const json_t *view)
{
	return json_array_size(json_object_get(view, "entries"));
}

/* The view's shape (API.md §5 and the contract's "Shapes"). */
static void check_view(const json_t *v, const char *what)
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
static void expect_content_type(const struct it_resp *r, const char *want)
{
	const char *ct = it_resp_header(r, "Content-Type");
	IT_CHECK(ct && strcasecmp(ct, want) == 0, "%s: Content-Type is \"%s\", expected \"%s\"",
		 r->desc, ct ? ct : "none", want);
}

/* the ETag names revision `rev` (EXP_NULL or 0: no ETag at all) */
static void expect_etag(const struct it_resp *r, long long rev)
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
static void view_get(const char *token, const struct journal *j, struct it_resp *r)
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
static json_t *view_now(const struct journal *j)
{
	struct it_resp r;
	view_get(rw_a, j, &r);
	json_t *v = json_deep_copy(r.json);
	it_resp_free(&r);
	return v;
}

static void expect_view_equal(const struct journal *j, const json_t *want, const char *why)
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

/* ================================================================ history and audit */

static void check_history_item(const json_t *it, const char *what)
{
	char *text = json_dumps(it, JSON_COMPACT);
	IT_CHECK(json_is_object(it) && json_object_size(it) == 9,
		 "%s: a history item is not an object of 9 members: %s", what, text);
	const char *action = it_json_str(it, "action");
	bool remember = action && strcmp(action, "remember") == 0;
	IT_CHECK(remember || (action && strcmp(action, "retire") == 0), "%s: history action is %s",
		 what, action ? action : "(none)");
	IT_CHECK(it_json_str(it, "operation_id") && it_json_str(it, "key") &&
		     it_json_str(it, "source_ref") && it_json_str(it, "source_quote"),
		 "%s: history item misses operation_id/key/source_ref/source_quote: %s", what,
		 text);
	const json_t *st = json_object_get(it, "statement");
	IT_CHECK(remember ? json_is_string(st) : json_is_null(st),
		 "%s: a %s history item's statement must be %s: %s", what, action,
		 remember ? "a string" : "null", text);
	const json_t *pred = json_object_get(it, "predecessor_operation_id");
	IT_CHECK(json_is_string(pred) || json_is_null(pred),
		 "%s: predecessor_operation_id is not string|null: %s", what, text);
	IT_CHECK(it_json_int(it, "revision_after", -1) >= 1, "%s: revision_after: %s", what, text);
	IT_CHECK(it_is_timestamp_ms(it_json_str(it, "at")), "%s: at is malformed: %s", what, text);
	free(text);
}

/* new: every history item, walking pages of `limit` (0: the default page size, 20) */
static json_t *history_walk(const char *token, const struct journal *j, int limit, size_t *pages)
{
	json_t *all = json_array();
	char *cursor = NULL;
	size_t npages = 0;
	long long last_rev = 0;
	for (;;) {
		char path[1024];
		int n = snprintf(path, sizeof path, "/v1/goals/%s/agents/%s/preference-history",
				 j->goal, j->agent);
		const char *sep = "?";
		if (limit > 0) {
			n += snprintf(path + n, sizeof path - (size_t)n, "%slimit=%d", sep, limit);
			sep = "&";
		}
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(path + n, sizeof path - (size_t)n, "%safter=%s", sep, esc);
			free(esc);
		}
		struct it_resp r;
		it_request(&srv, "GET", path, token, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		json_t *items = json_object_get(r.json, "items");
		json_t *next = json_object_get(r.json, "next_cursor");
		IT_CHECK(json_is_object(r.json) && json_object_size(r.json) == 2 &&
			     json_is_array(items) && (json_is_string(next) || json_is_null(next)),
			 "history page is not {items: [...], next_cursor: string|null}: %s",
			 r.body);
		size_t page_limit = limit > 0 ? (size_t)limit : 20;
		IT_CHECK(json_array_size(items) <= page_limit,
			 "a history page holds %zu > %zu items", json_array_size(items),
			 page_limit);
		size_t i;
		json_t *it;
		json_array_foreach (items, i, it) {
			check_history_item(it, r.desc);
			long long ra = it_json_int(it, "revision_after", -1);
			IT_CHECK(ra > last_rev, "history is not oldest first (%lld after %lld)", ra,
				 last_rev);
			last_rev = ra;
			json_array_append(all, it);
		}
		if (json_is_string(next)) {
			char want[32];
			IT_CHECK(json_array_size(items) > 0, "an empty history page with a cursor");
			snprintf(want, sizeof want, "%lld", last_rev);
			IT_CHECK(strcmp(json_string_value(next), want) == 0,
				 "next_cursor is \"%s\", expected the last revision_after \"%s\"",
				 json_string_value(next), want);
		}
		npages++;
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
		IT_CHECK(npages < 1000, "history pagination does not end");
	}
	if (pages)
		*pages = npages;
	return all;
}

static json_t *history_all(const char *token, const struct journal *j)
{
	return history_walk(token, j, 200, NULL);
}

static size_t history_count(const struct journal *j)
{
	json_t *h = history_all(rw_a, j);
	size_t n = json_array_size(h);
	json_decref(h);
	return n;
}

/* does some history item carry this statement? */
static bool history_has_statement(const json_t *hist, const char *statement)
{
	size_t i;
	const json_t *it;
	json_array_foreach (hist, i, it) {
		if (it_json_str_is(it, "statement", statement))
			return true;
	}
	return false;
}

/* new: the journal's audit records, read with `token` (an admin of the journal's tenant) */
static json_t *audit_of(const char *token, const struct journal *j)
{
	char rid[256], path[1024];
	snprintf(rid, sizeof rid, "%s/%s", j->goal, j->agent);
	char *esc = it_url_escape(rid);
	snprintf(path, sizeof path,
		 "/v1/audit?resource_type=preference_journal&resource_id=%s&limit=200", esc);
	free(esc);
	struct it_resp r;
	it_request(&srv, "GET", path, token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_has_null(r.json, "next_cursor"), "more than 200 records for a journal?");
	json_t *items = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	IT_CHECK(json_is_array(items), "audit items is not an array");
	return items;
}

static size_t audit_count(const struct journal *j)
{
	json_t *a = audit_of(admin_a, j);
	size_t n = json_array_size(a);
	json_decref(a);
	return n;
}

static void expect_audit_verify(const char *token, const struct journal *j, long long checked)
{
	char rid[256], path[1024];
	snprintf(rid, sizeof rid, "%s/%s", j->goal, j->agent);
	char *esc = it_url_escape(rid);
	snprintf(path, sizeof path,
		 "/v1/audit/verify?resource_type=preference_journal&resource_id=%s", esc);
	free(esc);
	struct it_resp r;
	it_request(&srv, "GET", path, token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == checked &&
		     it_json_has_null(r.json, "first_bad_seq"),
		 "verify: expected {ok: true, checked: %lld, first_bad_seq: null}, got %s", checked,
		 r.body);
	it_resp_free(&r);
}

/* a snapshot of everything a rejected or preview call must leave alone */
struct snap {
	json_t *view;
	size_t history;
	size_t audit;
};

static void snap_take(const struct journal *j, struct snap *s)
{
	s->view = view_now(j);
	s->history = history_count(j);
	s->audit = audit_count(j);
}

static void snap_expect_same(const struct journal *j, const struct snap *s, const char *why)
{
	expect_view_equal(j, s->view, why);
	size_t h = history_count(j), a = audit_count(j);
	IT_CHECK(h == s->history, "%s: history went from %zu to %zu items", why, s->history, h);
	IT_CHECK(a == s->audit, "%s: audit went from %zu to %zu records", why, s->audit, a);
}

static void snap_free(struct snap *s)
{
	json_decref(s->view);
	s->view = NULL;
}

/* ================================================================ write answers */

/* {status, receipt, view} with the given status; the view's shape */
static void check_write_answer(const struct it_resp *r, const char *status)
{
	IT_CHECK(json_is_object(r->json) && json_object_size(r->json) == 3 &&
		     json_object_get(r->json, "receipt") && json_object_get(r->json, "view"),
		 "%s: the answer is not exactly {status, receipt, view}: %s", r->desc, r->body);
	IT_CHECK(it_json_str_is(r->json, "status", status), "%s: status is not \"%s\": %s", r->desc,
		 status, r->body);
	expect_content_type(r, "application/json; charset=utf-8");
	const json_t *view = json_object_get(r->json, "view");
	check_view(view, r->desc);
	/* the ETag names the stored revision: a preview's would-be revision is not stored */
	long long shown = rev_of(view);
	bool preview = strcmp(status, "preview") == 0;
	expect_etag(r, preview ? (shown == 1 ? EXP_NULL : shown - 1) : shown);
	if (preview)
		IT_CHECK(it_json_has_null(r->json, "receipt"),
			 "%s: a preview's receipt is not null", r->desc);
	else
		IT_CHECK(json_is_object(json_object_get(r->json, "receipt")),
			 "%s: receipt is not an object: %s", r->desc, r->body);
}

static void check_receipt(const json_t *rc, enum action act, const char *key, const struct pw *w,
			  long long rev_after, const char *supersedes)
{
	char *text = json_dumps(rc, JSON_COMPACT);
	char want_hash[80];
	IT_CHECK(json_is_object(rc) && json_object_size(rc) == 9,
		 "the receipt is not exactly {operation_id, action, key, state, intent_hash, "
		 "supersedes_operation_id, revision_before, revision_after, at}: %s",
		 text);
	IT_CHECK(it_json_str_is(rc, "operation_id", w->operation_id),
		 "receipt operation_id is not %s: %s", w->operation_id, text);
	IT_CHECK(it_json_str_is(rc, "action", act == REMEMBER ? "remember" : "retire"),
		 "receipt action: %s", text);
	IT_CHECK(it_json_str_is(rc, "key", key), "receipt key is not %s: %s", key, text);
	IT_CHECK(it_json_str_is(rc, "state", act == REMEMBER ? "active" : "retired"),
		 "receipt state: %s", text);
	intent_hash(act, key, w, want_hash);
	IT_CHECK(it_json_str_is(rc, "intent_hash", want_hash),
		 "receipt intent_hash is not %s (sha256 of the compact sorted intent): %s",
		 want_hash, text);
	if (supersedes)
		IT_CHECK(it_json_str_is(rc, "supersedes_operation_id", supersedes),
			 "receipt supersedes_operation_id is not %s: %s", supersedes, text);
	else
		IT_CHECK(it_json_has_null(rc, "supersedes_operation_id"),
			 "receipt supersedes_operation_id is not null: %s", text);
	if (rev_after == 1)
		IT_CHECK(it_json_has_null(rc, "revision_before"),
			 "the journal's first receipt has revision_before not null: %s", text);
	else
		IT_CHECK(it_json_int(rc, "revision_before", -1) == rev_after - 1,
			 "receipt revision_before is not %lld: %s", rev_after - 1, text);
	IT_CHECK(it_json_int(rc, "revision_after", -1) == rev_after,
		 "receipt revision_after is not %lld: %s", rev_after, text);
	IT_CHECK(it_is_timestamp_ms(it_json_str(rc, "at")), "receipt at is malformed: %s", text);
	free(text);
}

/* the entry of `key` in `view` is what operation `w` (at revision rev) made of it */
static void check_entry_after(const json_t *view, enum action act, const char *key,
			      const struct pw *w, long long rev, const char *what)
{
	char *text = json_dumps(view, JSON_COMPACT);
	const json_t *e = entry_of(view, key);
	IT_CHECK(e != NULL, "%s: no entry %s in the view: %s", what, key, text);
	IT_CHECK(it_json_str_is(e, "state", act == REMEMBER ? "active" : "retired"),
		 "%s: entry %s state: %s", what, key, text);
	if (act == REMEMBER)
		IT_CHECK(it_json_str_is(e, "statement", w->statement),
			 "%s: entry %s does not show the new statement: %s", what, key, text);
	else
		IT_CHECK(it_json_has_null(e, "statement"), "%s: a retired entry shows a statement",
			 what);
	IT_CHECK(it_json_str_is(e, "source_ref", w->source_ref),
		 "%s: entry %s source_ref is not the operation's: %s", what, key, text);
	if (act == REMEMBER && w->expires_at)
		IT_CHECK(same_expiry(it_json_str(e, "expires_at"), w->expires_at),
			 "%s: entry %s expires_at is not %s: %s", what, key, w->expires_at, text);
	else
		IT_CHECK(it_json_has_null(e, "expires_at"), "%s: entry %s expires_at is not null",
			 what, key);
	IT_CHECK(it_json_str_is(e, "operation_id", w->operation_id),
		 "%s: entry %s operation_id is not %s: %s", what, key, w->operation_id, text);
	IT_CHECK(it_json_int(e, "entry_revision", -1) == rev,
		 "%s: entry %s entry_revision is not %lld: %s", what, key, rev, text);
	free(text);
}

/* Sends one operation that must apply: 201 applied, the receipt, the view. Returns the
 * receipt (new). */
static json_t *apply_op(const char *token, const struct journal *j, enum action act,
			const char *key, const struct pw *w, const char *supersedes)
{
	struct it_resp r;
	pref_send(token, j, act, key, w, NULL, &r);
	IT_STATUS(&r, 201);
	check_write_answer(&r, "applied");
	long long after = w->expected == EXP_NULL ? 1 : w->expected + 1;
	const json_t *rc = json_object_get(r.json, "receipt");
	check_receipt(rc, act, key, w, after, supersedes);
	const json_t *view = json_object_get(r.json, "view");
	IT_CHECK(rev_of(view) == after, "%s: the answer's view has revision %lld, expected %lld",
		 r.desc, rev_of(view), after);
	check_entry_after(view, act, key, w, after, r.desc);
	json_t *copy = json_deep_copy(rc);
	it_resp_free(&r);
	return copy;
}

static void remember_ok(const struct journal *j, const char *key, const char *statement,
			const char *sref, const char *quote, long long expected, const char *op,
			const char *supersedes)
{
	struct pw w = {statement, sref, quote, expected, op, NULL, true};
	json_decref(apply_op(rw_a, j, REMEMBER, key, &w, supersedes));
}

static void retire_ok(const struct journal *j, const char *key, const char *sref, const char *quote,
		      long long expected, const char *op, const char *supersedes)
{
	struct pw w = {NULL, sref, quote, expected, op, NULL, true};
	json_decref(apply_op(rw_a, j, RETIRE, key, &w, supersedes));
}

/* a problem answer that names no private text */
static void expect_problem_private(const struct it_resp *r, long status, const char *code)
{
	IT_PROBLEM(r, status, code);
	expect_content_type(r, "application/problem+json; charset=utf-8");
	IT_CHECK(!has_marker(r->body), "%s: the problem answer echoes private text: %s", r->desc,
		 r->body);
}

/* ================================================================ setup */

static int group_setup(void **state)
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

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant_a);
	free(tenant_b);
	free(admin_a);
	free(admin_b);
	free(rw_a);
	free(rw_b);
	free(reader_a);
	free(writer_a);
	free(other_a);
	return rc;
}

/* ================================================================ the seed's table */

#define REVIEW_KEY "review.collaboration"
#define S_REVIEWER M_STMT "-1 Ask the designated reviewer before merging."
#define S_NO_REVIEWER M_STMT "-2 Do not ask a reviewer before merging."
#define S_COMMITS M_STMT "-6 Write commit messages in English."

enum step_op { NO_CALL, DO_REMEMBER, DO_RETIRE };

/* One user message, what the host does with it, and the view of REVIEW_KEY afterwards. */
struct intent_step {
	const char *intent; /* the user's words (the seed's "User intent") */
	enum step_op op;    /* the seed's "Update" */
	const char *key;
	const char *statement;
	const char *source_ref;
	const char *source_quote;
	/* the seed's "Next fresh decision": what a fresh read of REVIEW_KEY shows */
	const char *want_state;
	const char *want_statement; /* NULL: null */
	long long want_revision;
	const char *gone[3]; /* must not appear anywhere in the view */
	const char *kept[3]; /* statements still in history */
};

/* clang-format off */
static const struct intent_step intent_table[] = {
    {"Use the designated reviewer from now on", DO_REMEMBER, REVIEW_KEY, S_REVIEWER,
     M_SREF "-owner-message-1", M_QUOTE "-1 Use the designated reviewer for my changes.",
     "active", S_REVIEWER, 1, {NULL}, {S_REVIEWER}},
    {"Stop asking a reviewer", DO_REMEMBER, REVIEW_KEY, S_NO_REVIEWER, M_SREF "-owner-message-2",
     M_QUOTE "-2 Stop asking a reviewer.", "active", S_NO_REVIEWER, 2, {M_STMT "-1"},
     {S_REVIEWER, S_NO_REVIEWER}},
    /* a one-time exception: the durable preference stays, nothing is written */
    {"This time skip the reviewer", NO_CALL, NULL, NULL, NULL, NULL, "active", S_NO_REVIEWER, 2,
     {M_STMT "-1"}, {S_REVIEWER, S_NO_REVIEWER}},
    {"Forget this preference", DO_RETIRE, REVIEW_KEY, NULL, M_SREF "-owner-message-4",
     M_QUOTE "-4 Forget my review preference.", "retired", NULL, 3, {M_STMT "-1", M_STMT "-2"},
     {S_REVIEWER, S_NO_REVIEWER}},
    /* a quotation is not a user correction: the caller does not call */
    {"Here is an example: \xe2\x80\x9cstop asking a reviewer\xe2\x80\x9d", NO_CALL, NULL, NULL,
     NULL, NULL, "retired", NULL, 3, {M_STMT "-1", M_STMT "-2"}, {S_REVIEWER, S_NO_REVIEWER}},
    /* a later, unrelated write must not resurrect the retired statements */
    {"(later) Write commit messages in English", DO_REMEMBER, "style.commits", S_COMMITS,
     M_SREF "-owner-message-6", M_QUOTE "-6 Commit messages in English, please.", "retired",
     NULL, 4, {M_STMT "-1", M_STMT "-2"}, {S_REVIEWER, S_NO_REVIEWER}},
};
/* clang-format on */

static void test_intent_table(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	size_t nsteps = sizeof intent_table / sizeof *intent_table;
	char ops[sizeof intent_table / sizeof *intent_table][48];
	char hashes[sizeof intent_table / sizeof *intent_table][80];
	const char *actions[sizeof intent_table / sizeof *intent_table];
	size_t nwrites = 0;
	char last_review_op[48] = "";
	long long rev = EXP_NULL;

	/* a never-written journal */
	json_t *v0 = view_now(&j);
	IT_CHECK(rev_of(v0) == EXP_NULL && entry_count(v0) == 0,
		 "a never-written journal does not read revision null, entries []");
	json_decref(v0);

	for (size_t s = 0; s < nsteps; s++) {
		const struct intent_step *st = &intent_table[s];
		struct snap before;
		fprintf(stderr, "  step %zu: %s\n", s + 1, st->intent);
		snap_take(&j, &before);
		IT_CHECK(rev_of(before.view) == rev,
			 "step %zu: the journal is not at the expected "
			 "revision before the step",
			 s + 1);
		if (st->op == NO_CALL) {
			snap_expect_same(&j, &before, st->intent);
		} else {
			enum action act = st->op == DO_RETIRE ? RETIRE : REMEMBER;
			bool review = strcmp(st->key, REVIEW_KEY) == 0;
			const char *supersedes =
			    review && last_review_op[0] ? last_review_op : NULL;
			snprintf(ops[nwrites], sizeof ops[nwrites], "intent-op-%zu", s + 1);
			/* the seed's recipe: preview, execute, read back */
			struct pw w = {st->statement, st->source_ref, st->source_quote,
				       rev,           ops[nwrites],   NULL,
				       false};
			struct it_resp r;
			pref_send(rw_a, &j, act, st->key, &w, NULL, &r);
			IT_STATUS(&r, 200);
			check_write_answer(&r, "preview");
			long long next = rev == EXP_NULL ? 1 : rev + 1;
			IT_CHECK(rev_of(json_object_get(r.json, "view")) == next,
				 "step %zu: the preview's view is not at revision %lld", s + 1,
				 next);
			check_entry_after(json_object_get(r.json, "view"), act, st->key, &w, next,
					  "preview");
			it_resp_free(&r);
			snap_expect_same(&j, &before, "after the preview");

			w.execute = true;
			json_t *rc = apply_op(rw_a, &j, act, st->key, &w, supersedes);
			snprintf(hashes[nwrites], sizeof hashes[nwrites], "%s",
				 it_json_str(rc, "intent_hash"));
			json_decref(rc);
			actions[nwrites] =
			    act == REMEMBER ? "preference.remembered" : "preference.retired";
			if (review)
				snprintf(last_review_op, sizeof last_review_op, "%s", ops[nwrites]);
			nwrites++;
			rev = next;
			IT_CHECK(history_count(&j) == before.history + 1,
				 "step %zu: not exactly one new history item", s + 1);
			IT_CHECK(audit_count(&j) == before.audit + 1,
				 "step %zu: not exactly one new audit record", s + 1);
		}
		snap_free(&before);

		/* the next fresh decision reads the whole view */
		struct it_resp r;
		view_get(reader_a, &j, &r);
		IT_CHECK(rev_of(r.json) == st->want_revision,
			 "step %zu (%s): revision %lld, expected %lld", s + 1, st->intent,
			 rev_of(r.json), st->want_revision);
		const json_t *e = entry_of(r.json, REVIEW_KEY);
		IT_CHECK(e && it_json_str_is(e, "state", st->want_state),
			 "step %zu (%s): %s is not %s: %s", s + 1, st->intent, REVIEW_KEY,
			 st->want_state, r.body);
		if (st->want_statement)
			IT_CHECK(it_json_str_is(e, "statement", st->want_statement),
				 "step %zu (%s): the statement is not \"%s\": %s", s + 1,
				 st->intent, st->want_statement, r.body);
		else
			IT_CHECK(it_json_has_null(e, "statement"),
				 "step %zu (%s): the statement is not null: %s", s + 1, st->intent,
				 r.body);
		IT_CHECK(it_json_str_is(e, "operation_id", last_review_op),
			 "step %zu: %s's operation_id is not %s", s + 1, REVIEW_KEY,
			 last_review_op);
		for (size_t g = 0; g < 3 && st->gone[g]; g++)
			IT_CHECK(!contains(r.body, st->gone[g]),
				 "step %zu (%s): the superseded \"%s\" is still in the view: %s",
				 s + 1, st->intent, st->gone[g], r.body);
		it_resp_free(&r);
		json_t *hist = history_all(reader_a, &j);
		IT_CHECK(json_array_size(hist) == nwrites,
			 "step %zu: %zu history items, expected %zu", s + 1, json_array_size(hist),
			 nwrites);
		for (size_t k = 0; k < 3 && st->kept[k]; k++)
			IT_CHECK(history_has_statement(hist, st->kept[k]),
				 "step %zu: history lost \"%s\"", s + 1, st->kept[k]);
		json_decref(hist);
	}

	/* the retired entry names the retirement; the other key is untouched by it */
	json_t *v = view_now(&j);
	const json_t *e = entry_of(v, REVIEW_KEY);
	IT_CHECK(it_json_str_is(e, "source_ref", M_SREF "-owner-message-4") &&
		     it_json_int(e, "entry_revision", -1) == 3,
		 "the retired entry does not carry the retirement's source_ref and revision 3");
	e = entry_of(v, "style.commits");
	IT_CHECK(e && it_json_str_is(e, "statement", S_COMMITS) &&
		     it_json_int(e, "entry_revision", -1) == 4,
		 "style.commits is not active at entry_revision 4");
	IT_CHECK(entry_count(v) == 2, "expected 2 entries, got %zu", entry_count(v));
	json_decref(v);

	/* one audit record per operation, journal revisions, details without private text */
	json_t *recs = audit_of(admin_a, &j);
	IT_CHECK(json_array_size(recs) == nwrites, "%zu audit records, expected %zu",
		 json_array_size(recs), nwrites);
	char rid[256];
	snprintf(rid, sizeof rid, "%s/%s", j.goal, j.agent);
	for (size_t i = 0; i < nwrites; i++) {
		const json_t *rec = json_array_get(recs, i);
		const json_t *d = json_object_get(rec, "details");
		char *text = json_dumps(rec, JSON_COMPACT);
		IT_CHECK(it_json_str_is(rec, "action", actions[i]),
			 "record %zu: action is not %s: %s", i, actions[i], text);
		IT_CHECK(it_json_str_is(rec, "resource_type", "preference_journal") &&
			     it_json_str_is(rec, "resource_id", rid),
			 "record %zu: resource is not preference_journal %s: %s", i, rid, text);
		if (i == 0)
			IT_CHECK(
			    it_json_has_null(rec, "revision_before"),
			    "the journal's first audit record has revision_before not null: %s",
			    text);
		else
			IT_CHECK(it_json_int(rec, "revision_before", -1) == (long long)i,
				 "record %zu: revision_before: %s", i, text);
		IT_CHECK(it_json_int(rec, "revision_after", -1) == (long long)i + 1,
			 "record %zu: revision_after: %s", i, text);
		IT_CHECK(json_is_object(d) && json_object_size(d) == 3 &&
			     it_json_str_is(d, "operation_id", ops[i]) &&
			     it_json_str_is(d, "intent_hash", hashes[i]) &&
			     it_json_str(d, "key") != NULL,
			 "record %zu: details is not {key, operation_id, intent_hash} of the "
			 "operation: %s",
			 i, text);
		IT_CHECK(!has_marker(text), "record %zu holds private text: %s", i, text);
		free(text);
	}
	json_decref(recs);
	expect_audit_verify(admin_a, &j, (long long)nwrites);
}

/* ================================================================ the CAS race */

struct racer {
	const char *path;
	const char *token;
	char body[512];
	char op[64];
	char statement[64];
	pthread_barrier_t *barrier;
	long status;
	bool current_is_null;
	long long current_revision;
	char code[64];
	char outcome[16];
	char receipt[1024]; /* compact, sorted */
};

static void *race(void *arg)
{
	struct racer *rc = arg;
	struct it_resp r;
	pthread_barrier_wait(rc->barrier);
	it_request(&srv, "PUT", rc->path, rc->token, rc->body, NULL, &r);
	rc->status = r.status;
	rc->current_is_null = it_json_has_null(r.json, "current_revision");
	rc->current_revision = it_json_int(r.json, "current_revision", -1);
	snprintf(rc->code, sizeof rc->code, "%s",
		 it_json_str(r.json, "code") ? it_json_str(r.json, "code") : "");
	snprintf(rc->outcome, sizeof rc->outcome, "%s",
		 it_json_str(r.json, "status") ? it_json_str(r.json, "status") : "");
	char *receipt =
	    json_is_object(json_object_get(r.json, "receipt"))
		? json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS)
		: NULL;
	snprintf(rc->receipt, sizeof rc->receipt, "%s", receipt ? receipt : "");
	free(receipt);
	it_resp_free(&r);
	return NULL;
}

/* RACERS writers remember `key` with expected_revision `from` (EXP_NULL: null) at once */
static void run_pref_race(const struct journal *j, const char *key, long long from, const char *tag)
{
	struct racer racers[RACERS];
	pthread_t tids[RACERS];
	pthread_barrier_t barrier;
	char path[1024];
	key_path(j, key, REMEMBER, path, sizeof path);
	long long after = from == EXP_NULL ? 1 : from + 1;
	size_t hist_before = history_count(j), audit_before = audit_count(j);

	assert_int_equal(pthread_barrier_init(&barrier, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		memset(&racers[i], 0, sizeof racers[i]);
		racers[i].path = path;
		racers[i].token = rw_a;
		racers[i].barrier = &barrier;
		snprintf(racers[i].op, sizeof racers[i].op, "race-%s-%d", tag, i);
		snprintf(racers[i].statement, sizeof racers[i].statement, M_STMT "-race-%s-%d", tag,
			 i);
		struct pw w = {racers[i].statement,
			       M_SREF "-race",
			       M_QUOTE "-race",
			       from,
			       racers[i].op,
			       NULL,
			       true};
		json_t *b = pw_body(REMEMBER, &w);
		char *text = json_dumps(b, JSON_COMPACT);
		snprintf(racers[i].body, sizeof racers[i].body, "%s", text);
		free(text);
		json_decref(b);
	}
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&tids[i], NULL, race, &racers[i]), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);

	int ok = 0, stale = 0, winner = -1, loser = -1;
	for (int i = 0; i < RACERS; i++) {
		if (racers[i].status == 201 && strcmp(racers[i].outcome, "applied") == 0) {
			ok++;
			winner = i;
		} else if (racers[i].status == 409 &&
			   strcmp(racers[i].code, "stale_revision") == 0) {
			stale++;
			loser = i;
			IT_CHECK(racers[i].current_revision == after,
				 "race %s: a loser answered current_revision %lld, expected %lld",
				 tag, racers[i].current_revision, after);
		} else {
			fprintf(stderr, "racer %d: status %ld code \"%s\" status \"%s\"\n", i,
				racers[i].status, racers[i].code, racers[i].outcome);
		}
	}
	IT_CHECK(ok == 1 && stale == RACERS - 1,
		 "race %s: %d × 201 applied and %d × 409 stale_revision (expected 1 and %d)", tag,
		 ok, stale, RACERS - 1);

	json_t *v = view_now(j);
	const json_t *e = entry_of(v, key);
	IT_CHECK(rev_of(v) == after, "race %s: the journal is at %lld, expected %lld", tag,
		 rev_of(v), after);
	IT_CHECK(e && it_json_str_is(e, "operation_id", racers[winner].op) &&
		     it_json_str_is(e, "statement", racers[winner].statement),
		 "race %s: the view does not show the winner's write", tag);
	json_decref(v);

	json_t *hist = history_all(rw_a, j);
	IT_CHECK(json_array_size(hist) == hist_before + 1,
		 "race %s: %zu history items, expected %zu", tag, json_array_size(hist),
		 hist_before + 1);
	const json_t *last = json_array_get(hist, json_array_size(hist) - 1);
	IT_CHECK(it_json_str_is(last, "operation_id", racers[winner].op),
		 "race %s: the new history item is not the winner's", tag);
	json_decref(hist);
	IT_CHECK(audit_count(j) == audit_before + 1, "race %s: %zu audit records, expected %zu",
		 tag, audit_count(j), audit_before + 1);

	/* a loser wrote nothing, its operation id included: the same request again is still
	 * just stale (not replayed, not an operation_conflict) */
	struct it_resp r;
	it_request(&srv, "PUT", path, rw_a, racers[loser].body, NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == after,
		 "the loser's retry: current_revision is not %lld", after);
	it_resp_free(&r);
}

/* RACERS copies of one uncertain write (the same operation id, the same arguments) at once:
 * exactly one applies, every other one is replayed with the same receipt */
static void run_retry_race(const struct journal *j, const char *key, long long from,
			   const char *tag)
{
	struct racer racers[RACERS];
	pthread_t tids[RACERS];
	pthread_barrier_t barrier;
	char path[1024], op[64];
	key_path(j, key, REMEMBER, path, sizeof path);
	snprintf(op, sizeof op, "retry-race-%s", tag);
	long long after = from == EXP_NULL ? 1 : from + 1;
	size_t hist_before = history_count(j), audit_before = audit_count(j);
	struct pw w = {M_STMT "-retry-race",
		       M_SREF "-retry-race",
		       M_QUOTE "-retry-race",
		       from,
		       op,
		       NULL,
		       true};
	json_t *b = pw_body(REMEMBER, &w);
	char *text = json_dumps(b, JSON_COMPACT);
	json_decref(b);

	assert_int_equal(pthread_barrier_init(&barrier, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		memset(&racers[i], 0, sizeof racers[i]);
		racers[i].path = path;
		racers[i].token = rw_a;
		racers[i].barrier = &barrier;
		snprintf(racers[i].body, sizeof racers[i].body, "%s", text);
	}
	free(text);
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&tids[i], NULL, race, &racers[i]), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);

	int applied = 0, replayed = 0, winner = -1;
	for (int i = 0; i < RACERS; i++) {
		if (racers[i].status == 201 && strcmp(racers[i].outcome, "applied") == 0) {
			applied++;
			winner = i;
		} else if (racers[i].status == 200 && strcmp(racers[i].outcome, "replayed") == 0) {
			replayed++;
		} else {
			fprintf(stderr, "retry racer %d: status %ld code \"%s\" status \"%s\"\n", i,
				racers[i].status, racers[i].code, racers[i].outcome);
		}
	}
	IT_CHECK(applied == 1 && replayed == RACERS - 1,
		 "retry race %s: %d × 201 applied and %d × 200 replayed (expected 1 and %d)", tag,
		 applied, replayed, RACERS - 1);
	for (int i = 0; i < RACERS; i++)
		IT_CHECK(
		    strcmp(racers[i].receipt, racers[winner].receipt) == 0,
		    "retry race %s: racer %d answered another receipt\n  winner: %s\n  racer:  %s",
		    tag, i, racers[winner].receipt, racers[i].receipt);
	json_t *v = view_now(j);
	IT_CHECK(rev_of(v) == after, "retry race %s: the journal is at %lld, expected %lld", tag,
		 rev_of(v), after);
	json_decref(v);
	IT_CHECK(history_count(j) == hist_before + 1 && audit_count(j) == audit_before + 1,
		 "retry race %s: not exactly one history item and one audit record", tag);
}

static void test_race(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	/* from a never-written journal (expected_revision null) */
	run_pref_race(&j, "race.key", EXP_NULL, "null");
	/* from an existing revision */
	run_pref_race(&j, "race.key", 1, "one");
	expect_audit_verify(admin_a, &j, 2);
	/* concurrent copies of one uncertain write, on a fresh and on an existing journal */
	struct journal j2;
	journal_fresh(&j2);
	run_retry_race(&j2, "retry.key", EXP_NULL, "null");
	run_retry_race(&j2, "retry.key", 1, "one");
	expect_audit_verify(admin_a, &j2, 2);
}

/* ================================================================ uncertain-write retry */

static void test_uncertain_retry(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct pw w1 = {M_STMT "-r1 Deploy only on weekdays.",
			M_SREF "-r1",
			M_QUOTE "-r1 weekdays",
			EXP_NULL,
			"op-r1",
			"2099-06-01T12:00:00Z",
			true};
	json_t *receipt1 = apply_op(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL);
	json_t *view1 = view_now(&j);
	char *receipt1_text = json_dumps(receipt1, JSON_COMPACT | JSON_SORT_KEYS);

	/* another write in between, so the current view differs from the original one */
	it_sleep_ms(20);
	remember_ok(&j, REVIEW_KEY, M_STMT "-r2 Ask the reviewer.", M_SREF "-r2", M_QUOTE "-r2", 1,
		    "op-r2", NULL);
	json_t *view2 = view_now(&j);
	IT_CHECK(!json_equal(view1, view2), "the second write did not change the view?");

	/* the uncertain write retried: same id, same arguments (expected_revision null, now
	 * stale) → replayed, the original receipt, the current view; nothing written */
	it_sleep_ms(20);
	for (int preview = 0; preview < 2; preview++) {
		struct it_resp r;
		w1.execute = preview == 0;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL, &r);
		IT_STATUS(&r, 200);
		check_write_answer(&r, "replayed");
		char *got =
		    json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
		IT_CHECK(got && strcmp(got, receipt1_text) == 0,
			 "%s replay: the receipt is not the original one\n  original: %s\n  "
			 "replayed: %s",
			 preview ? "preview" : "execute", receipt1_text, got ? got : "?");
		free(got);
		IT_CHECK(json_equal(json_object_get(r.json, "view"), view2),
			 "%s replay: the view is not the current one: %s",
			 preview ? "preview" : "execute", r.body);
		it_resp_free(&r);
	}
	w1.execute = true;
	struct snap s;
	snap_take(&j, &s);
	IT_CHECK(s.history == 2 && s.audit == 2, "a replay wrote: history %zu, audit %zu",
		 s.history, s.audit);

	/* the same id with a changed argument → operation_conflict, whatever the revision */
	const long long revs[] = {EXP_NULL, 1, 2, 7};
	for (size_t i = 0; i < sizeof revs / sizeof *revs; i++) {
		struct pw c = w1;
		struct it_resp r;
		c.expected = revs[i];
		c.statement = M_STMT "-r1 Deploy on any day.";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	{
		struct pw c = w1;
		struct it_resp r;
		c.source_quote = M_QUOTE "-r1 changed quote";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		c = w1;
		c.expires_at = NULL;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* same id, same arguments, another key */
		c = w1;
		pref_send(rw_a, &j, REMEMBER, "deploy.window2", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* same id as a retirement of the same key */
		c = w1;
		c.expected = 2;
		pref_send(rw_a, &j, RETIRE, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* a preview of a changed same-id request is a conflict too */
		c = w1;
		c.execute = false;
		c.expected = 2;
		c.statement = M_STMT "-r1 Deploy on any day.";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the conflicts");

	/* a new id with a stale revision → stale_revision with current_revision */
	const long long stale[] = {EXP_NULL, 1, 3, 1000};
	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
		struct pw c = {M_STMT "-r3", M_SREF "-r3", M_QUOTE "-r3", stale[i],
			       "op-r3",      NULL,         true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2,
			 "stale: current_revision is not 2: %s", r.body);
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the stale writes");
	snap_free(&s);

	/* a retirement retried: replayed with its receipt; the replay of the original remember
	 * after the retirement does not resurrect the statement */
	struct pw wr = {NULL, M_SREF "-r4", M_QUOTE "-r4 forget the window", 2, "op-r4",
			NULL, true};
	json_t *receipt4 = apply_op(rw_a, &j, RETIRE, "deploy.window", &wr, "op-r1");
	char *receipt4_text = json_dumps(receipt4, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *view3 = view_now(&j);
	struct it_resp r;
	pref_send(rw_a, &j, RETIRE, "deploy.window", &wr, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	char *got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt4_text) == 0,
		 "retire replay: the receipt is not the original one\n  original: %s\n  replayed: "
		 "%s",
		 receipt4_text, got ? got : "?");
	free(got);
	IT_CHECK(json_equal(json_object_get(r.json, "view"), view3),
		 "retire replay: the view is not the current one");
	it_resp_free(&r);
	{
		struct pw c = wr;
		c.source_quote = M_QUOTE "-r4 another quote";
		pref_send(rw_a, &j, RETIRE, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	pref_send(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt1_text) == 0,
		 "the late replay does not answer the original receipt");
	free(got);
	const json_t *e = entry_of(json_object_get(r.json, "view"), "deploy.window");
	IT_CHECK(e && it_json_str_is(e, "state", "retired") && it_json_has_null(e, "statement"),
		 "a replay after the retirement shows the old projection: %s", r.body);
	IT_CHECK(!contains(r.body, M_STMT "-r1"), "a replay resurrected the old statement: %s",
		 r.body);
	it_resp_free(&r);
	expect_view_equal(&j, view3, "after the late replay");
	IT_CHECK(history_count(&j) == 3 && audit_count(&j) == 3,
		 "retries wrote history or audit records");

	/* stale on a never-written journal: current_revision null */
	struct journal j2;
	journal_fresh(&j2);
	struct pw c = {M_STMT "-r5", M_SREF "-r5", M_QUOTE "-r5", 1, "op-r5", NULL, true};
	pref_send(rw_a, &j2, REMEMBER, "deploy.window", &c, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "stale on a never-written journal: current_revision is not null: %s", r.body);
	it_resp_free(&r);
	json_t *v = view_now(&j2);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0, "the stale write wrote something");
	json_decref(v);

	free(receipt1_text);
	free(receipt4_text);
	json_decref(receipt1);
	json_decref(receipt4);
	json_decref(view1);
	json_decref(view2);
	json_decref(view3);
}

/* ================================================================ preview */

static void test_preview_writes_nothing(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* on a never-written journal: the would-be revision is 1 */
	struct pw p0 = {M_STMT "-p0", M_SREF "-p0", M_QUOTE "-p0", EXP_NULL, "op-p0", NULL, false};
	pref_send(rw_a, &j, REMEMBER, "first.key", &p0, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), REMEMBER, "first.key", &p0, 1,
			  "preview on an empty journal");
	IT_CHECK(entry_count(json_object_get(r.json, "view")) == 1, "the preview view has extras");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0,
		 "a preview wrote into a never-written journal");
	json_decref(v);
	IT_CHECK(history_count(&j) == 0 && audit_count(&j) == 0, "a preview wrote history/audit");

	/* a preview does not consume its operation id: the same request executed applies */
	p0.execute = true;
	json_decref(apply_op(rw_a, &j, REMEMBER, "first.key", &p0, NULL));

	struct snap s;
	snap_take(&j, &s);
	/* remember another key */
	struct pw p1 = {M_STMT "-p1", M_SREF "-p1",           M_QUOTE "-p1", 1,
			"op-p1",      "2099-01-01T00:00:00Z", false};
	pref_send(rw_a, &j, REMEMBER, "second.key", &p1, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	const json_t *pv = json_object_get(r.json, "view");
	IT_CHECK(rev_of(pv) == 2, "the preview's view is not at revision 2: %s", r.body);
	check_entry_after(pv, REMEMBER, "second.key", &p1, 2, "preview");
	check_entry_after(pv, REMEMBER, "first.key", &p0, 1, "preview (untouched key)");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a remember preview");

	/* correct a key */
	struct pw p2 = {M_STMT "-p2", M_SREF "-p2", M_QUOTE "-p2", 1, "op-p2", NULL, false};
	pref_send(rw_a, &j, REMEMBER, "first.key", &p2, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), REMEMBER, "first.key", &p2, 2,
			  "correction preview");
	IT_CHECK(!contains(r.body, M_STMT "-p0\""), "the correction preview still shows the old "
						    "statement");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a correction preview");

	/* retire */
	struct pw p3 = {NULL, M_SREF "-p3", M_QUOTE "-p3", 1, "op-p3", NULL, false};
	pref_send(rw_a, &j, RETIRE, "first.key", &p3, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), RETIRE, "first.key", &p3, 2,
			  "retire preview");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a retire preview");
	/* GET still shows the old revision (ETag checked by view_get) */
	view_get(reader_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 1, "GET after previews is not at revision 1");
	it_resp_free(&r);

	/* a preview validates everything: stale, bad body, unknown retire key */
	struct pw bad = p1;
	bad.expected = 5;
	pref_send(rw_a, &j, REMEMBER, "second.key", &bad, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
		 "preview stale: current_revision");
	it_resp_free(&r);
	bad = p1;
	bad.expires_at = "2020-01-01T00:00:00Z";
	pref_send(rw_a, &j, REMEMBER, "second.key", &bad, NULL, &r);
	expect_problem_private(&r, 422, "validation_failed");
	IT_FIELD(&r, "expires_at");
	it_resp_free(&r);
	bad = p3;
	pref_send(rw_a, &j, RETIRE, "never.key", &bad, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after rejected previews");
	snap_free(&s);

	/* executing the previewed operation applies it (201, not replayed) */
	p1.execute = true;
	json_decref(apply_op(rw_a, &j, REMEMBER, "second.key", &p1, NULL));
}

/* ================================================================ capacity */

static void test_capacity_keys(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char key[32], stmt[64], op[32];
	for (int i = 0; i < MAX_KEYS; i++) {
		snprintf(key, sizeof key, "key.%02d", i);
		snprintf(stmt, sizeof stmt, M_STMT "-cap-%02d", i);
		snprintf(op, sizeof op, "op-k%02d", i);
		remember_ok(&j, key, stmt, M_SREF "-cap", M_QUOTE "-cap", i == 0 ? EXP_NULL : i, op,
			    NULL);
	}
	struct snap s;
	snap_take(&j, &s);
	IT_CHECK(entry_count(s.view) == MAX_KEYS && rev_of(s.view) == MAX_KEYS,
		 "64 writes: %zu entries at revision %lld", entry_count(s.view), rev_of(s.view));

	/* the 65th key, preview and execute */
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {M_STMT "-cap-64", M_SREF "-cap", M_QUOTE "-cap", MAX_KEYS,
			       "op-k64",         NULL,          exec == 1};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "key.64", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a known operation id is decided before capacity: retrying key.10's write replays */
	{
		struct pw w = {
		    M_STMT "-cap-10", M_SREF "-cap", M_QUOTE "-cap", 10, "op-k10", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "key.10", &w, NULL, &r);
		IT_STATUS(&r, 200);
		check_write_answer(&r, "replayed");
		check_receipt(json_object_get(r.json, "receipt"), REMEMBER, "key.10", &w, 11, NULL);
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the 65th key");
	for (int i = 0; i < MAX_KEYS; i++) {
		snprintf(key, sizeof key, "key.%02d", i);
		snprintf(stmt, sizeof stmt, M_STMT "-cap-%02d", i);
		const json_t *e = entry_of(s.view, key);
		IT_CHECK(e && it_json_str_is(e, "state", "active") &&
			     it_json_str_is(e, "statement", stmt),
			 "%s is not intact", key);
	}
	snap_free(&s);

	/* a correction of an existing key does not add a key; a retired key still counts */
	remember_ok(&j, "key.00", M_STMT "-cap-00b", M_SREF "-cap-b", M_QUOTE "-cap-b", MAX_KEYS,
		    "op-k00b", "op-k00");
	retire_ok(&j, "key.01", M_SREF "-cap-r", M_QUOTE "-cap-r", MAX_KEYS + 1, "op-k01r",
		  "op-k01");
	struct pw w = {
	    M_STMT "-cap-65", M_SREF "-cap", M_QUOTE "-cap", MAX_KEYS + 2, "op-k65", NULL, true};
	struct it_resp r;
	pref_send(rw_a, &j, REMEMBER, "key.65", &w, NULL, &r);
	expect_problem_private(&r, 422, "capacity_exceeded");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == MAX_KEYS && rev_of(v) == MAX_KEYS + 2,
		 "after correction + retire: %zu entries at revision %lld", entry_count(v),
		 rev_of(v));
	json_decref(v);

	/* the default history page is 20 items */
	size_t pages = 0;
	json_t *h = history_walk(rw_a, &j, 0, &pages);
	IT_CHECK(json_array_size(h) == MAX_KEYS + 2 && pages == 4,
		 "default-limit walk: %zu items in %zu pages (expected 66 in 4)",
		 json_array_size(h), pages);
	json_decref(h);
}

static void test_capacity_bytes(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char key[32], op[32], prefix[64];
	/* 11 keys of 1200 + 1600 bytes = 30800, then 368 + 1600 = 1968: exactly 32768 */
	for (int i = 0; i < 12; i++) {
		snprintf(key, sizeof key, "cap.%02d", i);
		snprintf(op, sizeof op, "op-b%02d", i);
		snprintf(prefix, sizeof prefix, M_STMT "-bytes-%02d-", i);
		char *stmt = text_of(prefix, i < 11 ? 1200 : 368, 's');
		snprintf(prefix, sizeof prefix, M_QUOTE "-bytes-%02d-", i);
		char *quote = text_of(prefix, 1600, 'q');
		remember_ok(&j, key, stmt, M_SREF "-bytes", quote, i == 0 ? EXP_NULL : i, op, NULL);
		free(stmt);
		free(quote);
	}
	long long rev = 12;
	struct snap s;
	snap_take(&j, &s);

	/* one byte more: correct cap.11 with a statement of 369 bytes (preview and execute) */
	char *quote11 = text_of(M_QUOTE "-bytes-11-", 1600, 'q');
	char *stmt369 = text_of(M_STMT "-bytes-11b-", 369, 't');
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {stmt369, M_SREF "-bytes", quote11, rev, "op-b11-over",
			       NULL,    exec == 1};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.11", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a new key of two bytes is over, too */
	{
		struct pw w = {"s", M_SREF "-bytes", "q", rev, "op-b12-over", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.12", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after writes beyond 32 KiB");
	snap_free(&s);

	/* the latest statement counts, not the history: another 368-byte statement fits */
	char *stmt368 = text_of(M_STMT "-bytes-11c-", 368, 'u');
	remember_ok(&j, "cap.11", stmt368, M_SREF "-bytes", quote11, rev, "op-b11c", "op-b11");
	rev++;

	/* retire cap.01 with a 1600-byte quote: it now counts 1600 instead of 2800 */
	char *rquote = text_of(M_QUOTE "-bytes-retire-01-", 1600, 'r');
	retire_ok(&j, "cap.01", M_SREF "-bytes-retire", rquote, rev, "op-b01r", "op-b01");
	rev++;
	/* 31568 + 600 + 600 = 32768 exactly */
	char *s12 = text_of(M_STMT "-bytes-12-", 600, 's');
	char *q12 = text_of(M_QUOTE "-bytes-12-", 600, 'q');
	remember_ok(&j, "cap.12", s12, M_SREF "-bytes", q12, rev, "op-b12", NULL);
	rev++;
	{
		struct pw w = {"s", M_SREF "-bytes", "q", rev, "op-b13-over", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.13", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a retirement is a write too: retiring cap.12 (1200 bytes) with a 1600-byte quote
	 * would make 33168 */
	{
		struct pw w = {NULL, M_SREF "-bytes-retire-12", rquote, rev, "op-b12r-over", NULL,
			       true};
		struct it_resp r;
		pref_send(rw_a, &j, RETIRE, "cap.12", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* with a 1199-byte quote it makes 32767 */
	char *rquote12 = text_of(M_QUOTE "-bytes-retire-12-", 1199, 'r');
	retire_ok(&j, "cap.12", M_SREF "-bytes-retire-12", rquote12, rev, "op-b12r", "op-b12");
	rev++;

	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == 13 && rev_of(v) == rev,
		 "32 KiB journal: %zu entries at revision %lld (expected 13 at %lld)",
		 entry_count(v), rev_of(v), rev);
	const json_t *e = entry_of(v, "cap.05");
	IT_CHECK(e && it_json_str_is(e, "state", "active"), "cap.05 is not intact");
	json_decref(v);

	free(quote11);
	free(stmt369);
	free(stmt368);
	free(rquote);
	free(s12);
	free(q12);
	free(rquote12);
}

/* ================================================================ expiry */

static void test_expiry(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char exp[IT_TIME_LEN];
	long long exp_ms = it_now_ms() + 2000;
	it_rfc3339_ms(exp_ms, exp);
	struct pw w = {M_STMT "-exp Only this sprint.",
		       M_SREF "-exp",
		       M_QUOTE "-exp",
		       EXP_NULL,
		       "op-e1",
		       exp,
		       true};
	json_t *receipt1 = apply_op(rw_a, &j, REMEMBER, "sprint.rule", &w, NULL);
	char *receipt1_text = json_dumps(receipt1, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(receipt1);
	remember_ok(&j, "steady.rule", M_STMT "-steady", M_SREF "-steady", M_QUOTE "-steady", 1,
		    "op-e2", NULL);
	json_t *v = view_now(&j);
	const json_t *e = entry_of(v, "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "active") &&
		     it_json_str_is(e, "statement", w.statement),
		 "sprint.rule is not active before its expiry");
	json_decref(v);
	size_t hist = history_count(&j), aud = audit_count(&j);

	it_sleep_until_ms(exp_ms + 500);
	struct it_resp r;
	view_get(reader_a, &j, &r);
	e = entry_of(r.json, "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "expired") && it_json_has_null(e, "statement") &&
		     same_expiry(it_json_str(e, "expires_at"), exp) &&
		     it_json_int(e, "entry_revision", -1) == 1 &&
		     it_json_str_is(e, "operation_id", "op-e1"),
		 "after %s: sprint.rule is not {state: expired, statement: null, expires_at kept, "
		 "entry_revision 1}: %s",
		 exp, r.body);
	IT_CHECK(!contains(r.body, M_STMT "-exp"), "the expired statement is still in the view");
	IT_CHECK(rev_of(r.json) == 2, "expiry changed the journal revision");
	e = entry_of(r.json, "steady.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "active"), "steady.rule did not stay active");
	it_resp_free(&r);
	IT_CHECK(history_count(&j) == hist && audit_count(&j) == aud,
		 "expiry wrote history or audit records");

	/* the uncertain write retried after its expiry passed: replayed (the known operation id
	 * is decided before "in the future"), the original receipt, the current view */
	pref_send(rw_a, &j, REMEMBER, "sprint.rule", &w, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	char *got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt1_text) == 0,
		 "replay after expiry: not the original receipt\n  original: %s\n  replayed: %s",
		 receipt1_text, got ? got : "?");
	free(got);
	e = entry_of(json_object_get(r.json, "view"), "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "expired") && it_json_has_null(e, "statement"),
		 "the replay after expiry does not show the current (expired) entry: %s", r.body);
	it_resp_free(&r);
	free(receipt1_text);
	/* the same operation id with other arguments is still a conflict */
	{
		struct pw c = w;
		c.statement = M_STMT "-exp changed";
		pref_send(rw_a, &j, REMEMBER, "sprint.rule", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	IT_CHECK(history_count(&j) == hist && audit_count(&j) == aud,
		 "the replay after expiry wrote history or audit records");

	/* not real dates, not in the future → 422 naming expires_at; nothing written */
	struct snap s;
	snap_take(&j, &s);
	char past[IT_TIME_LEN];
	it_rfc3339_ms(it_now_ms() - 5000, past);
	const char *bad[] = {
	    "2030-02-30T00:00:00Z",
	    "2029-02-29T00:00:00Z",
	    "2030-13-01T00:00:00Z",
	    "2030-01-01T24:00:01Z",
	    "2020-01-01T00:00:00Z",
	    "2000-01-01T00:00:00.000Z",
	    "tomorrow",
	    "",
	    "2099-01-01T00:00:00+02:00",
	    "2099-01-01T00:00:00+00:00",
	    "2099-01-01T00:00:00",
	    past,
	    /* the epoch is a past instant like any other, not "never expires" */
	    "1970-01-01T00:00:00Z",
	    "1970-01-01T00:00:00.000Z",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct pw c = {M_STMT "-bad-exp",
			       M_SREF "-bad-exp",
			       M_QUOTE "-bad-exp",
			       2,
			       "op-bad-exp",
			       bad[i],
			       true};
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "  expires_at: \"%s\"\n", c.expires_at);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	{
		/* a number is a wrong type */
		json_t *b =
		    json_pack("{s:s, s:s, s:s, s:I, s:s, s:i, s:b}", "statement", M_STMT "-bad-exp",
			      "source_ref", M_SREF "-bad-exp", "source_quote", M_QUOTE "-bad-exp",
			      "expected_revision", (json_int_t)2, "operation_id", "op-bad-exp",
			      "expires_at", 42, "execute", 1);
		char path[1024];
		key_path(&j, "other.rule", REMEMBER, path, sizeof path);
		send_json("PUT", path, rw_a, b, NULL, &r);
		json_decref(b);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	/* "in the future" is decided before If-Match and expected_revision */
	{
		const char *wrong_match[] = {"If-Match: \"9\"", NULL};
		struct pw c = {M_STMT "-bad-exp",
			       M_SREF "-bad-exp",
			       M_QUOTE "-bad-exp",
			       99,
			       "op-bad-exp",
			       past,
			       true};
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, NULL, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
		c.expected = 2;
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, wrong_match, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after invalid expires_at");
	snap_free(&s);

	/* real dates in the future pass (a leap day; whole seconds; explicit null) */
	struct pw ok1 = {M_STMT "-leap",
			 M_SREF "-leap",
			 M_QUOTE "-leap",
			 2,
			 "op-e3",
			 "2096-02-29T23:59:59Z",
			 true};
	json_decref(apply_op(rw_a, &j, REMEMBER, "leap.rule", &ok1, NULL));
	{
		json_t *b =
		    json_pack("{s:s, s:s, s:s, s:I, s:s, s:n, s:b}", "statement",
			      M_STMT "-null-exp", "source_ref", M_SREF "-null-exp", "source_quote",
			      M_QUOTE "-null-exp", "expected_revision", (json_int_t)3,
			      "operation_id", "op-e4", "expires_at", "execute", 1);
		char path[1024];
		key_path(&j, "null.rule", REMEMBER, path, sizeof path);
		send_json("PUT", path, rw_a, b, NULL, &r);
		json_decref(b);
		IT_STATUS(&r, 201);
		const json_t *ne = entry_of(json_object_get(r.json, "view"), "null.rule");
		IT_CHECK(ne && it_json_has_null(ne, "expires_at"),
			 "expires_at null is not kept null");
		it_resp_free(&r);
	}

	/* a correction of the expired key makes it active again */
	remember_ok(&j, "sprint.rule", M_STMT "-exp2 Every sprint.", M_SREF "-exp2",
		    M_QUOTE "-exp2", 4, "op-e5", "op-e1");
}

/* ================================================================ retirement rules */

static void test_retire_rules(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* never-written journal: retire → 404 (after the expected_revision check) */
	struct pw rt = {NULL, M_SREF "-rt0", M_QUOTE "-rt0", EXP_NULL, "op-rt0", NULL, true};
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0, "a 404 retire wrote something");
	json_decref(v);

	remember_ok(&j, "rule.key", M_STMT "-rt1 Squash before merging.", M_SREF "-rt1",
		    M_QUOTE "-rt1", EXP_NULL, "op-rt1", NULL);
	struct snap s;
	snap_take(&j, &s);
	rt.expected = 1;
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	/* a stale retirement of an unknown key is stale first */
	rt.expected = 5;
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after retiring unknown keys");
	snap_free(&s);

	retire_ok(&j, "rule.key", M_SREF "-rt-retire", M_QUOTE "-rt2 forget squashing", 1, "op-rt2",
		  "op-rt1");
	snap_take(&j, &s);
	/* re-remember with the retirement's source_ref → 422 naming source_ref */
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {M_STMT "-rt3 Squash again.",
			       M_SREF "-rt-retire",
			       M_QUOTE "-rt3",
			       2,
			       "op-rt3",
			       NULL,
			       exec == 1};
		pref_send(rw_a, &j, REMEMBER, "rule.key", &w, NULL, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "source_ref");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after re-remembering with the retirement's source_ref");
	snap_free(&s);

	/* with a fresh source_ref → 201 active again */
	remember_ok(&j, "rule.key", M_STMT "-rt4 Squash again.", M_SREF "-rt4-fresh",
		    M_QUOTE "-rt4", 2, "op-rt4", "op-rt2");
	v = view_now(&j);
	const json_t *e = entry_of(v, "rule.key");
	IT_CHECK(e && it_json_str_is(e, "state", "active") &&
		     it_json_str_is(e, "statement", M_STMT "-rt4 Squash again.") &&
		     it_json_int(e, "entry_revision", -1) == 3,
		 "rule.key is not active again at revision 3");
	char *text = json_dumps(v, JSON_COMPACT);
	IT_CHECK(!contains(text, M_STMT "-rt1"), "the first statement came back: %s", text);
	free(text);
	json_decref(v);
}

/* ================================================================ history walk */

static void test_history_walk(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* a never-written journal has an empty history */
	json_t *h0 = history_walk(rw_a, &j, 2, NULL);
	IT_CHECK(json_array_size(h0) == 0, "a never-written journal has history");
	json_decref(h0);

	struct step {
		enum action act;
		const char *key;
		const char *op;
		const char *pred; /* expected predecessor_operation_id */
	} steps[] = {
	    {REMEMBER, "alpha", "op-h1", NULL},    {REMEMBER, "beta", "op-h2", NULL},
	    {REMEMBER, "alpha", "op-h3", "op-h1"}, {RETIRE, "beta", "op-h4", "op-h2"},
	    {REMEMBER, "gamma", "op-h5", NULL},    {REMEMBER, "gamma", "op-h6", "op-h5"},
	    {RETIRE, "alpha", "op-h7", "op-h3"},
	};
	size_t n = sizeof steps / sizeof *steps;
	char stmts[sizeof steps / sizeof *steps][64], quotes[sizeof steps / sizeof *steps][64],
	    srefs[sizeof steps / sizeof *steps][64];
	for (size_t i = 0; i < n; i++) {
		snprintf(stmts[i], sizeof stmts[i], M_STMT "-h%zu", i + 1);
		snprintf(quotes[i], sizeof quotes[i], M_QUOTE "-h%zu", i + 1);
		snprintf(srefs[i], sizeof srefs[i], M_SREF "-h%zu", i + 1);
		struct pw w = {steps[i].act == REMEMBER ? stmts[i] : NULL,
			       srefs[i],
			       quotes[i],
			       i == 0 ? EXP_NULL : (long long)i,
			       steps[i].op,
			       NULL,
			       true};
		json_decref(apply_op(rw_a, &j, steps[i].act, steps[i].key, &w, steps[i].pred));
	}

	size_t pages = 0;
	json_t *h = history_walk(reader_a, &j, 2, &pages);
	IT_CHECK(json_array_size(h) == n, "the limit=2 walk returned %zu items, expected %zu",
		 json_array_size(h), n);
	IT_CHECK(pages == (n + 1) / 2, "the limit=2 walk took %zu pages, expected %zu", pages,
		 (n + 1) / 2);
	for (size_t i = 0; i < n; i++) {
		const json_t *it = json_array_get(h, i);
		char *text = json_dumps(it, JSON_COMPACT);
		IT_CHECK(it_json_str_is(it, "operation_id", steps[i].op),
			 "history item %zu is not %s (every operation once, oldest first): %s", i,
			 steps[i].op, text);
		/* exactly once */
		for (size_t k = 0; k < i; k++)
			IT_CHECK(!it_json_str_is(json_array_get(h, k), "operation_id", steps[i].op),
				 "%s appears twice", steps[i].op);
		IT_CHECK(it_json_str_is(it, "key", steps[i].key) &&
			     it_json_str_is(it, "action",
					    steps[i].act == REMEMBER ? "remember" : "retire") &&
			     it_json_int(it, "revision_after", -1) == (long long)i + 1 &&
			     it_json_str_is(it, "source_ref", srefs[i]) &&
			     it_json_str_is(it, "source_quote", quotes[i]),
			 "history item %zu: %s", i, text);
		if (steps[i].act == REMEMBER)
			IT_CHECK(it_json_str_is(it, "statement", stmts[i]),
				 "history item %zu does not keep its statement: %s", i, text);
		else
			IT_CHECK(it_json_has_null(it, "statement"),
				 "history of a retirement has a statement: %s", text);
		if (steps[i].pred)
			IT_CHECK(it_json_str_is(it, "predecessor_operation_id", steps[i].pred),
				 "history item %zu: predecessor_operation_id is not %s: %s", i,
				 steps[i].pred, text);
		else
			IT_CHECK(it_json_has_null(it, "predecessor_operation_id"),
				 "history item %zu: predecessor_operation_id is not null: %s", i,
				 text);
		free(text);
	}
	/* the whole history in one page equals the walk */
	json_t *one = history_walk(reader_a, &j, 200, &pages);
	IT_CHECK(json_equal(one, h) && pages == 1, "the limit=200 read differs from the walk");
	json_decref(one);
	json_decref(h);

	/* history is never part of the view */
	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == 3, "the view holds %zu entries, expected 3", entry_count(v));
	char *text = json_dumps(v, JSON_COMPACT);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(steps[i].op, "op-h6") == 0)
			continue; /* gamma's current statement */
		char needle[sizeof stmts[0] + 2]; /* the statement in quotes */
		IT_CHECK(snprintf(needle, sizeof needle, "\"%s\"", stmts[i]) < (int)sizeof needle,
			 "statement %zu does not fit its needle", i);
		IT_CHECK(!contains(text, needle), "the view shows history statement %s: %s",
			 stmts[i], text);
	}
	free(text);
	json_decref(v);

	/* limit bounds */
	const char *bad[] = {"limit=0", "limit=201", "limit=-1", "limit=abc"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[1024];
		snprintf(path, sizeof path, "/v1/goals/%s/agents/%s/preference-history?%s", j.goal,
			 j.agent, bad[i]);
		it_request(&srv, "GET", path, reader_a, NULL, NULL, &r);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_FIELD(&r, "limit");
		it_resp_free(&r);
	}
}

/* ================================================================ isolation */

static void expect_empty_journal(const char *token, const struct journal *j, const char *what)
{
	struct it_resp r;
	view_get(token, j, &r);
	IT_CHECK(rev_of(r.json) == EXP_NULL && entry_count(r.json) == 0,
		 "%s: expected {revision: null, entries: []}, got %s", what, r.body);
	IT_CHECK(!has_marker(r.body), "%s: the view leaks another journal: %s", what, r.body);
	it_resp_free(&r);
	json_t *h = history_all(token, j);
	IT_CHECK(json_array_size(h) == 0, "%s: history is not empty", what);
	json_decref(h);
}

static void test_isolation(void **state)
{
	(void)state;
	struct journal a1, a2, b1;
	journal_fresh(&a1);
	a2 = a1;
	b1 = a1;
	char *agent2 = it_unique("agent2");
	char *goal_b = it_unique("goalb");
	snprintf(a2.agent, sizeof a2.agent, "%s", agent2);
	snprintf(b1.goal, sizeof b1.goal, "%s", goal_b);
	free(agent2);
	free(goal_b);

	remember_ok(&a1, REVIEW_KEY, M_STMT "-iso Ask the reviewer.", M_SREF "-iso", M_QUOTE "-iso",
		    EXP_NULL, "op-iso1", NULL);
	expect_empty_journal(rw_a, &a2, "(goal A, agent 2)");
	expect_empty_journal(rw_a, &b1, "(goal B, agent 1)");
	expect_empty_journal(rw_b, &a1, "tenant B's (goal A, agent 1)");

	/* tenant B: A's revision is stale for B, A's key is unknown to B, A's op id is free */
	struct it_resp r;
	struct pw w = {
	    M_STMT "-iso-b", M_SREF "-iso-b", M_QUOTE "-iso-b", 1, "op-iso1", NULL, true};
	pref_send(rw_b, &a1, REMEMBER, REVIEW_KEY, &w, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "tenant B sees a current_revision for A's journal: %s", r.body);
	it_resp_free(&r);
	struct pw rt = {NULL, M_SREF "-iso-b", M_QUOTE "-iso-b", EXP_NULL, "op-iso-r", NULL, true};
	pref_send(rw_b, &a1, RETIRE, REVIEW_KEY, &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	w.expected = EXP_NULL;
	json_decref(apply_op(rw_b, &a1, REMEMBER, REVIEW_KEY, &w, NULL));
	/* agent 2 of the same goal uses the same op id and key independently */
	struct pw w2 = {
	    M_STMT "-iso-a2", M_SREF "-iso-a2", M_QUOTE "-iso-a2", EXP_NULL, "op-iso1", NULL, true};
	json_decref(apply_op(rw_a, &a2, REMEMBER, REVIEW_KEY, &w2, NULL));

	/* A's journal is as it was */
	json_t *v = view_now(&a1);
	const json_t *e = entry_of(v, REVIEW_KEY);
	IT_CHECK(rev_of(v) == 1 && entry_count(v) == 1 &&
		     it_json_str_is(e, "statement", M_STMT "-iso Ask the reviewer."),
		 "tenant A's journal changed");
	json_decref(v);
	expect_empty_journal(rw_a, &b1, "(goal B, agent 1) after the other writes");

	/* audit: B's records are B's; A sees only its own for this journal */
	json_t *ra = audit_of(admin_a, &a1), *rb = audit_of(admin_b, &a1);
	IT_CHECK(json_array_size(ra) == 1 && json_array_size(rb) == 1,
		 "audit for (goal A, agent 1): tenant A %zu records, tenant B %zu (expected 1 and "
		 "1)",
		 json_array_size(ra), json_array_size(rb));
	IT_CHECK(it_json_int(json_array_get(ra, 0), "seq", -1) !=
		     it_json_int(json_array_get(rb, 0), "seq", -2),
		 "both tenants see the same audit record");
	json_decref(ra);
	json_decref(rb);
}

/* ================================================================ field bounds */

/* sends body (json) as a remember (PUT) or retire (POST) of key */
static void send_raw(const struct journal *j, enum action act, const char *key, const json_t *body,
		     struct it_resp *r)
{
	char path[1024];
	key_path(j, key, act, path, sizeof path);
	send_json(act == REMEMBER ? "PUT" : "POST", path, rw_a, body, NULL, r);
}

static void expect_rejected(const struct journal *j, enum action act, const char *key,
			    const json_t *body, const char *code, const char *field)
{
	struct it_resp r;
	send_raw(j, act, key, body, &r);
	if (r.status != 422 || !it_problem_has_field(&r, field)) {
		char *text = json_dumps(body, JSON_COMPACT);
		fprintf(stderr, "  body sent: %.300s%s\n", text, strlen(text) > 300 ? " ..." : "");
		free(text);
	}
	expect_problem_private(&r, 422, code);
	IT_FIELD(&r, field);
	it_resp_free(&r);
}

static void test_field_bounds(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	long long rev = EXP_NULL;
	int opn = 0;
	char op[160];
	struct it_resp r;
#define NEXT_OP() (snprintf(op, sizeof op, "op-fb-%d", ++opn), op)
#define APPLY(act, key, w, sup)                                                                    \
	(json_decref(apply_op(rw_a, &j, (act), (key), (w), (sup))),                                \
	 rev = rev == EXP_NULL ? 1 : rev + 1)

	char *s1200 = text_of(M_STMT "-fb-", 1200, 's');
	char *s1201 = text_of(M_STMT "-fb-", 1201, 's');
	char *r1024 = text_of(M_SREF "-fb-", 1024, 'r');
	char *r1025 = text_of(M_SREF "-fb-", 1025, 'r');
	char *q1600 = text_of(M_QUOTE "-fb-", 1600, 'q');
	char *q1601 = text_of(M_QUOTE "-fb-", 1601, 'q');
	char *o128 = text_of("op-fb-long-", 128, 'o');
	char *o129 = text_of("op-fb-long-", 129, 'o');
	char *k128 = text_of("k", 128, 'a');
	char *k129 = text_of("k", 129, 'a');
	/* bytes, not characters: U+00E9 is two bytes. mb1200: 1200 bytes in 609 characters;
	 * mb1201: 1201 bytes in 610 characters (far below 1200 characters) */
	const char *mb_prefix = M_STMT "-fb-mb-";
	char *mb1200 = repeat_utf8(mb_prefix, "\xc3\xa9", (1200 - strlen(mb_prefix)) / 2);
	assert_int_equal(strlen(mb1200), 1200);
	char *mb1201 = malloc(1202);
	assert_non_null(mb1201);
	memcpy(mb1201, mb1200, 1200);
	mb1201[1200] = 'x';
	mb1201[1201] = '\0';

	/* passes at the edges */
	struct pw base = {
	    M_STMT "-fb-base", M_SREF "-fb-base", M_QUOTE "-fb-base", EXP_NULL, NULL, NULL, true};
	struct pw w = base;
	w.statement = s1200;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.statement", &w, NULL);
	w = base;
	w.statement = mb1200;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.statement.mb", &w, NULL);
	w = base;
	w.source_ref = r1024;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.source-ref", &w, NULL);
	w = base;
	w.source_quote = q1600;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.source_quote", &w, NULL);
	w = base;
	w.operation_id = o128;
	w.expected = rev;
	APPLY(REMEMBER, "bound.operation-id", &w, NULL);
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, k128, &w, NULL);
	w = base;
	w.statement = "s";
	w.source_ref = "r";
	w.source_quote = "q";
	w.operation_id = "o";
	w.expected = rev;
	APPLY(REMEMBER, "0", &w, NULL);
	/* retire at the edges */
	w = base;
	w.source_ref = r1024;
	w.source_quote = q1600;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(RETIRE, "bound.statement", &w, "op-fb-1");

	long long passes = rev;
	struct snap s;
	snap_take(&j, &s);

	/* one past each edge (and empty strings) → 422 naming the field */
	struct {
		const char *field;
		const char *value;
	} over[] = {
	    {"statement", s1201},  {"statement", mb1201},  {"statement", ""},
	    {"source_ref", r1025}, {"source_ref", ""},     {"source_quote", q1601},
	    {"source_quote", ""},  {"operation_id", o129}, {"operation_id", ""},
	};
	for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_set_new(b, over[i].field, json_string(over[i].value));
		expect_rejected(&j, REMEMBER, "bound.over", b, "validation_failed", over[i].field);
		json_decref(b);
		if (strcmp(over[i].field, "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_set_new(b, over[i].field, json_string(over[i].value));
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					over[i].field);
			json_decref(b);
		}
	}

	/* the key: 129 characters, upper case, a bad first character */
	const char *bad_keys[] = {
	    k129,      "Review.collaboration", "review.Collab", "-review", ".review", "_review",
	    "review:x"};
	for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		expect_rejected(&j, REMEMBER, bad_keys[i], b, "validation_failed", "key");
		json_decref(b);
		b = pw_body(RETIRE, &w);
		expect_rejected(&j, RETIRE, bad_keys[i], b, "validation_failed", "key");
		json_decref(b);
	}

	/* required members, types, expected_revision 0 */
	const char *required[] = {"statement",         "source_ref",   "source_quote",
				  "expected_revision", "operation_id", "execute"};
	for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_del(b, required[i]);
		expect_rejected(&j, REMEMBER, "bound.missing", b, "validation_failed", required[i]);
		json_decref(b);
		if (strcmp(required[i], "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_del(b, required[i]);
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					required[i]);
			json_decref(b);
		}
	}
	struct {
		const char *field;
		json_t *value;
	} wrong[] = {
	    {"expected_revision", json_integer(0)},
	    {"expected_revision", json_integer(-1)},
	    {"expected_revision", json_string("1")},
	    {"expected_revision", json_real(1.5)},
	    {"execute", json_string("true")},
	    {"execute", json_null()},
	    {"execute", json_integer(1)},
	    {"statement", json_integer(5)},
	    {"statement", json_null()},
	    {"source_ref", json_null()},
	    {"operation_id", json_integer(7)},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_set(b, wrong[i].field, wrong[i].value);
		expect_rejected(&j, REMEMBER, "bound.type", b, "validation_failed", wrong[i].field);
		json_decref(b);
		if (strcmp(wrong[i].field, "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_set(b, wrong[i].field, wrong[i].value);
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					wrong[i].field);
			json_decref(b);
		}
		json_decref(wrong[i].value);
	}

	/* unknown members → unknown_field naming them (a statement in a retirement, too) */
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	json_t *b = pw_body(REMEMBER, &w);
	json_object_set_new(b, "colour", json_string("blue"));
	expect_rejected(&j, REMEMBER, "bound.unknown", b, "unknown_field", "colour");
	json_decref(b);
	b = pw_body(RETIRE, &w);
	json_object_set_new(b, "statement", json_string(M_STMT "-fb-retire"));
	expect_rejected(&j, RETIRE, "bound.source-ref", b, "unknown_field", "statement");
	json_decref(b);
	b = pw_body(RETIRE, &w);
	json_object_set_new(b, "expires_at", json_string("2031-01-01T00:00:00Z"));
	expect_rejected(&j, RETIRE, "bound.source-ref", b, "unknown_field", "expires_at");
	json_decref(b);

	/* not an object → 422; not JSON → 400 */
	char path[1024];
	key_path(&j, "bound.shape", REMEMBER, path, sizeof path);
	it_request(&srv, "PUT", path, rw_a, "[1,2]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, rw_a, "{\"statement\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* caller-chosen ids in the path */
	struct journal badj = j;
	snprintf(badj.goal, sizeof badj.goal, "-bad-goal");
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	pref_send(rw_a, &badj, REMEMBER, "bound.path", &w, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "goal_id");
	it_resp_free(&r);
	badj = j;
	snprintf(badj.agent, sizeof badj.agent, "-bad-agent");
	pref_send(rw_a, &badj, REMEMBER, "bound.path", &w, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "agent_id");
	it_resp_free(&r);
	char vp[512];
	view_path(&badj, vp, sizeof vp);
	it_request(&srv, "GET", vp, rw_a, NULL, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "agent_id");
	it_resp_free(&r);

	snap_expect_same(&j, &s, "after the rejected bodies");
	IT_CHECK((long long)s.history == passes, "%zu history items for %lld passes", s.history,
		 passes);
	snap_free(&s);

	free(s1200);
	free(s1201);
	free(r1024);
	free(r1025);
	free(q1600);
	free(q1601);
	free(o128);
	free(o129);
	free(k128);
	free(k129);
	free(mb1200);
	free(mb1201);
#undef NEXT_OP
#undef APPLY
}

/* ================================================================ scopes */

static void test_scopes(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;
	char vp[512], hp[512];
	view_path(&j, vp, sizeof vp);
	snprintf(hp, sizeof hp, "/v1/goals/%s/agents/%s/preference-history", j.goal, j.agent);

	/* preferences:read cannot write */
	struct pw w = {M_STMT "-sc", M_SREF "-sc", M_QUOTE "-sc", EXP_NULL, "op-sc1", NULL, true};
	pref_send(reader_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	w.execute = false;
	pref_send(reader_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	w.execute = true;
	pref_send(other_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	pref_send(NULL, &j, REMEMBER, "scope.key", &w, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL, "a refused write wrote");
	json_decref(v);

	/* preferences:write alone can write, but not read */
	json_decref(apply_op(writer_a, &j, REMEMBER, "scope.key", &w, NULL));
	struct pw rt = {NULL, M_SREF "-sc2", M_QUOTE "-sc2", 1, "op-sc2", NULL, true};
	pref_send(reader_a, &j, RETIRE, "scope.key", &rt, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	const char *no_read[] = {writer_a, other_a};
	for (size_t i = 0; i < 2; i++) {
		it_request(&srv, "GET", vp, no_read[i], NULL, NULL, &r);
		expect_problem_private(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, "GET", hp, no_read[i], NULL, NULL, &r);
		expect_problem_private(&r, 403, "forbidden");
		it_resp_free(&r);
	}
	it_request(&srv, "GET", vp, NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	/* the reader reads */
	view_get(reader_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 1, "the reader does not see revision 1");
	it_resp_free(&r);
	/* admin implies both */
	json_decref(apply_op(admin_a, &j, RETIRE, "scope.key", &rt, "op-sc1"));
	view_get(admin_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 2, "admin does not see revision 2");
	it_resp_free(&r);
}

/* ================================================================ If-Match */

static void test_if_match(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* a never-written journal has no ETag: If-Match "1" fails, * passes */
	struct pw w = {M_STMT "-im1", M_SREF "-im1", M_QUOTE "-im1", EXP_NULL, "op-im1",
		       NULL,          true};
	const char *h1[] = {"If-Match: \"1\"", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, h1, &r);
	expect_problem_private(&r, 412, "precondition_failed");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "a 412 on a never-written journal does not carry current_revision: null: %s",
		 r.body);
	it_resp_free(&r);
	const char *h0[] = {"If-Match: \"0\"", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, h0, &r);
	expect_problem_private(&r, 412, "precondition_failed");
	it_resp_free(&r);
	const char *star[] = {"If-Match: *", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, star, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);

	/* at revision 1: "1" passes */
	struct pw w2 = {M_STMT "-im2", M_SREF "-im2", M_QUOTE "-im2", 1, "op-im2", NULL, true};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w2, h1, &r);
	IT_STATUS(&r, 201);
	check_write_answer(&r, "applied");
	IT_CHECK(rev_of(json_object_get(r.json, "view")) == 2, "If-Match \"1\" write: %s", r.body);
	it_resp_free(&r);

	/* at revision 2: wrong ones fail with 412 (before the expected_revision check) */
	struct snap s;
	snap_take(&j, &s);
	const char *wrong[] = {"If-Match: \"1\"", "If-Match: \"3\"", "If-Match: 2",
			       "If-Match: \"\"", "If-Match: \"abc\""};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		const char *h[] = {wrong[i], NULL};
		struct pw c = {M_STMT "-im3", M_SREF "-im3", M_QUOTE "-im3", 2, "op-im3",
			       NULL,          true};
		pref_send(rw_a, &j, REMEMBER, "match.key", &c, h, &r);
		if (r.status != 412)
			fprintf(stderr, "  header: %s\n", wrong[i]);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
		c.expected = 1; /* stale as well: 412 comes first */
		pref_send(rw_a, &j, REMEMBER, "match.key", &c, h, &r);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
		struct pw rt = {NULL, M_SREF "-im4", M_QUOTE "-im4", 2, "op-im4", NULL, true};
		pref_send(rw_a, &j, RETIRE, "match.key", &rt, h, &r);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
	}
	/* matching If-Match but a stale body → 409 */
	const char *h2[] = {"If-Match: \"2\"", NULL};
	struct pw c = {M_STMT "-im5", M_SREF "-im5", M_QUOTE "-im5", 1, "op-im5", NULL, true};
	pref_send(rw_a, &j, REMEMBER, "match.key", &c, h2, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision is not 2");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after If-Match failures");
	snap_free(&s);

	/* a known operation id is decided before If-Match: the replay answers 200 */
	pref_send(rw_a, &j, REMEMBER, "match.key", &w2, h1, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	it_resp_free(&r);

	/* the current one passes for a retirement */
	struct pw rt = {NULL, M_SREF "-im6", M_QUOTE "-im6", 2, "op-im6", NULL, true};
	pref_send(rw_a, &j, RETIRE, "match.key", &rt, h2, &r);
	IT_STATUS(&r, 201);
	check_write_answer(&r, "applied");
	it_resp_free(&r);
	view_get(reader_a, &j, &r); /* ETag "3" checked inside */
	IT_CHECK(rev_of(r.json) == 3, "the journal is not at revision 3");
	it_resp_free(&r);
}

/* ================================================================ privacy */

static void expect_no_private(const char *token, const char *what)
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

static void test_privacy(void **state)
{
	(void)state;
	/* every test above wrote markers; add a failing write whose body the log could echo */
	struct journal j;
	journal_fresh(&j);
	remember_ok(&j, "privacy.key", M_STMT "-priv Secret working rule.", M_SREF "-priv",
		    M_QUOTE "-priv Secret words of the owner.", EXP_NULL, "op-priv1", NULL);
	struct it_resp r;
	struct pw w = {M_STMT "-priv-stale",
		       M_SREF "-priv-stale",
		       M_QUOTE "-priv-stale",
		       7,
		       "op-priv2",
		       NULL,
		       true};
	pref_send(rw_a, &j, REMEMBER, "privacy.key", &w, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	it_resp_free(&r);
	char *huge = text_of(M_STMT "-priv-huge-", 1201, 'h');
	w.statement = huge;
	w.expected = 1;
	pref_send(rw_a, &j, REMEMBER, "privacy.key", &w, NULL, &r);
	expect_problem_private(&r, 422, "validation_failed");
	it_resp_free(&r);
	free(huge);

	expect_no_private(admin_a, "tenant A");
	expect_no_private(admin_b, "tenant B");

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

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intent_table),
	    cmocka_unit_test(test_race),
	    cmocka_unit_test(test_uncertain_retry),
	    cmocka_unit_test(test_preview_writes_nothing),
	    cmocka_unit_test(test_capacity_keys),
	    cmocka_unit_test(test_capacity_bytes),
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_retire_rules),
	    cmocka_unit_test(test_history_walk),
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_field_bounds),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_if_match),
	    cmocka_unit_test(test_privacy), /* last: stops the server and reads its log */
	};
	int rc = cmocka_run_group_tests_name("it_preferences", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
