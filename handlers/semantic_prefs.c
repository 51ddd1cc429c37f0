/* Semantic preference recall (openapi/openapi.yaml "Semantic preferences"): the per-tenant hook
 * config (revisioned), recall through the registered provider with fail_open / fail_closed, and
 * the stateless application and maintenance receipts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/providers.h"
#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/providers.h"

#define SURFACE_PATTERN "^[a-z][a-z0-9_-]*(\\.[a-z][a-z0-9_-]*)+$"
static const char surface_reason[] = "must match " SURFACE_PATTERN;

/* ---- config -------------------------------------------------------------------------- */

static const char *const policies[] = {"fail_open", "fail_closed", NULL};
static const char *const config_schema[] = {"semantic_preference_hook_config_v0", NULL};

static const struct field_spec surface_fields[] = {
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = 500,
	 .desc = "The query sent to the provider for this surface; never echoed into receipts, "
		 "logs or audit records."},
	{.name = "limit", .type = F_INT, .min = 1, .max = RG_SP_LIMIT_MAX,
	 .desc = "At most this many items per recall; 5 when absent.",
	 .dflt = FIELDS_DEFAULT(RG_SP_LIMIT_DEFAULT)},
	{.name = "failure_policy", .type = F_ENUM, .values = policies,
	 .desc = "fail_open (the default) answers provider_unavailable with no items when the "
		 "provider fails; fail_closed answers 502.",
	 .dflt = "\"fail_open\""},
	{.name = NULL},
};
static const struct field_spec surface = {
	.type = F_OBJECT, .sub = surface_fields,
	.desc = "How one surface recalls: its query, limit and failure policy."};
static const struct field_spec provider_fields[] = {
	{.name = "extension_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The exact provider to ask; absent, the one enabled, doctor-ready "
		 "semantic-preference provider."},
	{.name = NULL},
};
static const struct field_spec config_fields[] = {
	{.name = "schema_version", .type = F_ENUM, .values = config_schema,
	 .desc = "The config's schema, semantic_preference_hook_config_v0; it may be left out."},
	{.name = "enabled", .type = F_BOOL, .required = true,
	 .desc = "false makes every recall answer disabled."},
	{.name = "provider", .type = F_OBJECT, .required = true, .sub = provider_fields,
	 .desc = "The provider recall asks: an extension_id, or {} for the one enabled, "
		 "doctor-ready semantic-preference provider."},
	{.name = "surfaces", .type = F_MAP, .required = true, .max = 64,
	 .check = core_sp_surface_valid, .key_pattern = SURFACE_PATTERN, .item = &surface,
	 .desc = "The surfaces recall serves, keyed by surface id (module.surface)."},
	{.name = NULL},
};

const struct field_spec h_sp_config_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .nullable = true, .min = 1,
	 .max = INT64_MAX,
	 .desc = "The config's current revision, from a read of it, or null for a tenant never "
		 "configured; any other is stale_revision."},
	{.name = "config", .type = F_OBJECT, .required = true, .sub = config_fields,
	 .desc = "The semantic_preference_hook_config_v0 document, stored per tenant as sent."},
	{.name = NULL},
};

/* The stored config (NULL: never configured). */
static json_t *config_json(const struct db_sp_config *cfg)
{
	json_error_t e;
	if (cfg == NULL)
		return json_pack("{s:n, s:n}", "revision", "config");
	return json_pack("{s:I, s:o}", "revision", (json_int_t)cfg->revision, "config",
			 json_loads(cfg->config_json, 0, &e));
}

