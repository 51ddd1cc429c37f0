#include "db/threads.h"

#include <stdio.h>
#include <string.h>

#include "db/row.h"

static const struct db_col mode_cols[] = {
	DB_TEXT(struct db_thread_mode_row, mode),
	DB_INT(struct db_thread_mode_row, revision),
	DB_INT(struct db_thread_mode_row, effective_ms),
};
static const struct db_row_spec mode_row = DB_ROW_SPEC(struct db_thread_mode_row, mode_cols);

/* A written mode and the one before it (db_thread_mode_put's row). */
struct mode_put_row {
	const char *previous_mode, *mode;
	int64_t revision, effective_ms;
};
static const struct db_col mode_put_cols[] = {
	DB_TEXT(struct mode_put_row, previous_mode),
	DB_TEXT(struct mode_put_row, mode),
	DB_INT(struct mode_put_row, revision),
	DB_INT(struct mode_put_row, effective_ms),
};
static const struct db_row_spec mode_put_row = DB_ROW_SPEC(struct mode_put_row, mode_put_cols);

/* Kept byte-identical with tests/bench/pgbench_mm_get.sql, which replays it as the ceiling.
 * One read of one table: it may go out on a pipe. */
const struct db_stmt db_thread_mode_get_stmt = {
	"thread_mode_get",
	"SELECT mode, revision, epoch_ms(effective_at) AS effective_ms FROM thread_memory_modes"
	" WHERE tenant_id = $1 AND thread_id = $2",
	2, DB_PIPEABLE, &mode_row};

/* Revision 0 means "never written": the first write inserts, later ones update under the
 * revision guard. Both paths end in the audit insert of the same statement. */
static const struct db_stmt put_stmt = {
	"thread_mode_put",
	"WITH prev AS (SELECT mode FROM thread_memory_modes WHERE tenant_id = $1 AND thread_id = $4),"
	" ins AS (INSERT INTO thread_memory_modes (tenant_id, thread_id, mode, revision, effective_at)"
	"  SELECT $1, $4, $6, 1, date_trunc('milliseconds', now()) WHERE $5::bigint = 0"
	"  ON CONFLICT (tenant_id, thread_id) DO NOTHING"
	"  RETURNING mode, revision, effective_at),"
	" upd AS (UPDATE thread_memory_modes SET mode = $6, revision = revision + 1,"
	"  effective_at = date_trunc('milliseconds', now())"
	"  WHERE tenant_id = $1 AND thread_id = $4 AND revision = $5::bigint AND $5::bigint > 0"
	"  RETURNING mode, revision, effective_at),"
	" done AS (SELECT * FROM ins UNION ALL SELECT * FROM upd),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'thread.memory_mode.updated', 'thread', $4, done.revision - 1,"
	"   done.revision, $3, jsonb_build_object('mode', done.mode) FROM done)"
	" SELECT coalesce((SELECT mode FROM prev), 'enabled') AS previous_mode, done.mode,"
	"  done.revision, epoch_ms(done.effective_at) AS effective_ms FROM done",
	6, false, &mode_put_row};

void db_thread_mode_of(const struct db_rows *rows, struct db_thread_mode *out)
{
	memset(out, 0, sizeof *out);
	const struct db_thread_mode_row *row = rows->n == 1 ? db_rows_at(rows, 0) : NULL;
	snprintf(out->mode, sizeof out->mode, "%s", row && row->mode ? row->mode : "enabled");
	if (row) {
		out->revision = row->revision;
		out->effective_ms = row->effective_ms;
	}
}

enum rg_status db_thread_mode_get(struct db_conn *c, const char *tenant_id,
				  const char *thread_id, struct db_thread_mode *out,
				  struct db_error *err)
{
	const char *params[] = {tenant_id, thread_id};
	struct db_rows rows;
	enum rg_status st = db_query(c, &db_thread_mode_get_stmt, params, &rows, err);
	if (st == RG_OK)
		db_thread_mode_of(&rows, out);
	db_rows_free(&rows);
	return st;
}

enum rg_status db_thread_mode_put(struct db_conn *c, const struct db_actor *actor,
				  const char *thread_id, int64_t expected_revision,
				  const char *mode, struct db_thread_mode *out,
				  struct db_error *err)
{
	char expected[DB_INT_SIZE];
	const char *params[] = {thread_id, db_int_param(expected, expected_revision), mode};
	struct db_rows rows = {0};
	enum rg_status st = db_query_audited(c, &put_stmt, actor, params, &rows, err);
	if (st != RG_OK)
		return st;
	const struct mode_put_row *r = db_rows_at(&rows, 0);
	memset(out, 0, sizeof *out);
	snprintf(out->previous_mode, sizeof out->previous_mode, "%s", r->previous_mode);
	snprintf(out->mode, sizeof out->mode, "%s", r->mode);
	out->revision = r->revision;
	out->effective_ms = r->effective_ms;
	db_rows_free(&rows);
	return RG_OK;
}
