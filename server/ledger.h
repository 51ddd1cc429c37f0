/* Private to server/: the group commit of content-read disclosures. A request that delivers
 * a record's content (GET …/content) hands its disclosure to ledger_record and waits; one
 * thread writes everything handed over meanwhile in one statement (db_content_reads_record),
 * so concurrent reads share one commit, and wakes them with the outcome. Nothing is answered
 * before its disclosure is committed. */
#ifndef RG_SERVER_LEDGER_H
#define RG_SERVER_LEDGER_H

#include <stdbool.h>

#include "db/db.h"
#include "db/disclosures.h"

/* At most this many reads per statement; more wait for the next one. */
#define LEDGER_BATCH_MAX 256

struct ledger_stats {
	unsigned long long recorded; /* disclosures committed */
	unsigned long long batches;  /* statements that committed them */
};

bool ledger_start(struct db_pool *pool) RG_MUSTCHECK;
/* Records r (its texts borrowed until this returns) with whatever else is waiting; RG_OK
 * once committed. err gets the batch's database error, never a value. */
enum rg_status ledger_record(const struct db_content_read *r, struct db_error *err);
/* After the lanes stopped: writes what is still waiting, then ends the thread. */
void ledger_stop(void);
void ledger_get_stats(struct ledger_stats *out);

#endif
