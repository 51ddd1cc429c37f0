/* core/fields: the F_MAP field type (an object of at most max members whose keys pass `check`
 * and whose values pass `item`), as data. The `labels` spec is the one of
 * POST /v1/memory/sources (docs/memory-contract.md): ≤ 32 members, keys
 * ^[a-z][a-z0-9_.-]{0,63}$, string values 1..256 bytes. */
#include "unit.h"

#include <jansson.h>

#include "core/fields.h"
#include "core/memory.h"

#define KEY_PATTERN "^[a-z][a-z0-9_.-]{0,63}$"
#define KEY_REASON "must have a key matching " KEY_PATTERN

static const struct field_spec label_value = {.type = F_STRING, .min = 1,
					      .max = RG_MEM_LABEL_VALUE_MAX};
static const struct field_spec small_int = {.type = F_INT, .min = 0, .max = 10};

static const struct field_spec obj_fields[] = {
	{.name = "x", .type = F_BOOL, .required = true},
	{.name = NULL},
};
static const struct field_spec obj_value = {.type = F_OBJECT, .sub = obj_fields};

static bool no_upper(const char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			return false;
	return true;
}

static const struct field_spec outer_fields[] = {
	{.name = "labels", .type = F_MAP, .max = RG_MEM_LABELS_MAX, .check = core_label_key_valid,
	 .key_pattern = KEY_PATTERN, .item = &label_value},
	{.name = NULL},
};

static const struct field_spec spec[] = {
	{.name = "labels", .type = F_MAP, .max = RG_MEM_LABELS_MAX, .check = core_label_key_valid,
	 .key_pattern = KEY_PATTERN, .item = &label_value},
	{.name = "free", .type = F_MAP},                            /* any key, any value, any size */
	{.name = "ints", .type = F_MAP, .max = 3, .item = &small_int}, /* any key */
	{.name = "plain", .type = F_MAP, .check = no_upper},        /* default key reason */
	{.name = "objs", .type = F_MAP, .item = &obj_value},
	{.name = "maybe", .type = F_MAP, .nullable = true, .item = &label_value},
	{.name = "outer", .type = F_OBJECT, .sub = outer_fields},
	{.name = NULL},
};

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

/* Validates body; returns the errors (caller decrefs) after checking the case. */
static json_t *check_body(const json_t *body, const struct fcase *c, const char *label)
{
	json_t *errors = json_array();
	assert_non_null(errors);
	enum fields_result got = core_fields_validate(body, spec, errors);
	bool ok = got == c->want && errors_well_formed(errors);
	if (ok && c->want == FIELDS_OK)
		ok = json_array_size(errors) == 0;
	else if (ok)
		ok = json_array_size(errors) > 0 && has_error(errors, c->field, c->reason);
	if (!ok) {
		char *dump = json_dumps(errors, JSON_COMPACT);
		print_error("%.200s: want result %d with {field \"%.80s\", reason ~\"%s\"}; got %d, "
			    "errors %.600s\n",
			    label, (int)c->want, c->field ? c->field : "", c->reason ? c->reason : "",
			    (int)got, dump ? dump : "?");
		free(dump);
	}
	assert_true(ok);
	return errors;
}

static void run_cases(const struct fcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_error_t jerr;
		json_t *body = json_loads(cases[i].body, 0, &jerr);
		if (body == NULL)
			print_error("case %zu does not parse: %s\n", i, jerr.text);
		assert_non_null(body);
		json_decref(check_body(body, &cases[i], cases[i].body));
		json_decref(body);
	}
}

static char *repeat(char ch, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/* {"labels": {"<first>000": "v", … n members}} */
static json_t *labels_body(size_t n, char first)
{
	json_t *labels = json_object();
	for (size_t i = 0; i < n; i++) {
		char key[32];
		snprintf(key, sizeof key, "%c%03zu", first, i);
		json_object_set_new(labels, key, json_string("v"));
	}
	return json_pack("{s:o}", "labels", labels);
}

static void test_labels_shape(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{}", FIELDS_OK, NULL, NULL}, /* labels are optional */
		{"{\"labels\": {}}", FIELDS_OK, NULL, NULL},
		{"{\"labels\": {\"team\": \"core\"}}", FIELDS_OK, NULL, NULL},
		{"{\"labels\": {\"a\": \"1\", \"b.c\": \"2\", \"d-e_f9\": \"3\"}}", FIELDS_OK, NULL,
		 NULL},
		{"{\"labels\": []}", FIELDS_INVALID, "labels", "must be an object"},
		{"{\"labels\": [[\"team\", \"core\"]]}", FIELDS_INVALID, "labels", "must be an object"},
		{"{\"labels\": \"team=core\"}", FIELDS_INVALID, "labels", "must be an object"},
		{"{\"labels\": 1}", FIELDS_INVALID, "labels", "must be an object"},
		{"{\"labels\": true}", FIELDS_INVALID, "labels", "must be an object"},
		{"{\"labels\": null}", FIELDS_INVALID, "labels", "must not be null"},
	};
	run_cases(cases, N_ELEMS(cases));
}

