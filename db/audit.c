#include "db/audit.h"
#include "db/audit_columns.h"

#include <stddef.h>

/* The columns of DB_AUDIT_COLUMNS into the members of struct core_audit_record found at
 * `m` in T (m is empty, or "record." for a struct that holds one). */
#define AUDIT_COL(T, m, name, kind) DB_COL_AT(#name, kind, T, m name)
#define AUDIT_COL_OR_NULL(T, m, name, flag) DB_INT_AT_OR_NULL(#name, T, m name, m flag)
#define AUDIT_RECORD_COLS(T, m)                                                          \
	AUDIT_COL(T, m, seq, DB_KIND_INT), AUDIT_COL(T, m, at_ms, DB_KIND_INT),          \
	AUDIT_COL(T, m, tenant_id, DB_KIND_TEXT),                                       \
	AUDIT_COL(T, m, actor_token_id, DB_KIND_TEXT),                                  \
	AUDIT_COL(T, m, action, DB_KIND_TEXT), AUDIT_COL(T, m, resource_type, DB_KIND_TEXT), \
	AUDIT_COL(T, m, resource_id, DB_KIND_TEXT),                                     \
	AUDIT_COL_OR_NULL(T, m, revision_before, no_revision_before),                   \
	AUDIT_COL_OR_NULL(T, m, revision_after, no_revision_after),                     \
	AUDIT_COL(T, m, request_id, DB_KIND_TEXT), AUDIT_COL(T, m, details, DB_KIND_TEXT), \
	AUDIT_COL(T, m, prev_hash, DB_KIND_TEXT), AUDIT_COL(T, m, hash, DB_KIND_TEXT)

static const struct db_col record_cols[] = {AUDIT_RECORD_COLS(struct core_audit_record, )};
const struct db_row_spec db_audit_record_row =
    DB_ROW_SPEC(struct core_audit_record, record_cols);

static const struct db_col check_cols[] = {
	AUDIT_RECORD_COLS(struct db_audit_check, record.),
	DB_TEXT(struct db_audit_check, hash_at),
	DB_TEXT(struct db_audit_check, expected_prev),
};
static const struct db_row_spec check_row = DB_ROW_SPEC(struct db_audit_check, check_cols);

#define AUDIT_LIST(position, order) \
	"SELECT " DB_AUDIT_COLUMNS " FROM audit_log WHERE tenant_id = $1" \
	" AND ($2::text IS NULL OR resource_type = $2) AND ($3::text IS NULL OR resource_id = $3)" \
	" AND " position " ORDER BY seq " order " LIMIT $5::int"

static const struct db_stmt list_stmt = {
	"audit_list", AUDIT_LIST("seq > $4::bigint", "ASC"), 5, false, &db_audit_record_row};
/* Newest first (a timeline opening on the latest records): before the cursor, if any. */
static const struct db_stmt list_newest_stmt = {
	"audit_list_newest", AUDIT_LIST("($4::bigint = 0 OR seq < $4::bigint)", "DESC"), 5, false,
	&db_audit_record_row};

/* One chunk of a verify page: the records after $4, oldest first, at most $5 + 1 rows, each
 * with the hash its prev_hash must equal: NULL for a chain's first record, else the hash of
 * the record before it in its chain (chain_pos - 1) wherever that record is, so that a chain
 * crossing a page or chunk boundary is checked across it; '' (never a stored hash) when
 * that record is missing. The lookup is one probe of audit_log_by_chain per record. hash_at
 * is `at` as db/functions/audit_hash.sql prints it for the hash. */
static const struct db_stmt verify_stmt = {
	"audit_verify_chunk",
	"SELECT " DB_AUDIT_COLUMNS ","
	" to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS hash_at,"
	" CASE WHEN a.chain_pos > 1 THEN coalesce((SELECT p.hash FROM audit_log p"
	"  WHERE p.tenant_id = a.tenant_id AND p.resource_type = a.resource_type"
	"  AND p.resource_id = a.resource_id AND p.chain_pos = a.chain_pos - 1), '')"
	" END AS expected_prev"
	" FROM audit_log a WHERE a.tenant_id = $1"
	" AND ($2::text IS NULL OR a.resource_type = $2) AND ($3::text IS NULL OR a.resource_id = $3)"
	" AND a.seq > $4::bigint ORDER BY a.seq LIMIT $5::int",
	5, false, &check_row};

enum rg_status db_audit_list(struct db_conn *c, const char *tenant_id, const char *resource_type,
			     const char *resource_id, bool newest, int64_t after_seq, int limit,
			     struct db_rows *rows, struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id,
				db_int_param(after, after_seq), db_page_limit_param(lim, limit)};
	return db_query(c, newest ? &list_newest_stmt : &list_stmt, params, rows, err);
}

enum rg_status db_audit_verify_chunk(struct db_conn *c, const char *tenant_id,
				     const char *resource_type, const char *resource_id,
				     int64_t after_seq, int limit, struct db_rows *rows,
				     struct db_error *err)
{
	char after[DB_INT_SIZE], lim[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id,
				db_int_param(after, after_seq), db_page_limit_param(lim, limit)};
	return db_query(c, &verify_stmt, params, rows, err);
}
