/*
 * it_commit_lsn — a write's Recallgate-Commit-LSN is asked in the write's own round trip
 * (db_conn_track_commits, db/exec.c), against the real PostgreSQL of DATABASE_URL, through
 * db/'s pool itself:
 * - the position comes after the statement's commit: past the WAL insert position the
 *   statement itself saw, and its row is visible to another session by then (a position
 *   asked inside the statement's transaction would equal what the statement saw);
 * - on a statement's first use (prepared in the same pipeline) and its later ones, and for a
 *   statement planned per call;
 * - a held transaction's db_tx_commit asks it after COMMIT;
 * - a statement that fails (a unique violation, a syntax error at prepare) leaves the
 *   connection in step: the next one runs on it and has its position;
 * - a statement whose rows came but whose commit failed (a deferred unique constraint, checked
 *   at the sync point) fails: its rows do not make it a success; nor does one whose session
 *   ended at its commit (a deferred trigger that terminates its backend, as a failover ends
 *   a commit waiting for its standby): 503-able, and the connection is replaced;
 * - a connection that does not track, and a read that may go on a pipe, ask nothing; a
 *   release forgets the position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/lsn.h"
#include "db/pg.h"
#include "harness.h"

#define TABLE "it_commit_lsn_rows"
#define DEFERRED "it_commit_lsn_deferred"
#define DYING "it_commit_lsn_dying"

static struct db_pool *pool;
static PGconn *other; /* a session of the test's own */

/* The WAL insert position the statement saw, inside its own transaction. */
static const struct db_stmt insert_stmt = {
	"it_commit_lsn_insert",
	"INSERT INTO " TABLE " (k) VALUES ($1) RETURNING pg_current_wal_insert_lsn()::text", 1,
	DB_PREPARED, NULL};
static const struct db_stmt insert_custom_stmt = {
	"it_commit_lsn_insert_custom",
	"INSERT INTO " TABLE " (k) VALUES ($1) RETURNING pg_current_wal_insert_lsn()::text", 1,
	DB_CUSTOM_PLAN, NULL};
/* Its unique constraint is checked at the commit, after the row was returned. */
static const struct db_stmt deferred_stmt = {
	"it_commit_lsn_deferred", "INSERT INTO " DEFERRED " (k) VALUES ($1) RETURNING k", 1,
	DB_PREPARED, NULL};
/* Its commit ends the session (a deferred trigger terminates the backend). */
static const struct db_stmt dying_stmt = {
	"it_commit_lsn_dying", "INSERT INTO " DYING " (k) VALUES ($1) RETURNING k", 1,
	DB_PREPARED, NULL};
static const struct db_stmt broken_stmt = {"it_commit_lsn_broken", "SELEKT 1", 0, DB_PREPARED,
					   NULL};
static const struct db_stmt pipeable_stmt = {
	"it_commit_lsn_pipeable", "SELECT pg_backend_pid()::text", 0, DB_PIPEABLE, NULL};

static void other_sql(const char *text)
{
	PGresult *r = PQexec(other, text);
	IT_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", text, PQerrorMessage(other));
	PQclear(r);
}

static int group_setup(void **state)
{
	(void)state;
	const char *url = getenv("DATABASE_URL");
	if (url == NULL || db_pool_open(url, 1, 2000, &pool) != RG_OK)
		return -1;
	other = PQconnectdb(url);
	if (PQstatus(other) != CONNECTION_OK)
		return -1;
	other_sql("CREATE TABLE IF NOT EXISTS " TABLE " (k text PRIMARY KEY)");
	other_sql("CREATE TABLE IF NOT EXISTS " DEFERRED
		  " (k text, UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)");
	other_sql("CREATE TABLE IF NOT EXISTS " DYING " (k text)");
	other_sql("CREATE OR REPLACE FUNCTION it_commit_lsn_die() RETURNS trigger LANGUAGE plpgsql"
		  " AS $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$");
	other_sql("DROP TRIGGER IF EXISTS it_commit_lsn_die ON " DYING);
	other_sql("CREATE CONSTRAINT TRIGGER it_commit_lsn_die AFTER INSERT ON " DYING
		  " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION it_commit_lsn_die()");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	other_sql("DROP TABLE IF EXISTS " TABLE);
	other_sql("DROP TABLE IF EXISTS " DEFERRED);
	other_sql("DROP TABLE IF EXISTS " DYING);
	other_sql("DROP FUNCTION IF EXISTS it_commit_lsn_die()");
	PQfinish(other);
	db_pool_close(pool);
	return 0;
}

