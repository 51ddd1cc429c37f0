/* core/fields: one spec table, every field type, checked case by case as data. */
#include "unit.h"

#include <jansson.h>

#include "core/fields.h"

static bool starts_with_x(const char *s)
{
	return s[0] == 'x';
}

static const char *const modes[] = {"enabled", "disabled", NULL};
static const char *const scope_values[] = {"admin", "memory:read", "memory:write",
					   "memory:admin", "audit:read", NULL};

static const struct field_spec deep_spec[] = {
	{.name = "c", .type = F_BOOL},
	{.name = NULL},
};

static const struct field_spec inner_spec[] = {
	{.name = "b", .type = F_INT, .required = true, .min = 0, .max = 10},
	{.name = "deep", .type = F_OBJECT, .sub = deep_spec},
	{.name = NULL},
};

static const struct field_spec scope_item = {.type = F_ENUM, .values = scope_values};

static const struct field_spec list_item_fields[] = {
	{.name = "c", .type = F_INT, .required = true, .min = 0, .max = 100},
	{.name = NULL},
};
static const struct field_spec list_item = {.type = F_OBJECT, .sub = list_item_fields};

static const struct field_spec spec[] = {
	{.name = "req", .type = F_INT, .required = true, .min = 0, .max = INT64_MAX},
	{.name = "s", .type = F_STRING, .min = 2, .max = 8},
	{.name = "c", .type = F_STRING, .check = starts_with_x, .check_reason = "must start with x"},
	{.name = "plain_check", .type = F_STRING, .check = starts_with_x},
	{.name = "i", .type = F_INT, .min = -5, .max = 5},
	{.name = "n", .type = F_NUMBER, .min = 0, .max = 1},
	{.name = "flag", .type = F_BOOL},
	{.name = "mode", .type = F_ENUM, .values = modes},
	{.name = "at", .type = F_TIMESTAMP},
	{.name = "a", .type = F_OBJECT, .sub = inner_spec},
	{.name = "free", .type = F_OBJECT},
	{.name = "scopes", .type = F_ARRAY, .min = 1, .max = 4, .item = &scope_item, .unique = true},
	{.name = "list", .type = F_ARRAY, .item = &list_item},
	{.name = "any_items", .type = F_ARRAY},
	{.name = "maybe", .type = F_STRING, .nullable = true, .max = 3},
	{.name = "req_null", .type = F_STRING, .nullable = true},
	{.name = NULL},
};

/* A body, the expected result, and (for failures) one error that must be in errors[]. */
struct fcase {
	const char *body;
	enum fields_result want;
	const char *field;  /* exact errors[].field */
	const char *reason; /* substring of errors[].reason */
};

static bool has_error(const json_t *errors, const char *field, const char *reason)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e) {
		const char *f = json_string_value(json_object_get(e, "field"));
		const char *r = json_string_value(json_object_get(e, "reason"));
		if (f && r && strcmp(f, field) == 0 && strstr(r, reason) != NULL)
			return true;
	}
	return false;
}

/* Every errors[] entry is exactly {field: string, reason: a "must ..." phrase}. */
static bool errors_well_formed(const json_t *errors)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e) {
		if (!json_is_object(e) || json_object_size(e) != 2 ||
		    !json_is_string(json_object_get(e, "field")) ||
		    !json_is_string(json_object_get(e, "reason")) ||
		    json_string_length(json_object_get(e, "reason")) == 0 ||
		    /* one wording: every reason completes "<field> must ..." */
		    strncmp(json_string_value(json_object_get(e, "reason")), "must ", 5) != 0)
			return false;
	}
	return true;
}

static void check_body(const json_t *body, const struct field_spec *s, const struct fcase *c,
		       const char *label)
{
	json_t *errors = json_array();
	assert_non_null(errors);
	enum fields_result got = core_fields_validate(body, s, errors);
	bool ok = got == c->want && errors_well_formed(errors);
	if (ok && c->want == FIELDS_OK)
		ok = json_array_size(errors) == 0;
	else if (ok)
		ok = json_array_size(errors) > 0 && has_error(errors, c->field, c->reason);
	if (!ok) {
		char *dump = json_dumps(errors, JSON_COMPACT);
		print_error("%s: want result %d with {field \"%s\", reason ~\"%s\"}; got %d, errors %s\n",
			    label, (int)c->want, c->field ? c->field : "", c->reason ? c->reason : "",
			    (int)got, dump ? dump : "?");
		free(dump);
	}
	json_decref(errors);
	assert_true(ok);
}

