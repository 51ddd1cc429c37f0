#include "db/memory.h"
#include "db/pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the mutation functions answer, each statement aliasing its function's columns to
 * these names and naming only the ones it has. */
struct outcome_row {
	const char *outcome, *previous;
	int64_t revision, at_ms, current_revision;
	const char *replayed_id;
};

static const struct db_col admit_cols[] = {
	DB_TEXT(struct outcome_row, outcome),
	DB_INT(struct outcome_row, at_ms),
	DB_TEXT(struct outcome_row, replayed_id),
};
static const struct db_row_spec admit_row = DB_ROW_SPEC(struct outcome_row, admit_cols);

static const struct db_stmt admit_stmt = {
	"mem_admit",
	"SELECT outcome, created_ms AS at_ms, replayed_id FROM memory_admit($1, $2, $3, $4, $5, $6,"
	" $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
	16, false, &admit_row};

static const struct db_col classify_cols[] = {
	DB_TEXT(struct outcome_row, outcome),     DB_TEXT(struct outcome_row, previous),
	DB_INT(struct outcome_row, revision),     DB_INT(struct outcome_row, at_ms),
	DB_INT(struct outcome_row, current_revision),
};
static const struct db_row_spec classify_row = DB_ROW_SPEC(struct outcome_row, classify_cols);

static const struct db_stmt classify_stmt = {
	"mem_classify",
	"SELECT outcome, previous, new_revision AS revision, effective_ms AS at_ms,"
	" current_revision FROM memory_classify($1, $2, $3, $4, $5::bigint, $6)",
	6, false, &classify_row};

static const struct db_col revoke_cols[] = {
	DB_TEXT(struct outcome_row, outcome),
	DB_INT(struct outcome_row, revision),
	DB_INT(struct outcome_row, at_ms),
	DB_INT(struct outcome_row, current_revision),
};
static const struct db_row_spec revoke_row = DB_ROW_SPEC(struct outcome_row, revoke_cols);

static const struct db_stmt revoke_stmt = {
	"mem_revoke",
	"SELECT outcome, new_revision AS revision, revoked_ms AS at_ms, current_revision"
	" FROM memory_revoke($1, $2, $3, $4, $5::bigint, $6)",
	6, false, &revoke_row};

static const struct db_col derive_cols[] = {
	DB_TEXT(struct outcome_row, outcome),
	DB_INT(struct outcome_row, at_ms),
	DB_INT(struct outcome_row, current_revision),
	DB_TEXT(struct outcome_row, replayed_id),
};
static const struct db_row_spec derive_row = DB_ROW_SPEC(struct outcome_row, derive_cols);

static const struct db_stmt derive_stmt = {
	"mem_derive",
	"SELECT outcome, created_ms AS at_ms, current_revision, replayed_id"
	" FROM memory_derive($1, $2, $3, $4, $5, $6::text[], $7::bigint[], $8, $9, $10, $11)",
	11, false, &derive_row};

static const struct db_col grant_cols[] = {
	DB_INT(struct outcome_row, at_ms),
};
static const struct db_row_spec grant_row = DB_ROW_SPEC(struct outcome_row, grant_cols);

static const struct db_stmt assent_grant_stmt = {
	"assent_grant",
	"WITH a AS (INSERT INTO assents (tenant_id, assent_id, owner, source_identity, expires_at,"
	"  revision, created_at)"
	"  VALUES ($1, $4, $5, $6, to_timestamp($7::bigint / 1000.0), 1,"
	"   date_trunc('milliseconds', now()))"
	"  RETURNING assent_id, created_at),"
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"
	"  resource_id, revision_before, revision_after, request_id, details)"
	"  SELECT $1, $2, 'assent.granted', 'assent', a.assent_id, NULL, 1, $3,"
	"   jsonb_build_object('source_identity', $6::text) FROM a)"
	" SELECT epoch_ms(created_at) AS at_ms FROM a",
	7, false, &grant_row};

static const struct db_stmt assent_revoke_stmt = {
	"assent_revoke",
	"SELECT outcome, new_revision AS revision, revoked_ms AS at_ms, current_revision"
	" FROM assent_revoke($1, $2, $3, $4, $5::bigint, $6)",
	6, false, &revoke_row};