static struct db_conn *tracked(void)
{
	struct db_conn *c = NULL;
	struct db_error err = {0};
	IT_CHECK(db_acquire(pool, &c, &err) == RG_OK, "acquire: %s", err.message);
	db_conn_track_commits(c);
	return c;
}

/* The rows that sql (one parameter: key) finds in the test's own session. */
static int rows_of(const char *sql, const char *key)
{
	const char *params[] = {key};
	PGresult *r = PQexecParams(other, sql, 1, NULL, params, NULL, NULL, 0);
	IT_CHECK(PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK,
		 "%s: %s", sql, PQerrorMessage(other));
	int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
	PQclear(r);
	return n;
}

static bool visible(const char *key)
{
	return rows_of("SELECT 1 FROM " TABLE " WHERE k = $1", key) == 1;
}

/* Inserts a new key with stmt on c; the position the statement saw. */
static uint64_t insert(struct db_conn *c, const struct db_stmt *stmt, char **key)
{
	*key = it_unique("lsn");
	const char *params[] = {*key};
	PGresult *res = NULL;
	struct db_error err = {0};
	IT_CHECK(db_exec(c, stmt, params, &res, &err) == RG_OK, "insert: %s", err.message);
	uint64_t seen = 0;
	IT_CHECK(core_lsn_parse(PQgetvalue(res, 0, 0), &seen), "no position in the row");
	PQclear(res);
	return seen;
}

/* The tracked position after a write that saw `seen`: known, and past it. */
static uint64_t after(struct db_conn *c, uint64_t seen)
{
	uint64_t lsn = 1;
	IT_CHECK(db_conn_commit_lsn(c, &lsn), "the commit's position is unknown");
	IT_CHECK(lsn > seen, "the position %llx is not past the statement's %llx",
		 (unsigned long long)lsn, (unsigned long long)seen);
	return lsn;
}

/* The backend of c, read with the pipeable statement. */
static char *backend(struct db_conn *c)
{
	PGresult *res = NULL;
	struct db_error err = {0};
	IT_CHECK(db_exec(c, &pipeable_stmt, NULL, &res, &err) == RG_OK, "read: %s", err.message);
	char *pid = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return pid;
}

static void test_autocommit_write_is_asked_after_its_commit(void **state)
{
	(void)state;
	struct db_conn *c = tracked();
	uint64_t last = 0;
	for (int i = 0; i < 3; i++) { /* prepared in the pipeline, then prepared already */
		char *key;
		uint64_t lsn = after(c, insert(c, &insert_stmt, &key));
		IT_CHECK(visible(key), "the row is not committed when its position is known");
		IT_CHECK(lsn > last, "positions do not grow");
		last = lsn;
		free(key);
	}
	char *key;
	IT_CHECK(after(c, insert(c, &insert_custom_stmt, &key)) > last, "planned per call");
	IT_CHECK(visible(key), "the per-call statement's row is not committed");
	free(key);
	db_release(pool, c);
}

static void test_held_transaction_is_asked_after_commit(void **state)
{
	(void)state;
	struct db_conn *c = tracked();
	struct db_error err = {0};
	IT_CHECK(db_tx_begin(c, &err) == RG_OK, "begin: %s", err.message);
	char *key;
	uint64_t seen = insert(c, &insert_stmt, &key);
	uint64_t lsn = 0;
	IT_CHECK(db_conn_commit_lsn(c, &lsn) && lsn == 0, "a statement in a transaction asked");
	IT_CHECK(!visible(key), "the row is visible before the commit");
	IT_CHECK(db_tx_commit(c, &err) == RG_OK, "commit: %s", err.message);
	after(c, seen);
	IT_CHECK(visible(key), "the row is not committed when its position is known");
	free(key);
	db_release(pool, c);
}

