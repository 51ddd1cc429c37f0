/*
 * it_envelopes_relevance — relevance checks (POST /v1/context/relevance-checks) end to end
 * (openapi/openapi.yaml "Context envelopes"; docs/envelope-contract.md; the seed
 * context-envelope-v1.json; issue 6):
 *
 *  - the seed's context_relevance and load_only_variant, the relevance_event alias, counts
 *    at the top level, the raw payload members, each finding on its own;
 *  - relevance joined to a stored load receipt (memory context assembly), another tenant's
 *    receipt, the request shapes;
 *  - every limit of a relevance document at its edge, wrong types.
 *
 * Helpers: envelope_helpers.h. The fixture files come from RG_FIXTURES_DIR (set by CMake).
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
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

#include "envelope_helpers.h"

#define UNKNOWN_LRC "lrc_00000000000000000000000000000000"

/* ================================================================ relevance: base, variants */

static void test_relevance_variants(void **state)
{
	(void)state;
	/* the seed's context_relevance itself is a valid, joined relevance event */
	REL_EXPECT(relevance_copy(), "MATCH", NO_CODES, true, "the seed's context_relevance");
	struct it_resp r;
	relevance_doc(ta.reader, relevance_copy(), &r);
	IT_STATUS(&r, 200);
	for (size_t i = 0; i < n_rel_checks; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, rel_checks[i].check), "result", "pass"),
			 "context_relevance: check %s does not pass: %s", rel_checks[i].check,
			 r.body);
	it_resp_free(&r);

	/* the seed's load_only_variant: no relevance event, no usefulness claim */
	const json_t *lov = json_object_get(relevance0, "load_only_variant");
	IT_CHECK(json_is_object(lov) && it_json_str_is(lov, "expected_verdict", "MATCH"),
		 "the seed has no load_only_variant expecting MATCH");
	relevance_doc(ta.reader, json_deep_copy(lov), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "load_only_variant");
	IT_CHECK(!it_json_str_is(check_of(r.json, "raw_context"), "result", "fail") &&
		     !it_json_str_is(check_of(r.json, "usefulness"), "result", "fail"),
		 "load_only_variant: a check fails: %s", r.body);
	it_resp_free(&r);
	/* the same, claiming usefulness → missing_relevance */
	json_t *doc = json_deep_copy(lov);
	set_new(doc, "claims_usefulness", json_true());
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("missing_relevance"), true,
		   "load_only_variant claiming usefulness");
	/* a usefulness claim with a relevance event is fine */
	doc = relevance_copy();
	set_new(doc, "claims_usefulness", json_true());
	set_new(doc, "receipt_contract.load_receipt.claims_usefulness", json_true());
	REL_EXPECT(doc, "MATCH", NO_CODES, true,
		   "usefulness claimed with a joined relevance event");
	/* the relevance_event alias is read like relevance */
	doc = relevance_copy();
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(doc, "relevance")));
	del(doc, "relevance");
	REL_EXPECT(doc, "MATCH", NO_CODES, true, "relevance given as relevance_event");
	doc = relevance_copy();
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(doc, "relevance")));
	del(doc, "relevance");
	set_new(doc, "relevance_event.unused_count", json_integer(0));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "relevance_event with unaccounted inputs");

	/* accounting: an unknown label, a missing bucket count */
	doc = relevance_copy();
	set_new(doc, "relevance.input_refs[2].relevance", json_string("useful"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "a relevance label outside the four");
	doc = relevance_copy();
	del(doc, "relevance.unknown_count");
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "unknown_count missing");
	/* join: an input id that was never loaded */
	doc = relevance_copy();
	set_new(doc, "relevance.input_refs[1].input_id", json_string("ctx_in_004"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "input_ref naming the suppressed input");
	/* selection: a fourth (duplicate) input_ref over 3 delivered, counts still 3 */
	doc = relevance_copy();
	json_t *refs = json_object_get(json_object_get(doc, "relevance"), "input_refs");
	json_array_append_new(refs, json_deep_copy(json_array_get(refs, 2)));
	REL_EXPECT(doc, "DRIFT", CODES("over_selection"), true,
		   "four input_refs for three delivered inputs");

	/* counts at the top level instead of in selection */
	doc = relevance_copy();
	del(doc, "selection");
	set_new(doc, "selected_count", json_integer(3));
	set_new(doc, "delivered_count", json_integer(3));
	REL_EXPECT(doc, "MATCH", NO_CODES, true, "counts at the top level");
	doc = relevance_copy();
	del(doc, "selection");
	set_new(doc, "selected_count", json_integer(3));
	set_new(doc, "delivered_count", json_integer(2));
	REL_EXPECT(doc, "DRIFT", CODES("over_selection"), true,
		   "top-level delivered_count below the labelled inputs");
	/* no counts at all: the buckets account for nothing */
	doc = relevance_copy();
	del(doc, "selection");
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), false,
		   "a relevance event without selected_count");
	/* loaded_input_ids carry no delivered hashes: a relevance event cannot join them */
	doc = json_deep_copy(lov);
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(relevance0, "relevance")));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "load_only_variant with a relevance event (no delivered hashes to join)");

	/* raw payload members on a loaded input or an input_ref, each a finding */
	struct {
		const char *path;
	} raw[] = {
	    {"loaded_inputs[0].raw_context"},        {"loaded_inputs[1].content"},
	    {"loaded_inputs[2].raw_payload"},        {"loaded_inputs[0].text"},
	    {"relevance.input_refs[0].raw_context"}, {"relevance.input_refs[1].raw_payload"},
	    {"relevance.input_refs[2].text"},
	};
	for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
		doc = relevance_copy();
		set_new(doc, raw[i].path, json_string("raw text that must never be sent"));
		char what[160];
		snprintf(what, sizeof what, "raw payload at %s", raw[i].path);
		REL_EXPECT(doc, "UNVERIFIABLE", CODES("raw_context_leak"), true, what);
	}
}