void h_sp_config_get(struct h_ctx *ctx)
{
	struct db_conn *c = NULL;
	struct db_rows rows = {0};
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_sp_config_get(c, ctx->tenant_id, &rows, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	const struct db_sp_config *cfg = rows.n ? db_rows_at(&rows, 0) : NULL;
	if (cfg)
		h_etag(ctx, cfg->revision);
	h_reply(ctx, 200, config_json(cfg));
	db_rows_free(&rows);
}

void h_sp_config_put(struct h_ctx *ctx)
{
	const json_t *exp = json_object_get(ctx->body, "expected_revision");
	int64_t expected = json_is_integer(exp) ? json_integer_value(exp) : 0;
	json_t *config = json_object_get(ctx->body, "config");
	char *text = json_dumps(config, JSON_COMPACT);
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	struct db_rows rows = {0};
	int64_t revision = 0;
	bool if_match_first;
	enum rg_status st = text ? h_db_acquire(ctx, &c) : RG_NOMEM;
	if (st == RG_OK) {
		st = h_guard_write(ctx, expected, &if_match_first)
			     ? db_sp_config_put(c, &actor, expected, text, &revision, &ctx->dberr)
			     : RG_STALE;
		if (st == RG_STALE) {
			st = db_sp_config_get(c, ctx->tenant_id, &rows, &ctx->dberr);
			const struct db_sp_config *cfg = rows.n ? db_rows_at(&rows, 0) : NULL;
			if (st == RG_OK)
				h_stale_of(ctx, cfg ? &cfg->revision : NULL, if_match_first);
		}
	}
	h_db_release(ctx, c);
	db_rows_free(&rows);
	free(text);
	if (h_answered(ctx, st))
		return;
	h_etag(ctx, revision);
	h_reply(ctx, 200, json_pack("{s:I, s:O}", "revision", (json_int_t)revision, "config", config));
}

/* ---- recall ---------------------------------------------------------------------------- */

static const struct field_spec context_value = {
	.type = F_STRING, .max = 500,
	.desc = "A context value, passed to the provider as sent."};

const struct field_spec h_sp_recall_body[] = {
	{.name = "surface", .type = F_STRING, .required = true, .min = 1, .max = 128,
	 .check = core_sp_surface_valid, .check_reason = surface_reason,
	 .desc = "The surface to recall for, one of the stored config's surfaces."},
	{.name = "context", .type = F_MAP, .max = 32, .check = core_sp_context_key_valid,
	 .key_pattern = "^[a-z][a-z0-9_-]{0,63}$", .item = &context_value,
	 .desc = "Caller context passed to the provider as sent; never stored or logged."},
	{.name = NULL},
};

/* The failure kind of a failed transport, by outcome. */
static const char *const transport_kinds[] = {
	[H_CALL_HTTP_ERROR] = "http_error", [H_CALL_TIMEOUT] = "timeout",
	[H_CALL_UNREACHABLE] = "execution_failed", [H_CALL_OVERSIZE] = "response_too_large",
};

/* What a recall came to. */
struct sp_result {
	const char *failure_kind; /* NULL when completed */
	json_t *items;            /* new */
	bool truncated;
	json_t *guidance;         /* new (json null when none) */
};

static void sp_call(struct h_ctx *ctx, const struct h_dispatch *d, const char *surface_id,
		    const json_t *surface_cfg, struct sp_result *r)
{
	const json_t *limit_v = json_object_get(surface_cfg, "limit");
	int limit = limit_v ? (int)json_integer_value(limit_v) : RG_SP_LIMIT_DEFAULT;
	json_t *req = core_sp_request(surface_id,
				      json_string_value(json_object_get(surface_cfg, "query")),
				      limit, json_object_get(ctx->body, "context"));
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (body == NULL) {
		r->failure_kind = "execution_failed";
		return;
	}
	struct h_call call = {.method = "POST", .url = d->endpoint_url, .body = body,
			      .body_len = strlen(body),
			      .deadline_ms = (unsigned)d->timeout_seconds * 1000};
	struct h_call_result out;
	json_t *answer = NULL;
	h_dispatch_call(ctx, &call, &out, &answer);
	free(body);
	struct h_call_report rep = {.call = "recall", .extension_id = d->extension_id,
				    .outcome = "invalid", .latency_ms = out.latency_ms};
	if (out.outcome != H_CALL_OK) {
		r->failure_kind = transport_kinds[out.outcome];
		rep.outcome = h_call_outcome_labels[out.outcome];
	} else if (answer == NULL) {
		r->failure_kind = "invalid_json";
	} else {
		json_t *items = NULL;
		enum core_sp_failure f =
			core_sp_validate_response(answer, limit, &items, &r->truncated, &rep.why);
		if (f == CORE_SP_OK) {
			json_decref(r->items);
			r->items = items;
			json_decref(r->guidance);
			r->guidance = core_sp_guidance(json_object_get(answer, "corpus_inventory"));
			rep.outcome = "ok";
		} else {
			r->failure_kind = core_sp_failure_name(f);
		}
	}
	json_decref(answer);
	rep.reason = r->failure_kind;
	ctx->provider_observe(ctx, &rep);
}

static void reply_recall(struct h_ctx *ctx, const char *status, struct sp_result *r)
{
	json_t *answer = json_pack("{s:s, s:o, s:b, s:o}", "status", status, "items", r->items,
				   "truncated", r->truncated, "maintenance_guidance", r->guidance);
	if (r->failure_kind)
		json_object_set_new(answer, "failure_kind", json_string(r->failure_kind));
	h_reply(ctx, 200, answer);
}

void h_sp_recall(struct h_ctx *ctx)
{
	const char *surface_id = json_string_value(json_object_get(ctx->body, "surface"));
	struct sp_result r = {.items = json_array(), .guidance = json_null()};
	struct db_conn *c = NULL;
	struct db_rows cfg_rows, cands;
	json_t *config = NULL;
	json_error_t e;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_sp_recall_read(c, ctx->tenant_id, &cfg_rows, &cands, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		json_decref(r.items);
		h_db_failed(ctx, st);
		return;
	}
	const struct db_sp_config *cfg = db_rows_at(&cfg_rows, 0);
	if (!cfg->never)
		config = json_loads(cfg->config_json, 0, &e);
	db_rows_free(&cfg_rows);
	if (config == NULL || !json_is_true(json_object_get(config, "enabled"))) {
		db_rows_free(&cands);
		json_decref(config);
		reply_recall(ctx, "disabled", &r);
		return;
	}
	const json_t *surface_cfg =
		json_object_get(json_object_get(config, "surfaces"), surface_id);
	if (surface_cfg == NULL) {
		db_rows_free(&cands);
		json_decref(config);
		json_decref(r.items);
		h_invalid(ctx, "surface", "must name a surface of the semantic-preference config");
		return;
	}
	struct h_dispatch d;
	h_dispatch_resolve(&cands, RG_PROTO_SP,
			   json_string_value(json_object_get(json_object_get(config, "provider"),
							     "extension_id")),
			   &d);
	db_rows_free(&cands);
	if (d.reason != NULL)
		r.failure_kind = "extension_binding_unavailable";
	else
		sp_call(ctx, &d, surface_id, surface_cfg, &r);

	const char *policy = json_string_value(json_object_get(surface_cfg, "failure_policy"));
	bool closed = policy && strcmp(policy, "fail_closed") == 0;
	json_decref(config);
	if (r.failure_kind == NULL) {
		reply_recall(ctx, "completed", &r);
		return;
	}
	json_decref(r.items);
	json_decref(r.guidance);
	r.items = json_array();
	r.guidance = json_null();
	r.truncated = false;
	if (!closed) {
		reply_recall(ctx, "provider_unavailable", &r);
		return;
	}
	json_decref(r.items);
	h_problem(ctx, PROBLEM_SEMANTIC_PREFERENCE_UNAVAILABLE,
		  "The semantic-preference provider is unavailable and this surface fails closed.",
		  NULL);
	ctx->problem_extra = json_pack("{s:s}", "failure_kind", r.failure_kind);
}

/* ---- stateless receipts ------------------------------------------------------------------ */

static const char *const app_outcomes[] = {"applied", "ignored", "failed", NULL};
static const char *const maint_outcomes[] = {"verified", "no_write_rationale", "failed", NULL};
static const char *const triggers[] = {"explicit_feedback", "source_truth_changed", NULL};
static const struct field_spec ref_item = {.type = F_STRING, .min = 1, .max = RG_SP_TEXT_MAX};
static const struct field_spec corpus_item = {.type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
					      .check = core_id_valid, .check_reason = h_id_reason};

const struct field_spec h_sp_application_body[] = {
	{.name = "surface", .type = F_STRING, .required = true, .min = 1, .max = 128,
	 .check = core_sp_surface_valid, .check_reason = surface_reason,
	 .desc = "The surface the preferences were applied on (module.surface)."},
	{.name = "application_id", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_MAX_ID_BYTES, .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "Your id for this application of preferences, such as one artifact version."},
	{.name = "outcome", .type = F_ENUM, .required = true, .values = app_outcomes,
	 .desc = "Whether the preferences were applied, ignored or failed to apply."},
	{.name = "preference_refs", .type = F_ARRAY, .required = true, .max = 20, .item = &ref_item,
	 .desc = "The preference_refs the outcome concerns; the receipt holds only their digests."},
	{.name = "artifact_ref", .type = F_STRING, .nullable = true, .min = 1, .max = RG_SP_TEXT_MAX,
	 .desc = "A public reference to the artifact, returned as sent; absent or null, none."},
	{.name = NULL},
};

const struct field_spec h_sp_maintenance_body[] = {
	{.name = "trigger", .type = F_ENUM, .required = true, .values = triggers,
	 .desc = "What prompted the maintenance: explicit_feedback or source_truth_changed."},
	{.name = "outcome", .type = F_ENUM, .required = true, .values = maint_outcomes,
	 .desc = "verified (the write, wait and read-back passed), no_write_rationale (no "
		 "durable change was needed) or failed."},
	{.name = "corpus_ids", .type = F_ARRAY, .required = true, .min = 1, .max = RG_SP_INVENTORY_MAX,
	 .item = &corpus_item,
	 .desc = "The corpora assessed, by the corpus_id of the provider's inventory."},
	{.name = "scope_refs", .type = F_ARRAY, .required = true, .max = 20, .item = &ref_item,
	 .desc = "The provider-owned scope references concerned; the receipt holds only their "
		 "digests."},
	{.name = "evidence_ref", .type = F_STRING, .nullable = true, .min = 1, .max = RG_SP_TEXT_MAX,
	 .desc = "A public reference to the evidence, returned as sent; absent or null, none."},
	{.name = NULL},
};

/* A public reference as sent, or null. */
static json_t *public_ref(const json_t *body, const char *name)
{
	const json_t *v = json_object_get(body, name);
	return v ? json_copy((json_t *)v) : json_null();
}

void h_sp_application_receipt(struct h_ctx *ctx)
{
	const json_t *b = ctx->body;
	h_reply(ctx, 200,
		json_pack("{s:s, s:O, s:O, s:O, s:o, s:o}", "schema_version",
			  "semantic_preference_application_receipt_v0", "surface",
			  json_object_get(b, "surface"), "application_id",
			  json_object_get(b, "application_id"), "outcome",
			  json_object_get(b, "outcome"), "preference_ref_digests",
			  core_sp_digests(json_object_get(b, "preference_refs")), "artifact_ref",
			  public_ref(b, "artifact_ref")));
}

void h_sp_maintenance_receipt(struct h_ctx *ctx)
{
	const json_t *b = ctx->body;
	h_reply(ctx, 200,
		json_pack("{s:s, s:O, s:O, s:o, s:o, s:o}", "schema_version",
			  "semantic_preference_maintenance_receipt_v0", "trigger",
			  json_object_get(b, "trigger"), "outcome", json_object_get(b, "outcome"),
			  "corpus_ids", core_sorted_unique(json_object_get(b, "corpus_ids")),
			  "scope_ref_digests", core_sp_digests(json_object_get(b, "scope_refs")),
			  "evidence_ref", public_ref(b, "evidence_ref")));
}
