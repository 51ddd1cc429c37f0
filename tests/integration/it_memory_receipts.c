/*
 * it_memory_receipts — the load receipt end to end: counts, beyond_limit and budget_exceeded,
 * hashes, stored read-back.
 * openapi/openapi.yaml "Conventions", "Memory sources", "LoadReceipt"; docs/memory-contract.md;
 * the seed memory-source-policy-proposal.txt; issue 4. Helpers: memory_helpers.h.
 *
 * Every test runs in its own tenant (so lists, searches and audit logs hold only what the test
 * wrote) and uses distinctive marker words (qz…) so that full-text queries are precise and the
 * "no content" assertions on raw bodies mean something.
 */
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

#define UNKNOWN_LRC "lrc_00000000000000000000000000000000"

/* ================================================================ load receipt */

struct lr_item {
	char id[ID_MAX];
	char hash[REF_LEN];
	char *content;
	size_t bytes;
};

static const struct lr_item *lr_find(const struct lr_item *items, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++) {
		if (id && strcmp(items[i].id, id) == 0)
			return &items[i];
	}
	return NULL;
}

/* new: one context call with max_items/budget (0: absent) checked against the rules */
static json_t *check_context_call(const char *token, const char *query, int max_items,
				  int budget, const struct lr_item *items, size_t n,
				  const json_t *search_order)
{
	json_t *b = qbody(query, NULL);
	if (max_items)
		json_object_set_new(b, "max_items", json_integer(max_items));
	if (budget)
		json_object_set_new(b, "budget_tokens", json_integer(budget));
	json_t *cx = retrieve_ok(CONTEXT, token, b);
	char *text = json_dumps(cx, JSON_COMPACT);
	const json_t *rc = json_object_get(cx, "load_receipt");
	long long cand = it_json_int(rc, "candidate_count", -1);
	long long mi = max_items ? max_items : 8;
	long long left = budget ? budget : 4000;
	IT_CHECK(cand == (long long)n, "candidate_count is not %zu: %s", n, text);
	IT_CHECK(it_json_int(rc, "selected_count", -1) == (cand < mi ? cand : mi),
		 "selected_count is not min(candidates, max_items): %s", text);

	const json_t *loaded = json_object_get(rc, "loaded_inputs");
	const json_t *supp = json_object_get(rc, "suppressed_inputs");
	long long delivered = 0, suppressed = 0;
	for (long long rank = 1; rank <= cand; rank++) {
		char inp[32];
		snprintf(inp, sizeof inp, "inp_%lld", rank);
		const json_t *l = item_by(loaded, "input_id", inp);
		const json_t *s = item_by(supp, "input_id", inp);
		IT_CHECK((l != NULL) != (s != NULL),
			 "rank %lld is not exactly once in loaded or suppressed inputs: %s", rank,
			 text);
		const json_t *e = l ? l : s;
		IT_CHECK(it_json_int(e, "rank", -1) == rank, "%s: rank is not %lld: %s", inp, rank,
			 text);
		const char *rid = it_json_str(e, "record_id");
		const struct lr_item *want = lr_find(items, n, rid);
		IT_CHECK(want != NULL, "%s names an unknown record: %s", inp, text);
		IT_CHECK(it_json_str_is(e, "source_hash", want->hash),
			 "%s: source_hash is not the record's content_hash: %s", inp, text);
		/* candidates are in search's rank order */
		IT_CHECK(it_json_str_is(json_array_get(items_of(search_order), (size_t)rank - 1),
					"record_id", rid),
			 "rank %lld differs from search's order: %s", rank, text);
		long long tokens = (long long)((want->bytes + 3) / 4);
		const char *expect_reason = NULL;
		if (rank > mi)
			expect_reason = "beyond_limit";
		else if (tokens > left)
			expect_reason = "budget_exceeded";
		else
			left -= tokens;
		if (expect_reason) {
			IT_CHECK(s != NULL, "%s (%lld tokens) should be suppressed (%s): %s", inp,
				 tokens, expect_reason, text);
			IT_CHECK(it_json_str_is(s, "suppression_reason", expect_reason),
				 "%s: suppression_reason is not %s: %s", inp, expect_reason, text);
			suppressed++;
		} else {
			IT_CHECK(l != NULL, "%s (%lld tokens) should be delivered: %s", inp, tokens,
				 text);
			char dh[REF_LEN];
			sha256_ref(want->content, want->bytes, dh);
			IT_CHECK(it_json_str_is(l, "delivered_hash", dh),
				 "%s: delivered_hash is not sha256 of the delivered bytes: %s", inp,
				 text);
			const json_t *ci = item_by(items_of(cx), "input_id", inp);
			IT_CHECK(ci && it_json_str_is(ci, "record_id", rid) &&
				     it_json_str_is(ci, "content", want->content) &&
				     it_json_int(ci, "revision", -1) == 1,
				 "%s: the delivered item is not the record's whole content", inp);
			char got_dh[REF_LEN];
			const char *c = it_json_str(ci, "content");
			sha256_ref(c, strlen(c), got_dh);
			IT_CHECK(strcmp(got_dh, dh) == 0, "delivered bytes differ");
			delivered++;
		}
	}
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == delivered &&
		     it_json_int(rc, "suppressed_count", -1) == suppressed,
		 "delivered/suppressed counts are not %lld/%lld: %s", delivered, suppressed, text);
	free(text);
	return cx;
}

