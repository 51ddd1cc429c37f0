/* Memory retrieval (openapi/openapi.yaml "Retrieval"): search, its explanation, context
 * assembly and the load receipts it stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "core/timefmt.h"
#include "db/disclosures.h"
#include "handlers/handlers.h"
#include "handlers/memory_internal.h"

static const char *const record_kinds[] = {"source", "derivative", NULL};

static const struct field_spec kind_item = {.type = F_ENUM, .values = record_kinds};

/* One sentence each for a reader (openapi.yaml's property descriptions equal them). */
#define QUERY_DESC                                                                                 \
	"Full-text query: every word must occur (stemmed); \"phrases\", or and -word refine it; "  \
	"never stored."
#define THREAD_DESC                                                                                \
	"The thread receiving the memory (a disabled one gets none); not a filter on where "       \
	"records came from."

/* What search and explain both take. */
#define MATCH_FIELDS                                                                               \
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_QUERY_MAX,   \
	 .desc = QUERY_DESC},                                                                      \
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,                  \
	 .check = core_id_valid, .check_reason = h_id_reason, .desc = THREAD_DESC},                \
	{.name = "limit", .type = F_INT, .min = 1, .max = RG_MEM_SEARCH_LIMIT_MAX,                 \
	 .desc = "How many eligible records to select, best match first; 10 when absent.",         \
	 .dflt = FIELDS_DEFAULT(RG_MEM_SEARCH_LIMIT_DEFAULT)},                                     \
	{.name = "kinds", .type = F_ARRAY, .min = 1, .max = 2, .item = &kind_item, .unique = true, \
	 .desc = "The record kinds to consider: source, derivative or both; both when absent."}

const struct field_spec h_search_body[] = {MATCH_FIELDS, {.name = NULL}};
const struct field_spec h_explain_body[] = {
	MATCH_FIELDS,
	{.name = "as_of", .type = F_TIMESTAMP,
	 .desc = "A past instant: answer with the records and state "
		 "in force then; absent, for now."},
	{.name = NULL},
};

const struct field_spec h_context_body[] = {
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_QUERY_MAX,
	 .desc = QUERY_DESC},
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason, .desc = THREAD_DESC},
	{.name = "max_items", .type = F_INT, .min = 1, .max = RG_MEM_CONTEXT_ITEMS_MAX,
	 .desc = "How many of the best eligible matches to select, in rank order; 8 when absent.",
	 .dflt = FIELDS_DEFAULT(RG_MEM_CONTEXT_ITEMS_DEFAULT)},
	{.name = "budget_tokens", .type = F_INT, .min = 1, .max = RG_MEM_BUDGET_MAX,
	 .desc = "Token budget for the items, each costing ceil(bytes / 4); an item "
		 "that does not fit is suppressed; 4000 when absent.",
	 .dflt = FIELDS_DEFAULT(RG_MEM_BUDGET_DEFAULT)},
	{.name = NULL},
};

/* ---- retrieval -------------------------------------------------------------------- */

/* "{source,derivative}" from the body's kinds (both when absent). */
static void kinds_literal(const json_t *body, char *out, size_t size)
{
	const json_t *kinds = json_object_get(body, "kinds");
	size_t i;
	json_t *k;
	if (kinds == NULL) {
		snprintf(out, size, "{source,derivative}");
		return;
	}
	snprintf(out, size, "{");
	json_array_foreach(kinds, i, k) {
		strncat(out, i ? "," : "", size - strlen(out) - 1);
		strncat(out, json_string_value(k), size - strlen(out) - 1);
	}
	strncat(out, "}", size - strlen(out) - 1);
}

static int int_or(const json_t *body, const char *name, int def)
{
	const json_t *v = json_object_get(body, name);
	return v ? (int)json_integer_value(v) : def;
}

