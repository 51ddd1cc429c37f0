/* Statements on one pool connection: prepared on first use, failures mapped, serialization
 * failures retried, held transactions, and the commit LSN a write asks for (db/db.h). */
#include "db/conn.h"

#include "core/lsn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RG_MAX_PARAMS 32

/* db_error_from for a pool connection: one the database or the network dropped is replaced. */
static enum rg_status map_failure(struct db_conn *c, const PGresult *res, struct db_error *err)
{
	enum rg_status st = db_error_from(c->pg, res, err);
	if (st == RG_UNAVAILABLE)
		c->broken = true;
	if (st == RG_TIMEOUT && err && atomic_load(&c->pool->cancelling))
		err->shutting_down = true;
	return st;
}

static bool is_prepared(const struct db_conn *c, const struct db_stmt *stmt)
{
	for (size_t i = 0; i < c->nprepared; i++)
		if (c->prepared[i] == stmt)
			return true;
	return false;
}

/* Hands a statement's result over: *res (new) on success, else the mapped failure. */
static enum rg_status take_result(struct db_conn *c, PGresult *r, PGresult **res,
				  struct db_error *err)
{
	ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
		enum rg_status st = map_failure(c, r, err);
		PQclear(r);
		return st;
	}
	*res = r;
	return RG_OK;
}

/* ---- a commit's WAL position, asked in the commit's round trip ---- */

#define LSN_STMT "rg_commit_lsn"
#define LSN_SQL "SELECT pg_current_wal_insert_lsn()::text"

/* How a pipeline's segment ended. */
enum segment_end {
	SEGMENT_SYNCED, /* its sync point came: its implicit transaction committed or rolled back */
	SEGMENT_FAILED, /* ... after a failure past its queries' results: *late (new) says which */
	SEGMENT_LOST,   /* no sync point: the connection is lost or out of step */
};

/* Reads the pipeline up to its next sync point: the results of its n queries into r[] (NULL
 * for one that gave none), the NULL after each skipped. A query's result comes before its
 * implicit transaction commits (at the sync point), so a failure after the results is the
 * commit's: a deferred check, a serialization failure, or the session ended while the
 * commit waited for a synchronous standby. Nothing in the segment committed then. */
static enum segment_end segment(struct db_conn *c, PGresult **r, int n, PGresult **late)
{
	int k = 0;
	bool after_null = false;
	*late = NULL;
	for (int i = 0; i < n; i++)
		r[i] = NULL;
	for (;;) {
		PGresult *x = PQgetResult(c->pg);
		if (x == NULL) {
			if (after_null) /* nothing owed: libpq has given up on the connection */
				return SEGMENT_LOST;
			after_null = true;
			continue;
		}
		after_null = false;
		ExecStatusType st = PQresultStatus(x);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(x);
			return *late ? SEGMENT_FAILED : SEGMENT_SYNCED;
		}
		if (k < n) {
			r[k++] = x;
		} else if (*late == NULL && st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK &&
			   st != PGRES_PIPELINE_ABORTED) {
			*late = x;
		} else {
			PQclear(x);
		}
	}
}

/* The position the tracked LSN query answered (r is cleared); false when it is not one. */
static bool take_lsn(struct db_conn *c, PGresult *r)
{
	uint64_t lsn;
	bool ok = r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
		  core_lsn_parse(PQgetvalue(r, 0, 0), &lsn);
	PQclear(r);
	if (ok)
		c->commit_lsn = lsn;
	return ok;
}

/* The statement and, after its sync point (its implicit transaction has committed then), the
 * WAL insert position, in one round trip: [prepare] execute sync [prepare] lsn sync. A
 * statement that fails still has the position asked: its sync point ends the failure. */
