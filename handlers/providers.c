/* Registered providers (API.md §6): register, list, read, PATCH with revisions, delete,
 * and the doctor check bound to the provider's current revision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "db/providers.h"
#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/providers.h"

static const char url_reason[] =
	"must be an http:// or https:// URL with a host, without credentials or fragment";
static const char *const protocols[] = {RG_PROTO_DC, RG_PROTO_SP, NULL};
static const struct field_spec permission = {.type = F_STRING, .min = 1, .max = 64};

const struct field_spec h_provider_create_body[] = {
	{.name = "extension_id", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_MAX_ID_BYTES, .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "protocol", .type = F_ENUM, .required = true, .values = protocols},
	{.name = "endpoint_url", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason},
	{.name = "doctor_url", .type = F_STRING, .nullable = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason},
	{.name = "timeout_seconds", .type = F_INT, .required = true, .min = 1, .max = 120},
	{.name = "permissions", .type = F_ARRAY, .required = true, .min = 1, .max = 16,
	 .item = &permission, .unique = true},
	{.name = "enabled", .type = F_BOOL, .required = true},
	{.name = NULL},
};

enum rg_problem h_provider_create_check(const json_t *body, json_t *errors)
{
	const char *need =
		core_provider_permission(json_string_value(json_object_get(body, "protocol")));
	const json_t *perms = json_object_get(body, "permissions");
	size_t i;
	const json_t *p;
	json_array_foreach(perms, i, p) {
		if (need && strcmp(json_string_value(p), need) == 0)
			return PROBLEM_NONE;
	}
	char reason[96];
	snprintf(reason, sizeof reason, "must hold %s for this protocol", need ? need : "?");
	core_fields_error(errors, "permissions", reason);
	return PROBLEM_VALIDATION_FAILED;
}

const struct field_spec h_provider_patch_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX},
	{.name = "enabled", .type = F_BOOL},
	{.name = "endpoint_url", .type = F_STRING, .min = 1, .max = RG_PROVIDER_URL_MAX,
	 .check = core_provider_url_valid, .check_reason = url_reason},
	{.name = "doctor_url", .type = F_STRING, .nullable = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason},
	{.name = "timeout_seconds", .type = F_INT, .min = 1, .max = 120},
	{.name = NULL},
};

static const char missing[] = "No such provider.";

static json_t *provider_json(const PGresult *res, int i)
{
	json_error_t e;
	int64_t revision = db_int(res, i, DB_PROV_REVISION);
	bool verified = !db_null(res, i, DB_PROV_VERIFIED_REVISION);
	int64_t verified_rev = db_int(res, i, DB_PROV_VERIFIED_REVISION);
	json_t *perms = json_loads(db_text(res, i, DB_PROV_PERMISSIONS), 0, &e);
	return json_pack(
		"{s:s, s:s, s:s, s:o, s:I, s:o, s:b, s:I, s:b, s:o, s:o, s:o}", "extension_id",
		db_text(res, i, DB_PROV_EXTENSION_ID), "protocol", db_text(res, i, DB_PROV_PROTOCOL),
		"endpoint_url", db_text(res, i, DB_PROV_ENDPOINT_URL), "doctor_url",
		db_null(res, i, DB_PROV_DOCTOR_URL) ? json_null()
						    : json_string(db_text(res, i, DB_PROV_DOCTOR_URL)),
		"timeout_seconds", (json_int_t)db_int(res, i, DB_PROV_TIMEOUT), "permissions",
		perms ? perms : json_array(), "enabled",
		strcmp(db_text(res, i, DB_PROV_ENABLED), "t") == 0, "revision", (json_int_t)revision,
		"doctor_ready", verified && verified_rev == revision, "doctor_verified_revision",
		verified ? json_integer(verified_rev) : json_null(), "created_at",
		h_time(db_int(res, i, DB_PROV_CREATED_MS)), "updated_at",
		h_time(db_int(res, i, DB_PROV_UPDATED_MS)));
}

/* Answers a provider row: ETag and the JSON. */
static void reply_provider(struct h_ctx *ctx, int status, const PGresult *res)
{
	h_etag(ctx, db_int(res, 0, DB_PROV_REVISION));
	h_reply(ctx, status, provider_json(res, 0));
}