static void expect_stored_receipt(const char *token, const json_t *cx, const char *secret)
{
	const json_t *rc = json_object_get(cx, "load_receipt");
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", it_json_str(rc, "receipt_id"));
	get(path, token, &r);
	IT_STATUS(&r, 200);
	char *want = json_dumps(rc, JSON_COMPACT);
	IT_CHECK(json_equal(r.json, rc), "the stored receipt differs:\n  answer: %s\n  stored: %s",
		 want ? want : "?", r.body);
	free(want);
	IT_CHECK(!contains(r.body, secret) && !contains(r.body, "lorem"),
		 "the stored receipt holds content: %s", r.body);
	it_resp_free(&r);
}

static void test_load_receipt(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-lrc");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *secret = "qzlrcbodysecret";
	/* 400, 800 (multi-byte: fewer characters than bytes), 1200, 2000, 100 bytes:
	 * 100, 200, 300, 500, 25 tokens; the marker repeated so that ranks differ */
	struct lr_item items[5];
	memset(items, 0, sizeof items);
	items[0].content = it_text_of("qzlrc qzlrc qzlrc qzlrcbodysecret one", 400);
	static const char mb_prefix[] = "qzlrc qzlrc qzlrcbodysecret ";
	/* "café " is 6 bytes and 5 characters */
	char *mb = repeat_text(mb_prefix, "café ", (800 - (sizeof mb_prefix - 1)) / 6, "");
	size_t mbl = strlen(mb);
	IT_CHECK(mbl <= 800, "multi-byte text too long");
	items[1].content = malloc(801);
	assert_non_null(items[1].content);
	memcpy(items[1].content, mb, mbl);
	memset(items[1].content + mbl, 'z', 800 - mbl);
	items[1].content[800] = '\0';
	free(mb);
	items[2].content = it_text_of("qzlrc qzlrc qzlrc qzlrc qzlrcbodysecret three", 1200);
	items[3].content = it_text_of("qzlrc qzlrc qzlrc qzlrc qzlrc qzlrcbodysecret four", 2000);
	items[4].content = it_text_of("qzlrc qzlrcbodysecret five", 100);
	for (size_t i = 0; i < 5; i++) {
		items[i].bytes = strlen(items[i].content);
		note(t.admin, items[i].content, NULL, NULL, items[i].id, items[i].hash);
	}
	IT_CHECK(items[0].bytes == 400 && items[1].bytes == 800 && items[2].bytes == 1200 &&
		     items[3].bytes == 2000 && items[4].bytes == 100,
		 "content sizes");
	char cold[ID_MAX];
	note(t.admin, "qzlrc qzlrcbodysecret cold, never a candidate", "cold", NULL, cold, NULL);

	json_t *so = search_ok(reader, "qzlrc", NULL);
	IT_CHECK(json_array_size(items_of(so)) == 5, "search finds the five active records");

	/* beyond_limit and budget_exceeded together: 500 tokens never fit 450 */
	json_t *cx = check_context_call(reader, "qzlrc", 4, 450, items, 5, so);
	const json_t *rc = json_object_get(cx, "load_receipt");
	size_t i;
	const json_t *e;
	bool beyond = false, budget = false;
	json_array_foreach (json_object_get(rc, "suppressed_inputs"), i, e) {
		beyond |= it_json_str_is(e, "suppression_reason", "beyond_limit");
		budget |= it_json_str_is(e, "suppression_reason", "budget_exceeded");
	}
	IT_CHECK(beyond && it_json_int(rc, "delivered_count", -1) >= 1,
		 "max_items 4 of 5: a beyond_limit and a delivery expected");
	char *text = json_dumps(cx, JSON_COMPACT);
	IT_CHECK(!contains(text, cold), "the cold record is in the receipt: %s", text);
	free(text);
	expect_stored_receipt(reader, cx, secret);
	char first_id[ID_MAX];
	it_copy_str(first_id, sizeof first_id, it_json_str(rc, "receipt_id"));
	json_decref(cx);
	cx = check_context_call(reader, "qzlrc", 5, 450, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	budget = false;
	json_array_foreach (json_object_get(rc, "suppressed_inputs"), i, e)
		budget |= it_json_str_is(e, "suppression_reason", "budget_exceeded");
	IT_CHECK(budget, "the 500-token item must be budget_exceeded under 450");
	IT_CHECK(!it_json_str_is(rc, "receipt_id", first_id), "two calls, one receipt id");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* max_items 1: one delivered, four beyond_limit */
	cx = check_context_call(reader, "qzlrc", 1, 32000, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 1 &&
		     it_json_int(rc, "suppressed_count", -1) == 4,
		 "max_items 1: 1 delivered, 4 suppressed");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* budget 1: everything selected is budget_exceeded */
	cx = check_context_call(reader, "qzlrc", 20, 1, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 0 &&
		     it_json_int(rc, "selected_count", -1) == 5 && json_array_size(items_of(cx)) == 0,
		 "budget 1: nothing delivered");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* defaults: max_items 8, budget 4000 (1125 tokens in all) */
	cx = check_context_call(reader, "qzlrc", 0, 0, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 5, "defaults deliver all five");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);

	/* tokens = ceil(bytes / 4): 401 bytes are 101 tokens */
	struct lr_item edge;
	memset(&edge, 0, sizeof edge);
	edge.content = it_text_of("qzceiledge qzlrcbodysecret", 401);
	edge.bytes = 401;
	note(t.admin, edge.content, NULL, NULL, edge.id, edge.hash);
	json_t *se = search_ok(reader, "qzceiledge", NULL);
	cx = check_context_call(reader, "qzceiledge", 1, 101, &edge, 1, se);
	IT_CHECK(it_json_int(json_object_get(cx, "load_receipt"), "delivered_count", -1) == 1,
		 "401 bytes do not fit 101 tokens");
	json_decref(cx);
	cx = check_context_call(reader, "qzceiledge", 1, 100, &edge, 1, se);
	IT_CHECK(it_json_int(json_object_get(cx, "load_receipt"), "delivered_count", -1) == 0,
		 "401 bytes fit 100 tokens");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	json_decref(se);
	free(edge.content);

	/* explain with limit 2: the two best selected, the rest beyond_limit */
	json_t *b = qbody("qzlrc", NULL);
	json_object_set_new(b, "limit", json_integer(2));
	json_t *ex = retrieve_ok(EXPLAIN, reader, b);
	b = qbody("qzlrc", NULL);
	json_object_set_new(b, "limit", json_integer(2));
	json_t *s2 = retrieve_ok(SEARCH, reader, b);
	IT_CHECK(json_array_size(items_of(s2)) == 2, "search limit 2 answers 2");
	json_array_foreach (items_of(so), i, e) {
		const char *id = it_json_str(e, "record_id");
		bool top = array_has_id(items_of(s2), "record_id", id);
		expect_ex(ex, id, top, top ? "selected" : "beyond_limit", "active", 1);
	}
	expect_ex(ex, cold, false, "classification_cold", "cold", 1);
	json_decref(ex);
	json_decref(s2);

	/* unknown receipt */
	struct it_resp r;
	get("/v1/context/load-receipts/" UNKNOWN_LRC, reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	json_decref(so);
	for (size_t k = 0; k < 5; k++)
		free(items[k].content);
	free(reader);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load_receipt),
	};
	int rc = cmocka_run_group_tests_name("it_memory_receipts", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
