#include "db/preferences.h"

#include <stdio.h>

#include "core/timefmt.h"

/* One row per entry (at least one row: the journal's revision, or null, rides on each);
 * the receipt of operation_id rides along as JSON (an InitPlan, computed once). */
static const struct db_stmt load_stmt = {
	"pref_load",
	"SELECT j.revision, e.key, e.state, e.statement, e.source_ref, e.source_quote,"
	" epoch_ms(e.expires_at), e.entry_revision, e.operation_id, epoch_ms(e.updated_at),"
	" (SELECT json_build_object("
	"   'operation_id', operation_id, 'action', action, 'key', key,"
	"   'state', CASE action WHEN 'remember' THEN 'active' ELSE 'retired' END,"
	"   'intent_hash', intent_hash, 'supersedes_operation_id', predecessor_operation_id,"
	"   'revision_before', revision_before, 'revision_after', revision_after,"
	"   'at_ms', epoch_ms(at))::text"
	"   FROM preference_operations WHERE tenant_id = $1 AND goal_id = $2 AND agent_id = $3"
	"   AND operation_id = $4)"
	" FROM (SELECT 1) one"
	" LEFT JOIN preference_journals j ON j.tenant_id = $1 AND j.goal_id = $2 AND j.agent_id = $3"
	" LEFT JOIN preference_entries e ON e.tenant_id = $1 AND e.goal_id = $2 AND e.agent_id = $3"
	" ORDER BY e.key COLLATE \"C\"",
	4, false, NULL};

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
	" SELECT revision_after, epoch_ms(at) FROM op",
	15, false, NULL};

static const struct db_stmt history_stmt = {
	"pref_history",
	"SELECT operation_id, action, key, statement, source_ref, source_quote,"
	" predecessor_operation_id, revision_after, epoch_ms(at) FROM preference_operations"
	" WHERE tenant_id = $1 AND goal_id = $2 AND agent_id = $3 AND revision_after > $4::bigint"
	" ORDER BY revision_after LIMIT $5::int",
	5, false, NULL};

enum rg_status db_pref_load(struct db_conn *c, const struct db_pref_scope *scope,
			    const char *operation_id, PGresult **res, struct db_error *err)
{
	const char *params[] = {scope->tenant_id, scope->goal_id, scope->agent_id, operation_id};
	return db_exec(c, &load_stmt, params, res, err);
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
	PGresult *res = NULL;
	enum rg_status st = db_exec_audited(c, &commit_stmt, actor, params, &res, err);
	if (st != RG_OK)
		return st;
	*revision_after = db_int(res, 0, 0);
	*at_ms = db_int(res, 0, 1);
	PQclear(res);
	return RG_OK;
}

enum rg_status db_pref_history(struct db_conn *c, const struct db_pref_scope *scope,
			       int64_t after, int limit, PGresult **res, struct db_error *err)
{
	char a[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {scope->tenant_id, scope->goal_id, scope->agent_id,
				db_int_param(a, after), db_page_limit_param(l, limit)};
	return db_exec(c, &history_stmt, params, res, err);
}
