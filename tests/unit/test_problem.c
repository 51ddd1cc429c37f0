/* core/problem: RFC 9457 bodies as openapi/openapi.yaml "Problem" spells them. */
#include "unit.h"

#include <jansson.h>

#include "core/fields.h"
#include "core/problem.h"

static const char *str(const json_t *p, const char *key)
{
	return json_string_value(json_object_get(p, key));
}

static void test_shape(void **state)
{
	(void)state;
	json_t *p = core_problem_new(PROBLEM_STALE_REVISION, "The revision moved.", "req_1", NULL, -1);
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

/* The codes of openapi/openapi.yaml "Problem" keep their statuses. */
static void test_contract_codes(void **state)
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
		{"rate_limited", 429}, {"database_unavailable", 503}, {"query_timeout", 504}, {"internal", 500},
		{"invalid_request", 400}, {"uri_too_long", 414}, {"headers_too_large", 431},
		{"shutting_down", 503}, {"too_many_streams", 503},
	};
	for (size_t i = 0; i < N_ELEMS(codes); i++) {
		enum rg_problem p = core_problem_from_code(codes[i].code);
		if (p == PROBLEM_NONE)
			print_error("%s is not in the problem table\n", codes[i].code);
		assert_int_not_equal(p, PROBLEM_NONE);
		assert_int_equal(core_problem_status(p), codes[i].status);
	}
	assert_int_equal(core_problem_from_code("no_such_code"), PROBLEM_NONE);
	assert_int_equal(core_problem_from_code(NULL), PROBLEM_NONE);
}

/* Every code the service can answer is an enum value of the one table, so walking the
 * table walks every code: each has its own title, a status, a default detail. */
static void test_every_code_has_its_own_title(void **state)
{
	(void)state;
	assert_null(core_problem_title(PROBLEM_NONE));
	assert_null(core_problem_code(PROBLEM_COUNT));
	assert_int_equal(core_problem_status(PROBLEM_NONE), 0);
	assert_null(core_problem_new(PROBLEM_NONE, NULL, "r", NULL, -1));
	for (int i = PROBLEM_NONE + 1; i < PROBLEM_COUNT; i++) {
		enum rg_problem p = (enum rg_problem)i;
		const char *code = core_problem_code(p), *title = core_problem_title(p);
		const char *detail = core_problem_default_detail(p);
		assert_non_null(code);
		assert_non_null(title);
		assert_non_null(detail);
		assert_true(strspn(code, "abcdefghijklmnopqrstuvwxyz_") == strlen(code));
		assert_int_equal(core_problem_from_code(code), p);
		assert_true(core_problem_status(p) >= 400 && core_problem_status(p) <= 599);
		assert_true(strlen(title) > 0 && strlen(detail) > 0);
		assert_string_not_equal(title, "Request failed");
		assert_int_equal(detail[strlen(detail) - 1], '.');
		for (int j = PROBLEM_NONE + 1; j < i; j++) {
			if (strcmp(core_problem_title((enum rg_problem)j), title) == 0)
				print_error("%s and %s share the title \"%s\"\n", code,
					    core_problem_code((enum rg_problem)j), title);
			assert_string_not_equal(core_problem_title((enum rg_problem)j), title);
		}
		json_t *doc = core_problem_new(p, NULL, "r", NULL, -1);
		assert_non_null(doc);
		char type[128];
		snprintf(type, sizeof type, "urn:recallgate:problem:%s", code);
		assert_string_equal(str(doc, "type"), type);
		assert_string_equal(str(doc, "title"), title);
		assert_string_equal(str(doc, "detail"), detail);
		assert_string_equal(str(doc, "code"), code);
		assert_int_equal(json_integer_value(json_object_get(doc, "status")),
				 core_problem_status(p));
		json_decref(doc);
	}
	assert_string_equal(core_problem_title(PROBLEM_NOT_FOUND), "Not found");
}

static void test_detail_defaults_to_the_codes(void **state)
{
	(void)state;
	json_t *p = core_problem_new(PROBLEM_NOT_FOUND, NULL, "req_x", NULL, -1);
	assert_non_null(p);
	assert_string_equal(str(p, "detail"), "No such resource.");
	json_decref(p);
}

