/* server/quota: one key's limit at its edge (the limit passes, one over is refused), keys
 * independent of each other, a given-back unit taken again, a limit of 0, and the memory of
 * a key going with its last unit (LeakSanitizer sees the rest at quota_free). */
#include "unit.h"

#include <stdio.h>

#include "server/quota.h"

static void test_limit_edge_and_give_back(void **state)
{
	(void)state;
	struct quota *q = NULL;
	assert_true(quota_new(2, &q));
	assert_true(quota_take(q, "ten_a"));
	assert_true(quota_take(q, "ten_a"));
	assert_false(quota_take(q, "ten_a"));
	assert_int_equal(quota_held(q, "ten_a"), 2);
	/* another key has its own units */
	assert_true(quota_take(q, "ten_b"));
	assert_true(quota_take(q, "ten_b"));
	assert_false(quota_take(q, "ten_b"));
	/* a unit given back can be taken again, by its key only */
	quota_give(q, "ten_a");
	assert_int_equal(quota_held(q, "ten_a"), 1);
	assert_false(quota_take(q, "ten_b"));
	assert_true(quota_take(q, "ten_a"));
	assert_false(quota_take(q, "ten_a"));
	/* every unit back: nothing held, and a key's entry goes with its last unit */
	for (int i = 0; i < 2; i++) {
		quota_give(q, "ten_a");
		quota_give(q, "ten_b");
	}
	assert_int_equal(quota_held(q, "ten_a"), 0);
	assert_int_equal(quota_held(q, "ten_b"), 0);
	/* giving back what was never taken changes nothing */
	quota_give(q, "ten_c");
	assert_int_equal(quota_held(q, "ten_c"), 0);
	quota_free(q);
}

static void test_zero_admits_nothing(void **state)
{
	(void)state;
	struct quota *q = NULL;
	assert_true(quota_new(0, &q));
	assert_false(quota_take(q, "ten_a"));
	assert_int_equal(quota_held(q, "ten_a"), 0);
	quota_free(q);
	quota_free(NULL);
}

static void test_many_keys_freed_with_units_held(void **state)
{
	(void)state;
	struct quota *q = NULL;
	assert_true(quota_new(1, &q));
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "ten_%d", i);
		assert_true(quota_take(q, key));
		assert_false(quota_take(q, key));
	}
	quota_free(q); /* entries still held are freed too */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_edge_and_give_back),
		cmocka_unit_test(test_zero_admits_nothing),
		cmocka_unit_test(test_many_keys_freed_with_units_held),
	};
	return cmocka_run_group_tests_name("quota", tests, NULL, NULL);
}
