/* libpq inside db/ only: the statements' execution and a result's raw cells, for db/'s modules
 * (which read rows into structs through db/row.h before anything leaves db/). Nothing above
 * db/ includes this header (tests/layers/check). */
#ifndef RG_DB_PG_H
#define RG_DB_PG_H

#include <libpq-fe.h>

#include "db/db.h"

/* The status of a failed statement on pg (res may be NULL), SQLSTATE mapped in one place, with
 * err filled without request values: PostgreSQL's messages can quote them, so outside
 * connection, resource and internal failures only constraint, table and column names stay. */
enum rg_status db_error_from(PGconn *pg, const PGresult *res, struct db_error *err);

/* A new connection to url (connect timeout 3 s, keepalives, tcp_user_timeout, notices
 * ignored), its statements bounded by statement_timeout_ms, or NULL with err set. The pool's
 * connections are "recallgate". */
PGconn *db_connect(const char *url, const char *application_name, unsigned statement_timeout_ms,
		   struct db_error *err);

/* Runs a prepared statement (preparing it on first use on this connection).
 * On RG_OK *res is new (PQclear it) and holds the rows; on failure *res is NULL and err says
 * why. Parameters are text; NULL entries are SQL NULL. */
enum rg_status db_exec(struct db_conn *conn, const struct db_stmt *stmt,
		       const char *const *params, PGresult **res,
		       struct db_error *err) RG_MUSTCHECK;

/* Runs plain SQL without parameters (migrations only). */
enum rg_status db_exec_script(struct db_conn *conn, const char *sql,
			      struct db_error *err) RG_MUSTCHECK;

/* The compare-and-swap + audit pattern. `stmt` is one statement that performs the guarded
 * change and appends its audit record, and returns exactly one row when it applied, none
 * when the guard (revision, existence) did not hold. Its first three parameters are
 * $1 tenant_id, $2 actor token id, $3 request id, then `params` as $4…
 * RG_OK with *res (new) on one row; RG_STALE when no row. */
enum rg_status db_exec_audited(struct db_conn *conn, const struct db_stmt *stmt,
			       const struct db_actor *actor, const char *const *params,
			       PGresult **res, struct db_error *err) RG_MUSTCHECK;

/* Field readers for a row: NULL-safe text, int64 (0 on NULL), is-null. */
const char *db_text(const PGresult *res, int row, int col);
int64_t db_int(const PGresult *res, int row, int col);
bool db_null(const PGresult *res, int row, int col);

#endif
