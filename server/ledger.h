/* Private to server/: the group commit of content-read disclosures (docs/disclosures.md). A
 * handler that delivers a record's content marks its answer (h_ctx.disclosure); the lane does
 * not resume the connection but hands the request here and takes its next job. One thread
 * writes the disclosures of every request handed over meanwhile in one statement
 * (db_content_reads_record), so concurrent reads share one commit and no worker waits on it,
 * then resumes them: with their answers once committed, with 503 database_unavailable
 * instead when not. Nothing is sent before its disclosure is committed. */
#ifndef RG_SERVER_LEDGER_H
#define RG_SERVER_LEDGER_H

#include <stdbool.h>

#include "db/db.h"

struct request;

/* At most this many reads per statement; more wait for the next one. */
#define LEDGER_BATCH_MAX 256

struct ledger_stats {
	unsigned long long recorded; /* disclosures committed */
	unsigned long long batches;  /* statements that committed them */
};

bool ledger_start(struct db_pool *pool) RG_MUSTCHECK;
/* r's answer is rendered and its connection suspended; r->disclosure is set. The ledger
 * records it and resumes r (from its own thread). */
void ledger_submit(struct request *r);
/* After the lanes stopped: writes what is still waiting, then ends the thread. */
void ledger_stop(void);
void ledger_get_stats(struct ledger_stats *out);

#endif
