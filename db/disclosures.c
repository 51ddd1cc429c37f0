/* The disclosure ledger (db/disclosures.h). */
#include <stdlib.h>

#include "core/timefmt.h"
#include "db/disclosures.h"
#include "db/pg.h"
#include "db/row.h"

static const struct db_col stale_cols[] = {DB_TEXT(struct db_delivery_item, record_id)};
static const struct db_row_spec stale_row = DB_ROW_SPEC(struct db_delivery_item, stale_cols);

#ifndef RG_BENCH_NO_RECORDING
static const struct db_stmt deliver_stmt = {
	"mem_deliver",
	"SELECT record_id FROM memory_deliver($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::text[],"
	" $10::bigint[], $11::text[])",
	11, false, &stale_row};
#else /* the bench's control (CMakeLists.txt): the receipt alone, no lock, nothing delivered */
static const struct db_stmt deliver_stmt = {
	"mem_deliver",
	"WITH x AS (INSERT INTO load_receipts (tenant_id, token_id, request_id, thread_id, via,"
	" receipt_id, body) VALUES ($1, $2, $3, $4, $5, $6, $7)) SELECT NULL::text AS record_id"
	" WHERE $8::text[] IS NULL AND $9::text[] IS NULL AND $10::bigint[] IS NULL"
	" AND $11::text[] IS NULL",
	11, false, &stale_row};
#endif

static const struct db_col content_cols[] = {
	DB_TEXT(struct db_mem_content, content),
	DB_TEXT(struct db_mem_content, pointer_uri),
	DB_TEXT(struct db_mem_content, content_hash),
	DB_TEXT(struct db_mem_content, record_kind),
	DB_INT(struct db_mem_content, revision),
};
static const struct db_row_spec content_row = DB_ROW_SPEC(struct db_mem_content, content_cols);

#ifndef RG_BENCH_NO_RECORDING
static const struct db_stmt reads_stmt = {
	"content_reads",
	"SELECT * FROM memory_content_reads($1::text[], $2::text[], $3::text[], $4::text[],"
	" $5::text[])",
	5, false, &content_row};
#else /* the bench's control (CMakeLists.txt): one read, nothing recorded */
static const struct db_stmt reads_stmt = {
	"content_reads",
	"SELECT m.content, m.pointer_uri, m.content_hash, m.record_kind, m.revision"
	" FROM (SELECT 1) x LEFT JOIN memory_records m ON m.tenant_id = ($1::text[])[1]"
	" AND m.record_id = ($2::text[])[1]"
	" WHERE $3::text[] IS NOT NULL AND $4::text[] IS NOT NULL AND $5::text[] IS NOT NULL",
	5, false, &content_row};
#endif

static const struct db_col disclosure_cols[] = {
	DB_INT(struct db_disclosure, seq),
	DB_TEXT(struct db_disclosure, disclosure_id),
	DB_INT(struct db_disclosure, at_ms),
	DB_TEXT(struct db_disclosure, record_id),
	DB_TEXT(struct db_disclosure, record_kind),
	DB_INT(struct db_disclosure, revision),
	DB_TEXT(struct db_disclosure, delivered_hash),
	DB_TEXT(struct db_disclosure, token_id),
	DB_TEXT(struct db_disclosure, thread_id),
	DB_TEXT(struct db_disclosure, surface),
	DB_TEXT(struct db_disclosure, via),
	DB_TEXT(struct db_disclosure, receipt_id),
	DB_TEXT(struct db_disclosure, request_id),
};
static const struct db_row_spec disclosure_row =
	DB_ROW_SPEC(struct db_disclosure, disclosure_cols);

/* The filters a load's row and a disclosure row share ($3 thread, $4 token, $7/$8 window). */
#define ROW_FILTERS(t) \
	" AND ($3::text IS NULL OR " t ".thread_id = $3)" \
	" AND ($4::text IS NULL OR " t ".token_id = $4)" \
	" AND ($7::bigint IS NULL OR " t ".at >= to_timestamp($7::bigint / 1000.0))" \
	" AND ($8::bigint IS NULL OR " t ".at < to_timestamp($8::bigint / 1000.0))"