static void run_cases(const struct fcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_error_t jerr;
		json_t *body = json_loads(cases[i].body, JSON_DECODE_ANY, &jerr);
		if (body == NULL)
			print_error("case %zu does not parse: %s\n", i, jerr.text);
		assert_non_null(body);
		check_body(body, spec, &cases[i], cases[i].body);
		json_decref(body);
	}
}

static void test_minimal_body_passes(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 0}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 9223372036854775807}", FIELDS_OK, NULL, NULL},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_required(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{}", FIELDS_INVALID, "req", "must be present"},
		{"{\"s\": \"ab\"}", FIELDS_INVALID, "req", "must be present"},
		{"{\"req\": 1, \"a\": {}}", FIELDS_INVALID, "a.b", "must be present"},
		{"{\"req\": null}", FIELDS_INVALID, "req", "must not be null"},
		{"{\"req\": -1}", FIELDS_INVALID, "req", "between"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_string(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"s\": \"ab\"}", FIELDS_OK, NULL, NULL},              /* min */
		{"{\"req\": 1, \"s\": \"abcdefgh\"}", FIELDS_OK, NULL, NULL},        /* max */
		{"{\"req\": 1, \"s\": \"a\"}", FIELDS_INVALID, "s", "at least 2 bytes"},
		{"{\"req\": 1, \"s\": \"\"}", FIELDS_INVALID, "s", "at least 2 bytes"},
		{"{\"req\": 1, \"s\": \"abcdefghi\"}", FIELDS_INVALID, "s", "at most 8 bytes"},
		/* bytes, not characters: 4 × "é" = 8 bytes passes, 5 × "é" = 10 bytes fails */
		{"{\"req\": 1, \"s\": \"\\u00e9\\u00e9\\u00e9\\u00e9\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"s\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}", FIELDS_INVALID, "s",
		 "at most 8 bytes"},
		{"{\"req\": 1, \"s\": \"abcdefg\\u00e9\"}", FIELDS_INVALID, "s", "at most 8 bytes"},
		{"{\"req\": 1, \"s\": 12}", FIELDS_INVALID, "s", "must be a string"},
		{"{\"req\": 1, \"s\": true}", FIELDS_INVALID, "s", "must be a string"},
		{"{\"req\": 1, \"s\": [\"ab\"]}", FIELDS_INVALID, "s", "must be a string"},
		{"{\"req\": 1, \"s\": null}", FIELDS_INVALID, "s", "must not be null"},
		/* max 0 = unbounded */
		{"{\"req\": 1, \"c\": \"x234567890123456789012345678901234567890\"}", FIELDS_OK, NULL,
		 NULL},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_string_check_callback(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"c\": \"xyz\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"c\": \"abc\"}", FIELDS_INVALID, "c", "must start with x"},
		{"{\"req\": 1, \"plain_check\": \"abc\"}", FIELDS_INVALID, "plain_check", "must pass this field's rule"},
		{"{\"req\": 1, \"plain_check\": \"x\"}", FIELDS_OK, NULL, NULL},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_integer(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"i\": -5}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"i\": 5}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"i\": 0}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"i\": -6}", FIELDS_INVALID, "i", "between -5 and 5"},
		{"{\"req\": 1, \"i\": 6}", FIELDS_INVALID, "i", "between -5 and 5"},
		{"{\"req\": 1, \"i\": 1.0}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": 1.5}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": 1e0}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": true}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": false}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": \"1\"}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1, \"i\": {}}", FIELDS_INVALID, "i", "must be an integer"},
		{"{\"req\": 1.0}", FIELDS_INVALID, "req", "must be an integer"},
		{"{\"req\": true}", FIELDS_INVALID, "req", "must be an integer"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_number(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"n\": 0}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"n\": 0.5}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"n\": 1.0}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"n\": 1}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"n\": -0.001}", FIELDS_INVALID, "n", "between 0 and 1"},
		{"{\"req\": 1, \"n\": 1.001}", FIELDS_INVALID, "n", "between 0 and 1"},
		{"{\"req\": 1, \"n\": true}", FIELDS_INVALID, "n", "must be a number"},
		{"{\"req\": 1, \"n\": \"0.5\"}", FIELDS_INVALID, "n", "must be a number"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_bool(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"flag\": true}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"flag\": false}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"flag\": 1}", FIELDS_INVALID, "flag", "must be a boolean"},
		{"{\"req\": 1, \"flag\": \"true\"}", FIELDS_INVALID, "flag", "must be a boolean"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_enum(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"mode\": \"enabled\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"mode\": \"disabled\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"mode\": \"Enabled\"}", FIELDS_INVALID, "mode",
		 "must be one of: enabled disabled"},
		{"{\"req\": 1, \"mode\": \"\"}", FIELDS_INVALID, "mode", "must be one of"},
		{"{\"req\": 1, \"mode\": \"enabled \"}", FIELDS_INVALID, "mode", "must be one of"},
		{"{\"req\": 1, \"mode\": 1}", FIELDS_INVALID, "mode", "must be a string"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_timestamp(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"at\": \"2026-11-29T21:07:22.123Z\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"at\": \"2028-02-29T00:00:00Z\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"at\": \"2026-11-29T21:07:22+02:00\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"at\": \"2030-02-30T00:00:00Z\"}", FIELDS_INVALID, "at", "RFC 3339"},
		{"{\"req\": 1, \"at\": \"2030-02-29T00:00:00Z\"}", FIELDS_INVALID, "at", "RFC 3339"},
		{"{\"req\": 1, \"at\": \"2026-11-29\"}", FIELDS_INVALID, "at", "RFC 3339"},
		{"{\"req\": 1, \"at\": \"yesterday\"}", FIELDS_INVALID, "at", "RFC 3339"},
		{"{\"req\": 1, \"at\": 1795986442123}", FIELDS_INVALID, "at", "must be a string"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_nested_object(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"a\": {\"b\": 3}}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"a\": {\"b\": 3, \"deep\": {\"c\": true}}}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"a\": {\"b\": 11}}", FIELDS_INVALID, "a.b", "between 0 and 10"},
		{"{\"req\": 1, \"a\": {\"b\": \"3\"}}", FIELDS_INVALID, "a.b", "must be an integer"},
		{"{\"req\": 1, \"a\": {\"b\": 3, \"deep\": {\"c\": 0}}}", FIELDS_INVALID, "a.deep.c",
		 "must be a boolean"},
		{"{\"req\": 1, \"a\": [1]}", FIELDS_INVALID, "a", "must be an object"},
		{"{\"req\": 1, \"a\": \"x\"}", FIELDS_INVALID, "a", "must be an object"},
		/* an object without sub is free-form */
		{"{\"req\": 1, \"free\": {\"anything\": [1, {\"x\": null}]}}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"free\": []}", FIELDS_INVALID, "free", "must be an object"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_array(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"scopes\": [\"admin\"]}", FIELDS_OK, NULL, NULL},  /* min items */
		{"{\"req\": 1, \"scopes\": [\"admin\", \"memory:read\", \"memory:write\", "
		 "\"memory:admin\"]}", FIELDS_OK, NULL, NULL},                     /* max items */
		{"{\"req\": 1, \"scopes\": []}", FIELDS_INVALID, "scopes", "at least 1 items"},
		{"{\"req\": 1, \"scopes\": [\"admin\", \"memory:read\", \"memory:write\", "
		 "\"memory:admin\", \"audit:read\"]}", FIELDS_INVALID, "scopes", "at most 4 items"},
		{"{\"req\": 1, \"scopes\": [\"admin\", \"memory:read\", \"nope\"]}", FIELDS_INVALID,
		 "scopes[2]", "must be one of"},
		{"{\"req\": 1, \"scopes\": [\"admin\", \"memory:read\", 7]}", FIELDS_INVALID,
		 "scopes[2]", "must be a string"},
		{"{\"req\": 1, \"scopes\": [\"admin\", null]}", FIELDS_INVALID, "scopes[1]",
		 "must not be null"},
		{"{\"req\": 1, \"scopes\": [\"admin\", \"memory:read\", \"admin\"]}", FIELDS_INVALID,
		 "scopes[2]", "must not repeat"},
		{"{\"req\": 1, \"scopes\": \"admin\"}", FIELDS_INVALID, "scopes", "must be an array"},
		{"{\"req\": 1, \"scopes\": {}}", FIELDS_INVALID, "scopes", "must be an array"},
		/* arrays of objects: paths like list[2].c */
		{"{\"req\": 1, \"list\": [{\"c\": 1}, {\"c\": 2}, {\"c\": 3}]}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"list\": [{\"c\": 1}, {\"c\": 2}, {\"c\": \"x\"}]}", FIELDS_INVALID,
		 "list[2].c", "must be an integer"},
		{"{\"req\": 1, \"list\": [{\"c\": 1}, {}]}", FIELDS_INVALID, "list[1].c", "must be present"},
		{"{\"req\": 1, \"list\": [{\"c\": 1}, 5]}", FIELDS_INVALID, "list[1]",
		 "must be an object"},
		/* no item spec: anything goes; no bounds: empty passes */
		{"{\"req\": 1, \"any_items\": [1, \"a\", null, {}, []]}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"any_items\": []}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"list\": []}", FIELDS_OK, NULL, NULL},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_nullable(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"maybe\": null}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"maybe\": \"abc\"}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"maybe\": \"abcd\"}", FIELDS_INVALID, "maybe", "at most 3 bytes"},
		{"{\"req\": 1, \"maybe\": 3}", FIELDS_INVALID, "maybe", "must be a string"},
		{"{\"req\": 1, \"req_null\": null}", FIELDS_OK, NULL, NULL},
		{"{\"req\": 1, \"flag\": null}", FIELDS_INVALID, "flag", "must not be null"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static const struct field_spec required_nullable_spec[] = {
	{.name = "v", .type = F_INT, .required = true, .nullable = true},
	{.name = NULL},
};

static void test_required_nullable_counts_as_present(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"v\": null}", FIELDS_OK, NULL, NULL},
		{"{\"v\": 3}", FIELDS_OK, NULL, NULL},
		{"{}", FIELDS_INVALID, "v", "must be present"},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		json_t *body = json_loads(cases[i].body, 0, NULL);
		assert_non_null(body);
		check_body(body, required_nullable_spec, &cases[i], cases[i].body);
		json_decref(body);
	}
}

static void test_unknown_fields(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"req\": 1, \"extra\": 1}", FIELDS_UNKNOWN, "extra", "must not be sent"},
		{"{\"extra\": 1}", FIELDS_UNKNOWN, "extra", "must not be sent"},
		{"{\"Req\": 1, \"req\": 1}", FIELDS_UNKNOWN, "Req", "must not be sent"},
		{"{\"req\": 1, \"a\": {\"b\": 1, \"zz\": 2}}", FIELDS_UNKNOWN, "a.zz", "must not be sent"},
		{"{\"req\": 1, \"list\": [{\"c\": 1, \"q\": 0}]}", FIELDS_UNKNOWN, "list[0].q",
		 "must not be sent"},
		/* unknown wins over other errors in the result, both are listed */
		{"{\"req\": \"x\", \"extra\": 1}", FIELDS_UNKNOWN, "extra", "must not be sent"},
		{"{\"req\": \"x\", \"extra\": 1}", FIELDS_UNKNOWN, "req", "must be an integer"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_every_unknown_field_is_named(void **state)
{
	(void)state;
	json_t *body = json_loads("{\"one\": 1, \"req\": 1, \"two\": 2}", 0, NULL);
	json_t *errors = json_array();
	assert_non_null(body);
	assert_int_equal(core_fields_validate(body, spec, errors), FIELDS_UNKNOWN);
	assert_int_equal(json_array_size(errors), 2);
	assert_true(has_error(errors, "one", "must not be sent"));
	assert_true(has_error(errors, "two", "must not be sent"));
	json_decref(errors);
	json_decref(body);
}

static void test_several_errors_are_all_reported(void **state)
{
	(void)state;
	json_t *body = json_loads("{\"s\": \"a\", \"i\": 9, \"mode\": \"x\"}", 0, NULL);
	json_t *errors = json_array();
	assert_non_null(body);
	assert_int_equal(core_fields_validate(body, spec, errors), FIELDS_INVALID);
	assert_int_equal(json_array_size(errors), 4);
	assert_true(has_error(errors, "req", "must be present"));
	assert_true(has_error(errors, "s", "at least"));
	assert_true(has_error(errors, "i", "between"));
	assert_true(has_error(errors, "mode", "must be one of"));
	json_decref(errors);
	json_decref(body);
}

static void test_non_object_body(void **state)
{
	(void)state;
	static const char *const bodies[] = {"[]", "[{\"req\": 1}]", "\"req\"", "1", "true",
					     "null", "1.5"};
	static const struct fcase want = {NULL, FIELDS_INVALID, "", "object"};
	for (size_t i = 0; i < N_ELEMS(bodies); i++) {
		json_t *body = json_loads(bodies[i], JSON_DECODE_ANY, NULL);
		assert_non_null(body);
		check_body(body, spec, &want, bodies[i]);
		json_decref(body);
	}
	/* a missing body (NULL) is not an object either */
	check_body(NULL, spec, &want, "NULL");
}

static void test_errors_are_appended(void **state)
{
	(void)state;
	json_t *errors = json_array();
	json_t *body = json_loads("{}", 0, NULL);
	core_fields_error(errors, "earlier", "already there");
	assert_int_equal(core_fields_validate(body, spec, errors), FIELDS_INVALID);
	assert_int_equal(json_array_size(errors), 2);
	assert_true(has_error(errors, "earlier", "already there"));
	assert_true(has_error(errors, "req", "must be present"));
	json_decref(body);
	json_decref(errors);
}

/* A long unknown key: the field path is bounded, but the error must still be reported and
 * the result must still be UNKNOWN, whatever bytes the key holds. */
static void unknown_long_key(const char *tail)
{
	char key[400];
	memset(key, 'k', 254);
	strcpy(key + 254, tail);
	json_t *body = json_pack("{s:i, s:i}", "req", 1, key, 1);
	assert_non_null(body);
	json_t *errors = json_array();
	enum fields_result got = core_fields_validate(body, spec, errors);
	size_t nerrors = json_array_size(errors);
	const char *field = json_string_value(json_object_get(json_array_get(errors, 0), "field"));
	bool field_names_key = field != NULL && strncmp(field, key, 254) == 0;
	json_decref(errors);
	json_decref(body);
	if (got != FIELDS_UNKNOWN || nerrors != 1 || !field_names_key)
		print_error("unknown key of %zu bytes ending in \"%s\": want result %d with 1 error "
			    "naming the key; got result %d, %zu errors\n",
			    strlen(key), tail, (int)FIELDS_UNKNOWN, (int)got, nerrors);
	assert_int_equal(got, FIELDS_UNKNOWN);
	assert_int_equal(nerrors, 1);
	assert_true(field_names_key);
}

static void test_unknown_long_ascii_key(void **state)
{
	(void)state;
	unknown_long_key("tail-that-pushes-the-path-past-256-bytes");
}

static void test_unknown_long_key_multibyte_at_the_cut(void **state)
{
	(void)state;
	/* 254 + "é" (2 bytes) + more: the path buffer's 255-byte cut falls inside "é" */
	unknown_long_key("\xc3\xa9\xc3\xa9\xc3\xa9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_body_passes),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_string_check_callback),
		cmocka_unit_test(test_integer),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_enum),
		cmocka_unit_test(test_timestamp),
		cmocka_unit_test(test_nested_object),
		cmocka_unit_test(test_array),
		cmocka_unit_test(test_nullable),
		cmocka_unit_test(test_required_nullable_counts_as_present),
		cmocka_unit_test(test_unknown_fields),
		cmocka_unit_test(test_every_unknown_field_is_named),
		cmocka_unit_test(test_several_errors_are_all_reported),
		cmocka_unit_test(test_non_object_body),
		cmocka_unit_test(test_errors_are_appended),
		cmocka_unit_test(test_unknown_long_ascii_key),
		cmocka_unit_test(test_unknown_long_key_multibyte_at_the_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