void h_memory_search(struct h_ctx *ctx)
{
	char kinds[40];
	struct db_rows rows;
	struct db_conn *c = NULL;
	kinds_literal(ctx->body, kinds, sizeof kinds);
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_search(c, ctx->tenant_id, str(ctx->body, "query"),
					  str(ctx->body, "thread_id"), kinds,
					  int_or(ctx->body, "limit", RG_MEM_SEARCH_LIMIT_DEFAULT), &rows,
					  &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	const struct db_mem_match *m = rows.row;
	json_t *items = json_array();
	for (size_t i = 0; i < rows.n; i++)
		json_array_append_new(items,
				      json_pack("{s:s, s:s, s:I, s:f, s:s}", "record_id", m[i].record_id,
						"record_kind", m[i].record_kind, "revision",
						(json_int_t)m[i].revision, "score", m[i].score,
						"content_hash", m[i].content_hash));
	db_rows_free(&rows);
	h_reply(ctx, 200, json_pack("{s:o}", "items", items));
}

void h_memory_explain(struct h_ctx *ctx)
{
	char kinds[40], qhash[RG_SHA256_TAGGED_SIZE];
	struct db_rows rows;
	struct db_conn *c = NULL;
	const char *query = str(ctx->body, "query");
	int limit = int_or(ctx->body, "limit", RG_MEM_SEARCH_LIMIT_DEFAULT);
	int64_t as_of = RG_TIME_NONE;
	kinds_literal(ctx->body, kinds, sizeof kinds);
	if (!h_as_of(ctx, str(ctx->body, "as_of"), &as_of) || !h_acquire(ctx, &c))
		return;
	const char *thread = str(ctx->body, "thread_id");
	enum rg_status st =
		as_of == RG_TIME_NONE
			? db_mem_explain(c, ctx->tenant_id, query, thread, kinds,
					 RG_MEM_EXPLAIN_MAX + 1, &rows, &ctx->dberr)
			: db_mem_explain_as_of(c, ctx->tenant_id, query, thread, kinds,
					       RG_MEM_EXPLAIN_MAX + 1, as_of, &rows, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	/* Rows come eligible first, best first: the first `limit` eligible ones are what search
	 * selects. Up to 500 items: written directly rather than built as a jansson tree. */
	struct jsonw w;
	const struct db_mem_explained *e = rows.row;
	int eligible_seen = 0;
	core_sha256_tagged(query, strlen(query), qhash);
	jsonw_init(&w);
	jsonw_raw(&w, "{\"query_sha256\":");
	jsonw_str(&w, qhash);
	if (as_of != RG_TIME_NONE) {
		jsonw_raw(&w, ",\"as_of\":");
		jsonw_time(&w, as_of);
	}
	jsonw_raw(&w, ",\"items\":[");
	for (size_t i = 0; i < rows.n && i < RG_MEM_EXPLAIN_MAX; i++) {
		bool is_source = strcmp(e[i].record_kind, "source") == 0;
		const char *reasons[RG_MEM_REASONS_MAX];
		size_t nr = core_memory_reason_list(e[i].reasons_csv ? e[i].reasons_csv : "",
						    is_source, e[i].assent_expired, reasons);
		/* rank: 1-based among the eligible matches, best first (null when ineligible) */
		int rank = nr == 0 ? ++eligible_seen : 0;
		bool within = rank > 0 && rank <= limit;
		const char *reason =
			core_memory_pick_reason(e[i].thread_disabled, nr ? reasons[0] : NULL, within);
		jsonw_raw(&w, i ? ",{\"record_id\":" : "{\"record_id\":");
		jsonw_str(&w, e[i].record_id);
		jsonw_raw(&w, ",\"record_kind\":");
		jsonw_str(&w, e[i].record_kind);
		jsonw_raw(&w, ",\"revision\":");
		jsonw_int(&w, e[i].revision);
		jsonw_raw(&w, ",\"classification\":");
		jsonw_str(&w, e[i].classification);
		jsonw_raw(&w, strcmp(reason, "selected") == 0 ? ",\"included\":true,\"reason\":"
							       : ",\"included\":false,\"reason\":");
		jsonw_str(&w, reason);
		jsonw_raw(&w, ",\"rank\":");
		if (rank)
			jsonw_int(&w, rank);
		else
			jsonw_raw(&w, "null");
		jsonw_raw(&w, ",\"ineligible_reasons\":[");
		for (size_t k = 0; k < nr; k++) {
			jsonw_raw(&w, k ? ",\"" : "\"");
			jsonw_raw(&w, reasons[k]); /* fixed reason names: nothing to escape */
			jsonw_raw(&w, "\"");
		}
		jsonw_raw(&w, "]}");
	}
	jsonw_raw(&w, rows.n > RG_MEM_EXPLAIN_MAX ? "],\"truncated\":true}"
						  : "],\"truncated\":false}");
	db_rows_free(&rows);
	h_reply_jsonw(ctx, 200, &w);
}

/* A load is matched, assembled and recorded (h_ctx.deliver); when a delivered record stopped
 * being retrievable in between, it is matched again, at most this many times. */
#define CONTEXT_ATTEMPTS 4

/* One attempt: match, assemble, record. RG_OK with *stale > 0: match again. */
static enum rg_status context_attempt(struct h_ctx *ctx, const char *receipt_id,
				      json_t **items, json_t **receipt, size_t *stale)
{
	struct mem_candidate cand[RG_MEM_CANDIDATES_MAX];
	struct db_delivery_item delivered[RG_MEM_CONTEXT_ITEMS_MAX];
	struct db_rows rows = {0};
	struct db_conn *c;
	char *stored = NULL;
	const char *thread = str(ctx->body, "thread_id");
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st != RG_OK)
		return st;
	st = db_mem_context(c, ctx->tenant_id, str(ctx->body, "query"), thread,
			    RG_MEM_CANDIDATES_MAX, &rows, &ctx->dberr);
	h_db_release(ctx, c); /* the ledger records the load on a connection of its own */
	if (st != RG_OK)
		return st;
	const struct db_mem_match *m = rows.row;
	for (size_t i = 0; i < rows.n; i++) {
		cand[i].record_id = m[i].record_id;
		cand[i].revision = m[i].revision;
		cand[i].content_hash = m[i].content_hash;
		cand[i].content = m[i].content ? m[i].content : ""; /* a pointer never matches */
	}
	*receipt = core_memory_assemble(cand, rows.n,
					int_or(ctx->body, "max_items", RG_MEM_CONTEXT_ITEMS_DEFAULT),
					int_or(ctx->body, "budget_tokens", RG_MEM_BUDGET_DEFAULT),
					receipt_id, items);
	/* The delivered items and the receipt's loaded inputs come in the same order. */
	const json_t *loaded = json_object_get(*receipt, "loaded_inputs");
	size_t n = json_array_size(*items);
	for (size_t i = 0; i < n && i < RG_MEM_CONTEXT_ITEMS_MAX; i++) {
		const json_t *item = json_array_get(*items, i);
		const char *id = str(item, "record_id"), *kind = "source";
		for (size_t k = 0; k < rows.n; k++)
			if (strcmp(m[k].record_id, id) == 0)
				kind = m[k].record_kind;
		delivered[i] = (struct db_delivery_item){
			.record_id = id,
			.record_kind = kind,
			.revision = json_integer_value(json_object_get(item, "revision")),
			.content_hash = str(json_array_get(loaded, i), "delivered_hash"),
		};
	}
	stored = json_dumps(*receipt, JSON_COMPACT);
	const struct db_delivery d = {.actor = h_actor(ctx), .receipt_id = receipt_id,
				      .receipt_json = stored, .thread_id = thread,
				      .via = ctx->via, .items = delivered, .n = n};
	st = stored ? ctx->deliver(ctx, &d, stale) : RG_NOMEM;
	free(stored);
	db_rows_free(&rows);
	return st;
}

void h_memory_context(struct h_ctx *ctx)
{
	char receipt_id[RG_ID_SIZE];
	json_t *items = NULL, *receipt = NULL;
	size_t stale = 1;
	enum rg_status st = RG_OK;
	if (!core_new_id("lrc_", receipt_id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	for (int attempt = 0; st == RG_OK && stale > 0 && attempt < CONTEXT_ATTEMPTS; attempt++) {
		json_decref(items);
		json_decref(receipt);
		items = receipt = NULL;
		st = context_attempt(ctx, receipt_id, &items, &receipt, &stale);
	}
	if (st == RG_OK && stale > 0) /* memory kept changing under every attempt */
		st = RG_RETRY;
	if (st != RG_OK) {
		json_decref(items);
		json_decref(receipt);
		h_db_failed(ctx, st);
		return;
	}
	h_reply(ctx, 200, json_pack("{s:o, s:o}", "items", items, "load_receipt", receipt));
}

void h_load_receipt_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	const struct db_receipt *r = h_fetch_row(ctx, db_receipt_get, h_param(ctx, "receipt_id"),
						 "No such load receipt.", &rows);
	if (r == NULL)
		return;
	/* The stored bytes, unchanged. */
	struct jsonw w;
	jsonw_init(&w);
	jsonw_raw(&w, r->body);
	h_reply_jsonw(ctx, 200, &w);
	db_rows_free(&rows);
}