static void test_request_id_always_present(void **state)
{
	(void)state;
	json_t *p = core_problem_new(PROBLEM_INTERNAL, "Internal error.", NULL, NULL, -1);
	assert_non_null(p);
	assert_true(json_is_string(json_object_get(p, "request_id")));
	assert_string_equal(str(p, "request_id"), "");
	json_decref(p);
}

static void test_errors_only_when_non_empty(void **state)
{
	(void)state;
	json_t *empty = json_array();
	json_t *p = core_problem_new(PROBLEM_VALIDATION_FAILED, "x", "r", empty, -1);
	assert_non_null(p);
	assert_null(json_object_get(p, "errors"));
	json_decref(p);
	json_decref(empty);

	json_t *errors = json_pack("[{s:s, s:s}]", "field", "a.b[2].c", "reason", "is required");
	assert_non_null(errors);
	p = core_problem_new(PROBLEM_VALIDATION_FAILED, "x", "r", errors, -1);
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

/* errors[] keeps RG_MAX_ERRORS (20) entries in order; one more makes errors_truncated true;
 * core_fields_error stops collecting one past the cap */
static void test_errors_capped(void **state)
{
	(void)state;
	for (size_t n = RG_MAX_ERRORS; n <= RG_MAX_ERRORS + 1; n++) {
		json_t *errors = json_array();
		char field[16];
		for (size_t i = 0; i < n; i++) {
			snprintf(field, sizeof field, "f%zu", i);
			core_fields_error(errors, field, "must be known");
		}
		assert_int_equal(json_array_size(errors), n);
		json_t *p = core_problem_new(PROBLEM_UNKNOWN_FIELD, NULL, "r", errors, -1);
		json_t *got = json_object_get(p, "errors");
		assert_int_equal(json_array_size(got), RG_MAX_ERRORS);
		assert_string_equal(json_string_value(json_object_get(json_array_get(got, 19), "field")),
				    "f19");
		if (n == RG_MAX_ERRORS)
			assert_null(json_object_get(p, "errors_truncated"));
		else
			assert_true(json_is_true(json_object_get(p, "errors_truncated")));
		json_decref(p);
		json_decref(errors);
	}
	json_t *errors = json_array();
	for (int i = 0; i < 1000; i++)
		core_fields_error(errors, "f", "must be known");
	assert_int_equal(json_array_size(errors), RG_MAX_ERRORS + 1);
	json_decref(errors);
}

static void test_current_revision_only_when_not_negative(void **state)
{
	(void)state;
	static const long long revs[] = {0, 1, 42, 9007199254740993LL};
	for (size_t i = 0; i < N_ELEMS(revs); i++) {
		json_t *p = core_problem_new(PROBLEM_STALE_REVISION, "x", "r", NULL, revs[i]);
		assert_non_null(p);
		json_t *cr = json_object_get(p, "current_revision");
		assert_true(json_is_integer(cr));
		assert_true(json_integer_value(cr) == revs[i]);
		json_decref(p);
	}
	json_t *p = core_problem_new(PROBLEM_STALE_REVISION, "x", "r", NULL, -1);
	assert_null(json_object_get(p, "current_revision"));
	json_decref(p);
	p = core_problem_new(PROBLEM_STALE_REVISION, "x", "r", NULL, -5);
	assert_null(json_object_get(p, "current_revision"));
	json_decref(p);
}

static void test_errors_and_revision_together(void **state)
{
	(void)state;
	json_t *errors = json_pack("[{s:s, s:s}]", "field", "mode", "reason", "must be one of");
	json_t *p = core_problem_new(PROBLEM_STALE_REVISION, "x", "r", errors, 7);
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
	json_t *p = core_problem_new(PROBLEM_NOT_FOUND, "No such thread.", "req_abc", NULL, -1);
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
		cmocka_unit_test(test_errors_capped),
		cmocka_unit_test(test_contract_codes),
		cmocka_unit_test(test_every_code_has_its_own_title),
		cmocka_unit_test(test_detail_defaults_to_the_codes),
		cmocka_unit_test(test_request_id_always_present),
		cmocka_unit_test(test_errors_only_when_non_empty),
		cmocka_unit_test(test_current_revision_only_when_not_negative),
		cmocka_unit_test(test_errors_and_revision_together),
		cmocka_unit_test(test_serialises_as_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
