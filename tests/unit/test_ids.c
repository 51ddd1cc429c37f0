/* core/ids: caller-chosen ids, request ids, scopes. */
#include "unit.h"

#include "core/ids.h"

/* c repeated n times. new: free() */
static char *run_of(char c, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_id_pattern(void **state)
{
	(void)state;
	static const char *const good[] = {
		"a", "Z", "0", "thread-1", "t.1", "t_1", "t:1", "A.b_c:d-e", "9-", "x..",
	};
	static const char *const bad[] = {
		"", "-a", ".a", "_a", ":a", "a b", "a/b", "a%20", "\xc3\xa9", "a\xc3\xa9", " a",
		"a ", "a\n", "a,b", "a+b", "a@b", "{a}",
	};
	for (size_t i = 0; i < N_ELEMS(good); i++) {
		if (!core_id_valid(good[i]))
			print_error("\"%s\" should be a valid id\n", good[i]);
		assert_true(core_id_valid(good[i]));
	}
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		if (core_id_valid(bad[i]))
			print_error("\"%s\" should not be a valid id\n", bad[i]);
		assert_false(core_id_valid(bad[i]));
	}
	assert_false(core_id_valid(NULL));
}

static void test_id_length_edge(void **state)
{
	(void)state;
	char *s128 = run_of('a', 128);
	char *s129 = run_of('a', 129);
	char *s1000 = run_of('a', 1000);
	assert_true(core_id_valid(s128));
	assert_false(core_id_valid(s129));
	assert_false(core_id_valid(s1000));
	/* 128 with the other allowed characters after the first */
	memset(s128 + 1, '-', 127);
	assert_true(core_id_valid(s128));
	s128[127] = '/';
	assert_false(core_id_valid(s128));
	free(s128);
	free(s129);
	free(s1000);
}

static void test_request_id(void **state)
{
	(void)state;
	static const char *const good[] = {
		"a", "-", ".", "_", ":", "-abc", ".x", "req_0123456789abcdef", "00-abc.def:1",
	};
	static const char *const bad[] = {
		"", " ", "a b", "a/b", "a\r\nX-Evil: 1", "\xc3\xa9", "a\"", "a;b", "a\t",
	};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		assert_true(core_request_id_valid(good[i]));
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		assert_false(core_request_id_valid(bad[i]));
	assert_false(core_request_id_valid(NULL));

	char *s128 = run_of('-', 128);
	char *s129 = run_of('-', 129);
	assert_true(core_request_id_valid(s128));
	assert_false(core_request_id_valid(s129));
	free(s128);
	free(s129);
}

static const char *const api_scopes[RG_SCOPE_COUNT] = {
	"admin", "memory:read", "memory:write", "memory:admin", "assent:grant",
	"preferences:read", "preferences:write", "providers:admin", "decision_context.read",
	"semantic_preferences:use", "envelopes:read", "envelopes:write", "audit:read",
	"events:read",
};

static void test_scope_names(void **state)
{
	(void)state;
	unsigned all = 0;
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++) {
		assert_string_equal(core_scope_name(i), api_scopes[i]);
		unsigned bit = core_scope_from_name(api_scopes[i]);
		assert_int_equal(bit, 1u << i);
		assert_int_equal(all & bit, 0);
		all |= bit;
	}
	assert_null(core_scope_name(RG_SCOPE_COUNT));
	assert_int_equal(core_scope_from_name("admin"), RG_SCOPE_ADMIN);
	assert_int_equal(core_scope_from_name("memory:admin"), RG_SCOPE_MEMORY_ADMIN);
	assert_int_equal(core_scope_from_name("events:read"), RG_SCOPE_EVENTS_READ);
	assert_int_equal(core_scope_from_name("Admin"), RG_SCOPE_NONE);
	assert_int_equal(core_scope_from_name("memory"), RG_SCOPE_NONE);
	assert_int_equal(core_scope_from_name(""), RG_SCOPE_NONE);
	assert_int_equal(core_scope_from_name("memory:read "), RG_SCOPE_NONE);
}

static void test_scopes_csv(void **state)
{
	(void)state;
	static const struct {
		const char *csv;
		bool ok;
		unsigned mask;
	} cases[] = {
		{"admin", true, RG_SCOPE_ADMIN},
		{"memory:read,memory:admin", true, RG_SCOPE_MEMORY_READ | RG_SCOPE_MEMORY_ADMIN},
		{"audit:read,admin", true, RG_SCOPE_AUDIT_READ | RG_SCOPE_ADMIN},
		{"decision_context.read", true, RG_SCOPE_DECISION_CONTEXT_READ},
		{"", false, 0},
		{",", false, 0},
		{"admin,", false, 0},
		{",admin", false, 0},
		{"admin,,memory:read", false, 0},
		{"admin,admin", false, 0},
		{"memory:read,audit:read,memory:read", false, 0},
		{"nope", false, 0},
		{"admin,nope", false, 0},
		{"admin, memory:read", false, 0},      /* no spaces */
		{"ADMIN", false, 0},
		{"memory:read;audit:read", false, 0},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		unsigned mask = 0xdeadu;
		bool got = core_scopes_parse_csv(cases[i].csv, &mask, NULL);
		if (got != cases[i].ok)
			print_error("\"%s\": want %s\n", cases[i].csv, cases[i].ok ? "ok" : "refused");
		assert_true(got == cases[i].ok);
		if (got)
			assert_int_equal(mask, cases[i].mask);
	}
	unsigned mask = 0;
	assert_false(core_scopes_parse_csv(NULL, &mask, NULL));
}

