/* core/envelope: relevance (docs/envelope-contract.md, openapi/openapi.yaml
 * "Memory governance", "Context envelopes") — the forms core_relevance_from_context and
 * core_relevance_from_receipt normalise to, and one cmocka test per row of the relevance case
 * table (relevance_cases.c): the seed's context_relevance, its load_only_variant, or a load
 * receipt, with a few mutations, checked for its per-check results, failure codes and verdict
 * and for inputs left unchanged. */
#include "unit.h"

#include <jansson.h>

#include "core/envelope.h"
#include "envelope_helpers.h"

/* ---- relevance cases ---------------------------------------------------------------- */

static const char *const rel_checks[] = {"raw_context", "usefulness", "accounting", "join",
					 "selection"};

/* A stored load receipt as openapi/openapi.yaml "LoadReceipt" describes it, for the seed's
 * three delivered inputs (same input ids and hashes) and its one suppressed input. */
static json_t *load_receipt(void)
{
	const json_t *cr = context_relevance();
	json_t *loaded = json_array(), *suppressed = json_array();
	size_t i;
	json_t *in;
	json_array_foreach(json_object_get(cr, "loaded_inputs"), i, in) {
		char record[40];
		snprintf(record, sizeof record, "src_%032zx", i + 1);
		json_array_append_new(
			loaded, json_pack("{s:O, s:s, s:O, s:O, s:O}", "input_id",
					  json_object_get(in, "input_id"), "record_id", record,
					  "source_hash", json_object_get(in, "source_hash"),
					  "delivered_hash", json_object_get(in, "delivered_hash"),
					  "rank", json_object_get(in, "rank")));
	}
	json_array_foreach(json_object_get(cr, "suppressed_inputs"), i, in)
		json_array_append_new(
			suppressed,
			json_pack("{s:O, s:s, s:O, s:O, s:s}", "input_id", json_object_get(in, "input_id"),
				  "record_id", "src_000000000000000000000000000000ff", "source_hash",
				  json_object_get(in, "source_hash"), "rank", json_object_get(in, "rank"),
				  "suppression_reason", "beyond_limit"));
	json_t *r = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:o, s:b}", "receipt_id",
			      "lrc_0123456789abcdef0123456789abcdef", "event_type", "context.load",
			      "candidate_count", 4, "selected_count", 3, "delivered_count", 3,
			      "suppressed_count", 1, "loaded_inputs", loaded, "suppressed_inputs",
			      suppressed, "claims_usefulness", 0);
	assert_non_null(r);
	return r;
}

static json_t *rel_base_doc(enum rel_base base)
{
	if (base == REL_CONTEXT)
		return json_deep_copy(context_relevance());
	if (base == REL_LOAD_ONLY)
		return json_deep_copy(json_object_get(context_relevance(), "load_only_variant"));
	json_t *doc = json_pack("{s:o, s:O}", "load_receipt", load_receipt(), "relevance",
				json_object_get(context_relevance(), "relevance"));
	json_t *copy = json_deep_copy(doc); /* the relevance object is not the seed's own */
	json_decref(doc);
	return copy;
}

static json_t *normalise(enum rel_base base, const json_t *doc)
{
	if (base == REL_RECEIPT)
		return core_relevance_from_receipt(json_object_get(doc, "load_receipt"),
						   json_object_get(doc, "relevance"));
	return core_relevance_from_context(doc);
}

static void run_rel_case(void **state)
{
	const struct rel_case *c = *state;
	json_t *doc = rel_base_doc(c->base);
	assert_non_null(doc);
	apply(doc, c->muts);
	json_t *before = json_deep_copy(doc);
	json_t *n = normalise(c->base, doc);
	assert_non_null(n);
	assert_true(json_equal(doc, before)); /* the inputs are borrowed */
	json_t *n_before = json_deep_copy(n);

	struct env_verdict v;
	core_relevance_verify(n, &v);
	assert_true(json_equal(n, n_before));

	const char *expected[N_ELEMS(rel_checks)];
	for (size_t i = 0; i < N_ELEMS(rel_checks); i++)
		expected[i] = listed(c->fails, rel_checks[i]) ? "fail"
			      : c->no_event && i >= 2          ? "skipped"
							       : "pass";
	assert_known_checks(c->fails, rel_checks, N_ELEMS(rel_checks));
	assert_checks(&v, rel_checks, N_ELEMS(rel_checks), expected, NULL);
	assert_codes(&v, c->codes, c->verdict);

	core_env_verdict_free(&v);
	json_decref(n_before);
	json_decref(n);
	json_decref(before);
	json_decref(doc);
}

/* ---- normalised forms ------------------------------------------------------------------ */

static json_int_t iget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_from_context(void **state)
{
	(void)state;
	const json_t *cr = context_relevance();
	json_t *n = core_relevance_from_context(cr);
	assert_non_null(n);
	assert_int_equal(json_object_size(n), 5);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), json_object_get(cr, "loaded_inputs")));
	assert_true(json_equal(json_object_get(n, "relevance"), json_object_get(cr, "relevance")));
	json_decref(n);

	n = core_relevance_from_context(json_object_get(cr, "load_only_variant"));
	assert_non_null(n);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_is_null(json_object_get(n, "relevance")));
	json_t *want = json_pack("[{s:s}, {s:s}, {s:s}]", "input_id", "ctx_in_001", "input_id",
				 "ctx_in_002", "input_id", "ctx_in_003");
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), want));
	json_decref(want);
	json_decref(n);

	/* the seed's own expectation for the load-only variant */
	assert_string_equal(json_string_value(json_object_get(json_object_get(cr, "load_only_variant"),
							      "expected_verdict")),
			    "MATCH");
}

static void test_from_receipt(void **state)
{
	(void)state;
	json_t *receipt = load_receipt();
	const json_t *rel = json_object_get(context_relevance(), "relevance");
	json_t *rel_before = json_deep_copy(rel), *receipt_before = json_deep_copy(receipt);

	json_t *n = core_relevance_from_receipt(receipt, rel);
	assert_non_null(n);
	assert_int_equal(json_object_size(n), 5);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), json_object_get(receipt, "loaded_inputs")));
	assert_true(json_equal(json_object_get(n, "relevance"), rel));
	struct env_verdict v;
	core_relevance_verify(n, &v);
	assert_string_equal(v.verdict, "MATCH");
	assert_int_equal(json_array_size(v.failure_codes), 0);
	core_env_verdict_free(&v);
	json_decref(n);

	n = core_relevance_from_receipt(receipt, NULL);
	assert_non_null(n);
	assert_true(json_is_null(json_object_get(n, "relevance")));
	json_decref(n);

	assert_true(json_equal(rel, rel_before));
	assert_true(json_equal(receipt, receipt_before));
	json_decref(rel_before);
	json_decref(receipt_before);
	json_decref(receipt);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_from_context),
		cmocka_unit_test(test_from_receipt),
	};
	static char names[REL_CASE_COUNT][160];
	static struct CMUnitTest tests[N_ELEMS(fixed) + REL_CASE_COUNT];
	size_t n = 0, k;
	for (k = 0; k < N_ELEMS(fixed); k++)
		tests[n++] = fixed[k];
	for (k = 0; k < REL_CASE_COUNT; k++) {
		snprintf(names[k], sizeof names[k], "relevance: %s", rel_cases[k].name);
		tests[n++] = (struct CMUnitTest){names[k], run_rel_case, NULL, NULL, &rel_cases[k]};
	}
	return cmocka_run_group_tests_name("envelope_relevance", tests, load_seed, free_seed);
}
