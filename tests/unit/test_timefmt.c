/* core/timefmt: RFC 3339, UTC with milliseconds and "Z" out; real calendar dates in. */
#include "unit.h"

#include "core/timefmt.h"

static const struct {
	int64_t ms;
	const char *text;
} known[] = {
	{0, "1970-01-01T00:00:00.000Z"},
	{5, "1970-01-01T00:00:00.005Z"},
	{-1, "1969-12-31T23:59:59.999Z"},
	{1795986442123LL, "2026-11-29T21:07:22.123Z"},
	{951782400000LL, "2000-02-29T00:00:00.000Z"},
	{1835438400000LL, "2028-02-29T12:00:00.000Z"},
	{1893456000000LL, "2030-01-01T00:00:00.000Z"},
	{253402300799999LL, "9999-12-31T23:59:59.999Z"},
	{-62135596800000LL, "0001-01-01T00:00:00.000Z"},
};

static void test_format(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(known); i++) {
		char out[RG_TIME_SIZE];
		memset(out, 'X', sizeof out);
		core_time_format(known[i].ms, out);
		assert_string_equal(out, known[i].text);
		assert_int_equal(strlen(out), RG_TIME_SIZE - 1);
	}
}

static void test_parse_known(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(known); i++) {
		int64_t ms = 0;
		assert_true(core_time_parse(known[i].text, &ms));
		assert_true(ms == known[i].ms);
	}
}

struct pcase {
	const char *text;
	int64_t ms;
};

static void parse_all(const struct pcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t ms = -42;
		bool ok = core_time_parse(cases[i].text, &ms);
		if (!ok || ms != cases[i].ms)
			print_error("%s: want %lld, got %s %lld\n", cases[i].text,
				    (long long)cases[i].ms, ok ? "ok" : "refused", (long long)ms);
		assert_true(ok);
		assert_true(ms == cases[i].ms);
	}
}

static void test_parse_z_and_fraction(void **state)
{
	(void)state;
	static const struct pcase cases[] = {
		{"1970-01-01T00:00:00Z", 0},
		{"2026-11-29T21:07:22Z", 1795986442000LL},
		{"2026-11-29T21:07:22.1Z", 1795986442100LL},
		{"2026-11-29T21:07:22.12Z", 1795986442120LL},
		{"2026-11-29T21:07:22.123Z", 1795986442123LL},
		{"2026-11-29T21:07:22.000Z", 1795986442000LL},
		/* more than millisecond precision is accepted and truncated */
		{"2026-11-29T21:07:22.1239Z", 1795986442123LL},
		{"2026-11-29T21:07:22.123456789Z", 1795986442123LL},
		/* RFC 3339 §5.6: "T" and "Z" may be lower case */
		{"2026-11-29t21:07:22.123z", 1795986442123LL},
	};
	parse_all(cases, N_ELEMS(cases));
}

static void test_parse_offsets(void **state)
{
	(void)state;
	static const struct pcase cases[] = {
		{"2026-11-29T21:07:22.123+00:00", 1795986442123LL},
		{"2026-11-29T21:07:22.123-00:00", 1795986442123LL},
		{"2026-11-29T23:07:22.123+02:00", 1795986442123LL},
		{"2026-11-29T16:37:22.123-04:30", 1795986442123LL},
		{"2026-11-30T00:07:22.123+03:00", 1795986442123LL}, /* the day before in UTC */
		{"2026-11-29T07:07:22.123-14:00", 1795986442123LL},
		{"2026-11-30T20:06:22.123+22:59", 1795986442123LL},
		{"1970-01-01T01:00:00+01:00", 0},
		{"1969-12-31T23:00:00-01:00", 0},
	};
	parse_all(cases, N_ELEMS(cases));
}

static void test_calendar(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool ok;
	} cases[] = {
		{"2028-02-29T00:00:00Z", true},  /* divisible by 4 */
		{"2000-02-29T00:00:00Z", true},  /* divisible by 400 */
		{"2030-02-29T00:00:00Z", false}, /* not a leap year */
		{"1900-02-29T00:00:00Z", false}, /* divisible by 100, not 400 */
		{"2100-02-29T00:00:00Z", false},
		{"2400-02-29T00:00:00Z", true},
		{"2030-02-30T00:00:00Z", false},
		{"2028-02-30T00:00:00Z", false},
		{"2030-02-28T23:59:59Z", true},
		{"2030-04-31T00:00:00Z", false},
		{"2030-06-31T00:00:00Z", false},
		{"2030-09-31T00:00:00Z", false},
		{"2030-11-31T00:00:00Z", false},
		{"2030-04-30T00:00:00Z", true},
		{"2030-01-31T00:00:00Z", true},
		{"2030-12-31T23:59:59.999Z", true},
		{"2030-01-32T00:00:00Z", false},
		{"2030-01-00T00:00:00Z", false},
		{"2030-00-01T00:00:00Z", false},
		{"2030-13-01T00:00:00Z", false},
		{"2030-01-01T24:00:00Z", false},
		{"2030-01-01T23:60:00Z", false},
		{"2030-01-01T23:59:61Z", false},
		{"2030-01-01T00:00:00+24:00", false},
		{"2030-01-01T00:00:00+01:60", false},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		int64_t ms;
		bool got = core_time_parse(cases[i].text, &ms);
		if (got != cases[i].ok)
			print_error("%s: want %s\n", cases[i].text, cases[i].ok ? "valid" : "invalid");
		assert_true(got == cases[i].ok);
	}
}

