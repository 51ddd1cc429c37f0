/* core/problem: RFC 9457 bodies as API.md §0 spells them. */
#include "unit.h"

#include <jansson.h>

#include "core/problem.h"

static const char *str(const json_t *p, const char *key)
{
	return json_string_value(json_object_get(p, key));
}

static void test_shape(void **state)
{
	(void)state;
	json_t *p = core_problem_new(409, "stale_revision", "The revision moved.", "req_1", NULL, -1);
	assert_non_null(p);
	assert_string_equal(str(p, "type"), "urn:recallgate:problem:stale_revision");
	assert_string_equal(str(p, "title"), "Stale revision");
	assert_true(json_is_integer(json_object_get(p, "status")));
	assert_int_equal(json_integer_value(json_object_get(p, "status")), 409);
	assert_string_equal(str(p, "detail"), "The revision moved.");
	assert_string_equal(str(p, "code"), "stale_revision");
	assert_string_equal(str(p, "request_id"), "req_1");
	assert_null(json_object_get(p, "errors"));
	assert_null(json_object_get(p, "current_revision"));
	assert_int_equal(json_object_size(p), 6);
	json_decref(p);
}

static void test_titles(void **state)
{
	(void)state;
	static const struct {
		const char *code;
		int status;
	} codes[] = {
		{"invalid_json", 400}, {"unauthenticated", 401}, {"forbidden", 403},
		{"not_found", 404}, {"method_not_allowed", 405}, {"stale_revision", 409},
		{"operation_conflict", 409}, {"precondition_failed", 412},
		{"payload_too_large", 413}, {"unsupported_media_type", 415},
		{"validation_failed", 422}, {"unknown_field", 422}, {"capacity_exceeded", 422},
		{"rate_limited", 429}, {"database_unavailable", 503}, {"query_timeout", 504},
		{"internal", 500},
	};
	for (size_t i = 0; i < N_ELEMS(codes); i++) {
		const char *title = core_problem_title(codes[i].code);
		assert_non_null(title);
		/* every code of API.md has its own title, not the fallback */
		assert_string_not_equal(title, "Request failed");
		json_t *p = core_problem_new(codes[i].status, codes[i].code, NULL, "r", NULL, -1);
		assert_non_null(p);
		char type[128];
		snprintf(type, sizeof type, "urn:recallgate:problem:%s", codes[i].code);
		assert_string_equal(str(p, "type"), type);
		assert_string_equal(str(p, "title"), title);
		assert_string_equal(str(p, "code"), codes[i].code);
		assert_int_equal(json_integer_value(json_object_get(p, "status")), codes[i].status);
		json_decref(p);
	}
	assert_string_equal(core_problem_title("not_found"), "Not found");
	assert_string_equal(core_problem_title("no_such_code"), "Request failed");
}

static void test_detail_defaults_to_title(void **state)
{
	(void)state;
	json_t *p = core_problem_new(404, "not_found", NULL, "req_x", NULL, -1);
	assert_non_null(p);
	assert_string_equal(str(p, "detail"), "Not found");
	json_decref(p);
}

static void test_request_id_always_present(void **state)
{
	(void)state;
	json_t *p = core_problem_new(500, "internal", "Internal error.", NULL, NULL, -1);
	assert_non_null(p);
	assert_true(json_is_string(json_object_get(p, "request_id")));
	assert_string_equal(str(p, "request_id"), "");
	json_decref(p);
}

static void test_errors_only_when_non_empty(void **state)
{
	(void)state;
	json_t *empty = json_array();
	json_t *p = core_problem_new(422, "validation_failed", "x", "r", empty, -1);
	assert_non_null(p);
	assert_null(json_object_get(p, "errors"));
	json_decref(p);
	json_decref(empty);

	json_t *errors = json_pack("[{s:s, s:s}]", "field", "a.b[2].c", "reason", "is required");
	assert_non_null(errors);
	p = core_problem_new(422, "validation_failed", "x", "r", errors, -1);
	assert_non_null(p);
	json_t *got = json_object_get(p, "errors");
	assert_true(json_is_array(got));
	assert_true(json_equal(got, errors));
	assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "field")),
			    "a.b[2].c");
	/* errors is borrowed: the caller's reference is still its own */
	json_decref(errors);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(p, "errors"), 0), "reason")),
			    "is required");
	json_decref(p);
}

static void test_current_revision_only_when_not_negative(void **state)
{
	(void)state;
	static const long long revs[] = {0, 1, 42, 9007199254740993LL};
	for (size_t i = 0; i < N_ELEMS(revs); i++) {
		json_t *p = core_problem_new(409, "stale_revision", "x", "r", NULL, revs[i]);
		assert_non_null(p);
		json_t *cr = json_object_get(p, "current_revision");
		assert_true(json_is_integer(cr));
		assert_true(json_integer_value(cr) == revs[i]);
		json_decref(p);
	}
	json_t *p = core_problem_new(409, "stale_revision", "x", "r", NULL, -1);
	assert_null(json_object_get(p, "current_revision"));
	json_decref(p);
	p = core_problem_new(409, "stale_revision", "x", "r", NULL, -5);
	assert_null(json_object_get(p, "current_revision"));
	json_decref(p);
}

static void test_errors_and_revision_together(void **state)
{
	(void)state;
	json_t *errors = json_pack("[{s:s, s:s}]", "field", "mode", "reason", "must be one of");
	json_t *p = core_problem_new(409, "stale_revision", "x", "r", errors, 7);
	assert_non_null(p);
	assert_int_equal(json_object_size(p), 8);
	assert_int_equal(json_integer_value(json_object_get(p, "current_revision")), 7);
	assert_int_equal(json_array_size(json_object_get(p, "errors")), 1);
	json_decref(errors);
	json_decref(p);
}

static void test_serialises_as_json(void **state)
{
	(void)state;
	json_t *p = core_problem_new(404, "not_found", "No such thread.", "req_abc", NULL, -1);
	char *s = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(s);
	assert_string_equal(s, "{\"code\":\"not_found\",\"detail\":\"No such thread.\","
			       "\"request_id\":\"req_abc\",\"status\":404,\"title\":\"Not found\","
			       "\"type\":\"urn:recallgate:problem:not_found\"}");
	free(s);
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_detail_defaults_to_title),
		cmocka_unit_test(test_request_id_always_present),
		cmocka_unit_test(test_errors_only_when_non_empty),
		cmocka_unit_test(test_current_revision_only_when_not_negative),
		cmocka_unit_test(test_errors_and_revision_together),
		cmocka_unit_test(test_serialises_as_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
