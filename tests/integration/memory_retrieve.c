/* it_memory_* shared helpers (memory_helpers.h): search, explain and context calls and the
 * checks of their answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memory_helpers.h"

/* ================================================================ retrieval */

const char *endpoint_path(enum endpoint e)
{
	return e == SEARCH ? "/v1/memory/search"
	       : e == EXPLAIN ? "/v1/memory/retrieval/explain"
			      : "/v1/memory/context";
}

json_t *qbody(const char *query, const char *thread)
{
	json_t *b = json_object();
	json_object_set_new(b, "query", json_string(query));
	if (thread)
		json_object_set_new(b, "thread_id", json_string(thread));
	return b;
}

void retrieve(enum endpoint e, const char *token, json_t *body, struct it_resp *r)
{
	send_json("POST", endpoint_path(e), token, body, NULL, r);
}

void check_search_shape(const json_t *j, const char *raw)
{
	const json_t *items = json_object_get(j, "items");
	IT_CHECK(json_is_array(items), "search items is not an array: %s", raw);
	size_t i;
	const json_t *it;
	double prev = 0;
	json_array_foreach (items, i, it) {
		const char *id = it_json_str(it, "record_id");
		const char *kind = it_json_str(it, "record_kind");
		IT_CHECK(id && kind &&
			     ((strcmp(kind, "source") == 0 && strncmp(id, "src_", 4) == 0) ||
			      (strcmp(kind, "derivative") == 0 && strncmp(id, "drv_", 4) == 0)),
			 "search item %zu: record_id/record_kind: %s", i, raw);
		IT_CHECK(it_json_int(it, "revision", -1) >= 1, "search item %zu: revision: %s", i,
			 raw);
		IT_CHECK(it_is_sha256_ref(it_json_str(it, "content_hash")),
			 "search item %zu: content_hash: %s", i, raw);
		const json_t *score = json_object_get(it, "score");
		IT_CHECK(json_is_number(score), "search item %zu: score is not a number: %s", i,
			 raw);
		double sc = json_number_value(score);
		IT_CHECK(i == 0 || sc <= prev, "search items are not best score first: %s", raw);
		prev = sc;
	}
}

void check_explain_shape(const json_t *j, const char *query, const char *raw)
{
	char qh[REF_LEN];
	sha256_str(query, qh);
	IT_CHECK(it_json_str_is(j, "query_sha256", qh), "query_sha256 is not %s: %s", qh, raw);
	IT_CHECK(json_is_boolean(json_object_get(j, "truncated")), "truncated is not a boolean: %s",
		 raw);
	const json_t *items = json_object_get(j, "items");
	IT_CHECK(json_is_array(items), "explain items is not an array: %s", raw);
	size_t i, ranked = 0;
	const json_t *it;
	json_array_foreach (items, i, it) {
		const char *id = it_json_str(it, "record_id");
		const char *kind = it_json_str(it, "record_kind");
		IT_CHECK(id && kind &&
			     ((strcmp(kind, "source") == 0 && strncmp(id, "src_", 4) == 0) ||
			      (strcmp(kind, "derivative") == 0 && strncmp(id, "drv_", 4) == 0)),
			 "explain item %zu: record_id/record_kind: %s", i, raw);
		IT_CHECK(it_json_int(it, "revision", -1) >= 1, "explain item %zu: revision: %s", i,
			 raw);
		const json_t *cls = json_object_get(it, "classification");
		IT_CHECK(strcmp(kind, "derivative") == 0 ? json_is_null(cls) : json_is_string(cls),
			 "explain item %zu: classification (null for a derivative): %s", i, raw);
		const json_t *inc = json_object_get(it, "included");
		const char *reason = it_json_str(it, "reason");
		IT_CHECK(json_is_boolean(inc) && reason, "explain item %zu: included/reason: %s", i,
			 raw);
		IT_CHECK(json_is_true(inc) == (strcmp(reason, "selected") == 0),
			 "explain item %zu: included disagrees with reason: %s", i, raw);
		IT_CHECK(json_is_array(json_object_get(it, "ineligible_reasons")),
			 "explain item %zu: ineligible_reasons: %s", i, raw);
		/* rank: 1, 2, … over the eligible items in answer order; null for the others */
		const json_t *rank = json_object_get(it, "rank");
		bool eligible = json_array_size(json_object_get(it, "ineligible_reasons")) == 0;
		IT_CHECK(eligible ? json_integer_value(rank) == (json_int_t)++ranked : json_is_null(rank),
			 "explain item %zu: rank (want %s): %s", i,
			 eligible ? "the next eligible position" : "null", raw);
		IT_CHECK(!json_is_true(inc) || json_integer_value(rank) >= 1,
			 "explain item %zu: a selected item has a rank: %s", i, raw);
	}
}

