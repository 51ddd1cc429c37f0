/* Private to server/: pipelined reads. A route answered by one statement (an h_read) whose
 * statement is pipeable (db/) and whose token the cache verified is sent by the I/O thread
 * itself on one of PIPES_COUNT shared connections in pipeline mode (db/pipe.h), and one
 * poller thread takes the answers (typed rows) as they come, answers them with the route's
 * h_read and resumes their connections. No worker is woken and none sleeps on
 * the statement, and the backend runs the reads that queued behind each other without a
 * round trip each. */
#ifndef RG_SERVER_PIPES_H
#define RG_SERVER_PIPES_H

#include <stdbool.h>

#include "server/request.h"

/* One: the reads all queue on one backend, which then takes several from its socket at a
 * time. Measured at 32 connections (GET memory-mode, 3 rounds each): one pipe 35.6-37.2k
 * req/s, two 23.3-35.0k (each backend got fewer reads per wake-up, and there was one more
 * process for the two cores). More pipes only help when one backend's core is the limit. */
#define PIPES_COUNT 1
/* A pipe takes no new read while this many wait on it, or while its oldest has waited this
 * long (a read held up, by a lock say, must not hold up more reads behind it): the read then
 * runs on a lane as any other request. */
#define PIPES_MAX_WAITING 256
#define PIPES_STALL_MS 50

struct pipes_stats {
	unsigned connected;       /* pipes up */
	unsigned waiting;         /* reads sent whose answer is awaited */
	unsigned long long total; /* reads sent since the start */
};
void pipes_get_stats(struct pipes_stats *out);

/* Starts the poller and the thread that (re)connects the pipes, in the background: until a
 * pipe is up, reads run on lanes. false after logging why. */
bool pipes_start(const char *url) RG_MUSTCHECK;
/* From the I/O thread, with r's checks passed (r->ctx set up) and its connection suspended:
 * sends r's statement on a pipe; the poller answers r and resumes its connection. false when
 * no pipe can take it (none up, all busy or stalled, stopping): nothing was sent. */
bool pipes_submit(struct request *r) RG_MUSTCHECK;
/* Waits for the answers still awaited, answers 503 shutting_down what is still awaited at
 * abandon_at_ms (CLOCK_MONOTONIC), then stops the threads and closes the pipes. Fine when
 * never started. */
void pipes_stop(long long abandon_at_ms);

#endif
