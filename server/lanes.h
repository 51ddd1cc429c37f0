/* Lanes: FIFO queues of blocking work served by their own threads, so that the I/O threads
 * never wait on the database or a provider. A lane keeps `min_threads` threads and grows
 * up to `max_threads` while every thread is busy; a thread above the minimum leaves after
 * LANE_IDLE_MS without work. A job that waits in the queue longer than the lane's
 * `max_wait_ms` is not run: its `expire` function is called instead (from the lane's
 * watchdog thread), so that a saturated lane answers instead of queueing without bound. */
#ifndef RG_SERVER_LANES_H
#define RG_SERVER_LANES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define LANE_IDLE_MS 30000

struct lane;

struct lane_stats {
	unsigned threads, busy;
	size_t queued;
	unsigned long long expired; /* jobs that waited too long, since the start */
};

/* *out is new: lane_stop frees it. false when no thread could be started. */
bool lane_start(const char *name, unsigned min_threads, unsigned max_threads,
		unsigned max_wait_ms, struct lane **out) RG_MUSTCHECK;
/* Queues run(arg) behind the lane's earlier work; expire(arg) instead when it waited longer
 * than max_wait_ms. false (nothing queued) when the lane is stopping or out of memory. */
bool lane_submit(struct lane *l, void (*run)(void *arg), void (*expire)(void *arg),
		 void *arg) RG_MUSTCHECK;
void lane_get_stats(struct lane *l, struct lane_stats *out);
/* Runs what is queued, waits for the threads, frees the lane. NULL is fine. */
void lane_stop(struct lane *l);

#endif