static void test_labels_member_count(void **state)
{
	(void)state;
	static const struct fcase ok = {NULL, FIELDS_OK, NULL, NULL};
	static const struct fcase over = {NULL, FIELDS_INVALID, "labels", "at most 32 members"};
	json_t *b = labels_body(RG_MEM_LABELS_MAX, 'k');
	json_decref(check_body(b, &ok, "32 labels"));
	json_decref(b);
	b = labels_body(RG_MEM_LABELS_MAX + 1, 'k');
	json_decref(check_body(b, &over, "33 labels"));
	json_decref(b);
	b = labels_body(200, 'k');
	json_decref(check_body(b, &over, "200 labels"));
	json_decref(b);
	/* 33 members with bad keys: the count is reported, on the map itself */
	b = labels_body(RG_MEM_LABELS_MAX + 1, 'K');
	json_decref(check_body(b, &over, "33 bad labels"));
	json_decref(b);
	/* 32 members, one with a bad key: its position is reported */
	b = labels_body(RG_MEM_LABELS_MAX - 1, 'k');
	json_object_set_new(json_object_get(b, "labels"), "Bad", json_string("v"));
	static const struct fcase bad_key = {NULL, FIELDS_INVALID, "labels[31]", KEY_REASON};
	json_decref(check_body(b, &bad_key, "31 labels + Bad"));
	json_decref(b);
}

static void test_labels_keys(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"labels\": {\"Bad\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"bAd\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"0team\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"_team\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\".team\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"te am\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"team:x\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		{"{\"labels\": {\"caf\\u00e9\": \"x\"}}", FIELDS_INVALID, "labels[0]",
		 KEY_REASON},
		{"{\"labels\": {\"\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
		/* good keys next to a bad one: only the bad one is named */
		{"{\"labels\": {\"ok\": \"x\", \"Bad\": \"y\", \"also.ok\": \"z\"}}", FIELDS_INVALID,
		 "labels[1]", KEY_REASON},
		/* a key is not a field: never unknown_field */
		{"{\"labels\": {\"Unknown\": \"x\"}}", FIELDS_INVALID, "labels[0]", KEY_REASON},
	};
	run_cases(cases, N_ELEMS(cases));

	/* 64-character keys pass, 65 fail */
	char *k64 = repeat('k', 64), *k65 = repeat('k', 65);
	char path[80];
	json_t *b = json_pack("{s:{s:s}}", "labels", k64, "v");
	static const struct fcase ok = {NULL, FIELDS_OK, NULL, NULL};
	json_decref(check_body(b, &ok, "64-char key"));
	json_decref(b);
	b = json_pack("{s:{s:s}}", "labels", k65, "v");
	snprintf(path, sizeof path, "labels[0]");
	struct fcase over = {NULL, FIELDS_INVALID, path, KEY_REASON};
	json_decref(check_body(b, &over, "65-char key"));
	json_decref(b);
	free(k64);
	free(k65);
}

static void test_labels_values(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{"{\"labels\": {\"k\": \"v\"}}", FIELDS_OK, NULL, NULL},
		{"{\"labels\": {\"k\": \"\"}}", FIELDS_INVALID, "labels[0]", "at least 1 bytes"},
		{"{\"labels\": {\"k\": 1}}", FIELDS_INVALID, "labels[0]", "must be a string"},
		{"{\"labels\": {\"k\": true}}", FIELDS_INVALID, "labels[0]", "must be a string"},
		{"{\"labels\": {\"k\": [\"v\"]}}", FIELDS_INVALID, "labels[0]", "must be a string"},
		{"{\"labels\": {\"k\": {\"v\": \"w\"}}}", FIELDS_INVALID, "labels[0]",
		 "must be a string"},
		{"{\"labels\": {\"k\": null}}", FIELDS_INVALID, "labels[0]", "must not be null"},
		{"{\"labels\": {\"a\": \"v\", \"k\": 2}}", FIELDS_INVALID, "labels[1]",
		 "must be a string"},
	};
	run_cases(cases, N_ELEMS(cases));

	/* values 1..256 bytes, counted in bytes */
	static const struct fcase ok = {NULL, FIELDS_OK, NULL, NULL};
	static const struct fcase over = {NULL, FIELDS_INVALID, "labels[0]", "at most 256 bytes"};
	char *v256 = repeat('v', 256), *v257 = repeat('v', 257);
	json_t *b = json_pack("{s:{s:s}}", "labels", "k", v256);
	json_decref(check_body(b, &ok, "256-byte value"));
	json_decref(b);
	b = json_pack("{s:{s:s}}", "labels", "k", v257);
	json_decref(check_body(b, &over, "257-byte value"));
	json_decref(b);
	free(v256);
	free(v257);
	char e128[2 * 128 + 1], e129[2 * 129 + 1];
	for (size_t i = 0; i < 129; i++)
		memcpy(e129 + 2 * i, "\xc3\xa9", 2);
	e129[2 * 129] = '\0';
	memcpy(e128, e129, 2 * 128);
	e128[2 * 128] = '\0';
	b = json_pack("{s:{s:s}}", "labels", "k", e128);
	json_decref(check_body(b, &ok, "128 x e-acute = 256 bytes"));
	json_decref(b);
	b = json_pack("{s:{s:s}}", "labels", "k", e129);
	json_decref(check_body(b, &over, "129 x e-acute = 258 bytes"));
	json_decref(b);
}

