#include "db/preferences.h"

#include <stddef.h>

#include "core/timefmt.h"

/* One row per entry, at least one row: the journal's revision (or null) rides on each, and so
 * does the receipt of operation_id (one index lookup, joined before the entries). Columns are
 * named like the members of load_row. */
struct load_row {
	int64_t revision;
	struct db_pref_entry entry;   /* entry.key NULL: the one row of a journal without entries */
	struct db_pref_receipt receipt; /* receipt.operation_id NULL: none */
};

#define ENTRY_COL(kind, m) DB_COL_AT(#m, kind, struct load_row, entry.m)
#define RECEIPT_COL(kind, m) DB_COL_AT("receipt_" #m, kind, struct load_row, receipt.m)
static const struct db_col load_cols[] = {
	DB_INT(struct load_row, revision),
	ENTRY_COL(DB_KIND_TEXT, key),
	ENTRY_COL(DB_KIND_TEXT, state),
	ENTRY_COL(DB_KIND_TEXT, statement),
	ENTRY_COL(DB_KIND_TEXT, source_ref),
	ENTRY_COL(DB_KIND_TEXT, source_quote),
	DB_INT_AT_OR_NULL("expires_ms", struct load_row, entry.expires_ms, entry.expires_null),
	ENTRY_COL(DB_KIND_INT, entry_revision),
	ENTRY_COL(DB_KIND_TEXT, operation_id),
	ENTRY_COL(DB_KIND_INT, updated_ms),
	RECEIPT_COL(DB_KIND_TEXT, operation_id),
	RECEIPT_COL(DB_KIND_TEXT, action),
	RECEIPT_COL(DB_KIND_TEXT, key),
	RECEIPT_COL(DB_KIND_TEXT, intent_hash),
	RECEIPT_COL(DB_KIND_TEXT, predecessor_operation_id),
	DB_INT_AT_OR_NULL("receipt_revision_before", struct load_row, receipt.revision_before,
			  receipt.revision_before_null),
	RECEIPT_COL(DB_KIND_INT, revision_after),
	RECEIPT_COL(DB_KIND_INT, at_ms),
};
static const struct db_row_spec load_row_spec = DB_ROW_SPEC(struct load_row, load_cols);

/* One read (the journal, its entries and the asked receipt): it may go out on a pipe. */
const struct db_stmt db_pref_load_stmt = {
	"pref_load",
	"SELECT j.revision, e.key, e.state, e.statement, e.source_ref, e.source_quote,"
	" epoch_ms(e.expires_at) AS expires_ms, e.entry_revision, e.operation_id,"
	" epoch_ms(e.updated_at) AS updated_ms, r.*"
	" FROM (SELECT 1) one"
	" LEFT JOIN preference_journals j ON j.tenant_id = $1 AND j.goal_id = $2 AND j.agent_id = $3"
	" LEFT JOIN (SELECT operation_id AS receipt_operation_id, action AS receipt_action,"
	"   key AS receipt_key, intent_hash AS receipt_intent_hash,"
	"   predecessor_operation_id AS receipt_predecessor_operation_id,"
	"   revision_before AS receipt_revision_before, revision_after AS receipt_revision_after,"
	"   epoch_ms(at) AS receipt_at_ms"
	"   FROM preference_operations WHERE tenant_id = $1 AND goal_id = $2 AND agent_id = $3"
	"   AND operation_id = $4) r ON true"
	" LEFT JOIN preference_entries e ON e.tenant_id = $1 AND e.goal_id = $2 AND e.agent_id = $3"
	" ORDER BY e.key COLLATE \"C\"",
	4, DB_PIPEABLE, &load_row_spec};

struct commit_row {
	int64_t revision_after, at_ms;
};
static const struct db_col commit_cols[] = {
	DB_INT(struct commit_row, revision_after),
	DB_INT(struct commit_row, at_ms),
};
static const struct db_row_spec commit_row_spec = DB_ROW_SPEC(struct commit_row, commit_cols);

/* The journal row is the compare-and-swap point: created at revision 1 when the caller
 * expects a never-written journal, else moved from the expected revision. Everything else
 * happens only when that succeeded. */
