/* The database behind a small interface: a bounded pool of libpq connections, lazily
 * prepared statements, SQLSTATE mapped in one place. Nothing above db/ sees SQL. */
#ifndef RG_DB_DB_H
#define RG_DB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "db/row.h"

/* What went wrong, for the operator's log line (never for the client). */
struct db_error {
	enum rg_status status;
	char sqlstate[6];
	char message[200];
	bool pool_busy; /* no connection freed up in time: nothing is known of the database */
	/* the statement was cancelled by db_pool_cancel_busy (the drain's end): it rolled back,
	 * so nothing it did is committed */
	bool shutting_down;
};

/* How a statement is sent. The first two values stand in for the false / true of older
 * initializers (the field was a bool custom_plan). */
enum db_plan {
	DB_PREPARED = 0, /* prepared once per connection */
	/* Planned for its parameters on every execution instead of prepared: for statements
	 * whose best plan depends on the values (a small tenant's search must not inherit the
	 * generic plan a large tenant's searches settled on). */
	DB_CUSTOM_PLAN = 1,
	/* Prepared, and a read that may also go out on a pipe (db/pipe.h) instead of a pool
	 * connection: one statement that only reads, runs in its own implicit transaction and
	 * needs no session state; its rows are read through `row`. It never asks a commit LSN
	 * (db_conn_track_commits). */
	DB_PIPEABLE = 2,
};

/* A prepared statement: defined once as static data in its db/ module. */
struct db_stmt {
	const char *name;
	const char *sql;
	int nparams;
	enum db_plan plan;
	/* The struct its rows are read into (db/row.h), for db_query; NULL for a statement
	 * whose rows nobody reads. */
	const struct db_row_spec *row;
};

struct db_pool;
struct db_conn;


/* Fills err (may be NULL) with one line of msg. */
void db_error_set(struct db_error *err, enum rg_status st, const char *sqlstate,
		  const char *msg);

/* The pool's and the pipes' statement timeout: past it a statement fails 57014 (504
 * query_timeout). */
#define DB_STATEMENT_TIMEOUT_MS 5000


struct db_pool_stats {
	unsigned size, in_use, waiting;
	uint64_t acquire_timeouts;
	uint64_t statement_retries; /* statements run again after a 40001 or 40P01 */
};

/* A statement that fails with a serialization failure or a deadlock (40001, 40P01) is run
 * again, this many times at most in all, before db_exec reports RG_RETRY: the failure rolled
 * it back (alone, inside a held transaction), so running it again is running it once. */
#define DB_STATEMENT_ATTEMPTS 3

/* true when libpq can parse url (a connection URI or conninfo string); nothing is contacted.
 * Otherwise `why` holds libpq's reason on one line, with every quoted part of it replaced by
 * "…" (libpq quotes pieces of the value, which may hold a password). */
bool db_conninfo_check(const char *url, char *why, size_t whylen);

/* Creates a pool of `size` connections to `url` (connected lazily). *out is new: free with
 * db_pool_close. */
enum rg_status db_pool_open(const char *url, unsigned size, unsigned acquire_timeout_ms,
			    struct db_pool **out) RG_MUSTCHECK;
void db_pool_close(struct db_pool *pool);
/* The drain's end: cancels the statement each borrowed connection is running (a cancel that
 * finds its connection between statements is lost: call it again). From now on a statement
 * that fails as cancelled reports err->shutting_down. Any thread; it blocks for one round
 * trip to the database per borrowed connection. */
void db_pool_cancel_busy(struct db_pool *pool);
void db_pool_get_stats(struct db_pool *pool, struct db_pool_stats *out);
/* true when err says every connection was busy for the whole acquire timeout (the database
 * itself may be fine), not that the database could not be reached. */
bool db_error_is_pool_busy(const struct db_error *err);
/* Counts a request that waited for a connection longer than the acquire timeout elsewhere
 * (in a queue in front of the pool). */
void db_pool_count_acquire_timeout(struct db_pool *pool);

/* Borrows a connection (waits at most the acquire timeout; reconnects a lost one).
 * RG_UNAVAILABLE when none could be had. */
enum rg_status db_acquire(struct db_pool *pool, struct db_conn **out,
			  struct db_error *err) RG_MUSTCHECK;
void db_release(struct db_pool *pool, struct db_conn *conn);


/* db_exec, then its rows read into stmt->row's structs: *out is new (db_rows_free), empty
 * on failure. */
enum rg_status db_query(struct db_conn *conn, const struct db_stmt *stmt,
			const char *const *params, struct db_rows *out,
			struct db_error *err) RG_MUSTCHECK;


/* A transaction held across several statements (an Idempotency-Key's write and its kept
 * answer, db/idempotency.h). A connection released with its transaction open is rolled back
 * then, and replaced at its next acquire. */
enum rg_status db_tx_begin(struct db_conn *c, struct db_error *err) RG_MUSTCHECK;
/* on: from now on every db_exec on c runs under a savepoint, so that a statement that fails
 * rolls back alone, as in autocommit, and the transaction goes on (for statements whose
 * failure their caller answers: a handler's). Two round trips more per statement, so off for
 * statements that cannot fail that way. Commit and rollback turn it off. */
void db_tx_isolate(struct db_conn *c, bool on);
enum rg_status db_tx_commit(struct db_conn *c, struct db_error *err) RG_MUSTCHECK;
/* Rolls back what the transaction did; nothing when none is open. */
void db_tx_rollback(struct db_conn *c);

/* From now until db_release, each statement that commits on c (one in autocommit, and
 * db_tx_commit) asks in the same round trip where the primary's WAL stood after it: a write's
 * Recallgate-Commit-LSN without a round trip of its own. */
void db_conn_track_commits(struct db_conn *c);
/* The position after c's latest tracked commit: true with *lsn (0: none tracked); false when
 * that commit's position could not be read (db_commit_lsn asks afresh). */
bool db_conn_commit_lsn(const struct db_conn *c, uint64_t *lsn);

/* Who performs an audited mutation. All borrowed. token_id is NULL for the CLI. */
struct db_actor {
	const char *tenant_id;
	const char *token_id;
	const char *request_id;
};


/* db_exec_audited with its one row read into stmt->row's struct (out may be NULL when the
 * caller needs only the status). */
enum rg_status db_query_audited(struct db_conn *conn, const struct db_stmt *stmt,
				const struct db_actor *actor, const char *const *params,
				struct db_rows *out, struct db_error *err) RG_MUSTCHECK;

/* Integer parameters as text. buf must hold DB_INT_SIZE bytes; the functions return it.
 * db_page_limit_param writes limit + 1: every list query fetches one row past the page, so
 * that the caller (h_list) can tell that a next page exists. */
#define DB_INT_SIZE 24
const char *db_int_param(char buf[DB_INT_SIZE], int64_t v);
const char *db_page_limit_param(char buf[DB_INT_SIZE], int limit);

/* A PostgreSQL array literal of quoted elements (for a $n::text[] parameter), any text (quotes
 * and backslashes escaped), a NULL item a NULL element; new (free()), NULL when memory ran
 * out. */
char *db_array_literal(const char *const *items, size_t n);


#endif
