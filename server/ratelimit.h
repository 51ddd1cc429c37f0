/* Per-token rate limits (openapi/openapi.yaml "Order of checks"): a token bucket of `rate`
 * requests per second holding at most `burst`, kept per bearer token id. Over it → 429
 * rate_limited with Retry-After.
 *
 * The table is fixed at init: RATELIMIT_SETS sets of RATELIMIT_WAYS buckets, one mutex per
 * set, so memory is bounded (RATELIMIT_SETS * RATELIMIT_WAYS * 64 bytes, 256 KiB) and a
 * request allocates nothing. A token that is not in its set takes the place of the bucket
 * closest to full; a full bucket is the same as no bucket, so nothing is lost unless more
 * than RATELIMIT_WAYS tokens of one set are limited at once. Then the evicted token starts
 * again from a full bucket: at most `burst` extra requests, counted in
 * ratelimit_stats.evicted_partial. */
#ifndef RG_SERVER_RATELIMIT_H
#define RG_SERVER_RATELIMIT_H

#include <stdbool.h>

#include "core/status.h"

#define RATELIMIT_SETS 256
#define RATELIMIT_WAYS 16
/* A key longer than this is told apart by its first RATELIMIT_KEY_MAX bytes and its hash
 * (token ids are 36 bytes). */
#define RATELIMIT_KEY_MAX 47

struct ratelimit_stats {
	unsigned long long refused;         /* requests answered 429 since init */
	unsigned long long evicted_partial; /* buckets evicted before they were full again */
};

/* rate: requests per second per key, 0 = off (ratelimit_take always allows, costs nothing).
 * burst: the most a bucket holds, 0 = the same as rate. false when the table cannot be
 * allocated. Call before any thread takes; ratelimit_shutdown before calling it again. */
bool ratelimit_init(unsigned rate, unsigned burst) RG_MUSTCHECK;
void ratelimit_shutdown(void);

/* Takes one request from key's bucket (key borrowed). true: allowed. false: refused, and
 * *retry_after_s is the whole seconds until one is available again, at least 1.
 * Thread-safe. */
bool ratelimit_take(const char *key, unsigned *retry_after_s) RG_MUSTCHECK;
/* The same at a given CLOCK_MONOTONIC time in nanoseconds (for tests). */
bool ratelimit_take_at(const char *key, long long now_ns, unsigned *retry_after_s) RG_MUSTCHECK;

void ratelimit_get_stats(struct ratelimit_stats *out);

#endif