static void test_parse_syntax(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"2030",
		"2030-01-01",
		"2030-01-01T00:00:00",          /* no zone */
		"2030-01-01T00:00Z",            /* no seconds */
		"2030-1-01T00:00:00Z",
		"2030-01-1T00:00:00Z",
		"30-01-01T00:00:00Z",
		"2030/01/01T00:00:00Z",
		"2030-01-01X00:00:00Z",
		"2030-01-01T00-00-00Z",
		"2030-01-01T00:00:00.Z",        /* a dot without digits */
		"2030-01-01T00:00:00,123Z",
		"2030-01-01T00:00:00.12aZ",
		"2030-01-01T00:00:00+0100",
		"2030-01-01T00:00:00+01",
		"2030-01-01T00:00:00+1:00",
		"2030-01-01T00:00:00+",
		"2030-01-01T00:00:00UTC",
		"2030-01-01T00:00:00Zx",
		"2030-01-01T00:00:00Z ",
		" 2030-01-01T00:00:00Z",
		"2030-01-01T00:00:00+01:00x",
		"2030-01-01T00:00:00.123+01:00:00",
		"+2030-01-01T00:00:00Z",
		"2030-0a-01T00:00:00Z",
		"yesterday at noon, roughly",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		int64_t ms;
		bool got = core_time_parse(bad[i], &ms);
		if (got)
			print_error("\"%s\" should be refused\n", bad[i]);
		assert_false(got);
	}
	int64_t ms;
	assert_false(core_time_parse(NULL, &ms));
}

static void test_round_trip_ms(void **state)
{
	(void)state;
	static const int64_t values[] = {
		0, 1, 999, 1000, 59999, 86399999, 86400000, -1, -86400000, -86400001,
		951782399999LL, 951782400000LL, 1795986442123LL, 4102444799999LL, 4107542400000LL,
		253402300799999LL, -62135596800000LL,
	};
	for (size_t i = 0; i < N_ELEMS(values); i++) {
		char text[RG_TIME_SIZE];
		int64_t back = 0;
		core_time_format(values[i], text);
		assert_true(core_time_parse(text, &back));
		if (back != values[i])
			print_error("%lld → %s → %lld\n", (long long)values[i], text, (long long)back);
		assert_true(back == values[i]);
	}
	/* every day of a span of leap and non-leap years, at a few times of day */
	for (int64_t day = -800; day < 23000; day += 1) {
		int64_t v = day * 86400000 + (day % 7) * 3723456;
		char text[RG_TIME_SIZE];
		int64_t back = 0;
		core_time_format(v, text);
		assert_true(core_time_parse(text, &back));
		assert_true(back == v);
	}
}

static void test_round_trip_text(void **state)
{
	(void)state;
	/* a parsed offset comes back out as UTC "Z" with three fraction digits */
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"2026-11-29T23:07:22.123+02:00", "2026-11-29T21:07:22.123Z"},
		{"2026-11-29T21:07:22Z", "2026-11-29T21:07:22.000Z"},
		{"2026-11-29T21:07:22.5Z", "2026-11-29T21:07:22.500Z"},
		{"2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00.000Z"},
		{"2028-03-01T00:30:00+01:00", "2028-02-29T23:30:00.000Z"},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		int64_t ms;
		char text[RG_TIME_SIZE];
		assert_true(core_time_parse(cases[i].in, &ms));
		core_time_format(ms, text);
		assert_string_equal(text, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_parse_known),
		cmocka_unit_test(test_parse_z_and_fraction),
		cmocka_unit_test(test_parse_offsets),
		cmocka_unit_test(test_calendar),
		cmocka_unit_test(test_parse_syntax),
		cmocka_unit_test(test_round_trip_ms),
		cmocka_unit_test(test_round_trip_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