static enum rg_status exec_tracked(struct db_conn *c, const struct db_stmt *stmt,
				   bool prepare, const char *const *params, PGresult **res,
				   struct db_error *err)
{
	bool custom = stmt->plan == DB_CUSTOM_PLAN;
	int n1 = prepare ? 2 : 1, n2 = c->lsn_prepared ? 1 : 2;
	c->lsn_unknown = true;
	bool sent = PQenterPipelineMode(c->pg) == 1 &&
		    (!prepare || PQsendPrepare(c->pg, stmt->name, stmt->sql, stmt->nparams, NULL)) &&
		    (custom ? PQsendQueryParams(c->pg, stmt->sql, stmt->nparams, NULL, params, NULL,
						NULL, 0)
			    : PQsendQueryPrepared(c->pg, stmt->name, stmt->nparams, params, NULL,
						  NULL, 0)) &&
		    PQpipelineSync(c->pg) &&
		    (c->lsn_prepared || PQsendPrepare(c->pg, LSN_STMT, LSN_SQL, 0, NULL)) &&
		    PQsendQueryPrepared(c->pg, LSN_STMT, 0, NULL, NULL, NULL, 0) &&
		    PQpipelineSync(c->pg);
	if (!sent) {
		c->broken = true;
		db_error_set(err, RG_UNAVAILABLE, "08006", PQerrorMessage(c->pg));
		return RG_UNAVAILABLE;
	}
	PGresult *first[2], *second[2] = {NULL, NULL}, *late = NULL;
	enum segment_end end = segment(c, first, n1, &late);
	PGresult *pr = prepare ? first[0] : NULL, *r = first[n1 - 1];
	enum rg_status st;
	if (prepare && (pr == NULL || PQresultStatus(pr) != PGRES_COMMAND_OK)) {
		st = map_failure(c, pr, err);
		PQclear(r); /* PGRES_PIPELINE_ABORTED */
	} else {
		if (prepare)
			c->prepared[c->nprepared++] = stmt;
		st = take_result(c, r, res, err);
	}
	PQclear(pr);
	/* The statement succeeded only if its sync point came after it without a failure: its
	 * rows alone do not say that it committed. */
	if (st == RG_OK && end != SEGMENT_SYNCED) {
		PQclear(*res);
		*res = NULL;
		if (end == SEGMENT_FAILED) {
			st = map_failure(c, late, err);
		} else {
			c->broken = true;
			db_error_set(err, RG_UNAVAILABLE, "08006",
				     "the connection ended before the statement's commit was confirmed");
			st = RG_UNAVAILABLE;
		}
	}
	PQclear(late);
	late = NULL;
	bool in_step = end != SEGMENT_LOST &&
		       segment(c, second, n2, &late) != SEGMENT_LOST;
	PQclear(late);
	if (in_step && !c->lsn_prepared)
		c->lsn_prepared = second[0] && PQresultStatus(second[0]) == PGRES_COMMAND_OK;
	if (n2 == 2)
		PQclear(second[0]);
	c->lsn_unknown = !take_lsn(c, second[n2 - 1]);
	if (!in_step || PQexitPipelineMode(c->pg) != 1)
		c->broken = true; /* out of step: replaced at its next acquire */
	return st;
}

void db_conn_track_commits(struct db_conn *c)
{
	c->track_commits = true;
}

bool db_conn_commit_lsn(const struct db_conn *c, uint64_t *lsn)
{
	*lsn = c->commit_lsn;
	return !c->lsn_unknown;
}

static enum rg_status exec_one(struct db_conn *c, const struct db_stmt *stmt,
			       const char *const *params, PGresult **res, struct db_error *err)
{
	*res = NULL;
	bool prepare = stmt->plan != DB_CUSTOM_PLAN && !is_prepared(c, stmt);
	if (prepare && c->nprepared == RG_MAX_PREPARED) {
		/* Unrecorded, it would be prepared again and fail with 42P05 forever. */
		db_error_set(err, RG_ERROR, "", "too many prepared statements: raise RG_MAX_PREPARED");
		c->broken = true;
		return RG_ERROR;
	}
	/* a statement that only reads commits nothing to ask after */
	if (c->track_commits && stmt->plan != DB_PIPEABLE &&
	    PQtransactionStatus(c->pg) == PQTRANS_IDLE)
		return exec_tracked(c, stmt, prepare, params, res, err);
	if (stmt->plan == DB_CUSTOM_PLAN)
		return take_result(c, PQexecParams(c->pg, stmt->sql, stmt->nparams, NULL, params,
						   NULL, NULL, 0),
				   res, err);
	if (prepare) {
		PGresult *pr = PQprepare(c->pg, stmt->name, stmt->sql, stmt->nparams, NULL);
		if (pr == NULL || PQresultStatus(pr) != PGRES_COMMAND_OK) {
			enum rg_status st = map_failure(c, pr, err);
			PQclear(pr);
			return st;
		}
		PQclear(pr);
		c->prepared[c->nprepared++] = stmt;
	}
	return take_result(c, PQexecPrepared(c->pg, stmt->name, stmt->nparams, params, NULL, NULL, 0),
			   res, err);
}

