/* The disclosure ledger (db/disclosures.h). */
#include <stdlib.h>

#include "core/timefmt.h"
#include "db/disclosures.h"
#include "db/pg.h"
#include "db/row.h"

/* An item of a load that is no longer retrievable (memory_deliver's rows). */
struct stale_item {
	int64_t load; /* 1-based */
	const char *record_id;
};
static const struct db_col stale_cols[] = {DB_INT(struct stale_item, load),
					   DB_TEXT(struct stale_item, record_id)};
static const struct db_row_spec stale_row = DB_ROW_SPEC(struct stale_item, stale_cols);

#ifndef RG_BENCH_NO_RECORDING
static const struct db_stmt deliver_stmt = {
	"mem_deliver",
	"SELECT load, record_id FROM memory_deliver($1::text[], $2::text[], $3::text[],"
	" $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[],"
	" $11::bigint[], $12::text[])",
	12, false, &stale_row};
#else /* the bench's control (CMakeLists.txt): each receipt alone, no lock, nothing delivered */
static const struct db_stmt deliver_stmt = {
	"mem_deliver",
	"INSERT INTO load_receipts (tenant_id, token_id, request_id, thread_id, via, receipt_id,"
	" body) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING 0::bigint AS load,"
	" NULL::text AS record_id",
	7, false, &stale_row};
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

/* Parameters of one array each: v holds ncols columns of n texts, one after the other; cols[k]
 * is the array literal of column k (new: free()). false when memory ran out (cols as far as
 * made, the rest NULL). */
static bool array_columns(const char **v, size_t n, size_t ncols, char **cols)
{
	bool ok = true;
	for (size_t k = 0; k < ncols; k++)
		cols[k] = ok ? db_array_literal(v + k * n, n) : NULL;
	for (size_t k = 0; ok && k < ncols; k++)
		ok = cols[k] != NULL;
	return ok;
}

#ifndef RG_BENCH_NO_RECORDING
enum rg_status db_mem_deliver(struct db_conn *c, const struct db_delivery *d, size_t n,
			      size_t *stale, struct db_error *err)
{
	enum { LOADS = 7, ITEMS = 5, COLS = LOADS + ITEMS };
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		total += d[i].n;
		stale[i] = 0;
	}
	size_t rows = total ? total : 1;
	const char **lv = calloc(LOADS * (n ? n : 1), sizeof *lv);
	const char **iv = calloc(ITEMS * rows, sizeof *iv);
	char(*num)[DB_INT_SIZE] = calloc(2 * rows, sizeof *num); /* loads, then revisions */
	char *cols[COLS] = {0};
	bool ok = lv && iv && num;
	for (size_t i = 0, k = 0; ok && i < n; i++) {
		const struct db_delivery *x = &d[i];
		const char *load[LOADS] = {x->actor.tenant_id, x->actor.token_id,
					   x->actor.request_id, x->thread_id, x->via,
					   x->receipt_id, x->receipt_json};
		for (size_t f = 0; f < LOADS; f++)
			lv[f * n + i] = load[f];
		/* load by load: memory_deliver slices each load's items out of the arrays */
		for (size_t j = 0; j < x->n; j++, k++) {
			const struct db_delivery_item *it = &x->items[j];
			const char *item[ITEMS] = {db_int_param(num[k], (int64_t)i + 1),
						   it->record_id, it->record_kind,
						   db_int_param(num[rows + k], it->revision),
						   it->content_hash};
			for (size_t f = 0; f < ITEMS; f++)
				iv[f * total + k] = item[f];
		}
	}
	ok = ok && array_columns(lv, n, LOADS, cols) &&
	     array_columns(iv, total, ITEMS, cols + LOADS);
	enum rg_status st = RG_NOMEM;
	struct db_rows res = {0};
	if (ok)
		st = db_query(c, &deliver_stmt, (const char *const *)cols, &res, err);
	const struct stale_item *s = res.row;
	for (size_t r = 0; st == RG_OK && r < res.n; r++)
		if (s[r].load >= 1 && (size_t)s[r].load <= n)
			stale[s[r].load - 1]++;
	db_rows_free(&res);
	for (size_t k = 0; k < COLS; k++)
		free(cols[k]);
	free(lv);
	free(iv);
	free(num);
	return st;
}
#else
enum rg_status db_mem_deliver(struct db_conn *c, const struct db_delivery *d, size_t n,
			      size_t *stale, struct db_error *err)
{
	enum rg_status st = RG_OK;
	for (size_t i = 0; st == RG_OK && i < n; i++) {
		const struct db_delivery *x = &d[i];
		const char *params[] = {x->actor.tenant_id, x->actor.token_id, x->actor.request_id,
					x->thread_id, x->via, x->receipt_id, x->receipt_json};
		struct db_rows res;
		stale[i] = 0;
		st = db_query(c, &deliver_stmt, params, &res, err);
		db_rows_free(&res);
	}
	return st;
}
#endif

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
	ok = ok && array_columns(v, n, COLS, cols);
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