/* ================================================================ load receipts */

static void create_note(const char *token, const char *content)
{
	json_t *b = json_object();
	json_object_set_new(b, "source_kind", json_string("note"));
	json_object_set_new(b, "content", json_string(content));
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", token, b, NULL, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);
}

/* new: {load_receipt_id, relevance} with input_refs built from the receipt's loaded inputs */
static json_t *receipt_relevance(const char *lrc, const json_t *loaded, const char *const *labels,
				 long long decisive, long long supporting, long long unused,
				 long long unknown)
{
	json_t *refs = json_array();
	size_t i;
	const json_t *li;
	json_array_foreach (loaded, i, li) {
		json_t *ref = json_object();
		json_object_set_new(ref, "input_id", json_string(it_json_str(li, "input_id")));
		json_object_set_new(ref, "delivered_hash",
				    json_string(it_json_str(li, "delivered_hash")));
		json_object_set_new(ref, "relevance", json_string(labels[i]));
		json_array_append_new(refs, ref);
	}
	json_t *rel =
	    json_pack("{sI sI sI sI so}", "decisive_count", (json_int_t)decisive,
		      "supporting_count", (json_int_t)supporting, "unused_count",
		      (json_int_t)unused, "unknown_count", (json_int_t)unknown, "input_refs", refs);
	return json_pack("{ss so}", "load_receipt_id", lrc, "relevance", rel);
}