static const struct db_col assent_cols[] = {
	DB_TEXT(struct db_assent, assent_id),
	DB_TEXT(struct db_assent, owner),
	DB_TEXT(struct db_assent, source_identity),
	DB_INT(struct db_assent, expires_ms),
	DB_INT(struct db_assent, revision),
	DB_INT_OR_NULL(struct db_assent, revoked_ms, not_revoked),
	DB_INT(struct db_assent, created_ms),
};
static const struct db_row_spec assent_row = DB_ROW_SPEC(struct db_assent, assent_cols);

static const struct db_stmt assent_get_stmt = {
	"assent_get",
	"SELECT assent_id, owner, source_identity, epoch_ms(expires_at) AS expires_ms, revision,"
	" epoch_ms(revoked_at) AS revoked_ms, epoch_ms(created_at) AS created_ms FROM assents"
	" WHERE tenant_id = $1 AND assent_id = $2",
	2, false, &assent_row};

static const struct db_col record_cols[] = {
	DB_TEXT(struct db_mem_record, record_id),
	DB_TEXT(struct db_mem_record, record_kind),
	DB_INT(struct db_mem_record, revision),
	DB_TEXT(struct db_mem_record, source_kind),
	DB_TEXT(struct db_mem_record, derivative_kind),
	DB_TEXT(struct db_mem_record, classification),
	DB_TEXT(struct db_mem_record, reasons_csv),
	DB_BOOL(struct db_mem_record, assent_expired),
	DB_TEXT(struct db_mem_record, content_hash),
	DB_TEXT(struct db_mem_record, source_identity),
	DB_INT(struct db_mem_record, created_ms),
	DB_INT(struct db_mem_record, updated_ms),
	DB_TEXT(struct db_mem_record, labels_json),
	DB_INT(struct db_mem_record, seq),
	DB_TEXT(struct db_mem_record, provenance),
};
static const struct db_row_spec record_row = DB_ROW_SPEC(struct db_mem_record, record_cols);

#define META_SELECT \
	"SELECT r.record_id, r.record_kind, r.revision, r.source_kind, r.derivative_kind," \
	" r.classification, array_to_string(r.ineligible_reasons, ',') AS reasons_csv," \
	" coalesce(r.assent_expires_at <= now(), false) AS assent_expired, r.content_hash," \
	" r.source_identity, epoch_ms(r.created_at) AS created_ms," \
	" epoch_ms(r.updated_at) AS updated_ms, r.labels::text AS labels_json, r.seq,"

/* A derivative's upstreams as values, not JSON: handlers render them. */
#define PROVENANCE_SELECT \
	"(SELECT string_agg(p.upstream_id || ' ' || p.upstream_revision, ',' ORDER BY p.position)" \
	"  FROM memory_provenance p" \
	"  WHERE p.tenant_id = r.tenant_id AND p.derivative_id = r.record_id)"

static const struct db_stmt get_stmt = {
	"mem_get",
	META_SELECT " " PROVENANCE_SELECT " AS provenance"
	" FROM memory_records r WHERE r.tenant_id = $1 AND r.record_id = $2",
	2, false, &record_row};

/* A list's filters ($1 tenant, $2 kind, $4.. the optional ones), then its order. */
#define LIST_SQL(position) \
	META_SELECT \
	" CASE WHEN r.record_kind = 'derivative' THEN " PROVENANCE_SELECT " END AS provenance" \
	" FROM memory_records r WHERE r.tenant_id = $1 AND r.record_kind = $2 AND " position \
	" AND ($4::text IS NULL OR r.classification = $4)" \
	" AND ($5::text IS NULL OR ($5 = 'eligible') = memory_retrievable(r.eligible," \
	"  r.assent_expires_at))" \
	" AND ($6::text IS NULL OR r.source_kind = $6) AND ($7::text IS NULL OR r.thread_id = $7)" \
	" AND ($9::jsonb IS NULL OR r.labels @> $9::jsonb)"

static const struct db_stmt list_stmt = {
	"mem_list", LIST_SQL("r.seq > $3::bigint") " ORDER BY r.seq LIMIT $8::int", 9, true,
	&record_row};
static const struct db_stmt list_newest_stmt = {
	"mem_list_newest",
	LIST_SQL("($3::bigint = 0 OR r.seq < $3::bigint)") " ORDER BY r.seq DESC LIMIT $8::int", 9,
	true, &record_row};

