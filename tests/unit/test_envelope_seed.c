/* core/envelope: the seed fixture as the authority — every failure code's verdict in core is
 * the seed's, and every negative case of the seed has a row of the same name, code and verdict
 * in the envelope or relevance case table (envelope_cases.c, relevance_cases.c). */
#include "unit.h"

#include <jansson.h>

#include "core/envelope.h"
#include "envelope_helpers.h"

/* ---- codes ----------------------------------------------------------------------------- */

static void test_code_verdicts(void **state)
{
	(void)state;
	static const char *const table[][2] = {
		{"stale_context", "UNVERIFIABLE"},
		{"lossy_summary", "UNVERIFIABLE"},
		{"missing_source_ref", "UNVERIFIABLE"},
		{"unexpanded_required_ref", "UNVERIFIABLE"},
		{"unjoinable_receipt", "UNVERIFIABLE"},
		{"readability_regression", "DRIFT"},
		{"quality_gate_missing", "UNVERIFIABLE"},
		{"budget_exceeded", "DRIFT"},
		{"relevance_accounting_missing", "UNVERIFIABLE"},
		{"missing_relevance", "UNVERIFIABLE"},
		{"over_selection", "DRIFT"},
		{"unjoinable_relevance", "UNVERIFIABLE"},
		{"raw_context_leak", "UNVERIFIABLE"},
	};
	for (size_t i = 0; i < N_ELEMS(table); i++) {
		const char *got = core_env_code_verdict(table[i][0]);
		assert_non_null(got);
		assert_string_equal(got, table[i][1]);
		assert_string_equal(got, seed_verdict(table[i][0]));
	}
	/* the seed lists exactly these 13 codes */
	const json_t *codes = json_object_get(seed, "failure_codes");
	assert_int_equal(json_array_size(codes), N_ELEMS(table));
	size_t i;
	json_t *c;
	json_array_foreach(codes, i, c)
		assert_non_null(core_env_code_verdict(json_string_value(c)));
	assert_int_equal(json_array_size(json_object_get(seed, "negative_test_cases")), N_ELEMS(table));

	assert_null(core_env_code_verdict("unknown_code"));
	assert_null(core_env_code_verdict(""));
	assert_null(core_env_code_verdict("STALE_CONTEXT"));
	assert_null(core_env_code_verdict("stale_context "));
	assert_null(core_env_code_verdict("stale"));
	assert_null(core_env_code_verdict(NULL));
}

/* Every negative_test_cases entry of the seed has a row of the same name that expects
 * exactly its failure_code and expected_verdict. */
static void test_seed_negative_cases_covered(void **state)
{
	(void)state;
	size_t i, k;
	json_t *nc;
	json_array_foreach(json_object_get(seed, "negative_test_cases"), i, nc) {
		const char *name = json_string_value(json_object_get(nc, "name"));
		const char *code = json_string_value(json_object_get(nc, "failure_code"));
		const char *verdict = json_string_value(json_object_get(nc, "expected_verdict"));
		const char *const *codes = NULL;
		const char *row_verdict = NULL;
		for (k = 0; k < ENV_CASE_COUNT; k++)
			if (strcmp(env_cases[k].name, name) == 0) {
				codes = env_cases[k].codes;
				row_verdict = env_cases[k].verdict;
			}
		for (k = 0; k < REL_CASE_COUNT; k++)
			if (strcmp(rel_cases[k].name, name) == 0) {
				codes = rel_cases[k].codes;
				row_verdict = rel_cases[k].verdict;
			}
		if (codes == NULL)
			fail_msg("no row for the seed's negative case %s", name);
		assert_non_null(codes[0]);
		assert_string_equal(codes[0], code);
		assert_null(codes[1]);
		assert_string_equal(row_verdict, verdict);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_verdicts),
		cmocka_unit_test(test_seed_negative_cases_covered),
	};
	return cmocka_run_group_tests_name("envelope_seed", tests, load_seed, free_seed);
}
