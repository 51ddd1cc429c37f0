/* core/lsn: pg_lsn text in and out, and what is not pg_lsn (Recallgate-Min-LSN's 422). */
#include "unit.h"

#include "core/lsn.h"

static const struct {
	uint64_t lsn;
	const char *text;
} known[] = {
	{0, "0/0"},
	{0x16B3748, "0/16B3748"},
	{0x16B374D848ULL, "16/B374D848"},
	{0xFFFFFFFFFFFFFFFFULL, "FFFFFFFF/FFFFFFFF"},
	{0x100000000ULL, "1/0"},
};

static void test_format_and_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(known); i++) {
		char out[RG_LSN_SIZE];
		core_lsn_format(known[i].lsn, out);
		assert_string_equal(out, known[i].text);
		uint64_t v = 1;
		assert_true(core_lsn_parse(known[i].text, &v));
		assert_true(v == known[i].lsn);
	}
}

static void test_parse_edges(void **state)
{
	(void)state;
	uint64_t v = 0;
	/* lower case and leading zeros are pg_lsn too; 8 digits a half is the limit */
	assert_true(core_lsn_parse("ab/00000cd", &v));
	assert_true(v == (0xabULL << 32 | 0xcd));
	assert_true(core_lsn_parse("00000000/00000001", &v));
	assert_true(v == 1);
	static const char *const bad[] = {
		"", "/", "0/", "/0", "0", "0/0/0", "123456789/0", "0/123456789", "0/1G", " 0/1",
		"0/1 ", "-1/0", "0x1/0", "+1/0", "0/+1",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		assert_false(core_lsn_parse(bad[i], &v));
	assert_false(core_lsn_parse(NULL, &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_and_parse),
		cmocka_unit_test(test_parse_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
