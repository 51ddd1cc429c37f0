#include "server/ratelimit.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000LL

/* A bucket kept as its "theoretical arrival time" (GCRA): the time at which it would be full
 * again. Taking one request moves tat forward by one interval; a request is allowed while
 * tat stays within burst intervals of now. This is exactly a token bucket of `burst` tokens
 * refilled at `rate` per second, lazily, with one integer per key. One cache line. */
struct rl_entry {
	uint64_t hash; /* 0: a free slot (a real hash has its low bit set) */
	long long tat_ns;
	char key[RATELIMIT_KEY_MAX + 1];
};

struct rl_set {
	pthread_mutex_t mu;
	struct rl_entry e[RATELIMIT_WAYS];
};

static struct {
	bool on;
	long long interval_ns; /* between two requests at the steady rate */
	long long window_ns;   /* burst intervals: how far ahead of now tat may run */
	struct rl_set *sets;
	atomic_ullong refused, evicted_partial;
} rl;

bool ratelimit_init(unsigned rate, unsigned burst)
{
	rl.on = false;
	rl.sets = NULL;
	atomic_store(&rl.refused, 0);
	atomic_store(&rl.evicted_partial, 0);
	if (rate == 0)
		return true;
	rl.interval_ns = NS_PER_S / rate;
	rl.window_ns = (long long)(burst ? burst : rate) * rl.interval_ns;
	rl.sets = calloc(RATELIMIT_SETS, sizeof *rl.sets);
	if (rl.sets == NULL)
		return false;
	for (size_t i = 0; i < RATELIMIT_SETS; i++)
		pthread_mutex_init(&rl.sets[i].mu, NULL);
	rl.on = true;
	return true;
}

void ratelimit_shutdown(void)
{
	if (rl.sets)
		for (size_t i = 0; i < RATELIMIT_SETS; i++)
			pthread_mutex_destroy(&rl.sets[i].mu);
	free(rl.sets);
	rl.sets = NULL;
	rl.on = false;
}

/* FNV-1a: keys are server-made random ids, so no attacker picks collisions. */
static uint64_t key_hash(const char *key)
{
	uint64_t h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return h | 1;
}

/* The key's bucket, found or put in the place of the one closest to full. Under s->mu. */
static struct rl_entry *bucket_of(struct rl_set *s, uint64_t h, const char *key,
				  long long now_ns)
{
	struct rl_entry *victim = NULL;
	for (size_t i = 0; i < RATELIMIT_WAYS; i++) {
		struct rl_entry *e = &s->e[i];
		if (e->hash == h && strncmp(e->key, key, RATELIMIT_KEY_MAX) == 0)
			return e;
		long long score = e->hash == 0 ? LLONG_MIN : e->tat_ns;
		if (victim == NULL || score < (victim->hash == 0 ? LLONG_MIN : victim->tat_ns))
			victim = e;
	}
	if (victim->hash != 0 && victim->tat_ns > now_ns)
		atomic_fetch_add(&rl.evicted_partial, 1);
	victim->hash = h;
	victim->tat_ns = now_ns; /* a new bucket is full */
	size_t n = strnlen(key, RATELIMIT_KEY_MAX);
	memcpy(victim->key, key, n);
	victim->key[n] = '\0';
	return victim;
}

bool ratelimit_take_at(const char *key, long long now_ns, unsigned *retry_after_s)
{
	if (!rl.on)
		return true;
	uint64_t h = key_hash(key);
	struct rl_set *s = &rl.sets[(h >> 40) % RATELIMIT_SETS];
	pthread_mutex_lock(&s->mu);
	struct rl_entry *e = bucket_of(s, h, key, now_ns);
	long long next = (e->tat_ns > now_ns ? e->tat_ns : now_ns) + rl.interval_ns;
	long long wait_ns = next - now_ns - rl.window_ns;
	if (wait_ns <= 0)
		e->tat_ns = next;
	pthread_mutex_unlock(&s->mu);
	if (wait_ns <= 0)
		return true;
	/* A refused request takes nothing: the bucket is as it was. */
	atomic_fetch_add(&rl.refused, 1);
	long long secs = (wait_ns + NS_PER_S - 1) / NS_PER_S;
	*retry_after_s = secs < 1 ? 1 : secs > UINT_MAX ? UINT_MAX : (unsigned)secs;
	return false;
}

bool ratelimit_take(const char *key, unsigned *retry_after_s)
{
	if (!rl.on)
		return true;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ratelimit_take_at(key, (long long)ts.tv_sec * NS_PER_S + ts.tv_nsec, retry_after_s);
}

void ratelimit_get_stats(struct ratelimit_stats *out)
{
	out->refused = atomic_load(&rl.refused);
	out->evicted_partial = atomic_load(&rl.evicted_partial);
}