static void test_failed_statement_keeps_the_connection_in_step(void **state)
{
	(void)state;
	struct db_conn *c = tracked();
	char *pid = backend(c);
	char *key;
	uint64_t first = after(c, insert(c, &insert_stmt, &key));
	const char *params[] = {key};
	PGresult *res = NULL;
	struct db_error err = {0};
	IT_CHECK(db_exec(c, &insert_stmt, params, &res, &err) != RG_OK && res == NULL,
		 "a duplicate key was inserted");
	IT_CHECK(strcmp(err.sqlstate, "23505") == 0, "duplicate: SQLSTATE %s", err.sqlstate);
	IT_CHECK(db_exec(c, &broken_stmt, NULL, &res, &err) != RG_OK, "a syntax error ran");
	IT_CHECK(strcmp(err.sqlstate, "42601") == 0, "syntax: SQLSTATE %s", err.sqlstate);
	free(key);
	uint64_t lsn = after(c, insert(c, &insert_stmt, &key));
	IT_CHECK(lsn > first, "the write after two failures has no later position");
	IT_CHECK(visible(key), "the write after two failures is not committed");
	free(key);
	db_release(pool, c);
	/* a connection out of step would be replaced at its next acquire */
	struct db_error err2 = {0};
	IT_CHECK(db_acquire(pool, &c, &err2) == RG_OK, "acquire: %s", err2.message);
	char *again = backend(c);
	IT_CHECK(strcmp(pid, again) == 0, "the connection was replaced (backend %s, then %s)", pid,
		 again);
	free(pid);
	free(again);
	db_release(pool, c);
}

static void test_a_failed_commit_fails_the_statement(void **state)
{
	(void)state;
	struct db_conn *c = tracked();
	char *key = it_unique("deferred");
	(void)rows_of("INSERT INTO " DEFERRED " (k) VALUES ($1)", key);
	const char *params[] = {key};
	PGresult *res = NULL;
	struct db_error err = {0};
	IT_CHECK(db_exec(c, &deferred_stmt, params, &res, &err) != RG_OK && res == NULL,
		 "a statement whose commit failed succeeded");
	IT_CHECK(strcmp(err.sqlstate, "23505") == 0, "deferred: SQLSTATE %s", err.sqlstate);
	int left = rows_of("SELECT 1 FROM " DEFERRED " WHERE k = $1", key);
	IT_CHECK(left == 1, "the failed commit left %d rows", left);
	free(key);
	after(c, insert(c, &insert_stmt, &key)); /* in step */
	free(key);
	char *pid = backend(c);
	key = it_unique("dying");
	params[0] = key;
	IT_CHECK(db_exec(c, &dying_stmt, params, &res, &err) == RG_UNAVAILABLE && res == NULL,
		 "a statement whose session ended at its commit did not fail as unavailable");
	IT_CHECK(rows_of("SELECT 1 FROM " DYING " WHERE k = $1", key) == 0,
		 "the ended session's row was committed");
	free(key);
	db_release(pool, c);
	c = tracked(); /* the pool's one connection, replaced */
	char *again = backend(c);
	IT_CHECK(strcmp(pid, again) != 0, "the ended connection was not replaced");
	free(pid);
	free(again);
	after(c, insert(c, &insert_stmt, &key));
	free(key);
	db_release(pool, c);
}

static void test_reads_and_untracked_connections_ask_nothing(void **state)
{
	(void)state;
	struct db_conn *c = tracked();
	struct db_error err = {0};
	uint64_t lsn = 1;
	free(backend(c));
	IT_CHECK(db_conn_commit_lsn(c, &lsn) && lsn == 0, "a pipeable read asked a position");
	char *key;
	after(c, insert(c, &insert_stmt, &key));
	free(key);
	db_release(pool, c);
	/* the pool has one connection: the same one, its position forgotten, not tracking */
	IT_CHECK(db_acquire(pool, &c, &err) == RG_OK, "acquire: %s", err.message);
	lsn = 1;
	IT_CHECK(db_conn_commit_lsn(c, &lsn) && lsn == 0, "a release kept the position");
	(void)insert(c, &insert_stmt, &key);
	IT_CHECK(db_conn_commit_lsn(c, &lsn) && lsn == 0, "an untracked connection asked");
	free(key);
	db_release(pool, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_autocommit_write_is_asked_after_its_commit),
		cmocka_unit_test(test_held_transaction_is_asked_after_commit),
		cmocka_unit_test(test_failed_statement_keeps_the_connection_in_step),
		cmocka_unit_test(test_a_failed_commit_fails_the_statement),
		cmocka_unit_test(test_reads_and_untracked_connections_ask_nothing),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
