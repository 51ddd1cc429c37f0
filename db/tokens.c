#include "db/tokens.h"
#include "db/pg.h"

#include <stdio.h>
#include <string.h>

static const struct db_stmt create_stmt = {
	"token_create",
	"WITH t AS (INSERT INTO tenants (tenant_id) VALUES ($1) ON CONFLICT DO NOTHING),"
	" tok AS (INSERT INTO tokens (tenant_id, token_id, name, scopes, token_sha256)"
	"  VALUES ($1, $4, $5, string_to_array($6, ','), decode($7, 'hex'))"
	"  RETURNING token_id, created_at),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'token.created', 'token', tok.token_id, NULL, 1, $3,"
	"   jsonb_build_object('name', $5::text, 'scopes', to_jsonb(string_to_array($6, ',')))"
	"  FROM tok)"
	" SELECT epoch_ms(created_at) FROM tok",
	7, false, NULL};

static const struct db_stmt by_hash_stmt = {
	"token_by_hash",
	"SELECT tenant_id, token_id, name, array_to_string(scopes, ','), epoch_ms(created_at), seq"
	" FROM tokens WHERE token_sha256 = decode($1, 'hex') AND deleted_at IS NULL",
	1, false, NULL};

static const struct db_col token_item_cols[] = {
	DB_TEXT(struct db_token_item, token_id),   DB_TEXT(struct db_token_item, name),
	DB_TEXT(struct db_token_item, scopes_csv), DB_INT(struct db_token_item, created_ms),
	DB_INT(struct db_token_item, seq),
};
static const struct db_row_spec token_item_row = DB_ROW_SPEC(struct db_token_item, token_item_cols);

static const struct db_stmt list_stmt = {
	"token_list",
	"SELECT token_id, name, array_to_string(scopes, ',') AS scopes_csv,"
	" epoch_ms(created_at) AS created_ms, seq"
	" FROM tokens WHERE tenant_id = $1 AND deleted_at IS NULL AND seq > $2::bigint"
	" ORDER BY seq LIMIT $3::int",
	3, false, &token_item_row};

static const struct db_stmt delete_stmt = {
	"token_delete",
	"WITH d AS (UPDATE tokens SET deleted_at = now()"
	"  WHERE tenant_id = $1 AND token_id = $4 AND deleted_at IS NULL"
	"  RETURNING token_id, token_sha256),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'token.deleted', 'token', d.token_id, 1, NULL, $3, '{}' FROM d)"
	" SELECT encode(token_sha256, 'hex') FROM d",
	4, false, NULL};

enum rg_status db_token_create(struct db_conn *c, const struct db_actor *actor,
			       const char *token_id, const char *name, const char *scopes_csv,
			       const char *sha256_hex, int64_t *created_ms, struct db_error *err)
{
	const char *params[] = {token_id, name, scopes_csv, sha256_hex};
	PGresult *res = NULL;
	enum rg_status st = db_exec_audited(c, &create_stmt, actor, params, &res, err);
	if (st == RG_OK)
		*created_ms = db_int(res, 0, 0);
	PQclear(res);
	return st == RG_STALE ? RG_ERROR : st;
}

static void token_row(const PGresult *res, int i, struct db_token *out)
{
	snprintf(out->tenant_id, sizeof out->tenant_id, "%s", PQgetvalue(res, i, 0));
	snprintf(out->token_id, sizeof out->token_id, "%s", PQgetvalue(res, i, 1));
	snprintf(out->name, sizeof out->name, "%s", PQgetvalue(res, i, 2));
	snprintf(out->scopes_csv, sizeof out->scopes_csv, "%s", PQgetvalue(res, i, 3));
	out->created_ms = db_int(res, i, 4);
	out->seq = db_int(res, i, 5);
}

enum rg_status db_token_by_hash(struct db_conn *c, const char *sha256_hex, struct db_token *out,
				struct db_error *err)
{
	const char *params[] = {sha256_hex};
	PGresult *res = NULL;
	enum rg_status st = db_exec(c, &by_hash_stmt, params, &res, err);
	if (st != RG_OK)
		return st;
	if (PQntuples(res) == 1)
		token_row(res, 0, out);
	else
		st = RG_NOT_FOUND;
	PQclear(res);
	return st;
}

enum rg_status db_token_list(struct db_conn *c, const char *tenant_id, int64_t after_seq,
			     int limit, struct db_rows *rows, struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, db_int_param(after, after_seq),
				db_page_limit_param(lim, limit)};
	return db_query(c, &list_stmt, params, rows, err);
}

enum rg_status db_token_delete(struct db_conn *c, const struct db_actor *actor,
			       const char *token_id, char *sha256_hex_out, struct db_error *err)
{
	const char *params[] = {token_id};
	PGresult *res = NULL;
	enum rg_status st = db_exec_audited(c, &delete_stmt, actor, params, &res, err);
	if (st == RG_OK)
		snprintf(sha256_hex_out, 65, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return st == RG_STALE ? RG_NOT_FOUND : st;
}