void check_context_shape(const json_t *j, const char *raw)
{
	const json_t *items = json_object_get(j, "items");
	const json_t *rc = json_object_get(j, "load_receipt");
	IT_CHECK(json_is_array(items) && json_is_object(rc), "context answer shape: %s", raw);
	size_t i;
	const json_t *it;
	json_array_foreach (items, i, it) {
		IT_CHECK(it_json_str(it, "input_id") && it_json_str(it, "record_id") &&
			     it_json_int(it, "revision", -1) >= 1 && it_json_str(it, "content") &&
			     it_json_str_is(it, "trust", "untrusted_advisory"),
			 "context item %zu: %s", i, raw);
	}
	IT_CHECK(it_has_prefix_hex(it_json_str(rc, "receipt_id"), "lrc_"),
		 "receipt_id is not lrc_ + 32 hex: %s", raw);
	IT_CHECK(it_json_str_is(rc, "event_type", "context.load"), "event_type: %s", raw);
	IT_CHECK(json_is_false(json_object_get(rc, "claims_usefulness")),
		 "claims_usefulness is not false: %s", raw);
	long long cand = it_json_int(rc, "candidate_count", -1);
	long long sel = it_json_int(rc, "selected_count", -1);
	long long del = it_json_int(rc, "delivered_count", -1);
	long long sup = it_json_int(rc, "suppressed_count", -1);
	IT_CHECK(cand >= 0 && sel >= 0 && del >= 0 && sup >= 0, "receipt counts: %s", raw);
	IT_CHECK(cand == del + sup, "candidate_count != delivered_count + suppressed_count: %s",
		 raw);
	IT_CHECK(del <= sel && sel <= cand, "delivered <= selected <= candidates fails: %s", raw);
	IT_CHECK((long long)json_array_size(items) == del, "items.length != delivered_count: %s",
		 raw);
	IT_CHECK((long long)json_array_size(json_object_get(rc, "loaded_inputs")) == del,
		 "loaded_inputs.length != delivered_count: %s", raw);
	IT_CHECK((long long)json_array_size(json_object_get(rc, "suppressed_inputs")) == sup,
		 "suppressed_inputs.length != suppressed_count: %s", raw);
}

json_t *retrieve_ok(enum endpoint e, const char *token, json_t *body)
{
	char query[1100];
	it_copy_str(query, sizeof query, it_json_str(body, "query"));
	struct it_resp r;
	retrieve(e, token, body, &r);
	IT_STATUS(&r, 200);
	if (e == SEARCH)
		check_search_shape(r.json, r.body);
	else if (e == EXPLAIN)
		check_explain_shape(r.json, query, r.body);
	else
		check_context_shape(r.json, r.body);
	json_t *out = json_incref(r.json);
	it_resp_free(&r);
	return out;
}

json_t *search_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(SEARCH, token, qbody(query, thread));
}

json_t *explain_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(EXPLAIN, token, qbody(query, thread));
}

json_t *context_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(CONTEXT, token, qbody(query, thread));
}