void h_provider_create(struct h_ctx *ctx)
{
	const json_t *b = ctx->body;
	const json_t *doctor = json_object_get(b, "doctor_url");
	char *perms = json_dumps(json_object_get(b, "permissions"), JSON_COMPACT);
	struct db_provider_new p = {
		.extension_id = json_string_value(json_object_get(b, "extension_id")),
		.protocol = json_string_value(json_object_get(b, "protocol")),
		.endpoint_url = json_string_value(json_object_get(b, "endpoint_url")),
		.doctor_url = json_string_value(doctor),
		.timeout_seconds = (int)json_integer_value(json_object_get(b, "timeout_seconds")),
		.permissions_json = perms,
		.enabled = json_is_true(json_object_get(b, "enabled")),
	};
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	PGresult *res = NULL;
	enum rg_status st = perms ? h_db_acquire(ctx, &c) : RG_NOMEM;
	if (st == RG_OK)
		st = db_provider_create(c, &actor, &p, &res, &ctx->dberr);
	h_db_release(ctx, c);
	free(perms);
	if (st == RG_CONFLICT) {
		h_problem(ctx, PROBLEM_ALREADY_EXISTS,
			  "A provider with this extension_id is already registered.", NULL);
		return;
	}
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	snprintf(ctx->location, sizeof ctx->location, "/v1/providers/%s", p.extension_id);
	reply_provider(ctx, 201, res);
	PQclear(res);
}

static enum rg_status fetch_providers(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				      int64_t after, int limit, PGresult **res)
{
	(void)arg;
	return db_provider_list(c, ctx->tenant_id, after, limit, res, &ctx->dberr);
}

static json_t *provider_row(const PGresult *res, int i, const void *arg, int64_t *cursor)
{
	(void)arg;
	*cursor = db_int(res, i, DB_PROV_SEQ);
	return provider_json(res, i);
}

void h_provider_list(struct h_ctx *ctx)
{
	const struct h_list_query q = {H_PAGE_DEFAULT, NULL, fetch_providers, provider_row, NULL, NULL};
	h_list(ctx, &q);
}

void h_provider_get(struct h_ctx *ctx)
{
	PGresult *res = h_fetch_by_id(ctx, db_provider_get, h_param(ctx, "extension_id"), missing);
	if (res == NULL)
		return;
	reply_provider(ctx, 200, res);
	PQclear(res);
}

/* Answers a refused guarded write from a fresh read: 404 when the provider is gone, else
 * 409 or 412 with its current revision. */
static enum rg_status refuse(struct h_ctx *ctx, struct db_conn *c, const char *id,
			     bool if_match_first)
{
	PGresult *res = NULL;
	enum rg_status st = db_provider_get(c, ctx->tenant_id, id, &res, &ctx->dberr);
	if (st != RG_OK)
		return st;
	if (PQntuples(res) == 0)
		h_problem(ctx, PROBLEM_NOT_FOUND, missing, NULL);
	else
		h_stale(ctx, db_int(res, 0, DB_PROV_REVISION), if_match_first);
	PQclear(res);
	return RG_OK;
}

