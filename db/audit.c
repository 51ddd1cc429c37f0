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

/* One chunk of a verify page: the records after $4, oldest first, at most $5 + 1 rows, each
 * with the hash its prev_hash must equal: NULL for a chain's first record, else the hash of
 * the record before it in its chain (chain_pos - 1) wherever that record is, so that a chain
 * crossing a page or chunk boundary is checked across it; '' (never a stored hash) when
 * that record is missing. The lookup is one probe of audit_log_by_chain per record. */
static const struct db_stmt verify_stmt = {
	"audit_verify_chunk",
	"SELECT a.seq, to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	" a.actor_token_id, a.action, a.resource_type, a.resource_id, a.revision_before,"
	" a.revision_after, a.request_id, a.details::text, a.prev_hash, a.hash,"
	" CASE WHEN a.chain_pos > 1 THEN coalesce((SELECT p.hash FROM audit_log p"
	"  WHERE p.tenant_id = a.tenant_id AND p.resource_type = a.resource_type"
	"  AND p.resource_id = a.resource_id AND p.chain_pos = a.chain_pos - 1), '') END"
	" FROM audit_log a WHERE a.tenant_id = $1"
	" AND ($2::text IS NULL OR a.resource_type = $2) AND ($3::text IS NULL OR a.resource_id = $3)"
	" AND a.seq > $4::bigint ORDER BY a.seq LIMIT $5::int",
	5, false};

enum rg_status db_audit_list(struct db_conn *c, const char *tenant_id, const char *resource_type,
			     const char *resource_id, int64_t after_seq, int limit, PGresult **res,
			     struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id,
				db_int_param(after, after_seq), db_page_limit_param(lim, limit)};
	return db_exec(c, &list_stmt, params, res, err);
}

enum rg_status db_audit_verify_chunk(struct db_conn *c, const char *tenant_id,
				     const char *resource_type, const char *resource_id,
				     int64_t after_seq, int limit, PGresult **res,
				     struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id,
				db_int_param(after, after_seq), db_page_limit_param(lim, limit)};
	return db_exec(c, &verify_stmt, params, res, err);
}