static const struct db_col descendant_cols[] = {
	DB_BOOL(struct db_mem_descendant, revoked),
	DB_TEXT(struct db_mem_descendant, derivative_id),
	DB_TEXT(struct db_mem_descendant, kind),
	DB_BOOL(struct db_mem_descendant, eligible),
};
static const struct db_row_spec descendant_row =
	DB_ROW_SPEC(struct db_mem_descendant, descendant_cols);

static const struct db_stmt readback_stmt = {
	"mem_readback",
	"SELECT s.revoked_at IS NOT NULL AS revoked, d.record_id AS derivative_id,"
	" d.derivative_kind AS kind, memory_retrievable(d.eligible, d.assent_expires_at) AS eligible"
	" FROM memory_records s"
	" LEFT JOIN memory_lineage l ON l.tenant_id = s.tenant_id AND l.root_id = s.record_id"
	" LEFT JOIN memory_records d ON d.tenant_id = l.tenant_id AND d.record_id = l.descendant_id"
	" WHERE s.tenant_id = $1 AND s.record_id = $2 AND s.record_kind = 'source'"
	" ORDER BY d.seq",
	2, false, &descendant_row};

/* Eligibility is a filter of the scan (the partial GIN index holds eligible records only),
 * so no ineligible record is ever ranked; a disabled receiving thread selects nothing.
 * Search and context share the text; context also fetches the content. */
#define MATCH_SQL(columns) \
	"SELECT r.record_id, r.record_kind, r.revision, ts_rank(r.tsv, q)::float8 AS score," \
	" r.content_hash" columns \
	" FROM memory_records r, websearch_to_tsquery('english', $2) q" \
	" WHERE r.tenant_id = $1 AND memory_retrievable(r.eligible, r.assent_expires_at)" \
	" AND r.tsv @@ q" \
	" AND r.record_kind = ANY($4::text[])" \
	" AND NOT EXISTS (SELECT 1 FROM thread_memory_modes t WHERE t.tenant_id = $1" \
	"  AND t.thread_id = $3 AND t.mode = 'disabled')" \
	" ORDER BY score DESC, r.record_id LIMIT $5::int"

static const struct db_col search_cols[] = {
	DB_TEXT(struct db_mem_match, record_id),  DB_TEXT(struct db_mem_match, record_kind),
	DB_INT(struct db_mem_match, revision),    DB_FLOAT(struct db_mem_match, score),
	DB_TEXT(struct db_mem_match, content_hash),
};
static const struct db_row_spec search_row = DB_ROW_SPEC(struct db_mem_match, search_cols);
static const struct db_col context_cols[] = {
	DB_TEXT(struct db_mem_match, record_id),  DB_TEXT(struct db_mem_match, record_kind),
	DB_INT(struct db_mem_match, revision),    DB_FLOAT(struct db_mem_match, score),
	DB_TEXT(struct db_mem_match, content_hash), DB_TEXT(struct db_mem_match, content),
};
static const struct db_row_spec context_row = DB_ROW_SPEC(struct db_mem_match, context_cols);

static const struct db_stmt search_stmt = {"mem_search", MATCH_SQL(""), 5, true, &search_row};
static const struct db_stmt context_stmt = {"mem_context", MATCH_SQL(", r.content"), 5, true,
					    &context_row};

static const struct db_col explained_cols[] = {
	DB_TEXT(struct db_mem_explained, record_id),
	DB_TEXT(struct db_mem_explained, record_kind),
	DB_INT(struct db_mem_explained, revision),
	DB_TEXT(struct db_mem_explained, classification),
	DB_TEXT(struct db_mem_explained, reasons_csv),
	DB_BOOL(struct db_mem_explained, assent_expired),
	DB_BOOL(struct db_mem_explained, thread_disabled),
};
static const struct db_row_spec explained_row =
	DB_ROW_SPEC(struct db_mem_explained, explained_cols);

