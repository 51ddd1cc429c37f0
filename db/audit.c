#include "db/audit.h"

#include <stdio.h>

static const struct db_stmt list_stmt = {
	"audit_list",
	"SELECT seq, epoch_ms(at), actor_token_id, action, resource_type, resource_id,"
	" revision_before, revision_after, request_id, details::text, prev_hash, hash"
	" FROM audit_log WHERE tenant_id = $1"
	" AND ($2::text IS NULL OR resource_type = $2) AND ($3::text IS NULL OR resource_id = $3)"
	" AND seq > $4::bigint ORDER BY seq LIMIT $5::int",
	5, false};

/* A record is bad when its prev_hash is not the previous record's hash or its own hash does
 * not recompute. */
static const struct db_stmt verify_stmt = {
	"audit_verify",
	"SELECT count(*), coalesce(min(seq) FILTER (WHERE prev_hash IS DISTINCT FROM expected_prev"
	"  OR hash IS DISTINCT FROM computed), 0)"
	" FROM (SELECT a.seq, a.prev_hash, a.hash,"
	"  lag(a.hash) OVER (PARTITION BY a.resource_type, a.resource_id ORDER BY a.chain_pos)"
	"   AS expected_prev,"
	"  audit_hash(a.prev_hash, a) AS computed"
	"  FROM audit_log a WHERE a.tenant_id = $1"
	"  AND ($2::text IS NULL OR a.resource_type = $2)"
	"  AND ($3::text IS NULL OR a.resource_id = $3)) chain",
	3, false};

enum rg_status db_audit_list(struct db_conn *c, const char *tenant_id, const char *resource_type,
			     const char *resource_id, int64_t after_seq, int limit, PGresult **res,
			     struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id,
				db_int_param(after, after_seq), db_page_limit_param(lim, limit)};
	return db_exec(c, &list_stmt, params, res, err);
}

enum rg_status db_audit_verify(struct db_conn *c, const char *tenant_id,
			       const char *resource_type, const char *resource_id,
			       struct db_audit_verdict *out, struct db_error *err)
{
	const char *params[] = {tenant_id, resource_type, resource_id};
	PGresult *res = NULL;
	enum rg_status st = db_exec(c, &verify_stmt, params, &res, err);
	if (st != RG_OK)
		return st;
	out->checked = db_int(res, 0, 0);
	out->first_bad_seq = db_int(res, 0, 1);
	PQclear(res);
	return RG_OK;
}
