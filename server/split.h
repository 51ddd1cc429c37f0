/* Private to server/: the split poller (server/split.c), which waits for the answers of the
 * split reads sent from the I/O threads (dispatch_split) and answers them. */
#ifndef RG_SERVER_SPLIT_H
#define RG_SERVER_SPLIT_H

#include <stdbool.h>

#include "server/request.h"

struct split_stats {
	unsigned waiting;         /* reads whose answer is awaited */
	unsigned long long total; /* reads handed over since the start */
};
void split_get_stats(struct split_stats *out);

/* Starts the poller thread. false after logging why. */
bool split_start(void) RG_MUSTCHECK;
/* From the I/O thread, with r's connection suspended and r->split_conn's statement out: the
 * poller answers r (dispatch_split_finish) and resumes it once the answer is in. false when
 * it cannot (stopping): the caller answers r itself. */
bool split_watch(struct request *r) RG_MUSTCHECK;
/* Waits for what is being waited for, answering 503 what is still waited for at
 * abandon_at_ms (CLOCK_MONOTONIC), then stops the thread. Fine when it never started. */
void split_stop(long long abandon_at_ms);

#endif