/* Newest first across both homes of a disclosure (migration 0021): a context load's items
 * from its receipt row (position dseq * 32 + item, at most 20 items), and a row of
 * `disclosures` (position seq * 32); each side reads at most a page of rows by its index. The
 * cursor ($9) is the last position shown. Planned per call: each filter has its own index.
 * s.ids: the records a source filter covers ($5, and its derivatives when $6), read once. */
static const struct db_stmt list_stmt = {
	"disclosures_list",
	"WITH s AS (SELECT ARRAY[$5::text] || CASE WHEN $6::bool THEN ARRAY(SELECT"
	"  l.descendant_id FROM memory_lineage l WHERE l.tenant_id = $1 AND l.root_id = $5)"
	"  ELSE '{}' END AS ids)"
	" SELECT * FROM ("
	" SELECT r.dseq * 32 + u.n AS seq, 'dsc_' || md5(r.receipt_id || ':' || u.n) AS disclosure_id,"
	"  epoch_ms(r.at) AS at_ms, u.id AS record_id, u.kind AS record_kind, u.rev AS revision,"
	"  u.hash AS delivered_hash, r.token_id, r.thread_id, 'context' AS surface, r.via,"
	"  r.receipt_id, r.request_id"
	" FROM s, (SELECT r.* FROM load_receipts r, s WHERE r.tenant_id = $1"
	"  AND r.record_ids <> '{}'"
	"  AND ($2::text IS NULL OR r.record_ids @> ARRAY[$2::text])"
	"  AND ($5::text IS NULL OR r.record_ids && s.ids)" ROW_FILTERS("r")
	/* a load with an item before the cursor; only the one the cursor is in can give fewer
	 * items than the filters matched, hence one more load than the page */
	"  AND ($9::bigint = 0 OR r.dseq * 32 + 1 < $9::bigint)"
	"  ORDER BY r.dseq DESC LIMIT $10::int + 1) r,"
	"  unnest(r.record_ids, r.record_kinds, r.revisions, r.delivered_hashes)"
	"  WITH ORDINALITY AS u(id, kind, rev, hash, n)"
	" WHERE ($2::text IS NULL OR u.id = $2) AND ($5::text IS NULL OR u.id = ANY(s.ids))"
	"  AND ($9::bigint = 0 OR r.dseq * 32 + u.n < $9::bigint)"
	" UNION ALL"
	" SELECT * FROM (SELECT d.seq * 32 AS seq, d.disclosure_id, epoch_ms(d.at) AS at_ms,"
	"  d.record_id, d.record_kind, d.revision, d.delivered_hash, d.token_id, d.thread_id,"
	"  d.surface, d.via, d.receipt_id, d.request_id FROM disclosures d, s"
	"  WHERE d.tenant_id = $1"
	"  AND ($2::text IS NULL OR d.record_id = $2)"
	"  AND ($5::text IS NULL OR d.record_id = ANY(s.ids))" ROW_FILTERS("d")
	"  AND ($9::bigint = 0 OR d.seq * 32 < $9::bigint)"
	"  ORDER BY d.seq DESC LIMIT $10::int) d) a"
	" ORDER BY seq DESC LIMIT $10::int",
	10, DB_CUSTOM_PLAN, &disclosure_row};

static const struct db_col summary_cols[] = {
	DB_INT(struct db_disclosure_summary, count),
	DB_INT(struct db_disclosure_summary, threads),
	DB_INT(struct db_disclosure_summary, tokens),
	DB_INT_OR_NULL(struct db_disclosure_summary, first_at_ms, first_at_null),
	DB_INT_OR_NULL(struct db_disclosure_summary, last_at_ms, last_at_null),
	DB_INT(struct db_disclosure_summary, after_revocation),
};
static const struct db_row_spec summary_row =
	DB_ROW_SPEC(struct db_disclosure_summary, summary_cols);

