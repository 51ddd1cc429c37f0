#include "db/envelopes.h"

#include <stdio.h>

/* What the writes answer. */
struct ws_written {
	int64_t revision;
};
static const struct db_col ws_written_cols[] = {DB_INT(struct ws_written, revision)};
static const struct db_row_spec ws_written_row = DB_ROW_SPEC(struct ws_written, ws_written_cols);

struct env_created {
	int64_t created_ms;
};
static const struct db_col env_created_cols[] = {DB_INT(struct env_created, created_ms)};
static const struct db_row_spec env_created_row =
	DB_ROW_SPEC(struct env_created, env_created_cols);

struct env_verified {
	int64_t revision, updated_ms;
};
static const struct db_col env_verified_cols[] = {
	DB_INT(struct env_verified, revision),
	DB_INT(struct env_verified, updated_ms),
};
static const struct db_row_spec env_verified_row =
	DB_ROW_SPEC(struct env_verified, env_verified_cols);

static const struct db_col workspace_cols[] = {
	DB_INT(struct db_workspace, revision),	   DB_TEXT(struct db_workspace, root_hash),
	DB_TEXT(struct db_workspace, git_head),	   DB_TEXT(struct db_workspace, files_json),
	DB_INT(struct db_workspace, file_count),
};
static const struct db_row_spec workspace_row = DB_ROW_SPEC(struct db_workspace, workspace_cols);

static const struct db_col envelope_cols[] = {
	DB_TEXT(struct db_envelope, envelope_id),
	DB_INT(struct db_envelope, revision),
	DB_TEXT(struct db_envelope, workspace_id),
	DB_INT(struct db_envelope, workspace_revision),
	DB_TEXT(struct db_envelope, verdict),
	DB_TEXT(struct db_envelope, failure_codes_json),
	DB_TEXT(struct db_envelope, checks_json),
	DB_INT(struct db_envelope, created_ms),
	DB_INT(struct db_envelope, updated_ms),
	DB_TEXT(struct db_envelope, body_json),
};
static const struct db_row_spec envelope_row = DB_ROW_SPEC(struct db_envelope, envelope_cols);

static const struct db_stmt ws_put_stmt = {
	"ws_put",
	"WITH ins AS (INSERT INTO workspaces (tenant_id, workspace_id, revision, root_hash, git_head,"
	"  files, file_count, updated_at)"
	"  SELECT $1, $4, 1, $6, $7, $8::jsonb, $9::int, date_trunc('milliseconds', now())"
	"  WHERE $5::bigint = 0 ON CONFLICT DO NOTHING RETURNING revision),"
	" upd AS (UPDATE workspaces SET revision = revision + 1, root_hash = $6, git_head = $7,"
	"  files = $8::jsonb, file_count = $9::int, updated_at = date_trunc('milliseconds', now())"
	"  WHERE tenant_id = $1 AND workspace_id = $4 AND revision = $5::bigint AND $5::bigint > 0"
	"  RETURNING revision),"
	" done AS (SELECT revision FROM ins UNION ALL SELECT revision FROM upd),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'workspace.snapshot_updated', 'workspace', $4, NULLIF($5::bigint, 0),"
	"   done.revision, $3, jsonb_build_object('root_hash', $6::text, 'file_count', $9::int)"
	"  FROM done)"
	" SELECT revision FROM done",
	9, false, &ws_written_row};

static const struct db_stmt ws_get_stmt = {
	"ws_get",
	"SELECT revision, root_hash, git_head, files::text AS files_json, file_count FROM workspaces"
	" WHERE tenant_id = $1 AND workspace_id = $2",
	2, false, &workspace_row};

static const struct db_stmt env_create_stmt = {
	"env_create",
	"WITH e AS (INSERT INTO envelopes (tenant_id, envelope_id, revision, workspace_id,"
	"  workspace_revision, body, verdict, failure_codes, checks, created_at, updated_at)"
	"  VALUES ($1, $4, 1, $5, NULLIF($6::bigint, 0), $7::jsonb, $8, $9::jsonb, $10::jsonb,"
	"   date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))"
	"  RETURNING created_at),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'envelope.submitted', 'envelope', $4, NULL, 1, $3,"
	"   jsonb_build_object('verdict', $8::text, 'failure_codes', $9::jsonb) FROM e)"
	" SELECT epoch_ms(created_at) AS created_ms FROM e",
	10, false, &env_created_row};