const json_t *items_of(const json_t *j)
{
	return json_object_get(j, "items");
}

void expect_ex(const json_t *ex, const char *id, bool included, const char *reason,
	       const char *cls, long long rev)
{
	const json_t *it = item_by(items_of(ex), "record_id", id);
	char *text = json_dumps(ex, JSON_COMPACT);
	IT_CHECK(it != NULL, "explain does not list %s: %s", id, text ? text : "?");
	IT_CHECK(json_is_boolean(json_object_get(it, "included")) &&
		     json_is_true(json_object_get(it, "included")) == included,
		 "explain %s: included is not %s: %s", id, included ? "true" : "false", text);
	IT_CHECK(it_json_str_is(it, "reason", reason), "explain %s: reason is not %s: %s", id,
		 reason, text);
	IT_CHECK(cls ? it_json_str_is(it, "classification", cls)
		     : it_json_has_null(it, "classification"),
		 "explain %s: classification is not %s: %s", id, cls ? cls : "null", text);
	IT_CHECK(it_json_int(it, "revision", -1) == rev, "explain %s: revision is not %lld: %s",
		 id, rev, text);
	free(text);
}

void expect_same_json(const json_t *a, const json_t *b, const char *what)
{
	char *ta = json_dumps(a, JSON_COMPACT), *tb = json_dumps(b, JSON_COMPACT);
	IT_CHECK(json_equal(a, b), "%s: differ:\n  before: %s\n  after:  %s", what, ta ? ta : "?",
		 tb ? tb : "?");
	free(ta);
	free(tb);
}

size_t audit_count(const char *token, const char *type, const char *id)
{
	char path[512];
	if (id)
		snprintf(path, sizeof path, "/v1/audit?resource_type=%s&resource_id=%s", type, id);
	else
		snprintf(path, sizeof path, "/v1/audit?resource_type=%s", type);
	json_t *all = list_all(token, path);
	size_t n = json_array_size(all);
	json_decref(all);
	return n;
}

void expect_nothing_retrieved(const char *token, const char *query, const char *what)
{
	json_t *s = search_ok(token, query, NULL);
	expect_id_set(items_of(s), "record_id", what, NULL);
	json_decref(s);
	json_t *cx = context_ok(token, query, NULL);
	expect_id_set(items_of(cx), "record_id", what, NULL);
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "candidate_count", -1) == 0 &&
		     it_json_int(rc, "delivered_count", -1) == 0,
		 "%s: the load receipt counts candidates", what);
	json_decref(cx);
}

/* ================================================================ disclosures */

/* GET a record's content */
void get_content(const char *token, const char *id, struct it_resp *r)
{
	char path[160];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", id);
	get(path, token, r);
}

/* new: GET path with token, 200 expected, the answer's JSON */
json_t *get_ok(const char *token, const char *path)
{
	struct it_resp r;
	get(path, token, &r);
	IT_STATUS(&r, 200);
	json_t *j = json_incref(r.json);
	it_resp_free(&r);
	return j;
}

/* new: one context load of query (thread may be NULL); its receipt id into receipt */
json_t *load_context(const char *token, const char *query, const char *thread,
		    char receipt[ID_MAX])
{
	json_t *cx = context_ok(token, query, thread);
	if (receipt)
		it_copy_str(receipt, ID_MAX, it_json_str(json_object_get(cx, "load_receipt"),
							 "receipt_id"));
	return cx;
}

/* A source and a summary derivative of it, both matching `word`. */
void source_and_summary(const struct tenant *t, const char *word, char src[ID_MAX],
			       char drv[ID_MAX])
{
	char text[160];
	snprintf(text, sizeof text, "Ledger note %s: the reviewer signs the release.", word);
	note(t->admin, text, "active", NULL, src, NULL);
	snprintf(text, sizeof text, "Summary %s: releases need a reviewer.", word);
	derive(t->admin, "summary", df(src, 1), text, drv);
}