static const struct db_stmt explain_stmt = {
	"mem_explain",
	"SELECT r.record_id, r.record_kind, r.revision, r.classification,"
	" array_to_string(r.ineligible_reasons, ',') AS reasons_csv,"
	" coalesce(r.assent_expires_at <= now(), false) AS assent_expired,"
	" memory_retrievable(r.eligible, r.assent_expires_at) AS ok,"
	" EXISTS (SELECT 1 FROM thread_memory_modes t WHERE t.tenant_id = $1"
	"  AND t.thread_id = $3 AND t.mode = 'disabled') AS thread_disabled"
	" FROM memory_records r, websearch_to_tsquery('english', $2) q"
	/* "eligible OR NOT eligible" lets the planner read both partial indexes (BitmapOr). */
	" WHERE r.tenant_id = $1 AND r.tsv @@ q AND (r.eligible OR NOT r.eligible)"
	" AND r.record_kind = ANY($4::text[])"
	" ORDER BY ok DESC, CASE WHEN r.eligible THEN ts_rank(r.tsv, q) END DESC NULLS LAST,"
	" r.record_id LIMIT $5::int",
	5, true, &explained_row};

static const struct db_col receipt_cols[] = {DB_TEXT(struct db_receipt, body)};
static const struct db_row_spec receipt_row = DB_ROW_SPEC(struct db_receipt, receipt_cols);

/* As of a past instant ($6, epoch ms): each matching record's state then, from the
 * eligibility history (migration 0019: the newest row at or before it; a record created later
 * has none and is left out), and the thread's mode then. */
#define AS_OF "to_timestamp($6::bigint / 1000.0)"
static const struct db_stmt explain_as_of_stmt = {
	"mem_explain_as_of",
	"SELECT * FROM (SELECT r.record_id, r.record_kind, h.revision, h.classification,"
	" array_to_string(h.ineligible_reasons, ',') AS reasons_csv, ts_rank(r.tsv, q) AS score,"
	" coalesce(h.assent_expires_at <= " AS_OF ", false) AS assent_expired,"
	" h.eligible AND (h.assent_expires_at IS NULL OR h.assent_expires_at > " AS_OF ") AS ok,"
	" coalesce((SELECT m.mode = 'disabled' FROM thread_mode_history m WHERE m.tenant_id = $1"
	"  AND m.thread_id = $3 AND m.valid_from <= " AS_OF
	"  ORDER BY m.valid_from DESC, m.seq DESC LIMIT 1), false) AS thread_disabled"
	" FROM memory_records r CROSS JOIN websearch_to_tsquery('english', $2) q"
	" JOIN LATERAL (SELECT x.revision, x.classification, x.ineligible_reasons, x.eligible,"
	"  x.assent_expires_at FROM memory_record_history x WHERE x.tenant_id = r.tenant_id"
	"  AND x.record_id = r.record_id AND x.valid_from <= " AS_OF
	"  ORDER BY x.valid_from DESC, x.seq DESC LIMIT 1) h ON true"
	" WHERE r.tenant_id = $1 AND r.tsv @@ q AND (r.eligible OR NOT r.eligible)"
	" AND r.record_kind = ANY($4::text[])) m"
	" ORDER BY ok DESC, CASE WHEN ok THEN score END DESC NULLS LAST, record_id"
	" LIMIT $5::int",
	6, true, &explained_row};

/* One record as of $3 (epoch ms): its state then (no row when it did not exist yet). */
static const struct db_stmt get_as_of_stmt = {
	"mem_get_as_of",
	"SELECT r.record_id, r.record_kind, h.revision, r.source_kind, r.derivative_kind,"
	" h.classification, array_to_string(h.ineligible_reasons, ',') AS reasons_csv,"
	" coalesce(h.assent_expires_at <= to_timestamp($3::bigint / 1000.0), false)"
	" AS assent_expired, r.content_hash, r.source_identity,"
	" epoch_ms(r.created_at) AS created_ms, epoch_ms(h.valid_from) AS updated_ms,"
	" r.labels::text AS labels_json, r.seq, " PROVENANCE_SELECT " AS provenance"
	" FROM memory_records r"
	" JOIN LATERAL (SELECT x.revision, x.classification, x.ineligible_reasons,"
	"  x.assent_expires_at, x.valid_from FROM memory_record_history x"
	"  WHERE x.tenant_id = r.tenant_id AND x.record_id = r.record_id"
	"  AND x.valid_from <= to_timestamp($3::bigint / 1000.0)"
	"  ORDER BY x.valid_from DESC, x.seq DESC LIMIT 1) h ON true"
	" WHERE r.tenant_id = $1 AND r.record_id = $2",
	3, false, &record_row};

static const struct db_stmt receipt_get_stmt = {
	"receipt_get", "SELECT body FROM load_receipts WHERE tenant_id = $1 AND receipt_id = $2", 2,
	false, &receipt_row};