static void test_relevance_load_receipt(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-lrc");
	char *writer = token_for(t.name, "memory:write", "it-mem-writer");
	char *mreader = token_for(t.name, "memory:read", "it-mem-reader");
	create_note(writer, "qzenvrel qzenvrel alpha context note about the router");
	create_note(writer, "qzenvrel beta context note about the tests");

	struct it_resp r;
	send_json("POST", "/v1/memory/context", mreader, json_pack("{ss}", "query", "qzenvrel"),
		  NULL, &r);
	IT_STATUS(&r, 200);
	const json_t *rc = json_object_get(r.json, "load_receipt");
	IT_CHECK(json_is_object(rc), "no load_receipt: %s", r.body);
	char lrc[ID_MAX];
	it_copy_str(lrc, sizeof lrc, it_json_str(rc, "receipt_id"));
	json_t *loaded = json_deep_copy(json_object_get(rc, "loaded_inputs"));
	IT_CHECK(json_array_size(loaded) == 2 && it_json_int(rc, "selected_count", -1) == 2 &&
		     it_json_int(rc, "delivered_count", -1) == 2,
		 "expected two selected and delivered inputs: %s", r.body);
	it_resp_free(&r);
	const char *labels[] = {"decisive", "supporting"};

	/* joined, accounted → MATCH (envelopes:read suffices) */
	relevance_post(t.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "relevance joined to the stored load receipt");
	for (size_t i = 0; i < n_rel_checks; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, rel_checks[i].check), "result", "pass"),
			 "joined relevance: check %s does not pass: %s", rel_checks[i].check,
			 r.body);
	it_resp_free(&r);

	/* a delivered_hash that the receipt does not hold → unjoinable_relevance */
	json_t *b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	char h[72];
	hash_of(0xdeadULL, h);
	set_new(b, "relevance.input_refs[1].delivered_hash", json_string(h));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "a wrong delivered_hash against the receipt");
	it_resp_free(&r);
	/* an input id the receipt never loaded */
	b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	set_new(b, "relevance.input_refs[0].input_id", json_string("ctx_in_999"));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "an input_id the receipt never loaded");
	it_resp_free(&r);
	/* the counts come from the receipt: 3 accounted for 2 selected */
	relevance_post(t.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 1, 0), &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "buckets that do not sum to the receipt's selected_count");
	it_resp_free(&r);
	/* raw content on an input_ref */
	b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	set_new(b, "relevance.input_refs[0].content", json_string("qzenvrel alpha raw"));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("raw_context_leak"), true,
		   "raw content in a receipt-joined relevance");
	it_resp_free(&r);

	/* an unknown receipt → 404 */
	relevance_post(t.reader, receipt_relevance(UNKNOWN_LRC, loaded, labels, 1, 1, 0, 0), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	/* another tenant's receipt → 404 */
	relevance_post(ta.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* shapes: neither form, a relevance that is not an object → 422 */
	relevance_post(t.reader, json_object(), &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	relevance_post(t.reader, json_pack("{ss si}", "load_receipt_id", lrc, "relevance", 5), &r);
	expect_422(&r, "validation_failed", "relevance", "relevance is a number");
	it_resp_free(&r);
	relevance_post(t.reader, json_pack("{si}", "context_relevance", 5), &r);
	expect_422(&r, "validation_failed", "context_relevance", "context_relevance is a number");
	it_resp_free(&r);
	relevance_post(
	    t.reader, json_pack("{so ss}", "context_relevance", relevance_copy(), "colour", "blue"),
	    &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);

	json_decref(loaded);
	free(writer);
	free(mreader);
	tenant_free(&t);
}

/* ================================================================ limits: relevance */

/* new: a relevance document with n loaded inputs and n input_refs (all "unknown") */
static json_t *relevance_n(size_t n_loaded, size_t n_refs)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "selection",
			    json_pack("{sI sI}", "selected_count", (json_int_t)n_refs,
				      "delivered_count", (json_int_t)n_loaded));
	json_t *loaded = json_array(), *refs = json_array();
	char id[32], sh[72], dh[72];
	for (size_t i = 0; i < n_loaded; i++) {
		snprintf(id, sizeof id, "ctx_in_%04zu", i);
		hash_of(0x100000 + i, sh);
		hash_of(0x200000 + i, dh);
		json_array_append_new(loaded,
				      json_pack("{ss ss ss sI}", "input_id", id, "source_hash", sh,
						"delivered_hash", dh, "rank", (json_int_t)(i + 1)));
		if (i < n_refs)
			json_array_append_new(refs, json_pack("{ss ss ss}", "input_id", id,
							      "delivered_hash", dh, "relevance",
							      "unknown"));
	}
	json_object_set_new(doc, "loaded_inputs", loaded);
	json_object_set_new(doc, "relevance",
			    json_pack("{si si si sI so}", "decisive_count", 0, "supporting_count",
				      0, "unused_count", 0, "unknown_count", (json_int_t)n_refs,
				      "input_refs", refs));
	return doc;
}

static void test_limits_relevance(void **state)
{
	(void)state;
	struct it_resp r;
	REL_EXPECT(relevance_n(MAX_REL_INPUTS, MAX_REL_INPUTS), "MATCH", NO_CODES, true,
		   "256 loaded inputs, 256 input_refs");

	relevance_doc(ta.reader, relevance_n(MAX_REL_INPUTS + 1, MAX_REL_INPUTS), &r);
	expect_422(&r, "validation_failed", "context_relevance.loaded_inputs", "257 loaded inputs");
	it_resp_free(&r);

	/* 257 input_refs over 256 loaded inputs (one repeated) */
	json_t *doc = relevance_n(MAX_REL_INPUTS, MAX_REL_INPUTS);
	json_t *refs = json_object_get(json_object_get(doc, "relevance"), "input_refs");
	json_array_append_new(refs, json_deep_copy(json_array_get(refs, 0)));
	relevance_doc(ta.reader, doc, &r);
	expect_422(&r, "validation_failed", "context_relevance.relevance.input_refs",
		   "257 input_refs");
	it_resp_free(&r);

	struct {
		const char *path;
		const char *value;
	} wrong[] = {
	    {"selection.selected_count", "\"3\""},
	    {"selection.delivered_count", "3.5"},
	    {"relevance.decisive_count", "\"1\""},
	    {"relevance.unknown_count", "0.5"},
	    {"loaded_inputs", "{}"},
	    {"relevance.input_refs", "\"ctx_in_001\""},
	    {"relevance", "[]"},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		doc = relevance_copy();
		json_error_t err;
		json_t *v = json_loads(wrong[i].value, JSON_DECODE_ANY, &err);
		IT_CHECK(v != NULL, "bad test value");
		set_new(doc, wrong[i].path, v);
		relevance_doc(ta.reader, doc, &r);
		char what[160];
		snprintf(what, sizeof what, "context_relevance.%s = %s", wrong[i].path,
			 wrong[i].value);
		char field[160];
		snprintf(field, sizeof field, "context_relevance.%s", wrong[i].path);
		expect_422(&r, "validation_failed", field, what);
		it_resp_free(&r);
	}
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_relevance_variants),
	    cmocka_unit_test(test_relevance_load_receipt),
	    cmocka_unit_test(test_limits_relevance),
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_relevance", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