void h_provider_patch(struct h_ctx *ctx)
{
	const json_t *b = ctx->body;
	const json_t *enabled = json_object_get(b, "enabled");
	const json_t *doctor = json_object_get(b, "doctor_url");
	struct db_provider_patch p = {
		.extension_id = h_param(ctx, "extension_id"),
		.expected_revision = json_integer_value(json_object_get(b, "expected_revision")),
		.enabled = enabled ? json_is_true(enabled) : -1,
		.endpoint_url = json_string_value(json_object_get(b, "endpoint_url")),
		.set_doctor_url = doctor != NULL,
		.doctor_url = json_string_value(doctor),
		.timeout_seconds = (int)json_integer_value(json_object_get(b, "timeout_seconds")),
	};
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	PGresult *res = NULL;
	bool if_match_first;
	bool may_write = h_guard_write(ctx, p.expected_revision, &if_match_first);
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK) {
		st = may_write ? db_provider_patch(c, &actor, &p, &res, &ctx->dberr) : RG_STALE;
		if (st == RG_STALE)
			st = refuse(ctx, c, p.extension_id, if_match_first);
	}
	h_db_release(ctx, c);
	if (st != RG_OK)
		h_db_failed(ctx, st);
	else if (res != NULL)
		reply_provider(ctx, 200, res);
	PQclear(res);
}

void h_provider_delete(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "extension_id");
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	int64_t expected = 0;
	enum h_if_match im = h_if_match_revision(ctx, &expected);
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK) {
		st = im == H_IF_MATCH_INVALID ? RG_STALE
					       : db_provider_delete(c, &actor, id, expected,
								    &ctx->dberr);
		if (st == RG_STALE)
			st = refuse(ctx, c, id, true);
	}
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	if (ctx->problem_code == PROBLEM_NONE)
		h_reply(ctx, 204, NULL);
}

/* ---- dispatch helpers (shared with decision_context.c and semantic_prefs.c) ---------- */

void h_dispatch_resolve(const PGresult *res, int col, const char *protocol,
			const char *explicit_id, struct h_dispatch *out)
{
	int n = PQntuples(res);
	struct core_provider_cand *cands = calloc(n > 0 ? (size_t)n : 1, sizeof *cands);
	int *rows = calloc(n > 0 ? (size_t)n : 1, sizeof *rows);
	size_t k = 0, chosen = 0;
	memset(out, 0, sizeof *out);
	if (cands == NULL || rows == NULL) {
		out->reason = "provider_missing";
		goto done;
	}
	for (int i = 0; i < n; i++) {
		if (db_null(res, i, col + DB_CAND_EXTENSION_ID))
			continue;
		cands[k].extension_id = db_text(res, i, col + DB_CAND_EXTENSION_ID);
		cands[k].protocol = db_text(res, i, col + DB_CAND_PROTOCOL);
		cands[k].enabled = strcmp(db_text(res, i, col + DB_CAND_ENABLED), "t") == 0;
		cands[k].ready = strcmp(db_text(res, i, col + DB_CAND_READY), "t") == 0;
		rows[k++] = i;
	}
	enum core_resolve r = core_provider_resolve(cands, k, protocol, explicit_id, &chosen);
	out->reason = core_resolve_reason(r);
	if (r == CORE_RESOLVE_OK || r == CORE_RESOLVE_DISABLED || r == CORE_RESOLVE_NOT_READY) {
		int i = -1;
		if (r == CORE_RESOLVE_OK)
			i = rows[chosen];
		else
			for (size_t j = 0; j < k; j++)
				if (strcmp(cands[j].extension_id, explicit_id) == 0)
					i = rows[j];
		if (i >= 0) {
			out->named = true;
			snprintf(out->extension_id, sizeof out->extension_id, "%s",
				 db_text(res, i, col + DB_CAND_EXTENSION_ID));
			snprintf(out->endpoint_url, sizeof out->endpoint_url, "%s",
				 db_text(res, i, col + DB_CAND_ENDPOINT_URL));
			out->timeout_seconds = (int)db_int(res, i, col + DB_CAND_TIMEOUT);
			out->revision = db_int(res, i, col + DB_CAND_REVISION);
		}
	}
done:
	free(cands);
	free(rows);
}