/* Over a source and its derivatives, context items (from the loads' rows) and rows of
 * `disclosures` alike; after_revocation counts the context ones at or after revoked_at. */
static const struct db_stmt summary_stmt = {
	"disclosures_summary",
	"WITH ids AS (SELECT ARRAY[$2::text] || ARRAY(SELECT l.descendant_id FROM memory_lineage l"
	"  WHERE l.tenant_id = $1 AND l.root_id = $2) AS a),"
	" revoked AS (SELECT s.revoked_at FROM memory_records s WHERE s.tenant_id = $1"
	"  AND s.record_id = $2),"
	" items AS (SELECT r.at, r.thread_id, r.token_id, 'context' AS surface"
	"  FROM load_receipts r, ids, unnest(r.record_ids) AS u(id)"
	"  WHERE r.tenant_id = $1 AND r.record_ids && ids.a AND u.id = ANY(ids.a)"
	"  UNION ALL SELECT d.at, d.thread_id, d.token_id, d.surface FROM disclosures d, ids"
	"  WHERE d.tenant_id = $1 AND d.record_id = ANY(ids.a))"
	" SELECT count(*) AS count, count(DISTINCT i.thread_id) AS threads,"
	" count(DISTINCT i.token_id) AS tokens, epoch_ms(min(i.at)) AS first_at_ms,"
	" epoch_ms(max(i.at)) AS last_at_ms, count(*) FILTER (WHERE i.surface = 'context'"
	"  AND i.at >= (SELECT revoked_at FROM revoked)) AS after_revocation"
	" FROM items i",
	2, false, &summary_row};

static const struct db_col receipt_list_cols[] = {
	DB_INT(struct db_receipt_row, seq),
	DB_TEXT(struct db_receipt_row, body),
};
static const struct db_row_spec receipt_list_row =
	DB_ROW_SPEC(struct db_receipt_row, receipt_list_cols);

static const struct db_stmt receipts_stmt = {
	"load_receipts_list",
	"SELECT r.dseq AS seq, r.body FROM load_receipts r WHERE r.tenant_id = $1"
	" AND ($2::text IS NULL OR r.thread_id = $2)"
	" AND ($3::bigint IS NULL OR r.created_at >= to_timestamp($3::bigint / 1000.0))"
	" AND ($4::bigint IS NULL OR r.created_at < to_timestamp($4::bigint / 1000.0))"
	" AND ($5::bigint = 0 OR r.dseq < $5::bigint)"
	" ORDER BY r.dseq DESC LIMIT $6::int",
	6, DB_CUSTOM_PLAN, &receipt_list_row};

/* An instant as a parameter: NULL for RG_TIME_NONE. */
static const char *time_param(char buf[DB_INT_SIZE], int64_t ms)
{
	return ms == RG_TIME_NONE ? NULL : db_int_param(buf, ms);
}

enum rg_status db_mem_deliver(struct db_conn *c, const struct db_actor *a,
			      const struct db_delivery *d, size_t *stale, struct db_error *err)
{
	const char *ids[64], *kinds[64], *revs[64], *hashes[64];
	char rev_text[64][DB_INT_SIZE];
	*stale = 0;
	if (d->n > 64)
		return RG_INVALID;
	for (size_t i = 0; i < d->n; i++) {
		ids[i] = d->items[i].record_id;
		kinds[i] = d->items[i].record_kind;
		revs[i] = db_int_param(rev_text[i], d->items[i].revision);
		hashes[i] = d->items[i].content_hash;
	}
	char *id_list = db_array_literal(ids, d->n), *kind_list = db_array_literal(kinds, d->n),
	     *rev_list = db_array_literal(revs, d->n), *hash_list = db_array_literal(hashes, d->n);
	enum rg_status st = RG_NOMEM;
	if (id_list && kind_list && rev_list && hash_list) {
		const char *params[] = {a->tenant_id, a->token_id, a->request_id, d->thread_id,
					d->via, d->receipt_id, d->receipt_json, id_list, kind_list,
					rev_list, hash_list};
		struct db_rows rows;
		st = db_query(c, &deliver_stmt, params, &rows, err);
		if (st == RG_OK)
			*stale = rows.n;
		db_rows_free(&rows);
	}
	free(id_list);
	free(kind_list);
	free(rev_list);
	free(hash_list);
	return st;
}

