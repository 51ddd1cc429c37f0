/* Decision-context advisory retrieval (openapi/openapi.yaml "Decision context"): one call to a
 * registered provider, validated against the contract, answered as a stored receipt that keeps
 * no query, scope or content. Every failure fails open (200, status "unavailable", a reason
 * code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "db/providers.h"
#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/providers.h"

static const char *const deliveries[] = {"receipt_only", "local_private_transient", NULL};

const struct field_spec h_dc_retrieve_body[] = {
	{.name = "namespace", .type = F_STRING, .required = true, .min = 1, .max = 120,
	 .desc = "Your namespace for this retrieval, passed to the "
		 "provider and part of each provider_ref."},
	{.name = "scope_ref", .type = F_STRING, .required = true, .min = 1, .max = 2048,
	 .desc = "The provider-neutral scope of the call, such as "
		 "codex://threads/<id>; private, never a grant."},
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = 1000,
	 .desc = "What to retrieve, sent to the provider only; never stored, logged or audited."},
	{.name = "query_summary", .type = F_STRING, .required = true, .min = 1, .max = 220,
	 .check = core_dc_summary_public_safe,
	 .check_reason = "must be public-safe: no file paths, URLs or e-mail addresses",
	 .desc = "A public-safe summary of the query for the receipt: no "
		 "file paths, URLs or e-mail addresses."},
	{.name = "max_results", .type = F_INT, .required = true, .min = 1, .max = RG_DC_MAX_RESULTS,
	 .desc = "At most this many items, the receipt's requested_limit."},
	{.name = "timeout_seconds", .type = F_NUMBER, .required = true, .min = 1, .max = 120,
	 .desc = "Seconds to wait for the provider (fractions "
		 "allowed), capped by its own timeout."},
	{.name = "observed_at", .type = F_TIMESTAMP, .required = true,
	 .desc = "When you observed the situation the query is about, copied to the receipt as "
		 "sent."},
	{.name = "extension_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The provider to ask; absent, the one enabled, doctor-ready decision-context "
		 "provider."},
	{.name = "delivery", .type = F_ENUM, .values = deliveries,
	 .desc = "receipt_only (the default) answers the receipt alone; "
		 "local_private_transient adds the content, never stored.",
	 .dflt = "\"receipt_only\""},
	{.name = NULL},
};

/* The reason code of a failed transport, by outcome. */
static const char *const transport_reasons[] = {
	[H_CALL_HTTP_ERROR] = "provider_http_error", [H_CALL_TIMEOUT] = "provider_timeout",
	[H_CALL_UNREACHABLE] = "provider_unreachable", [H_CALL_OVERSIZE] = "provider_oversize",
};

/* What one provider call came to. */
struct dc_result {
	const char *status;      /* "completed" | "unavailable" */
	char reason[RG_DC_REASON_MAX + 1];
	json_t *items;           /* receipt items */
	json_t *transient;       /* transient items */
	long long latency_ms;
};

static void fail(struct dc_result *r, const char *reason)
{
	r->status = "unavailable";
	snprintf(r->reason, sizeof r->reason, "%s", reason);
}

/* Turns a valid completed answer into receipt and transient items. */
static void take_items(struct dc_result *r, const json_t *answer, const char *extension_id,
		       const char *namespace_)
{
	size_t i;
	const json_t *item;
	char ref[RG_PROVIDER_REF_SIZE];
	json_array_foreach(json_object_get(answer, "items"), i, item) {
		const json_t *summary = json_object_get(item, "summary");
		const json_t *score = json_object_get(item, "score");
		core_dc_provider_ref(extension_id, namespace_,
				     json_string_value(json_object_get(item, "resource_ref")), ref);
		json_array_append_new(r->items, json_pack("{s:s, s:O, s:O}", "provider_ref", ref,
							  "summary", summary, "score", score));
		json_array_append_new(r->transient,
				      json_pack("{s:s, s:O, s:O, s:O}", "provider_ref", ref,
						"summary", summary, "content",
						json_object_get(item, "content"), "score", score));
	}
}

/* Calls the resolved provider (no database connection held) and judges its answer. */
static void dc_call(struct h_ctx *ctx, const struct h_dispatch *d, struct dc_result *r)
{
	const json_t *b = ctx->body;
	const char *namespace_ = json_string_value(json_object_get(b, "namespace"));
	int max_results = (int)json_integer_value(json_object_get(b, "max_results"));
	double secs = core_dc_deadline_seconds(
		json_number_value(json_object_get(b, "timeout_seconds")), d->timeout_seconds);
	char scope[2048 + 32];
	(void)core_dc_scope_normalise(json_string_value(json_object_get(b, "scope_ref")), scope,
				      sizeof scope);
	json_t *req = core_dc_request(namespace_, scope,
				      json_string_value(json_object_get(b, "query")),
				      json_string_value(json_object_get(b, "query_summary")),
				      max_results, secs,
				      json_string_value(json_object_get(b, "observed_at")));
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (body == NULL) {
		fail(r, "provider_unreachable");
		return;
	}
	struct h_call call = {.method = "POST", .url = d->endpoint_url, .body = body,
			      .body_len = strlen(body),
			      .deadline_ms = (unsigned)(secs * 1000.0 + 0.999)};
	struct h_call_result out;
	json_t *answer = NULL;
	h_dispatch_call(ctx, &call, &out, &answer);
	free(body);
	r->latency_ms = out.latency_ms;
	struct h_call_report rep = {.call = "retrieve", .extension_id = d->extension_id,
				    .outcome = "invalid", .latency_ms = out.latency_ms};
	const char *provider_reason = NULL;
	if (out.outcome != H_CALL_OK) {
		fail(r, transport_reasons[out.outcome]);
		rep.outcome = h_call_outcome_labels[out.outcome];
	} else {
		switch (core_dc_validate_response(answer, max_results, &provider_reason, &rep.why)) {
		case CORE_DC_COMPLETED:
			r->status = "completed";
			take_items(r, answer, d->extension_id, namespace_);
			rep.outcome = "ok";
			break;
		case CORE_DC_UNAVAILABLE:
			fail(r, provider_reason);
			rep.outcome = "unavailable";
			break;
		case CORE_DC_INVALID:
			fail(r, "contract_invalid");
			break;
		}
	}
	json_decref(answer);
	rep.reason = r->reason[0] ? r->reason : NULL;
	ctx->provider_observe(ctx, &rep);
}

