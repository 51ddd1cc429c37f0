/* core/jsonx: what openapi/openapi.yaml "Order of checks" calls an unparseable body (→ 400
 * invalid_json). */
#include "unit.h"

#include <jansson.h>

#include "core/jsonw.h"
#include "core/jsonx.h"

/* Nested arrays: depth × "[" + "1" + depth × "]". new: free() */
static char *nested_arrays(size_t depth)
{
	char *s = malloc(2 * depth + 2);
	assert_non_null(s);
	memset(s, '[', depth);
	s[depth] = '1';
	memset(s + depth + 1, ']', depth);
	s[2 * depth + 1] = '\0';
	return s;
}

/* Nested objects: depth × "{\"a\":" + "1" + depth × "}". new: free() */
static char *nested_objects(size_t depth)
{
	char *s = malloc(6 * depth + 2);
	assert_non_null(s);
	char *p = s;
	for (size_t i = 0; i < depth; i++) {
		memcpy(p, "{\"a\":", 5);
		p += 5;
	}
	*p++ = '1';
	memset(p, '}', depth);
	p[depth] = '\0';
	return s;
}

/* An object whose members alternate with arrays: {"a":[{"a":[ ... 1 ... ]}]}. new: free() */
static char *nested_mixed(size_t depth)
{
	char *s = malloc(6 * depth + 2);
	assert_non_null(s);
	char *p = s;
	char *close = malloc(depth + 1);
	assert_non_null(close);
	for (size_t i = 0; i < depth; i++) {
		if (i % 2 == 0) {
			memcpy(p, "{\"a\":", 5);
			p += 5;
			close[depth - 1 - i] = '}';
		} else {
			*p++ = '[';
			close[depth - 1 - i] = ']';
		}
	}
	*p++ = '1';
	memcpy(p, close, depth);
	p[depth] = '\0';
	free(close);
	return s;
}

static bool parses(const char *s, size_t len)
{
	json_t *v = core_json_parse_strict(s, len);
	json_decref(v);
	return v != NULL;
}

static bool parses_str(const char *s)
{
	return parses(s, strlen(s));
}

/* Reports a mismatch and returns false; raw bytes are shown escaped. */
static bool check(const char *s, size_t len, bool want)
{
	bool got = parses(s, len);
	if (got != want) {
		char shown[256];
		size_t o = 0;
		for (size_t i = 0; i < len && o + 5 < sizeof shown; i++)
			o += (size_t)snprintf(shown + o, sizeof shown - o,
					      (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f
						      ? "\\x%02x" : "%c",
					      (unsigned char)s[i]);
		shown[o] = '\0';
		print_error("input %s (%zu bytes): want %s, got %s\n", shown, len,
			    want ? "parsed" : "rejected", got ? "parsed" : "rejected");
	}
	return got == want;
}

static void expect(const char *s, size_t len, bool want)
{
	assert_true(check(s, len, want));
}

static void test_depth_edges(void **state)
{
	(void)state;
	char *(*builders[])(size_t) = {nested_arrays, nested_objects, nested_mixed};
	for (size_t b = 0; b < N_ELEMS(builders); b++) {
		char *ok = builders[b](RG_MAX_JSON_DEPTH);
		char *deep = builders[b](RG_MAX_JSON_DEPTH + 1);
		assert_int_equal(core_json_depth(ok, strlen(ok)), 32);
		assert_int_equal(core_json_depth(deep, strlen(deep)), 33);
		expect(ok, strlen(ok), true);
		expect(deep, strlen(deep), false);
		free(ok);
		free(deep);
	}
}

static void test_depth_far_beyond_the_limit(void **state)
{
	(void)state;
	char *deep = nested_arrays(100000);
	expect(deep, strlen(deep), false);
	free(deep);
}

static void test_depth_counting(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t depth;
	} cases[] = {
		{"1", 0},
		{"\"[[[\"", 0},
		{"{}", 1},
		{"[]", 1},
		{"{\"a\": [1, {\"b\": []}]}", 4},
		{"[[], [], []]", 2},                       /* siblings do not add up */
		{"{\"a\": \"[[[[{{{{\"}", 1},              /* brackets in a string */
		{"{\"[[[[\": 1}", 1},                      /* ... and in a key */
		{"{\"a\": \"\\\"[[[[\"}", 1},              /* an escaped quote does not end it */
		{"{\"a\": \"\\\\\", \"b\": [[]]}", 3},     /* an escaped backslash does */
		{"{\"a\": \"\\\\\\\"[[\"}", 1},            /* \\ then \" : still inside */
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		size_t got = core_json_depth(cases[i].s, strlen(cases[i].s));
		if (got != cases[i].depth)
			print_error("%s: want depth %zu, got %zu\n", cases[i].s, cases[i].depth, got);
		assert_int_equal(got, cases[i].depth);
	}
}

