/* server/ratelimit: the bucket's arithmetic at its edges, Retry-After rounding, off, eviction
 * and concurrency. The clock is handed in (ratelimit_take_at), so nothing here sleeps. */
#include "unit.h"

#include <pthread.h>

#include "server/ratelimit.h"

#define S 1000000000LL /* one second in ns */
#define T0 (1000 * S)  /* any monotonic time */

static const char *const tok_a = "tok_0123456789abcdef0123456789abcdef";
static const char *const tok_b = "tok_fedcba9876543210fedcba9876543210";

static void init(unsigned rate, unsigned burst)
{
	ratelimit_shutdown();
	assert_true(ratelimit_init(rate, burst));
}

static int teardown(void **state)
{
	(void)state;
	ratelimit_shutdown();
	return 0;
}

static bool take(const char *key, long long now, unsigned *retry)
{
	*retry = 0;
	return ratelimit_take_at(key, now, retry);
}

/* Exactly burst requests pass at once; the next is refused and takes nothing. */
static void test_burst_edge(void **state)
{
	(void)state;
	static const unsigned bursts[] = {1, 3, 10, 1000};
	for (size_t i = 0; i < N_ELEMS(bursts); i++) {
		unsigned retry;
		init(1, bursts[i]);
		for (unsigned k = 0; k < bursts[i]; k++)
			assert_true(take(tok_a, T0, &retry));
		assert_false(take(tok_a, T0, &retry));
		assert_int_equal(retry, 1);
		assert_false(take(tok_a, T0, &retry)); /* still nothing: a refusal took nothing */
		/* one second later exactly one more */
		assert_true(take(tok_a, T0 + S, &retry));
		assert_false(take(tok_a, T0 + S, &retry));
	}
}

/* Refill at `rate` per second, never above burst. */
static void test_refill(void **state)
{
	(void)state;
	unsigned retry;
	init(10, 5); /* one every 100 ms */
	for (int k = 0; k < 5; k++)
		assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0 + 99 * 1000000LL, &retry));
	assert_true(take(tok_a, T0 + 100 * 1000000LL, &retry));
	assert_false(take(tok_a, T0 + 100 * 1000000LL, &retry));
	/* 300 ms later three more */
	for (int k = 0; k < 3; k++)
		assert_true(take(tok_a, T0 + 400 * 1000000LL, &retry));
	assert_false(take(tok_a, T0 + 400 * 1000000LL, &retry));
	/* an hour idle fills it to burst, not beyond */
	long long later = T0 + 3600 * S;
	for (int k = 0; k < 5; k++)
		assert_true(take(tok_a, later, &retry));
	assert_false(take(tok_a, later, &retry));
	/* steady state at the rate: every 100 ms passes */
	for (int k = 1; k <= 50; k++)
		assert_true(take(tok_a, later + k * 100 * 1000000LL, &retry));
}

/* burst 0 means one second's worth: the rate itself. */
static void test_burst_default(void **state)
{
	(void)state;
	unsigned retry;
	init(7, 0);
	for (int k = 0; k < 7; k++)
		assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
}

/* Retry-After is the wait for one token rounded up to whole seconds, at least 1. */
static void test_retry_after(void **state)
{
	(void)state;
	unsigned retry;
	init(1, 1);
	assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
	assert_int_equal(retry, 1); /* exactly 1 s */
	assert_false(take(tok_a, T0 + S / 2, &retry));
	assert_int_equal(retry, 1); /* 0.5 s → 1 */
	assert_false(take(tok_a, T0 + S - 1, &retry));
	assert_int_equal(retry, 1); /* 1 ns → 1, never 0 */
	assert_true(take(tok_a, T0 + S, &retry));

	init(100000, 1); /* 10 µs between requests: still at least 1 */
	assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
	assert_int_equal(retry, 1);
	assert_true(take(tok_a, T0 + 10000, &retry));
}