static void test_scopes_csv_all_fourteen(void **state)
{
	(void)state;
	char csv[512] = "";
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++) {
		if (i)
			strcat(csv, ",");
		strcat(csv, api_scopes[i]);
	}
	unsigned mask = 0;
	assert_true(core_scopes_parse_csv(csv, &mask, NULL));
	assert_int_equal(mask, (1u << RG_SCOPE_COUNT) - 1);

	/* a name longer than any scope is refused without overflowing */
	char *longname = run_of('m', 300);
	assert_false(core_scopes_parse_csv(longname, &mask, NULL));
	free(longname);
}

/* a refused list names the item that was refused, so the CLI can say which */
static void test_scopes_csv_names_the_bad_item(void **state)
{
	(void)state;
	static const struct {
		const char *csv;
		size_t offset, len;
		bool repeated;
	} cases[] = {
		{"memory:wirte", 0, 12, false},
		{"admin,nope", 6, 4, false},
		{"admin,,memory:read", 6, 0, false},
		{"admin,", 6, 0, false},
		{"", 0, 0, false},
		{"memory:read,audit:read,memory:read", 23, 11, true},
		{"admin, memory:read", 6, 12, false},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		unsigned mask = 0;
		struct core_scope_csv_error bad = {99, 99, false};
		assert_false(core_scopes_parse_csv(cases[i].csv, &mask, &bad));
		if (bad.offset != cases[i].offset || bad.len != cases[i].len)
			print_error("\"%s\": bad item at %zu+%zu, want %zu+%zu\n", cases[i].csv,
				    bad.offset, bad.len, cases[i].offset, cases[i].len);
		assert_int_equal(bad.offset, cases[i].offset);
		assert_int_equal(bad.len, cases[i].len);
		assert_int_equal(bad.repeated, cases[i].repeated);
	}
}

static void test_scope_allows(void **state)
{
	(void)state;
	/* admin implies every scope */
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++)
		assert_true(core_scope_allows(RG_SCOPE_ADMIN, 1u << i));
	assert_true(core_scope_allows(RG_SCOPE_ADMIN, RG_SCOPE_MEMORY_READ | RG_SCOPE_AUDIT_READ));

	assert_true(core_scope_allows(RG_SCOPE_MEMORY_READ, RG_SCOPE_MEMORY_READ));
	assert_false(core_scope_allows(RG_SCOPE_MEMORY_READ, RG_SCOPE_MEMORY_ADMIN));
	assert_false(core_scope_allows(RG_SCOPE_MEMORY_ADMIN, RG_SCOPE_MEMORY_READ));
	assert_false(core_scope_allows(RG_SCOPE_MEMORY_READ, RG_SCOPE_ADMIN));
	assert_false(core_scope_allows(RG_SCOPE_NONE, RG_SCOPE_AUDIT_READ));
	assert_true(core_scope_allows(RG_SCOPE_MEMORY_READ | RG_SCOPE_AUDIT_READ,
				      RG_SCOPE_AUDIT_READ));
	/* several needed: all must be held */
	assert_false(core_scope_allows(RG_SCOPE_MEMORY_READ,
				       RG_SCOPE_MEMORY_READ | RG_SCOPE_AUDIT_READ));
	/* a public route needs nothing */
	assert_true(core_scope_allows(RG_SCOPE_NONE, 0));
}

/* A 403 names the scope the endpoint needs (scope names are public). */
static void test_scope_needed_detail(void **state)
{
	(void)state;
	char d[192];
	core_scope_needed_detail(RG_SCOPE_MEMORY_WRITE, d, sizeof d);
	assert_string_equal(d, "This endpoint needs the scope memory:write (admin implies every scope).");
	core_scope_needed_detail(RG_SCOPE_ADMIN, d, sizeof d);
	assert_string_equal(d, "This endpoint needs the scope admin.");
	core_scope_needed_detail(RG_SCOPE_MEMORY_READ | RG_SCOPE_AUDIT_READ, d, sizeof d);
	assert_string_equal(d, "This endpoint needs the scopes memory:read, audit:read "
			       "(admin implies every scope).");
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++) {
		core_scope_needed_detail(1u << i, d, sizeof d);
		assert_non_null(strstr(d, core_scope_name(i)));
	}
	core_scope_needed_detail((1u << RG_SCOPE_COUNT) - 1, d, sizeof d); /* every name: cut */
	assert_true(strlen(d) < sizeof d);
	char tiny[8];
	core_scope_needed_detail(RG_SCOPE_EVENTS_READ, tiny, sizeof tiny);
	assert_string_equal(tiny, "This en");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_pattern),
		cmocka_unit_test(test_id_length_edge),
		cmocka_unit_test(test_request_id),
		cmocka_unit_test(test_scope_names),
		cmocka_unit_test(test_scopes_csv),
		cmocka_unit_test(test_scopes_csv_all_fourteen),
		cmocka_unit_test(test_scopes_csv_names_the_bad_item),
		cmocka_unit_test(test_scope_allows),
		cmocka_unit_test(test_scope_needed_detail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