void h_dispatch_call(struct h_ctx *ctx, const struct h_call *call, struct h_call_result *res,
		     json_t **answer)
{
	*answer = NULL;
	ctx->provider_call(ctx, call, res);
	if (res->outcome == H_CALL_OK)
		*answer = core_json_parse_strict(res->body, res->body_len);
	free(res->body);
	res->body = NULL;
}

const char *const h_call_outcome_labels[] = {
	[H_CALL_OK] = "ok", [H_CALL_HTTP_ERROR] = "http_error", [H_CALL_TIMEOUT] = "timeout",
	[H_CALL_UNREACHABLE] = "unreachable", [H_CALL_OVERSIZE] = "oversize",
};

/* ---- doctor ------------------------------------------------------------------------ */

/* The reason code of a failed doctor transport, by outcome (an oversize answer is not the
 * small JSON object a doctor owes). */
static const char *const doctor_transport_reasons[] = {
	[H_CALL_HTTP_ERROR] = "doctor_http_error", [H_CALL_TIMEOUT] = "doctor_timeout",
	[H_CALL_UNREACHABLE] = "doctor_unreachable", [H_CALL_OVERSIZE] = "doctor_invalid_response",
};
static const char *const doctor_answer_reasons[] = {
	[CORE_DOCTOR_OK] = NULL, [CORE_DOCTOR_INVALID] = "doctor_invalid_response",
	[CORE_DOCTOR_MISMATCH] = "doctor_protocol_mismatch",
};

void h_provider_doctor(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "extension_id");
	char url[RG_PROVIDER_URL_MAX + 16], protocol[64];
	PGresult *res = h_fetch_by_id(ctx, db_provider_get, id, missing);
	if (res == NULL)
		return;
	int64_t revision = db_int(res, 0, DB_PROV_REVISION);
	unsigned timeout = (unsigned)db_int(res, 0, DB_PROV_TIMEOUT);
	snprintf(protocol, sizeof protocol, "%s", db_text(res, 0, DB_PROV_PROTOCOL));
	/* url holds any stored URL (≤ RG_PROVIDER_URL_MAX) plus "/doctor" */
	(void)core_provider_doctor_url(
		db_text(res, 0, DB_PROV_ENDPOINT_URL),
		db_null(res, 0, DB_PROV_DOCTOR_URL) ? NULL : db_text(res, 0, DB_PROV_DOCTOR_URL), url,
		sizeof url);
	PQclear(res);

	/* no database connection is held during the call */
	struct h_call call = {.method = "GET", .url = url, .deadline_ms = timeout * 1000};
	struct h_call_result out;
	json_t *answer = NULL;
	h_dispatch_call(ctx, &call, &out, &answer);
	const char *reason = out.outcome == H_CALL_OK
				     ? doctor_answer_reasons[core_doctor_check(answer, protocol)]
				     : doctor_transport_reasons[out.outcome];
	json_decref(answer);
	struct h_call_report rep = {
		.call = "doctor", .extension_id = id, .reason = reason, .latency_ms = out.latency_ms,
		.outcome = reason == NULL		  ? "ok"
			   : out.outcome == H_CALL_OK ? "invalid"
						      : h_call_outcome_labels[out.outcome]};
	ctx->provider_observe(ctx, &rep);

	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK) {
		st = db_provider_doctor_record(c, &actor, id, revision, reason == NULL, reason,
					       &ctx->dberr);
		/* the provider changed while the doctor ran: that check was for a revision
		 * that is no longer current, so nothing is recorded */
		if (st == RG_STALE)
			st = refuse(ctx, c, id, false);
	}
	h_db_release(ctx, c);
	if (h_answered(ctx, st))
		return;
	h_reply(ctx, 200,
		json_pack("{s:s, s:I, s:b, s:s?}", "extension_id", id, "revision",
			  (json_int_t)revision, "doctor_ready", reason == NULL, "reason_code",
			  reason));
}