static void test_brackets_inside_strings_do_not_count(void **state)
{
	(void)state;
	/* 31 levels of arrays around a string full of brackets: depth 31 */
	char buf[512];
	size_t n = 0;
	memset(buf, '[', 31);
	n = 31;
	n += (size_t)snprintf(buf + n, sizeof buf - n, "\"%s\\\"%s\"",
			      "[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{{",
			      "[[[[[[[[[[[[[[[[[[[[");
	memset(buf + n, ']', 31);
	n += 31;
	buf[n] = '\0';
	expect(buf, n, true);

	/* the same with 33 levels is still rejected */
	char *deep = nested_arrays(33);
	expect(deep, strlen(deep), false);
	free(deep);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	assert_false(parses_str("{\"a\": 1, \"a\": 2}"));
	assert_false(parses_str("{\"a\": 1, \"a\": 1}"));
	assert_false(parses_str("{\"x\": {\"a\": 1, \"b\": 2, \"a\": 3}}"));
	assert_false(parses_str("[{\"a\": 1, \"a\": 1}]"));
	/* the same key in different objects, or differing in case, is fine */
	assert_true(parses_str("{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}}"));
	assert_true(parses_str("{\"a\": 1, \"A\": 2}"));
	/* "\u0061" is "a": a duplicate once decoded */
	assert_false(parses_str("{\"a\": 1, \"\\u0061\": 2}"));
}

static void test_nul(void **state)
{
	(void)state;
	assert_false(parses_str("{\"a\": \"x\\u0000y\"}"));
	assert_false(parses_str("{\"a\": \"\\u0000\"}"));
	assert_false(parses_str("{\"\\u0000\": 1}"));
	assert_false(parses_str("[\"\\u0000\"]"));
	/* other escapes are fine */
	assert_true(parses_str("{\"a\": \"\\u0001\\n\\t\\\"\\\\\\/\"}"));
}

/* A raw NUL byte is never valid JSON: not in a string (a control character), not between
 * tokens (not whitespace, RFC 8259 §2). Every case is tried before the verdict. */
static void test_raw_nul_byte(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
#define RAW(lit) {lit, sizeof lit - 1}
		RAW("{\"a\": \"x\0y\"}"),
		RAW("{\"a\"\0: 1}"),
		RAW("{\"a\": \"x\"\0}"),
		RAW("{\"a\": 1 \0}"),
		RAW("\0{\"a\": 1}"),
		RAW("{\"a\": 1}\0"),
		RAW("{\"a\": 1\0}"),
		RAW("{\"a\": 1.5\0}"),
		RAW("{\"a\": true\0}"),
		RAW("{\"a\": null\0}"),
		RAW("[1\0,2]"),
		RAW("7\0"),
#undef RAW
	};
	size_t wrong = 0;
	for (size_t i = 0; i < N_ELEMS(cases); i++)
		if (!check(cases[i].s, cases[i].len, false))
			wrong++;
	assert_int_equal(wrong, 0);
}

static void test_utf8(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"a\": \"\xff\"}",                 /* never valid */
		"{\"a\": \"\xc3\"}",                 /* truncated 2-byte sequence */
		"{\"a\": \"\xc3(\"}",                /* bad continuation */
		"{\"a\": \"\xc0\xaf\"}",             /* overlong "/" */
		"{\"a\": \"\xe0\x80\xaf\"}",         /* overlong, 3 bytes */
		"{\"a\": \"\xed\xa0\x80\"}",         /* UTF-16 surrogate D800 */
		"{\"a\": \"\xf4\x90\x80\x80\"}",     /* above U+10FFFF */
		"{\"a\": \"\x80\"}",                 /* lone continuation byte */
		"{\"\xff\": 1}",                     /* in a key */
		"{\"a\": \"\\ud800\"}",              /* lone surrogate escape */
		"{\"a\": \"\\udc00\"}",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		expect(bad[i], strlen(bad[i]), false);
	static const char *const good[] = {
		"{\"a\": \"\xc3\xa9\"}",                    /* é */
		"{\"a\": \"\xe2\x82\xac\"}",                /* € */
		"{\"a\": \"\xf0\x9f\x98\x80\"}",            /* U+1F600 */
		"{\"a\": \"\xf4\x8f\xbf\xbf\"}",            /* U+10FFFF */
		"{\"a\": \"\\ud83d\\ude00\"}",              /* a surrogate pair escape */
		"{\"\xc3\xa9\": 1}",
	};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		expect(good[i], strlen(good[i]), true);
}

static void test_trailing_garbage(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{} x", "{}{}", "{}]", "{},", "[1] [2]", "1 2", "{\"a\": 1}}", "{}\"",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		expect(bad[i], strlen(bad[i]), false);
	/* trailing whitespace is not garbage */
	expect("{} \n\t\r ", 7, true);
	/* only len bytes are read */
	expect("{}garbage", 2, true);
}