static const struct db_stmt env_reverify_stmt = {
	"env_reverify",
	"WITH e AS (UPDATE envelopes SET revision = revision + 1, workspace_revision ="
	"  NULLIF($5::bigint, 0), verdict = $6, failure_codes = $7::jsonb, checks = $8::jsonb,"
	"  updated_at = date_trunc('milliseconds', now())"
	"  WHERE tenant_id = $1 AND envelope_id = $4 RETURNING revision, updated_at),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'envelope.verified', 'envelope', $4, e.revision - 1, e.revision, $3,"
	"   jsonb_build_object('verdict', $6::text, 'failure_codes', $7::jsonb) FROM e)"
	" SELECT revision, epoch_ms(updated_at) AS updated_ms FROM e",
	8, false, &env_verified_row};

static const struct db_stmt env_get_stmt = {
	"env_get",
	"SELECT envelope_id, revision, workspace_id, workspace_revision, verdict,"
	" failure_codes::text AS failure_codes_json, checks::text AS checks_json,"
	" epoch_ms(created_at) AS created_ms, epoch_ms(updated_at) AS updated_ms,"
	" body::text AS body_json"
	" FROM envelopes WHERE tenant_id = $1 AND envelope_id = $2",
	2, false, &envelope_row};

enum rg_status db_workspace_put(struct db_conn *c, const struct db_actor *a, const char *id,
				int64_t expected, const char *root_hash, const char *git_head,
				const char *files_json, int file_count, int64_t *revision,
				struct db_error *err)
{
	char e[DB_INT_SIZE], n[DB_INT_SIZE];
	const char *params[] = {id, db_int_param(e, expected), root_hash, git_head,
				files_json, db_int_param(n, file_count)};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &ws_put_stmt, a, params, &rows, err);
	if (st == RG_OK)
		*revision = ((const struct ws_written *)db_rows_at(&rows, 0))->revision;
	db_rows_free(&rows);
	return st;
}

enum rg_status db_workspace_get(struct db_conn *c, const char *tenant, const char *id,
				struct db_rows *rows, struct db_error *err)
{
	const char *params[] = {tenant, id};
	return db_query(c, &ws_get_stmt, params, rows, err);
}

enum rg_status db_envelope_create(struct db_conn *c, const struct db_actor *a, const char *id,
				  const char *body_json, const struct db_envelope_verdict *v,
				  int64_t *created_ms, struct db_error *err)
{
	char wr[DB_INT_SIZE];
	db_int_param(wr, v->workspace_revision);
	const char *params[] = {id, v->workspace_id, wr, body_json, v->verdict,
				v->failure_codes_json, v->checks_json};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &env_create_stmt, a, params, &rows, err);
	if (st == RG_OK)
		*created_ms = ((const struct env_created *)db_rows_at(&rows, 0))->created_ms;
	db_rows_free(&rows);
	return st == RG_STALE ? RG_ERROR : st;
}

enum rg_status db_envelope_reverify(struct db_conn *c, const struct db_actor *a, const char *id,
				    const struct db_envelope_verdict *v, int64_t *revision,
				    int64_t *updated_ms, struct db_error *err)
{
	char wr[DB_INT_SIZE];
	db_int_param(wr, v->workspace_revision);
	const char *params[] = {id, wr, v->verdict, v->failure_codes_json, v->checks_json};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &env_reverify_stmt, a, params, &rows, err);
	if (st == RG_OK) {
		const struct env_verified *done = db_rows_at(&rows, 0);
		*revision = done->revision;
		*updated_ms = done->updated_ms;
	}
	db_rows_free(&rows);
	return st == RG_STALE ? RG_NOT_FOUND : st;
}

enum rg_status db_envelope_get(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *rows, struct db_error *err)
{
	const char *params[] = {tenant, id};
	return db_query(c, &env_get_stmt, params, rows, err);
}
