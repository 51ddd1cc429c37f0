#include "db/audit.h"
#include "db/audit_columns.h"

#include <stdio.h>

#include "core/timefmt.h"

static const struct db_stmt list_stmt = {
	"audit_list",
	"SELECT " DB_AUDIT_COLUMNS " FROM audit_log WHERE tenant_id = $1"
	" AND ($2::text IS NULL OR resource_type = $2) AND ($3::text IS NULL OR resource_id = $3)"
	" AND seq > $4::bigint ORDER BY seq LIMIT $5::int",
	5, false, NULL};

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
	5, false, NULL};

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

static json_t *opt_int(const PGresult *res, int row, int col)
{
	return db_null(res, row, col) ? json_null() : json_integer(db_int(res, row, col));
}

static json_t *opt_text(const PGresult *res, int row, int col)
{
	const char *s = db_text(res, row, col);
	return s ? json_string(s) : json_null();
}

json_t *db_audit_row_json(const PGresult *res, int i)
{
	char at[RG_TIME_SIZE];
	core_time_format(db_int(res, i, 1), at);
	json_t *details = json_loads(PQgetvalue(res, i, 9), 0, NULL);
	return json_pack("{s:I, s:s, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "seq",
			 (json_int_t)db_int(res, i, 0), "at", at, "actor_token_id",
			 opt_text(res, i, 2), "action", PQgetvalue(res, i, 3), "resource_type",
			 PQgetvalue(res, i, 4), "resource_id", PQgetvalue(res, i, 5),
			 "revision_before", opt_int(res, i, 6), "revision_after", opt_int(res, i, 7),
			 "request_id", opt_text(res, i, 8), "details",
			 details ? details : json_object(), "prev_hash", opt_text(res, i, 10), "hash",
			 PQgetvalue(res, i, 11));
}