/* A bad key is reported once and its value is not checked; every bad member is reported. */
static void test_labels_all_errors(void **state)
{
	(void)state;
	json_t *b = json_loads("{\"labels\": {\"Bad\": 5}}", 0, NULL);
	json_t *errors = json_array();
	assert_non_null(b);
	assert_int_equal(core_fields_validate(b, spec, errors), FIELDS_INVALID);
	assert_int_equal(json_array_size(errors), 1);
	assert_true(has_error(errors, "labels[0]", KEY_REASON));
	json_decref(errors);
	json_decref(b);

	b = json_loads("{\"labels\": {\"Bad\": \"x\", \"k\": \"\", \"ok\": \"y\", \"j\": 7, "
		       "\"n\": null}}",
		       0, NULL);
	errors = json_array();
	assert_non_null(b);
	assert_int_equal(core_fields_validate(b, spec, errors), FIELDS_INVALID);
	assert_true(errors_well_formed(errors));
	assert_int_equal(json_array_size(errors), 4);
	assert_true(has_error(errors, "labels[0]", KEY_REASON));
	assert_true(has_error(errors, "labels[1]", "at least 1 bytes"));
	assert_true(has_error(errors, "labels[3]", "must be a string"));
	assert_true(has_error(errors, "labels[4]", "must not be null"));
	json_decref(errors);
	json_decref(b);
}

static void test_other_maps(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		/* no check, no item, no max: anything */
		{"{\"free\": {}}", FIELDS_OK, NULL, NULL},
		{"{\"free\": {\"Any Key\": [1, null], \"\": {\"x\": 1}, \"0\": null}}", FIELDS_OK,
		 NULL, NULL},
		{"{\"free\": []}", FIELDS_INVALID, "free", "must be an object"},
		/* no check: any key; values checked against item */
		{"{\"ints\": {\"Any Key\": 0, \"B\": 10}}", FIELDS_OK, NULL, NULL},
		{"{\"ints\": {\"Any Key\": 11}}", FIELDS_INVALID, "ints[0]", "between 0 and 10"},
		{"{\"ints\": {\"x\": 1.0}}", FIELDS_INVALID, "ints[0]", "must be an integer"},
		{"{\"ints\": {\"a\": 1, \"b\": 2, \"c\": 3}}", FIELDS_OK, NULL, NULL},
		{"{\"ints\": {\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}}", FIELDS_INVALID, "ints",
		 "at most 3 members"},
		/* a check without a reason: the default one */
		{"{\"plain\": {\"lower\": 1}}", FIELDS_OK, NULL, NULL},
		{"{\"plain\": {\"Upper\": 1}}", FIELDS_INVALID, "plain[0]", "must have a key matching"},
		/* object values: nested paths, and an unknown member inside a value is unknown */
		{"{\"objs\": {\"k\": {\"x\": true}}}", FIELDS_OK, NULL, NULL},
		{"{\"objs\": {\"k\": {}}}", FIELDS_INVALID, "objs[0].x", "must be present"},
		{"{\"objs\": {\"k\": {\"x\": 1}}}", FIELDS_INVALID, "objs[0].x", "must be a boolean"},
		{"{\"objs\": {\"k\": {\"x\": true, \"zz\": 1}}}", FIELDS_UNKNOWN, "objs[0].zz",
		 "must not be sent"},
		{"{\"objs\": {\"k\": 3}}", FIELDS_INVALID, "objs[0]", "must be an object"},
		/* nullable map */
		{"{\"maybe\": null}", FIELDS_OK, NULL, NULL},
		{"{\"maybe\": {\"k\": \"v\"}}", FIELDS_OK, NULL, NULL},
		{"{\"maybe\": {\"k\": null}}", FIELDS_INVALID, "maybe[0]", "must not be null"},
		/* a map inside an object: full path */
		{"{\"outer\": {\"labels\": {\"team\": \"core\"}}}", FIELDS_OK, NULL, NULL},
		{"{\"outer\": {\"labels\": {\"Bad\": \"x\"}}}", FIELDS_INVALID, "outer.labels[0]",
		 KEY_REASON},
		{"{\"outer\": {\"labels\": {\"k\": \"\"}}}", FIELDS_INVALID, "outer.labels[0]",
		 "at least 1 bytes"},
		{"{\"outer\": {\"labels\": []}}", FIELDS_INVALID, "outer.labels", "must be an object"},
	};
	run_cases(cases, N_ELEMS(cases));
}