/* A mutation function's one row into *out (revision 0 unless the statement names it). */
static enum rg_status run_outcome(struct db_conn *c, const struct db_stmt *stmt,
				  const char *const *params, struct db_mem_outcome *out,
				  struct db_error *err)
{
	struct db_rows rows;
	enum rg_status st = db_query(c, stmt, params, &rows, err);
	if (st != RG_OK)
		return st;
	if (rows.n != 1) {
		db_rows_free(&rows);
		db_error_set(err, RG_ERROR, NULL, "a memory function answered no row");
		return RG_ERROR;
	}
	const struct outcome_row *r = rows.row;
	memset(out, 0, sizeof *out);
	snprintf(out->outcome, sizeof out->outcome, "%s", r->outcome ? r->outcome : "");
	snprintf(out->previous, sizeof out->previous, "%s", r->previous ? r->previous : "");
	snprintf(out->record_id, sizeof out->record_id, "%s", r->replayed_id ? r->replayed_id : "");
	out->revision = r->revision;
	out->at_ms = r->at_ms;
	out->current_revision = r->current_revision;
	db_rows_free(&rows);
	return RG_OK;
}

enum rg_status db_mem_admit(struct db_conn *c, const struct db_actor *a,
			    const struct db_mem_source *s, struct db_mem_outcome *out,
			    struct db_error *err)
{
	const char *params[] = {a->tenant_id, a->token_id, a->request_id, s->record_id,
				s->source_kind, s->thread_id, s->labels_json, s->content,
				s->pointer_uri, s->content_hash, s->source_identity,
				s->classification, s->foreign_owner, s->assent_id,
				s->operation_id, s->operation_hash};
	enum rg_status st = run_outcome(c, &admit_stmt, params, out, err);
	if (st == RG_OK)
		out->revision = 1;
	return st;
}

enum rg_status db_mem_classify(struct db_conn *c, const struct db_actor *a, const char *id,
			       int64_t expected, const char *classification,
			       struct db_mem_outcome *out, struct db_error *err)
{
	char e[DB_INT_SIZE];
	const char *params[] = {a->tenant_id, a->token_id, a->request_id, id,
				db_int_param(e, expected), classification};
	return run_outcome(c, &classify_stmt, params, out, err);
}

enum rg_status db_mem_revoke(struct db_conn *c, const struct db_actor *a, const char *id,
			     int64_t expected, const char *reason, struct db_mem_outcome *out,
			     struct db_error *err)
{
	char e[DB_INT_SIZE];
	const char *params[] = {a->tenant_id, a->token_id, a->request_id, id,
				db_int_param(e, expected), reason};
	return run_outcome(c, &revoke_stmt, params, out, err);
}

enum rg_status db_assent_revoke(struct db_conn *c, const struct db_actor *a, const char *id,
				int64_t expected, const char *owner, struct db_mem_outcome *out,
				struct db_error *err)
{
	char e[DB_INT_SIZE];
	const char *params[] = {a->tenant_id, a->token_id, a->request_id, id,
				db_int_param(e, expected), owner};
	return run_outcome(c, &assent_revoke_stmt, params, out, err);
}

enum rg_status db_mem_derive(struct db_conn *c, const struct db_actor *a, const char *id,
			     const char *kind, const char *const *upstreams,
			     const int64_t *revisions, size_t n, const char *content,
			     const char *content_hash, const char *operation_id,
			     const char *operation_hash, struct db_mem_outcome *out,
			     struct db_error *err)
{
	char revs[64][DB_INT_SIZE];
	const char *rev_items[64];
	if (n > 64)
		return RG_INVALID;
	for (size_t i = 0; i < n; i++)
		rev_items[i] = db_int_param(revs[i], revisions[i]);
	char *ups = db_array_literal(upstreams, n), *rv = db_array_literal(rev_items, n);
	enum rg_status st = RG_NOMEM;
	if (ups && rv) {
		const char *params[] = {a->tenant_id, a->token_id, a->request_id, id, kind, ups, rv,
					content, content_hash, operation_id, operation_hash};
		st = run_outcome(c, &derive_stmt, params, out, err);
		if (st == RG_OK)
			out->revision = 1;
	}
	free(ups);
	free(rv);
	return st;
}

