/* Registered providers (openapi/openapi.yaml "Providers"): register, list, read, PATCH with
 * revisions, delete, and the doctor check bound to the provider's current revision. */
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
	 .max = RG_MAX_ID_BYTES, .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "Your id for the provider, unique in the tenant; retrieval and the "
		 "semantic-preference config name a provider by it."},
	{.name = "protocol", .type = F_ENUM, .required = true, .values = protocols,
	 .desc = "The protocol the provider answers, which fixes the calls it receives and the "
		 "permission it must hold."},
	{.name = "endpoint_url", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason,
	 .desc = "The http or https URL the service POSTs calls to; it may hold a credential, so "
		 "it is never logged or audited."},
	{.name = "doctor_url", .type = F_STRING, .nullable = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason,
	 .desc = "Where the doctor check is sent (a GET); absent or null, endpoint_url followed "
		 "by /doctor."},
	{.name = "timeout_seconds", .type = F_INT, .required = true, .min = 1, .max = 120,
	 .desc = "The provider's deadline in seconds, for the doctor and a recall, and the cap "
		 "of a retrieval's own deadline."},
	{.name = "permissions", .type = F_ARRAY, .required = true, .min = 1, .max = 16,
	 .item = &permission, .unique = true,
	 .desc = "What the provider may be asked, including its protocol's permission; they "
		 "grant nothing to callers."},
	{.name = "enabled", .type = F_BOOL, .required = true,
	 .desc = "Whether calls may go to the provider, which also needs a passing doctor check "
		 "at its current revision."},
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
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX,
	 .desc = "The provider's current revision, from a read of it; any other is refused with "
		 "stale_revision."},
	{.name = "enabled", .type = F_BOOL,
	 .desc = "Whether calls may go to the provider; absent, it keeps its value."},
	{.name = "endpoint_url", .type = F_STRING, .min = 1, .max = RG_PROVIDER_URL_MAX,
	 .check = core_provider_url_valid, .check_reason = url_reason,
	 .desc = "A new URL to POST calls to (a different one clears doctor_ready); absent, it "
		 "keeps its value."},
	{.name = "doctor_url", .type = F_STRING, .nullable = true, .min = 1,
	 .max = RG_PROVIDER_URL_MAX, .check = core_provider_url_valid, .check_reason = url_reason,
	 .desc = "A new doctor URL, or null for endpoint_url followed by /doctor (a different "
		 "one clears doctor_ready); absent, it keeps its value."},
	{.name = "timeout_seconds", .type = F_INT, .min = 1, .max = 120,
	 .desc = "A new deadline in seconds; absent, it keeps its value."},
	{.name = NULL},
};

static const char missing[] = "No such provider.";

static json_t *provider_json(const struct db_provider *p)
{
	json_error_t e;
	bool verified = !p->unverified;
	json_t *perms = json_loads(p->permissions_json, 0, &e);
	return json_pack(
		"{s:s, s:s, s:s, s:o, s:I, s:o, s:b, s:I, s:b, s:o, s:o, s:o}", "extension_id",
		p->extension_id, "protocol", p->protocol, "endpoint_url", p->endpoint_url,
		"doctor_url", p->doctor_url ? json_string(p->doctor_url) : json_null(),
		"timeout_seconds", (json_int_t)p->timeout_seconds, "permissions",
		perms ? perms : json_array(), "enabled", p->enabled, "revision",
		(json_int_t)p->revision, "doctor_ready",
		verified && p->verified_revision == p->revision, "doctor_verified_revision",
		verified ? json_integer(p->verified_revision) : json_null(), "created_at",
		h_time(p->created_ms), "updated_at", h_time(p->updated_ms));
}

/* Answers the provider row of rows: ETag and the JSON. */
static void reply_provider(struct h_ctx *ctx, int status, const struct db_rows *rows)
{
	const struct db_provider *p = db_rows_at(rows, 0);
	h_etag(ctx, p->revision);
	h_reply(ctx, status, provider_json(p));
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
	struct db_rows row = {0};
	enum rg_status st = perms ? h_db_acquire(ctx, &c) : RG_NOMEM;
	if (st == RG_OK)
		st = db_provider_create(c, &actor, &p, &row, &ctx->dberr);
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
	reply_provider(ctx, 201, &row);
	db_rows_free(&row);
}

static enum rg_status fetch_providers(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				      int64_t after, int limit, struct db_rows *rows)
{
	(void)arg;
	return db_provider_list(c, ctx->tenant_id, after, limit, rows, &ctx->dberr);
}

