/* Hot standbys for reads (RECALLGATE_READ_DATABASE_URL; docs/scaling.md): a pool per standby,
 * a monitor thread that tells which standbys may serve, and the choice of a connection for a
 * read. PostgreSQL's streaming replication does the copying; this only decides where a read
 * goes, so that it is never staler than asked:
 *   - a standby is lagging when it has not replayed an LSN the primary reached more than
 *     max_lag_ms ago (an idle standby is not lagging); a lagging or unreachable standby, or a
 *     promoted one (no longer in recovery), serves nothing and its reads go to the primary;
 *   - a read that names a minimum LSN (Recallgate-Min-LSN) is served by a standby only once
 *     that standby has replayed it, waiting at most DB_MIN_LSN_WAIT_MS, else by the primary. */
#ifndef RG_DB_STANDBY_H
#define RG_DB_STANDBY_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"

/* How often the monitor asks the primary for its WAL position and each standby for its
 * replay position: the lag's resolution. */
#define DB_STANDBY_PROBE_MS 100
/* The longest a read waits for a standby to replay its Recallgate-Min-LSN. */
#define DB_MIN_LSN_WAIT_MS 100
/* Standbys one RECALLGATE_READ_DATABASE_URL may name (one per host of a multi-host URL). */
#define DB_STANDBYS_MAX 8

struct db_standbys;

/* Why a read went to the primary instead of a standby. */
enum db_fallback {
	DB_FALLBACK_NONE_USABLE = 0, /* every standby lagging, unreachable or promoted */
	DB_FALLBACK_UNREACHABLE,     /* the chosen standby gave no connection */
	DB_FALLBACK_MIN_LSN,         /* none replayed the read's minimum LSN in time */
	DB_FALLBACK_KINDS
};

/* Splits read_url into one conninfo per host (a libpq multi-host URL names several
 * standbys), opens a pool of pool_size connections to each (connected lazily) and starts the
 * monitor, which reaches the primary through primary_url. *out is new: db_standbys_close.
 * RG_INVALID when read_url names more than DB_STANDBYS_MAX hosts or cannot be parsed. */
enum rg_status db_standbys_open(const char *read_url, const char *primary_url,
				unsigned pool_size, unsigned acquire_timeout_ms,
				unsigned max_lag_ms, struct db_standbys **out) RG_MUSTCHECK;
/* Stops the monitor and closes the pools (every connection returned). NULL is fine. */
void db_standbys_close(struct db_standbys *s);
/* The drain's end for the standbys' pools (db_pool_cancel_busy). NULL is fine. */
void db_standbys_cancel_busy(struct db_standbys *s);

/* A connection for a read: from a usable standby that has replayed min_lsn (0: any),
 * round-robin, else from the primary pool. *pool_out says where it came from (release it
 * there: db_release). RG_UNAVAILABLE only when the primary gives none either. */
enum rg_status db_read_acquire(struct db_standbys *s, struct db_pool *primary,
			       uint64_t min_lsn, struct db_pool **pool_out, struct db_conn **out,
			       struct db_error *err) RG_MUSTCHECK;

/* The primary's WAL insert position now, which is past every commit acknowledged before
 * the call: a write's Recallgate-Commit-LSN. */
enum rg_status db_commit_lsn(struct db_pool *primary, uint64_t *lsn,
			     struct db_error *err) RG_MUSTCHECK;

struct db_standby_stats {
	char name[72];      /* "host:port" */
	bool usable;        /* serves reads now: reachable, in recovery, not lagging */
	int64_t lag_ms;     /* how long ago the primary reached the oldest LSN it has not
			     * replayed (0: caught up); -1 before the first probe */
	uint64_t reads;     /* reads it served */
};
size_t db_standbys_count(const struct db_standbys *s);
void db_standbys_get(struct db_standbys *s, size_t i, struct db_standby_stats *out);
uint64_t db_standbys_fallbacks(struct db_standbys *s, enum db_fallback why);

/* For a pipe (server/pipes.c), which cannot wait: true when standby i is usable now and the
 * monitor saw it replay min_lsn. db_standby_served counts a read it served. */
bool db_standby_ready(struct db_standbys *s, size_t i, uint64_t min_lsn);
void db_standby_served(struct db_standbys *s, size_t i);
/* The conninfo of standby i (borrowed), for the pipe. */
const char *db_standby_conninfo(const struct db_standbys *s, size_t i);

#endif