/* One attempt of db_exec. */
static enum rg_status exec_attempt(struct db_conn *c, const struct db_stmt *stmt,
				   const char *const *params, PGresult **res, struct db_error *err)
{
	if (!c->isolate)
		return exec_one(c, stmt, params, res, err);
	/* In a held transaction a failed statement rolls back alone, as it would in
	 * autocommit, so that its caller can answer it (a unique violation → 409) and go on. */
	*res = NULL;
	enum rg_status st = db_exec_script(c, "SAVEPOINT rg_statement", err);
	if (st != RG_OK)
		return st;
	st = exec_one(c, stmt, params, res, err);
	/* after a rollback to it the savepoint stays: release it too, or each failed statement
	 * would leave a subtransaction open to the commit */
	struct db_error ignored;
	enum rg_status end = db_exec_script(c, st == RG_OK ? "RELEASE SAVEPOINT rg_statement"
							   : "ROLLBACK TO SAVEPOINT rg_statement; "
							     "RELEASE SAVEPOINT rg_statement",
					    st == RG_OK ? err : &ignored);
	if (st == RG_OK && end != RG_OK) {
		PQclear(*res);
		*res = NULL;
		return end;
	}
	return st;
}

/* The one place where a serialization failure or a deadlock is retried (DESIGN.md): a short
 * pause that grows, so that the transaction it lost to can finish first. */
enum rg_status db_exec(struct db_conn *c, const struct db_stmt *stmt, const char *const *params,
		       PGresult **res, struct db_error *err)
{
	enum rg_status st = exec_attempt(c, stmt, params, res, err);
	/* A held transaction that the failure aborted (no savepoint to roll back to) cannot run
	 * anything more: the whole transaction is the caller's to answer, not one statement. */
	for (int attempt = 1; st == RG_RETRY && attempt < DB_STATEMENT_ATTEMPTS &&
			      PQtransactionStatus(c->pg) != PQTRANS_INERROR;
	     attempt++) {
		atomic_fetch_add(&c->pool->retries, 1);
		/* 2-4 ms, then 4-6: the connection's slot staggers two losers of one race */
		long ms = attempt * 2 + (long)(c - c->pool->conns) % 3;
		struct timespec pause = {0, ms * 1000000L};
		nanosleep(&pause, NULL);
		st = exec_attempt(c, stmt, params, res, err);
	}
	return st;
}

enum rg_status db_tx_begin(struct db_conn *c, struct db_error *err)
{
	return db_exec_script(c, "BEGIN", err);
}

void db_tx_isolate(struct db_conn *c, bool on)
{
	c->isolate = on;
}

enum rg_status db_tx_commit(struct db_conn *c, struct db_error *err)
{
	static const struct db_stmt commit = {"commit", "COMMIT", 0, DB_CUSTOM_PLAN, NULL};
	c->isolate = false;
	if (!c->track_commits)
		return db_exec_script(c, "COMMIT", err);
	PGresult *res = NULL;
	enum rg_status st = exec_tracked(c, &commit, false, NULL, &res, err);
	PQclear(res);
	return st;
}

void db_tx_rollback(struct db_conn *c)
{
	c->isolate = false;
	struct db_error ignored;
	if (PQtransactionStatus(c->pg) != PQTRANS_IDLE &&
	    db_exec_script(c, "ROLLBACK", &ignored) != RG_OK)
		c->broken = true;
}

enum rg_status db_exec_script(struct db_conn *c, const char *sql, struct db_error *err)
{
	PGresult *r = PQexec(c->pg, sql);
	ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	enum rg_status st = RG_OK;
	if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK)
		st = map_failure(c, r, err);
	PQclear(r);
	return st;
}

enum rg_status db_exec_audited(struct db_conn *c, const struct db_stmt *stmt,
			       const struct db_actor *actor, const char *const *params,
			       PGresult **res, struct db_error *err)
{
	const char *all[RG_MAX_PARAMS];
	if (stmt->nparams < 3 || stmt->nparams > RG_MAX_PARAMS) {
		db_error_set(err, RG_ERROR, "", "audited statement needs the actor parameters");
		return RG_ERROR;
	}
	all[0] = actor->tenant_id;
	all[1] = actor->token_id;
	all[2] = actor->request_id;
	for (int i = 3; i < stmt->nparams; i++)
		all[i] = params[i - 3];
	enum rg_status st = db_exec(c, stmt, all, res, err);
	if (st != RG_OK)
		return st;
	if (PQntuples(*res) == 0) {
		PQclear(*res);
		*res = NULL;
		return RG_STALE;
	}
	return RG_OK;
}

const char *db_text(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

const char *db_int_param(char buf[DB_INT_SIZE], int64_t v)
{
	snprintf(buf, DB_INT_SIZE, "%lld", (long long)v);
	return buf;
}

const char *db_page_limit_param(char buf[DB_INT_SIZE], int limit)
{
	return db_int_param(buf, (int64_t)limit + 1);
}

int64_t db_int(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

bool db_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) != 0;
}