enum rg_status db_assent_grant(struct db_conn *c, const struct db_actor *a, const char *id,
			       const char *owner, const char *identity, int64_t expires_ms,
			       struct db_mem_outcome *out, struct db_error *err)
{
	char e[DB_INT_SIZE];
	const char *params[] = {id, owner, identity, db_int_param(e, expires_ms)};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &assent_grant_stmt, a, params, &rows, err);
	if (st != RG_OK)
		return st == RG_STALE ? RG_ERROR : st;
	memset(out, 0, sizeof *out);
	snprintf(out->outcome, sizeof out->outcome, "ok");
	out->revision = 1;
	out->at_ms = ((const struct outcome_row *)rows.row)->at_ms;
	db_rows_free(&rows);
	return RG_OK;
}

static enum rg_status by_id(struct db_conn *c, const struct db_stmt *stmt, const char *tenant,
			    const char *id, struct db_rows *out, struct db_error *err)
{
	const char *params[] = {tenant, id};
	return db_query(c, stmt, params, out, err);
}

enum rg_status db_assent_get(struct db_conn *c, const char *tenant, const char *id,
			     struct db_rows *out, struct db_error *err)
{
	return by_id(c, &assent_get_stmt, tenant, id, out, err);
}

enum rg_status db_mem_get(struct db_conn *c, const char *tenant, const char *id,
			  struct db_rows *out, struct db_error *err)
{
	return by_id(c, &get_stmt, tenant, id, out, err);
}

enum rg_status db_mem_readback(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *out, struct db_error *err)
{
	return by_id(c, &readback_stmt, tenant, id, out, err);
}

enum rg_status db_receipt_get(struct db_conn *c, const char *tenant, const char *id,
			      struct db_rows *out, struct db_error *err)
{
	return by_id(c, &receipt_get_stmt, tenant, id, out, err);
}

enum rg_status db_mem_list(struct db_conn *c, const char *tenant, const struct db_mem_filter *f,
			   int64_t after, int limit, struct db_rows *out, struct db_error *err)
{
	char a[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {tenant,	       f->record_kind, db_int_param(a, after),
				f->classification, f->state,	      f->source_kind,
				f->thread_id,	       db_page_limit_param(l, limit), f->labels_json};
	return db_query(c, f->newest ? &list_newest_stmt : &list_stmt, params, out, err);
}

static enum rg_status match(struct db_conn *c, const struct db_stmt *stmt, const char *tenant,
			    const char *query, const char *thread, const char *kinds, int limit,
			    struct db_rows *out, struct db_error *err)
{
	char l[DB_INT_SIZE];
	const char *params[] = {tenant, query, thread, kinds, db_int_param(l, limit)};
	return db_query(c, stmt, params, out, err);
}

enum rg_status db_mem_search(struct db_conn *c, const char *tenant, const char *query,
			     const char *thread, const char *kinds, int limit,
			     struct db_rows *out, struct db_error *err)
{
	return match(c, &search_stmt, tenant, query, thread, kinds, limit, out, err);
}

enum rg_status db_mem_context(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, int limit, struct db_rows *out,
			      struct db_error *err)
{
	return match(c, &context_stmt, tenant, query, thread, "{source,derivative}", limit, out,
		     err);
}

enum rg_status db_mem_explain(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, const char *kinds, int limit,
			      struct db_rows *out, struct db_error *err)
{
	return match(c, &explain_stmt, tenant, query, thread, kinds, limit, out, err);
}

enum rg_status db_mem_explain_as_of(struct db_conn *c, const char *tenant, const char *query,
				    const char *thread, const char *kinds, int limit,
				    int64_t as_of_ms, struct db_rows *out, struct db_error *err)
{
	char l[DB_INT_SIZE], t[DB_INT_SIZE];
	const char *params[] = {tenant, query, thread, kinds, db_int_param(l, limit),
				db_int_param(t, as_of_ms)};
	return db_query(c, &explain_as_of_stmt, params, out, err);
}

enum rg_status db_mem_get_as_of(struct db_conn *c, const char *tenant, const char *id,
				int64_t as_of_ms, struct db_rows *out, struct db_error *err)
{
	char t[DB_INT_SIZE];
	const char *params[] = {tenant, id, db_int_param(t, as_of_ms)};
	return db_query(c, &get_as_of_stmt, params, out, err);
}