static json_t *receipt_json(const struct h_ctx *ctx, const char *receipt_id,
			    const struct h_dispatch *d, const char *explicit_id,
			    const struct dc_result *r)
{
	const json_t *b = ctx->body;
	const char *ext = d->named ? d->extension_id : explicit_id;
	return json_pack(
		"{s:s, s:s, s:s, s:s?, s:s?, s:o, s:O, s:O, s:O, s:O, s:I, s:I, s:b, s:O}",
		"schema_version", "context_provider_retrieval_v0", "receipt_id", receipt_id, "status",
		r->status, "reason_code", r->reason[0] ? r->reason : NULL, "extension_id", ext,
		"provider_revision", d->named ? json_integer(d->revision) : json_null(), "namespace",
		json_object_get(b, "namespace"), "query_summary", json_object_get(b, "query_summary"),
		"observed_at", json_object_get(b, "observed_at"), "requested_limit",
		json_object_get(b, "max_results"), "item_count", (json_int_t)json_array_size(r->items),
		"latency_ms", (json_int_t)r->latency_ms, "fail_open", 1, "items", r->items);
}

void h_dc_retrieve(struct h_ctx *ctx)
{
	const char *explicit_id = json_string_value(json_object_get(ctx->body, "extension_id"));
	const char *delivery = json_string_value(json_object_get(ctx->body, "delivery"));
	bool transient = delivery && strcmp(delivery, "local_private_transient") == 0;
	struct dc_result r = {.status = "unavailable", .items = json_array(),
			      .transient = json_array()};
	struct h_dispatch d;
	struct db_conn *c = NULL;
	struct db_rows cands = {0};
	char receipt_id[RG_ID_SIZE];
	char *text = NULL;
	json_t *receipt = NULL;

	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_provider_candidates(c, ctx->tenant_id, RG_PROTO_DC, explicit_id, &cands,
					    &ctx->dberr);
	h_db_release(ctx, c);
	c = NULL;
	if (st != RG_OK)
		goto out;
	h_dispatch_resolve(&cands, RG_PROTO_DC, explicit_id, &d);
	db_rows_free(&cands);
	if (d.reason != NULL)
		fail(&r, d.reason);
	else
		dc_call(ctx, &d, &r);

	if (!core_new_id("rcp_", receipt_id)) {
		st = RG_ERROR;
		goto out;
	}
	receipt = receipt_json(ctx, receipt_id, &d, explicit_id, &r);
	text = receipt ? json_dumps(receipt, JSON_COMPACT) : NULL;
	st = text ? h_db_acquire(ctx, &c) : RG_NOMEM;
	if (st == RG_OK)
		st = db_dc_receipt_put(c, ctx->tenant_id, receipt_id, text, &ctx->dberr);
	h_db_release(ctx, c);
out:
	free(text);
	if (st != RG_OK) {
		json_decref(receipt);
		json_decref(r.items);
		json_decref(r.transient);
		h_db_failed(ctx, st);
		return;
	}
	json_t *answer = json_pack("{s:o}", "receipt", receipt);
	if (transient)
		json_object_set_new(answer, "transient",
				    json_pack("{s:s, s:s, s:b, s:O}", "packet_kind",
					      "local_private_transient", "content_trust",
					      "untrusted_advisory", "content_may_instruct", 0,
					      "items", r.transient));
	json_decref(r.items);
	json_decref(r.transient);
	h_reply(ctx, 200, answer);
}

void h_dc_receipt_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	const struct db_dc_receipt *rc = h_fetch_row(ctx, db_dc_receipt_get,
						     h_param(ctx, "receipt_id"), "No such receipt.",
						     &rows);
	if (rc == NULL)
		return;
	/* the receipt as it was answered, byte for byte */
	ctx->raw = strdup(rc->receipt_json);
	db_rows_free(&rows);
	if (ctx->raw == NULL) {
		h_db_failed(ctx, RG_NOMEM);
		return;
	}
	ctx->raw_len = strlen(ctx->raw);
	ctx->content_type = "application/json; charset=utf-8";
	ctx->status = 200;
}

void h_dc_sync(struct h_ctx *ctx)
{
	h_reply(ctx, 200,
		json_pack("{s:s, s:s, s:b}", "status", "unavailable", "reason_code",
			  "read_only_provider", "external_writes_performed", 0));
}