static json_t *provider_item(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct db_provider *p = row;
	*cursor = p->seq;
	return provider_json(p);
}

void h_provider_list(struct h_ctx *ctx)
{
	const struct h_list_query q = {.default_limit = H_PAGE_DEFAULT,
				       .fetch = fetch_providers,
				       .render = provider_item};
	h_list(ctx, &q);
}

void h_provider_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	if (h_fetch_row(ctx, db_provider_get, h_param(ctx, "extension_id"), missing, &rows) ==
	    NULL)
		return;
	reply_provider(ctx, 200, &rows);
	db_rows_free(&rows);
}

/* Answers a refused guarded write from a fresh read: 404 when the provider is gone, else
 * 409 or 412 with its current revision. */
static enum rg_status refuse(struct h_ctx *ctx, struct db_conn *c, const char *id,
			     bool if_match_first)
{
	struct db_rows rows;
	enum rg_status st = db_provider_get(c, ctx->tenant_id, id, &rows, &ctx->dberr);
	if (st != RG_OK)
		return st;
	if (rows.n == 0)
		h_problem(ctx, PROBLEM_NOT_FOUND, missing, NULL);
	else
		h_stale(ctx, ((const struct db_provider *)db_rows_at(&rows, 0))->revision,
			if_match_first);
	db_rows_free(&rows);
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
	struct db_rows row = {0};
	bool if_match_first;
	bool may_write = h_guard_write(ctx, p.expected_revision, &if_match_first);
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK) {
		st = may_write ? db_provider_patch(c, &actor, &p, &row, &ctx->dberr) : RG_STALE;
		if (st == RG_STALE)
			st = refuse(ctx, c, p.extension_id, if_match_first);
	}
	h_db_release(ctx, c);
	if (st != RG_OK)
		h_db_failed(ctx, st);
	else if (row.n > 0)
		reply_provider(ctx, 200, &row);
	db_rows_free(&row);
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

void h_dispatch_resolve(const struct db_rows *rows, const char *protocol,
			const char *explicit_id, struct h_dispatch *out)
{
	size_t n = rows->n;
	struct core_provider_cand *cands = calloc(n > 0 ? n : 1, sizeof *cands);
	const struct db_provider_cand **from = calloc(n > 0 ? n : 1, sizeof *from);
	size_t k = 0, chosen = 0;
	memset(out, 0, sizeof *out);
	if (cands == NULL || from == NULL) {
		out->reason = "provider_missing";
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const struct db_provider_cand *p = db_rows_at(rows, i);
		if (p->extension_id == NULL)
			continue;
		cands[k].extension_id = p->extension_id;
		cands[k].protocol = p->protocol;
		cands[k].enabled = p->enabled;
		cands[k].ready = p->ready;
		from[k++] = p;
	}
	enum core_resolve r = core_provider_resolve(cands, k, protocol, explicit_id, &chosen);
	out->reason = core_resolve_reason(r);
	if (r == CORE_RESOLVE_OK || r == CORE_RESOLVE_DISABLED || r == CORE_RESOLVE_NOT_READY) {
		const struct db_provider_cand *p = NULL;
		if (r == CORE_RESOLVE_OK)
			p = from[chosen];
		else
			for (size_t j = 0; j < k; j++)
				if (strcmp(cands[j].extension_id, explicit_id) == 0)
					p = from[j];
		if (p != NULL) {
			out->named = true;
			snprintf(out->extension_id, sizeof out->extension_id, "%s", p->extension_id);
			snprintf(out->endpoint_url, sizeof out->endpoint_url, "%s", p->endpoint_url);
			out->timeout_seconds = (int)p->timeout_seconds;
			out->revision = p->revision;
		}
	}
done:
	free(cands);
	free(from);
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
	struct db_rows rows;
	const struct db_provider *p = h_fetch_row(ctx, db_provider_get, id, missing, &rows);
	if (p == NULL)
		return;
	int64_t revision = p->revision;
	unsigned timeout = (unsigned)p->timeout_seconds;
	snprintf(protocol, sizeof protocol, "%s", p->protocol);
	/* url holds any stored URL (≤ RG_PROVIDER_URL_MAX) plus "/doctor" */
	(void)core_provider_doctor_url(p->endpoint_url, p->doctor_url, url, sizeof url);
	db_rows_free(&rows);

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