/* Keys are independent. */
static void test_keys_independent(void **state)
{
	(void)state;
	unsigned retry;
	init(1, 2);
	assert_true(take(tok_a, T0, &retry));
	assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
	assert_true(take(tok_b, T0, &retry));
	assert_true(take(tok_b, T0, &retry));
	assert_false(take(tok_b, T0, &retry));
	struct ratelimit_stats st;
	ratelimit_get_stats(&st);
	assert_int_equal(st.refused, 2);
}

/* rate 0 is off: everything passes and nothing is counted. */
static void test_off(void **state)
{
	(void)state;
	unsigned retry = 77;
	init(0, 5);
	for (int k = 0; k < 100000; k++)
		assert_true(ratelimit_take_at(tok_a, T0, &retry));
	assert_true(ratelimit_take(tok_a, &retry));
	assert_int_equal(retry, 77); /* untouched */
	struct ratelimit_stats st;
	ratelimit_get_stats(&st);
	assert_int_equal(st.refused, 0);
}

/* The real clock: a burst passes, the next is refused. */
static void test_monotonic_clock(void **state)
{
	(void)state;
	unsigned retry = 0;
	init(1, 3);
	for (int k = 0; k < 3; k++)
		assert_true(ratelimit_take(tok_a, &retry));
	assert_false(ratelimit_take(tok_a, &retry));
	assert_true(retry >= 1);
}

/* A flood of other tokens fills every set, yet a bucket that is still limiting is not
 * evicted (the one closest to full goes first), and full buckets are dropped at no cost. */
static void test_eviction_keeps_limiting_bucket(void **state)
{
	(void)state;
	unsigned retry;
	char key[48];
	struct ratelimit_stats st;
	init(1, 3);
	for (int k = 0; k < 3; k++)
		assert_true(take(tok_a, T0, &retry));
	assert_false(take(tok_a, T0, &retry));
	/* 20,000 tokens: about 78 per set, far over RATELIMIT_WAYS */
	for (int k = 0; k < 20000; k++) {
		snprintf(key, sizeof key, "tok_flood%08d", k);
		assert_true(take(key, T0, &retry));
	}
	ratelimit_get_stats(&st);
	assert_true(st.evicted_partial > 0); /* their buckets were not full again */
	assert_false(take(tok_a, T0, &retry)); /* still limited */
	unsigned long long before = st.evicted_partial;

	/* after 3 s every flood bucket is full: replacing one loses nothing */
	for (int k = 0; k < 1000; k++) {
		snprintf(key, sizeof key, "tok_later%08d", k);
		assert_true(take(key, T0 + 3 * S, &retry));
	}
	ratelimit_get_stats(&st);
	assert_int_equal(st.evicted_partial, before);

	/* a key over RATELIMIT_KEY_MAX bytes still has its own bucket */
	char long_key[RATELIMIT_KEY_MAX + 20];
	memset(long_key, 'k', sizeof long_key - 1);
	long_key[sizeof long_key - 1] = '\0';
	assert_true(take(long_key, T0 + 3 * S, &retry));
}

struct worker {
	int allowed;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;
	unsigned retry;
	for (int k = 0; k < 2000; k++)
		if (ratelimit_take_at(tok_a, T0, &retry))
			w->allowed++;
	return NULL;
}

/* Eight threads on one token at one instant: exactly burst requests pass in all. */
static void test_threads(void **state)
{
	(void)state;
	pthread_t th[8];
	struct worker w[8] = {{0}};
	init(1, 500);
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &w[i]), 0);
	int allowed = 0;
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		allowed += w[i].allowed;
	}
	assert_int_equal(allowed, 500);
	struct ratelimit_stats st;
	ratelimit_get_stats(&st);
	assert_int_equal(st.refused, 8 * 2000 - 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_burst_edge, teardown),
		cmocka_unit_test_teardown(test_refill, teardown),
		cmocka_unit_test_teardown(test_burst_default, teardown),
		cmocka_unit_test_teardown(test_retry_after, teardown),
		cmocka_unit_test_teardown(test_keys_independent, teardown),
		cmocka_unit_test_teardown(test_off, teardown),
		cmocka_unit_test_teardown(test_monotonic_clock, teardown),
		cmocka_unit_test_teardown(test_eviction_keeps_limiting_bucket, teardown),
		cmocka_unit_test_teardown(test_threads, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