static const struct db_stmt commit_stmt = {
	"pref_commit",
	"WITH ins_j AS (INSERT INTO preference_journals (tenant_id, goal_id, agent_id, revision, updated_at)"
	"  SELECT $1, $4, $5, 1, date_trunc('milliseconds', now()) WHERE $6::bigint IS NULL"
	"  ON CONFLICT DO NOTHING RETURNING revision),"
	" upd_j AS (UPDATE preference_journals SET revision = revision + 1,"
	"  updated_at = date_trunc('milliseconds', now())"
	"  WHERE tenant_id = $1 AND goal_id = $4 AND agent_id = $5 AND revision = $6::bigint"
	"  RETURNING revision),"
	" j AS (SELECT revision FROM ins_j UNION ALL SELECT revision FROM upd_j),"
	" op AS (INSERT INTO preference_operations (tenant_id, goal_id, agent_id, revision_after,"
	"  operation_id, action, key, statement, source_ref, source_quote, expires_at, intent_hash,"
	"  predecessor_operation_id, revision_before, at)"
	"  SELECT $1, $4, $5, j.revision, $7, $8, $9, $10, $11, $12,"
	"   to_timestamp($13::bigint / 1000.0), $14, $15, $6::bigint,"
	"   date_trunc('milliseconds', now()) FROM j"
	"  RETURNING revision_after, at),"
	" ent AS (INSERT INTO preference_entries (tenant_id, goal_id, agent_id, key, state, statement,"
	"  source_ref, source_quote, expires_at, entry_revision, operation_id, updated_at)"
	"  SELECT $1, $4, $5, $9, CASE $8 WHEN 'remember' THEN 'active' ELSE 'retired' END, $10,"
	"   $11, $12, to_timestamp($13::bigint / 1000.0), op.revision_after, $7, op.at FROM op"
	"  ON CONFLICT (tenant_id, goal_id, agent_id, key) DO UPDATE SET state = EXCLUDED.state,"
	"   statement = EXCLUDED.statement, source_ref = EXCLUDED.source_ref,"
	"   source_quote = EXCLUDED.source_quote, expires_at = EXCLUDED.expires_at,"
	"   entry_revision = EXCLUDED.entry_revision, operation_id = EXCLUDED.operation_id,"
	"   updated_at = EXCLUDED.updated_at),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, CASE $8 WHEN 'remember' THEN 'preference.remembered'"
	"   ELSE 'preference.retired' END, 'preference_journal', $4 || '/' || $5, $6::bigint,"
	"   op.revision_after, $3,"
	"   jsonb_build_object('key', $9::text, 'operation_id', $7::text, 'intent_hash', $14::text)"
	"  FROM op)"
	" SELECT revision_after, epoch_ms(at) AS at_ms FROM op",
	15, false, &commit_row_spec};

static const struct db_col history_cols[] = {
	DB_TEXT(struct db_pref_operation, operation_id),
	DB_TEXT(struct db_pref_operation, action),
	DB_TEXT(struct db_pref_operation, key),
	DB_TEXT(struct db_pref_operation, statement),
	DB_TEXT(struct db_pref_operation, source_ref),
	DB_TEXT(struct db_pref_operation, source_quote),
	DB_TEXT(struct db_pref_operation, predecessor_operation_id),
	DB_INT(struct db_pref_operation, revision_after),
	DB_INT(struct db_pref_operation, at_ms),
};
static const struct db_row_spec history_row_spec =
	DB_ROW_SPEC(struct db_pref_operation, history_cols);

static const struct db_stmt history_stmt = {
	"pref_history",
	"SELECT operation_id, action, key, statement, source_ref, source_quote,"
	" predecessor_operation_id, revision_after, epoch_ms(at) AS at_ms FROM preference_operations"
	" WHERE tenant_id = $1 AND goal_id = $2 AND agent_id = $3 AND revision_after > $4::bigint"
	" ORDER BY revision_after LIMIT $5::int",
	5, false, &history_row_spec};

const struct db_pref_entry *db_pref_entry_at(const struct db_pref_journal *j, size_t i)
{
	return &((const struct load_row *)db_rows_at(&j->rows, i))->entry;
}

void db_pref_journal_free(struct db_pref_journal *j)
{
	db_rows_free(&j->rows);
	*j = (struct db_pref_journal){0};
}

enum rg_status db_pref_load(struct db_conn *c, const struct db_pref_scope *scope,
			    const char *operation_id, struct db_pref_journal *out,
			    struct db_error *err)
{
	const char *params[] = {scope->tenant_id, scope->goal_id, scope->agent_id, operation_id};
	*out = (struct db_pref_journal){0};
	enum rg_status st = db_query(c, &db_pref_load_stmt, params, &out->rows, err);
	if (st == RG_OK)
		db_pref_journal_of(&out->rows, out);
	return st;
}

void db_pref_journal_of(const struct db_rows *rows, struct db_pref_journal *out)
{
	*out = (struct db_pref_journal){.rows = *rows};
	if (rows->n == 0)
		return; /* the statement always answers a row; none reads as never written */
	const struct load_row *first = db_rows_at(rows, 0);
	out->revision = first->revision;
	out->n = first->entry.key ? rows->n : 0;
	out->receipt = first->receipt.operation_id ? &first->receipt : NULL;
}

static const char *int_or_null(char buf[DB_INT_SIZE], int64_t v, int64_t none)
{
	return v == none ? NULL : db_int_param(buf, v);
}

enum rg_status db_pref_commit(struct db_conn *c, const struct db_actor *actor,
			      const struct db_pref_scope *scope, const struct db_pref_write *w,
			      int64_t *revision_after, int64_t *at_ms, struct db_error *err)
{
	char expected[DB_INT_SIZE], expires[DB_INT_SIZE];
	const char *params[] = {
		scope->goal_id, scope->agent_id,
		int_or_null(expected, w->expected_revision, 0), w->operation_id,
		w->action, w->key, w->statement, w->source_ref, w->source_quote,
		int_or_null(expires, w->expires_ms, RG_TIME_NONE), w->intent_hash,
		w->predecessor_operation_id,
	};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &commit_stmt, actor, params, &rows, err);
	if (st != RG_OK)
		return st;
	const struct commit_row *r = db_rows_at(&rows, 0);
	*revision_after = r->revision_after;
	*at_ms = r->at_ms;
	db_rows_free(&rows);
	return RG_OK;
}

enum rg_status db_pref_history(struct db_conn *c, const struct db_pref_scope *scope,
			       int64_t after, int limit, struct db_rows *rows, struct db_error *err)
{
	char a[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {scope->tenant_id, scope->goal_id, scope->agent_id,
				db_int_param(a, after), db_page_limit_param(l, limit)};
	return db_query(c, &history_stmt, params, rows, err);
}