static void test_syntax(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", " ", "{", "}", "{\"a\": }", "{'a': 1}", "{\"a\": 1,}", "[1,]", "{a: 1}",
		"NaN", "{\"a\": NaN}", "{\"a\": Infinity}", "{\"a\": 01}", "{\"a\": .5}",
		"{\"a\": \"\\x41\"}", "{\"a\": \"line\nbreak\"}", "// c\n{}", "{\"a\" 1}",
		"tru", "nul",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		expect(bad[i], strlen(bad[i]), false);
	assert_null(core_json_parse_strict(NULL, 0));
	assert_null(core_json_parse_strict(NULL, 5));
}

static void test_any_top_level_value(void **state)
{
	(void)state;
	/* the caller turns a non-object into 422, not 400: these must parse */
	static const char *const ok[] = {"[]", "[1, 2]", "\"x\"", "1", "-1.5", "true", "false",
					 "null", "{}", " {\"a\": [1, {\"b\": null}]} "};
	for (size_t i = 0; i < N_ELEMS(ok); i++)
		expect(ok[i], strlen(ok[i]), true);

	json_t *v = core_json_parse_strict("[1, 2]", 6);
	assert_true(json_is_array(v));
	assert_int_equal(json_array_size(v), 2);
	json_decref(v);

	v = core_json_parse_strict("{\"a\": {\"b\": [true]}}", 20);
	assert_true(json_is_object(v));
	assert_true(json_is_true(json_array_get(json_object_get(json_object_get(v, "a"), "b"), 0)));
	json_decref(v);
}

/* core/jsonw writes integers digit by digit: the same text as printf's %lld, the extremes
 * and every power of ten's neighbours included. */
static void test_jsonw_int_matches_printf(void **state)
{
	(void)state;
	int64_t values[64] = {0, 1, -1, 9, -9, INT64_MAX, INT64_MIN, INT64_MIN + 1};
	size_t n = 8;
	for (int64_t p = 10; n + 4 <= 64 && p <= INT64_MAX / 10; p *= 10) {
		values[n++] = p;
		values[n++] = p - 1;
		values[n++] = -p;
		values[n++] = -(p - 1);
	}
	for (size_t i = 0; i < n; i++) {
		struct jsonw w;
		char want[32];
		size_t len;
		jsonw_init(&w);
		jsonw_int(&w, values[i]);
		char *got = jsonw_finish(&w, &len);
		assert_non_null(got);
		snprintf(want, sizeof want, "%lld", (long long)values[i]);
		assert_string_equal(got, want);
		assert_int_equal(len, strlen(want));
		free(got);
	}
}

static char *str_of(const char *s)
{
	struct jsonw w;
	size_t len;
	jsonw_init(&w);
	jsonw_str(&w, s);
	char *out = jsonw_finish(&w, &len);
	assert_non_null(out);
	assert_int_equal(len, strlen(out));
	return out;
}

/* core/jsonw escapes '"', '\\' and the control characters, writes everything else as it is
 * (plain runs and UTF-8 included), and jansson reads back exactly the bytes it was given: every
 * byte 1..127 alone, between plain runs, at a string's start and end, and a 4 KB run. */
static void test_jsonw_str_escapes_exactly(void **state)
{
	(void)state;
	char *s = str_of("a\"b\\c\n\r\t\b\f\x01\x1f\x7f\xc3\xa9");
	assert_string_equal(s, "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\xc3\xa9\"");
	free(s);
	s = str_of("");
	assert_string_equal(s, "\"\"");
	free(s);
	s = str_of(NULL);
	assert_string_equal(s, "null");
	free(s);
	char in[8];
	for (int c = 1; c < 128; c++) {
		for (int shape = 0; shape < 3; shape++) {
			if (shape == 0)
				snprintf(in, sizeof in, "%c", c);
			else if (shape == 1)
				snprintf(in, sizeof in, "ab%ccd", c);
			else
				snprintf(in, sizeof in, "%cxyz%c", c, c);
			char *out = str_of(in);
			json_error_t e;
			json_t *v = json_loads(out, JSON_DECODE_ANY, &e);
			assert_non_null(v);
			assert_string_equal(json_string_value(v), in);
			json_decref(v);
			free(out);
		}
	}
	char *run = malloc(4097);
	assert_non_null(run);
	memset(run, 'x', 4096);
	run[4096] = '\0';
	run[2048] = '"';
	char *out = str_of(run);
	assert_int_equal(strlen(out), 4096 + 3);
	json_t *v = json_loads(out, JSON_DECODE_ANY, NULL);
	assert_string_equal(json_string_value(v), run);
	json_decref(v);
	free(out);
	free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_edges),
		cmocka_unit_test(test_depth_far_beyond_the_limit),
		cmocka_unit_test(test_depth_counting),
		cmocka_unit_test(test_brackets_inside_strings_do_not_count),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_raw_nul_byte),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_trailing_garbage),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_any_top_level_value),
		cmocka_unit_test(test_jsonw_int_matches_printf),
		cmocka_unit_test(test_jsonw_str_escapes_exactly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
