/* it_preferences_* shared helpers (preferences_helpers.h): what a write leaves in a journal
 * (history pages, audit records, snapshots) and the checks of write answers and receipts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "preferences_helpers.h"

/* ================================================================ history and audit */

void check_history_item(const json_t *it, const char *what)
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
json_t *history_walk(const char *token, const struct journal *j, int limit, size_t *pages)
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

json_t *history_all(const char *token, const struct journal *j)
{
	return history_walk(token, j, 200, NULL);
}

size_t history_count(const struct journal *j)
{
	json_t *h = history_all(rw_a, j);
	size_t n = json_array_size(h);
	json_decref(h);
	return n;
}
/* new: the journal's audit records, read with `token` (an admin of the journal's tenant) */
json_t *audit_of(const char *token, const struct journal *j)
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

size_t audit_count(const struct journal *j)
{
	json_t *a = audit_of(admin_a, j);
	size_t n = json_array_size(a);
	json_decref(a);
	return n;
}

void expect_audit_verify(const char *token, const struct journal *j, long long checked)
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

void snap_take(const struct journal *j, struct snap *s)
{
	s->view = view_now(j);
	s->history = history_count(j);
	s->audit = audit_count(j);
}

void snap_expect_same(const struct journal *j, const struct snap *s, const char *why)
{
	expect_view_equal(j, s->view, why);
	size_t h = history_count(j), a = audit_count(j);
	IT_CHECK(h == s->history, "%s: history went from %zu to %zu items", why, s->history, h);
	IT_CHECK(a == s->audit, "%s: audit went from %zu to %zu records", why, s->audit, a);
}

void snap_free(struct snap *s)
{
	json_decref(s->view);
	s->view = NULL;
}

/* ================================================================ write answers */

/* {status, receipt, view} with the given status; the view's shape */
void check_write_answer(const struct it_resp *r, const char *status)
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

void check_receipt(const json_t *rc, enum action act, const char *key, const struct pw *w,
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
void check_entry_after(const json_t *view, enum action act, const char *key,
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
json_t *apply_op(const char *token, const struct journal *j, enum action act,
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

void remember_ok(const struct journal *j, const char *key, const char *statement,
		 const char *sref, const char *quote, long long expected, const char *op,
		 const char *supersedes)
{
	struct pw w = {statement, sref, quote, expected, op, NULL, true};
	json_decref(apply_op(rw_a, j, REMEMBER, key, &w, supersedes));
}

void retire_ok(const struct journal *j, const char *key, const char *sref, const char *quote,
	       long long expected, const char *op, const char *supersedes)
{
	struct pw w = {NULL, sref, quote, expected, op, NULL, true};
	json_decref(apply_op(rw_a, j, RETIRE, key, &w, supersedes));
}

/* a problem answer that names no private text */
void expect_problem_private(const struct it_resp *r, long status, const char *code)
{
	IT_PROBLEM(r, status, code);
	expect_content_type(r, "application/problem+json; charset=utf-8");
	IT_CHECK(!has_marker(r->body), "%s: the problem answer echoes private text: %s", r->desc,
		 r->body);
}
