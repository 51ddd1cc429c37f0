/* Disclosures and load receipts (openapi/openapi.yaml, "Disclosures"; docs/disclosures.md):
 * who received which record's content and when, newest first. Recording is db/'s
 * (db_mem_deliver, by the ledger for the context load); these are the lists. */
#include <stdlib.h>
#include <string.h>

#include "core/timefmt.h"
#include "db/disclosures.h"
#include "handlers/handlers.h"
#include "handlers/memory_internal.h"

#define DISCLOSURES_PAGE_DEFAULT 100
#define DISCLOSURES_PAGE_MAX 1000

/* ?since= and ?until= (RFC 3339), RG_TIME_NONE when absent; false after answering 422. */
static bool read_window(struct h_ctx *ctx, int64_t *since, int64_t *until)
{
	const char *s = ctx->query(ctx, "since"), *u = ctx->query(ctx, "until");
	*since = *until = RG_TIME_NONE;
	if (s && !core_time_parse(s, since)) {
		h_invalid(ctx, "since", "must be an RFC 3339 date-time");
		return false;
	}
	if (u && !core_time_parse(u, until)) {
		h_invalid(ctx, "until", "must be an RFC 3339 date-time");
		return false;
	}
	return true;
}

static enum rg_status fetch_disclosures(struct h_ctx *ctx, struct db_conn *c, const void *arg,
					int64_t after, int limit, struct db_rows *rows)
{
	return db_disclosures_list(c, ctx->tenant_id, arg, after, limit, rows, &ctx->dberr);
}

static json_t *disclosure_row(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct db_disclosure *d = row;
	*cursor = d->seq;
	json_t *o = json_pack("{s:s, s:o, s:s, s:s, s:I, s:s, s:s, s:o, s:s, s:s, s:o, s:s}",
			      "disclosure_id", d->disclosure_id, "at", h_time(d->at_ms),
			      "record_id", d->record_id, "record_kind", d->record_kind,
			      "revision", (json_int_t)d->revision, "delivered_hash",
			      d->delivered_hash, "token_id", d->token_id, "thread_id",
			      opt_str(d->thread_id), "surface", d->surface, "via", d->via,
			      "receipt_id", opt_str(d->receipt_id), "request_id", d->request_id);
	return o;
}

static void list(struct h_ctx *ctx, const struct db_disclosure_filter *f)
{
	const struct h_list_query q = {.default_limit = DISCLOSURES_PAGE_DEFAULT,
				       .max_limit = DISCLOSURES_PAGE_MAX,
				       .arg = f,
				       .fetch = fetch_disclosures,
				       .render = disclosure_row};
	h_list(ctx, &q);
}

void h_disclosures_list(struct h_ctx *ctx)
{
	struct db_disclosure_filter f = {0};
	if (h_query_id(ctx, "record_id", &f.record_id) && h_query_id(ctx, "thread_id", &f.thread_id) &&
	    h_query_id(ctx, "token_id", &f.token_id) && read_window(ctx, &f.since_ms, &f.until_ms))
		list(ctx, &f);
}

void h_source_disclosures(struct h_ctx *ctx)
{
	static const char *const flags[] = {"true", "false", NULL};
	struct db_disclosure_filter f = {.source_id = h_param(ctx, "source_id")};
	const char *all;
	if (!h_query_enum(ctx, "include_derivatives", flags, &all) ||
	    !read_window(ctx, &f.since_ms, &f.until_ms))
		return;
	f.include_derivatives = all && strcmp(all, "true") == 0;
	struct db_rows rows; /* 404 for no such source (an empty list is a source nobody read) */
	if (h_mem_load_record(ctx, "source_id", "source", &rows) == NULL)
		return;
	db_rows_free(&rows);
	list(ctx, &f);
}

struct receipt_filter {
	const char *thread_id;
	int64_t since_ms, until_ms;
};

static enum rg_status fetch_receipts(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				     int64_t after, int limit, struct db_rows *rows)
{
	const struct receipt_filter *f = arg;
	return db_receipts_list(c, ctx->tenant_id, f->thread_id, f->since_ms, f->until_ms, after,
				limit, rows, &ctx->dberr);
}

/* The stored receipt, as GET /v1/context/load-receipts/{receipt_id} answers it. */
static json_t *receipt_row(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct db_receipt_row *r = row;
	*cursor = r->seq;
	json_t *v = json_loads(r->body, 0, NULL);
	return v ? v : json_null();
}

void h_load_receipts_list(struct h_ctx *ctx)
{
	struct receipt_filter f = {0};
	if (!h_query_id(ctx, "thread_id", &f.thread_id) ||
	    !read_window(ctx, &f.since_ms, &f.until_ms))
		return;
	const struct h_list_query q = {.default_limit = DISCLOSURES_PAGE_DEFAULT,
				       .max_limit = DISCLOSURES_PAGE_MAX,
				       .arg = &f,
				       .fetch = fetch_receipts,
				       .render = receipt_row};
	h_list(ctx, &q);
}
