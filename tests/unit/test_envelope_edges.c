/* core/envelope: inputs the fuzzer (tests/fuzz/fuzz_envelope.c) showed to break a verdict.
 * - A cited source ref id whose 64th byte falls inside a UTF-8 sequence: the detail quoted
 *   the id cut there, json_pack refused the invalid UTF-8 and the check vanished from the
 *   verdict (9 checks instead of 10), though its failure code stayed.
 * - Budget integers at the ends of the range: max_input_tokens - reserved_response_tokens
 *   overflowed (undefined behaviour) before it was compared. */
#include "unit.h"

#include <jansson.h>

#include "core/envelope.h"

#define HASH "sha256:0000000000000000000000000000000000000000000000000000000000000000"

static const json_t *check_named(const struct env_verdict *v, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(v->checks, i, c)
		if (strcmp(json_string_value(json_object_get(c, "check")), name) == 0)
			return c;
	return NULL;
}

static void assert_check(const struct env_verdict *v, const char *name, const char *result,
			 const char *detail)
{
	const json_t *c = check_named(v, name);
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "result")), result);
	if (detail)
		assert_string_equal(json_string_value(json_object_get(c, "detail")), detail);
}

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	assert_non_null(v);
	return v;
}

/* 63 'a', then "é" (2 bytes: the 64th byte is its first), then 'x'. */
#define LONG_ID "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9x"
#define CUT_ID "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void test_missing_ref_with_cut_id(void **state)
{
	(void)state;
	json_t *env = parse("{\"summary\": {\"claims\": [{\"text\": \"t\", "
			    "\"source_ref_ids\": [\"" LONG_ID "\"]}]}}");
	struct env_verdict v;
	core_envelope_verify(env, NULL, &v);
	assert_int_equal(json_array_size(v.checks), 10);
	assert_check(&v, "refs_exist", "fail", "cited source ref " CUT_ID " does not exist");
	assert_string_equal(v.verdict, "UNVERIFIABLE");
	core_env_verdict_free(&v);
	json_decref(env);
}

static void test_unexpandable_ref_with_cut_id(void **state)
{
	(void)state;
	json_t *env = parse("{\"summary\": {\"claims\": [{\"text\": \"t\", "
			    "\"source_ref_ids\": [\"" LONG_ID "\"]}]}, \"source_refs\": [{\"id\": \""
			    LONG_ID "\", \"path\": \"p\", \"range\": \"1-2\", \"content_hash\": \"" HASH
			    "\"}]}");
	struct env_verdict v;
	core_envelope_verify(env, NULL, &v);
	assert_int_equal(json_array_size(v.checks), 10);
	assert_check(&v, "refs_exist", "pass", NULL);
	assert_check(&v, "refs_expandable", "fail",
		     "cited source ref " CUT_ID " has no expansion command");
	core_env_verdict_free(&v);
	json_decref(env);
}

/* 62 'a' and "é": 64 bytes ending on a sequence boundary, quoted whole. */
#define ID64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9"

static void test_id_ending_on_the_boundary(void **state)
{
	(void)state;
	json_t *env = parse("{\"summary\": {\"claims\": [{\"text\": \"t\", "
			    "\"source_ref_ids\": [\"" ID64 "\", \"" ID64 "x\"]}]}}");
	struct env_verdict v;
	core_envelope_verify(env, NULL, &v);
	assert_check(&v, "refs_exist", "fail", "cited source ref " ID64 " does not exist");
	core_env_verdict_free(&v);
	json_decref(env);
}

struct budget_case {
	const char *budget;
	const char *result;
};

static void test_budget_at_the_ends(void **state)
{
	(void)state;
	static const struct budget_case cases[] = {
		/* room below the minimum: no target fits */
		{"{\"max_input_tokens\": -9223372036854775807, \"target_packet_tokens\": 0, "
		 "\"reserved_response_tokens\": 9}", "fail"},
		/* room above the maximum: every target fits */
		{"{\"max_input_tokens\": 9223372036854775807, \"target_packet_tokens\": "
		 "9223372036854775807, \"reserved_response_tokens\": -9}", "pass"},
		{"{\"max_input_tokens\": 10, \"target_packet_tokens\": 9, "
		 "\"reserved_response_tokens\": 1}", "pass"},
		{"{\"max_input_tokens\": 10, \"target_packet_tokens\": 10, "
		 "\"reserved_response_tokens\": 1}", "fail"},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		json_t *env = json_pack("{s:o}", "context_budget", parse(cases[i].budget));
		struct env_verdict v;
		core_envelope_verify(env, NULL, &v);
		assert_check(&v, "budget", cases[i].result, NULL);
		core_env_verdict_free(&v);
		json_decref(env);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_ref_with_cut_id),
		cmocka_unit_test(test_unexpandable_ref_with_cut_id),
		cmocka_unit_test(test_id_ending_on_the_boundary),
		cmocka_unit_test(test_budget_at_the_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
