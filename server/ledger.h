/* Private to server/: content reads, context loads and the group commit of their disclosures
 * (docs/disclosures.md). A handler that delivers a record's content reads it here
 * (h_ctx.content_read), a context load records what it delivers here (h_ctx.deliver). One
 * thread reads the records of every content read handed over meanwhile and records their
 * disclosures in one statement (db_content_reads), another records every load handed over
 * meanwhile in one statement (db_mem_deliver), so concurrent requests share one commit; each
 * caller waits for it and answers once its disclosures are committed, or 503
 * database_unavailable when not. Nothing is delivered before its disclosure is committed. */
#ifndef RG_SERVER_LEDGER_H
#define RG_SERVER_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"
#include "db/disclosures.h"

/* At most this many reads (or loads) per statement; more wait for the next one. */
#define LEDGER_BATCH_MAX 256

struct ledger_stats {
	unsigned long long reads, read_commits; /* content disclosures, the batches that did */
	unsigned long long loads, load_commits; /* context loads recorded, the batches that did */
	unsigned reads_waiting, loads_waiting;  /* handed over, not answered yet */
};

bool ledger_start(struct db_pool *pool) RG_MUSTCHECK;
/* Reads one record and records its disclosure (blocking): on tx when the request holds a
 * transaction of its own (the disclosure commits with it; *lsn = 0), else with the
 * concurrent reads in one commit (*lsn its LSN, 0 when it could not be read). out: as
 * db_content_reads's each[0]; *recorded: a disclosure was (content, not a pointer). */
enum rg_status ledger_read(struct db_conn *tx, const struct db_content_read *in,
			   struct db_rows *out, bool *recorded, uint64_t *lsn,
			   struct db_error *err) RG_MUSTCHECK;
/* Records one context load (blocking): on tx when the request holds a transaction of its own
 * (it commits with it; *lsn = 0), else with the concurrent loads in one commit (*lsn its LSN).
 * *stale: as db_mem_deliver's stale[0] (> 0: nothing recorded, match again). */
enum rg_status ledger_deliver(struct db_conn *tx, const struct db_delivery *d, size_t *stale,
			      uint64_t *lsn, struct db_error *err) RG_MUSTCHECK;
/* After the lanes stopped: reads what is still waiting, then ends the thread. */
void ledger_stop(void);
void ledger_get_stats(struct ledger_stats *out);

#endif
