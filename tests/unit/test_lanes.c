/* server/lanes.c: jobs run in order, a job that waits too long is expired by the watchdog
 * (whether the watchdog was parked, lingering or sleeping towards another deadline), and
 * lane_stop runs what is queued. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "server/clock.h"
#include "server/lanes.h"

#define MAX_WAIT_MS 100
/* The expiry comes after MAX_WAIT_MS, and within EXPIRY_SLACK_MS more (a watchdog that slept
 * a whole extra period would miss it); the test waits EXPIRY_BOUND_MS at most. */
#define EXPIRY_SLACK_MS 400
#define EXPIRY_BOUND_MS 2000

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open, entered, left;
};

static struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false,
			   false};

/* A job that holds its thread until the gate opens. */
static void run_blocked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate.lock);
	gate.entered = true;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.open)
		pthread_cond_wait(&gate.cond, &gate.lock);
	gate.left = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

static void gate_reset(void)
{
	pthread_mutex_lock(&gate.lock);
	gate.open = false;
	gate.entered = false;
	gate.left = false;
	pthread_mutex_unlock(&gate.lock);
}

static void gate_wait_entered(void)
{
	pthread_mutex_lock(&gate.lock);
	while (!gate.entered)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
}

/* Opens the gate and waits until the blocked job has left it. */
static void gate_open(void)
{
	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.left)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
}

struct outcome {
	atomic_int ran, expired;
	atomic_llong at_ms;
};

static void record_run(void *arg)
{
	struct outcome *o = arg;
	atomic_fetch_add(&o->ran, 1);
}

static void record_expire(void *arg)
{
	struct outcome *o = arg;
	atomic_store(&o->at_ms, mono_ms());
	atomic_fetch_add(&o->expired, 1);
}

static void never_expire(void *arg)
{
	(void)arg;
	fail_msg("a job that was run also expired");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Waits (bounded) until o has expired; returns the expiry's delay after `since`. */
static long long wait_expired(struct outcome *o, long long since)
{
	for (int i = 0; i < EXPIRY_BOUND_MS / 5 && atomic_load(&o->expired) == 0; i++)
		sleep_ms(5);
	assert_int_equal(atomic_load(&o->expired), 1);
	assert_int_equal(atomic_load(&o->ran), 0);
	return atomic_load(&o->at_ms) - since;
}

/* One thread, held by a blocked job: the next job must expire after MAX_WAIT_MS. */
static void expire_behind_blocked(struct lane *l)
{
	gate_reset();
	assert_true(lane_submit(l, run_blocked, never_expire, NULL));
	gate_wait_entered();
	struct outcome o = {0};
	long long t0 = mono_ms();
	assert_true(lane_submit(l, record_run, record_expire, &o));
	long long delay = wait_expired(&o, t0);
	assert_true(delay >= MAX_WAIT_MS - 1);
	assert_true(delay < MAX_WAIT_MS + EXPIRY_SLACK_MS);
	gate_open();
}

static void test_first_job_on_an_idle_lane_expires(void **state)
{
	(void)state;
	struct lane *l = NULL;
	assert_true(lane_start("t", 1, 1, MAX_WAIT_MS, &l));
	/* the watchdog has seen no job yet: it is parked, and the first submit wakes it */
	expire_behind_blocked(l);
	lane_stop(l);
}

static void test_expiry_while_lingering_and_after_parking(void **state)
{
	(void)state;
	struct lane *l = NULL;
	assert_true(lane_start("t", 1, 1, MAX_WAIT_MS, &l));
	/* jobs keep the watchdog lingering: the next blocked queue must still expire */
	static struct outcome quick;
	for (int i = 0; i < 50; i++)
		assert_true(lane_submit(l, record_run, never_expire, &quick));
	expire_behind_blocked(l);
	expire_behind_blocked(l); /* right after an expiry */
	/* a quiet period parks the watchdog again */
	sleep_ms(3 * MAX_WAIT_MS);
	expire_behind_blocked(l);
	lane_stop(l);
}

struct ordered {
	pthread_mutex_t lock;
	int seen[16];
	int n;
};

struct ordered_job {
	struct ordered *o;
	int index;
};

static void record_order(void *arg)
{
	struct ordered_job *j = arg;
	pthread_mutex_lock(&j->o->lock);
	j->o->seen[j->o->n++] = j->index;
	pthread_mutex_unlock(&j->o->lock);
}

static void test_fifo_and_stop_runs_the_queue(void **state)
{
	(void)state;
	struct lane *l = NULL;
	assert_true(lane_start("t", 1, 1, 60000, &l));
	gate_reset();
	assert_true(lane_submit(l, run_blocked, never_expire, NULL));
	gate_wait_entered();
	struct ordered o = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct ordered_job jobs[16];
	for (int i = 0; i < 16; i++) {
		jobs[i] = (struct ordered_job){&o, i};
		assert_true(lane_submit(l, record_order, never_expire, &jobs[i]));
	}
	struct lane_stats st;
	lane_get_stats(l, &st);
	assert_int_equal(st.queued, 16);
	gate_open();
	lane_stop(l); /* runs the 16 queued jobs before it returns */
	assert_int_equal(o.n, 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(o.seen[i], i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_job_on_an_idle_lane_expires),
		cmocka_unit_test(test_expiry_while_lingering_and_after_parking),
		cmocka_unit_test(test_fifo_and_stop_runs_the_queue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