enum rg_status db_content_reads(struct db_conn *c, const struct db_content_read *reads,
				size_t n, struct db_rows *each, struct db_error *err)
{
	enum { COLS = 5 }; /* the statement's parameters, one array each */
	const char **v = calloc(COLS * (n ? n : 1), sizeof *v);
	char *cols[COLS] = {0};
	for (size_t i = 0; i < n; i++)
		each[i] = (struct db_rows){0};
	bool ok = v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		const struct db_content_read *r = &reads[i];
		const char *row[COLS] = {r->tenant_id, r->record_id, r->token_id, r->via,
					 r->request_id};
		for (size_t k = 0; k < COLS; k++)
			v[k * n + i] = row[k];
	}
	for (size_t k = 0; ok && k < COLS; k++)
		ok = (cols[k] = db_array_literal(v + k * n, n)) != NULL;
	enum rg_status st = RG_NOMEM;
	PGresult *res = NULL;
	if (ok)
		st = db_exec(c, &reads_stmt, (const char *const *)cols, &res, err);
	if (st == RG_OK && PQntuples(res) != (int)n) {
		st = RG_ERROR;
		db_error_set(err, st, NULL, "a content read's rows do not match its reads");
	}
	int hash = st == RG_OK ? PQfnumber(res, "content_hash") : -1;
	for (size_t i = 0; st == RG_OK && i < n; i++)
		if (!PQgetisnull(res, (int)i, hash))
			st = db_rows_fill_one(res, (int)i, &content_row, &each[i], err);
	for (size_t i = 0; st != RG_OK && i < n; i++)
		db_rows_free(&each[i]);
	PQclear(res);
	for (size_t k = 0; k < COLS; k++)
		free(cols[k]);
	free(v);
	return st;
}

enum rg_status db_disclosures_list(struct db_conn *c, const char *tenant,
				   const struct db_disclosure_filter *f, int64_t before,
				   int limit, struct db_rows *rows, struct db_error *err)
{
	char since[DB_INT_SIZE], until[DB_INT_SIZE], b[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {tenant,
				f->record_id,
				f->thread_id,
				f->token_id,
				f->source_id,
				f->include_derivatives ? "true" : "false",
				time_param(since, f->since_ms),
				time_param(until, f->until_ms),
				db_int_param(b, before),
				db_page_limit_param(l, limit)};
	return db_query(c, &list_stmt, params, rows, err);
}

enum rg_status db_disclosure_summary(struct db_conn *c, const char *tenant,
				     const char *source_id, struct db_disclosure_summary *out,
				     struct db_error *err)
{
	const char *params[] = {tenant, source_id};
	struct db_rows rows;
	enum rg_status st = db_query(c, &summary_stmt, params, &rows, err);
	if (st != RG_OK)
		return st;
	if (rows.n != 1) {
		db_rows_free(&rows);
		db_error_set(err, RG_ERROR, NULL, "the disclosure summary answered no row");
		return RG_ERROR;
	}
	*out = *(const struct db_disclosure_summary *)db_rows_at(&rows, 0);
	db_rows_free(&rows);
	return RG_OK;
}

enum rg_status db_receipts_list(struct db_conn *c, const char *tenant, const char *thread_id,
				int64_t since_ms, int64_t until_ms, int64_t before, int limit,
				struct db_rows *rows, struct db_error *err)
{
	char since[DB_INT_SIZE], until[DB_INT_SIZE], b[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {tenant,
				thread_id,
				time_param(since, since_ms),
				time_param(until, until_ms),
				db_int_param(b, before),
				db_page_limit_param(l, limit)};
	return db_query(c, &receipts_stmt, params, rows, err);
}
