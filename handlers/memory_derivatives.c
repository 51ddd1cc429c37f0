/* Memory derivatives (openapi/openapi.yaml "Derivatives"): create from eligible upstream
 * records, list, get. */
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "handlers/handlers.h"
#include "handlers/memory_internal.h"

static const char *const derivative_kinds[] = {"index", "summary", "cache", "transclusion",
					       "prompt", NULL};

static const struct field_spec upstream_fields[] = {
	{.name = "source_id", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The src_ or drv_ id of a record of your tenant that the content was made from."},
	{.name = "revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX,
	 .desc = "The upstream's revision the content was made from: "
		 "its current one (else stale_revision)."},
	{.name = NULL},
};
static const struct field_spec upstream_item = {
	.type = F_OBJECT, .sub = upstream_fields,
	.desc = "One record the content was made from, at the revision that was read."};

enum rg_problem h_derivative_check(const json_t *body, json_t *errors)
{
	const json_t *from = json_object_get(body, "derived_from");
	for (size_t i = 0; i < json_array_size(from); i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(str(json_array_get(from, i), "source_id"),
				   str(json_array_get(from, j), "source_id")) == 0) {
				char field[64];
				snprintf(field, sizeof field, "derived_from[%zu].source_id", i);
				core_fields_error(errors, field, "must not repeat an upstream");
				return PROBLEM_VALIDATION_FAILED;
			}
	return PROBLEM_NONE;
}

const struct field_spec h_derivative_body[] = {
	{.name = "kind", .type = F_ENUM, .required = true, .values = derivative_kinds,
	 .desc = "How the content was made from its upstreams: an index, summary, cache, "
		 "transclusion or prompt."},
	{.name = "derived_from", .type = F_ARRAY, .required = true, .min = 1,
	 .max = RG_MEM_DERIVED_FROM_MAX, .item = &upstream_item,
	 .desc = "The distinct eligible records the content was made from; "
		 "if any becomes ineligible, so does this."},
	{.name = "content", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_CONTENT_MAX,
	 .desc = "The derived text, kept as sent and searchable like a source's."},
	{.name = "operation_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason, .desc = h_mem_operation_desc},
	{.name = NULL},
};

static json_t *derivative_meta(const struct db_mem_record *r)
{
	json_t *o = json_pack("{s:s, s:o, s:I, s:o, s:s, s:o}", "derivative_id", r->record_id,
			      "kind", opt_str(r->derivative_kind), "revision",
			      (json_int_t)r->revision, "provenance", h_mem_provenance(r->provenance),
			      "content_hash", r->content_hash, "created_at", h_time(r->created_ms));
	h_mem_add_state(o, r);
	return o;
}

static json_t *derivative_row(const void *row, const void *arg, int64_t *cursor)
{
	const struct db_mem_record *r = row;
	(void)arg;
	*cursor = r->seq;
	return derivative_meta(r);
}

void h_derivative_list(struct h_ctx *ctx)
{
	struct h_mem_list_args a = {.filter = {.record_kind = "derivative"}};
	if (!h_query_enum(ctx, "state", h_mem_states, &a.filter.state))
		return;
	const struct h_list_query q = {.default_limit = H_PAGE_DEFAULT, .arg = &a,
				       .fetch = h_mem_fetch_records, .render = derivative_row};
	h_list(ctx, &q);
}

void h_derivative_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	const struct db_mem_record *r = h_mem_load_record(ctx, "derivative_id", "derivative", &rows);
	if (r == NULL)
		return;
	h_etag(ctx, r->revision);
	h_reply(ctx, 200, derivative_meta(r));
	db_rows_free(&rows);
}

/* ---- derivatives ------------------------------------------------------------------ */

void h_derivative_create(struct h_ctx *ctx)
{
	const json_t *from = json_object_get(ctx->body, "derived_from");
	const char *content = str(ctx->body, "content"), *kind = str(ctx->body, "kind");
	const char *ids[RG_MEM_DERIVED_FROM_MAX];
	int64_t revisions[RG_MEM_DERIVED_FROM_MAX];
	char id[RG_ID_SIZE], hash[RG_SHA256_TAGGED_SIZE], op_hash[RG_SHA256_TAGGED_SIZE];
	bool retryable = h_mem_operation_hash(ctx, op_hash);
	size_t n = json_array_size(from);
	for (size_t i = 0; i < n; i++) {
		ids[i] = str(json_array_get(from, i), "source_id");
		revisions[i] = json_integer_value(json_object_get(json_array_get(from, i), "revision"));
	}
	if (!core_new_id("drv_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	core_sha256_tagged(content, strlen(content), hash);
	struct db_actor actor = h_actor(ctx);
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_derive(
		c, &actor, id, kind, ids, revisions, n, content, hash,
		retryable ? str(ctx->body, "operation_id") : NULL, retryable ? op_hash : NULL, &out,
		&ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	if (h_mem_replayed(ctx, &out, derivative_meta) ||
	    h_mem_refused(ctx, &out, false, "upstream record"))
		return;
	/* the derivative as stored, in db/'s provenance text: one renderer with reads and
	 * replays */
	char provenance[RG_MEM_DERIVED_FROM_MAX * (RG_MAX_ID_BYTES + 24)];
	size_t used = 0;
	for (size_t i = 0; i < n && used < sizeof provenance; i++)
		used += (size_t)snprintf(provenance + used, sizeof provenance - used, "%s%s %lld",
					 i ? "," : "", ids[i], (long long)revisions[i]);
	const struct db_mem_record created = {
		.record_id = id, .record_kind = "derivative", .revision = 1, .derivative_kind = kind,
		.reasons_csv = "", .content_hash = hash, .created_ms = out.at_ms,
		.provenance = provenance};
	snprintf(ctx->location, sizeof ctx->location, "/v1/memory/derivatives/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201, derivative_meta(&created));
}