/* A map key is the caller's private text: no error names it, whatever its length or
 * bytes. The member is named by position. */
static void bad_key_not_named(const char *tail)
{
	char key[400];
	memset(key, 'a', 247);
	strcpy(key + 247, tail);
	json_t *b = json_pack("{s:{s:s, s:s}}", "labels", "ok", "v", key, "v");
	assert_non_null(b);
	json_t *errors = json_array();
	enum fields_result got = core_fields_validate(b, spec, errors);
	char *dump = json_dumps(errors, JSON_COMPACT);
	assert_non_null(dump);
	const char *field = json_string_value(json_object_get(json_array_get(errors, 0), "field"));
	assert_int_equal(got, FIELDS_INVALID);
	assert_int_equal(json_array_size(errors), 1);
	assert_string_equal(field, "labels[1]");
	assert_null(strstr(dump, tail));
	assert_null(strstr(dump, "aaaa"));
	assert_true(errors_well_formed(errors));
	free(dump);
	json_decref(errors);
	json_decref(b);
}

static void test_long_bad_key_ascii(void **state)
{
	(void)state;
	bad_key_not_named("-TAIL-THAT-PUSHES-THE-PATH-PAST-256-BYTES");
}

static void test_long_bad_key_multibyte_at_the_cut(void **state)
{
	(void)state;
	bad_key_not_named("\xc3\xa9\xc3\xa9\xc3\xa9");
	bad_key_not_named("\xe2\x82\xac\xe2\x82\xac");
}

/* Neither a good key with a bad value nor a bad key appears in any error. */
static void test_keys_never_in_errors(void **state)
{
	(void)state;
	json_t *b = json_loads("{\"labels\": {\"ok\": \"v\", \"secretname\": 7, \"Secret.Bad\": \"v\"},"
			       " \"ints\": {\"secretctx\": 99}, \"objs\": {\"secretobj\": {\"zz\": 1}}}",
			       0, NULL);
	assert_non_null(b);
	json_t *errors = json_array();
	(void)core_fields_validate(b, spec, errors);
	char *dump = json_dumps(errors, JSON_COMPACT);
	assert_non_null(dump);
	assert_null(strstr(dump, "secret"));
	assert_null(strstr(dump, "Secret"));
	assert_true(has_error(errors, "labels[1]", "must be a string"));
	assert_true(has_error(errors, "labels[2]", KEY_REASON));
	assert_true(has_error(errors, "ints[0]", "between 0 and 10"));
	assert_true(has_error(errors, "objs[0].x", ""));
	free(dump);
	json_decref(errors);
	json_decref(b);
}

/* A long bad value under a long good-looking key (64 chars): the path still names it. */
static void test_value_error_path_with_longest_key(void **state)
{
	(void)state;
	char *k64 = repeat('z', 64);
	char path[80];
	snprintf(path, sizeof path, "labels[0]");
	json_t *b = json_pack("{s:{s:i}}", "labels", k64, 1);
	struct fcase c = {NULL, FIELDS_INVALID, path, "must be a string"};
	json_decref(check_body(b, &c, "64-char key, int value"));
	json_decref(b);
	free(k64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_shape),
		cmocka_unit_test(test_labels_member_count),
		cmocka_unit_test(test_labels_keys),
		cmocka_unit_test(test_labels_values),
		cmocka_unit_test(test_labels_all_errors),
		cmocka_unit_test(test_other_maps),
		cmocka_unit_test(test_long_bad_key_ascii),
		cmocka_unit_test(test_long_bad_key_multibyte_at_the_cut),
		cmocka_unit_test(test_value_error_path_with_longest_key),
		cmocka_unit_test(test_keys_never_in_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
