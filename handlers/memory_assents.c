/* Assents (openapi/openapi.yaml "Assents"): the owner's grant that admits a foreign source,
 * read and revoked. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "core/timefmt.h"
#include "handlers/handlers.h"
#include "handlers/memory_internal.h"

const struct field_spec h_assent_body[] = {
	{.name = "owner", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The owner granting assent, which must be the token's name unless the token has "
		 "admin."},
	{.name = "source_identity", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = h_mem_sha_reason,
	 .desc = "The source_identity the assent admits, as a refused foreign source create "
		 "reports it."},
	{.name = "expires_at", .type = F_TIMESTAMP, .required = true,
	 .desc = "When the assent ends, a future instant in UTC ending in Z; its sources then "
		 "become ineligible."},
	{.name = NULL},
};

enum rg_problem h_assent_check(const json_t *body, json_t *errors)
{
	const char *expires = str(body, "expires_at");
	int64_t ms = 0;
	size_t n = strlen(expires);
	const char *reason = NULL;
	if (!core_time_parse(expires, &ms) || (expires[n - 1] != 'Z' && expires[n - 1] != 'z'))
		reason = FIELDS_REASON_UTC;
	else if (ms <= h_now_ms())
		reason = FIELDS_REASON_FUTURE;
	if (reason == NULL)
		return PROBLEM_NONE;
	core_fields_error(errors, "expires_at", reason);
	return PROBLEM_VALIDATION_FAILED;
}

const struct field_spec h_assent_revoke_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX,
	 .desc = "The assent's current revision, from a read of it (1 after the grant); any "
		 "other is refused with stale_revision."},
	{.name = NULL},
};

/* ---- assents ---------------------------------------------------------------------- */

static json_t *assent_json(const struct db_assent *a)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:I, s:o, s:o}", "assent_id", a->assent_id, "owner",
			 a->owner, "source_identity", a->source_identity, "expires_at",
			 h_time(a->expires_ms), "revision", (json_int_t)a->revision, "revoked_at",
			 a->not_revoked ? json_null() : h_time(a->revoked_ms), "created_at",
			 h_time(a->created_ms));
}

/* The owner a token may speak for: any (NULL) with admin, else its own name. */
static const char *speaks_for(const struct h_ctx *ctx)
{
	return (ctx->scopes & RG_SCOPE_ADMIN) ? NULL : ctx->token_name;
}

/* A non-admin token sees only the assents of the owner it speaks for. */
static bool may_see(const struct h_ctx *ctx, const struct db_assent *a)
{
	return speaks_for(ctx) == NULL || strcmp(speaks_for(ctx), a->owner) == 0;
}

void h_assent_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	const struct db_assent *a =
		h_fetch_row(ctx, db_assent_get, h_param(ctx, "assent_id"), "No such assent.", &rows);
	if (a == NULL)
		return;
	if (!may_see(ctx, a)) {
		h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only read its own assents.", NULL);
	} else {
		h_etag(ctx, a->revision);
		h_reply(ctx, 200, assent_json(a));
	}
	db_rows_free(&rows);
}

void h_assent_grant(struct h_ctx *ctx)
{
	const char *owner = str(ctx->body, "owner"), *expires = str(ctx->body, "expires_at");
	const char *identity = str(ctx->body, "source_identity");
	int64_t expires_ms = 0;
	char id[RG_ID_SIZE];
	if (!core_time_parse(expires, &expires_ms)) /* checked by h_assent_check */
		return;
	if (speaks_for(ctx) && strcmp(speaks_for(ctx), owner) != 0) {
		h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only grant assent for its own name.",
			  NULL);
		return;
	}
	if (!core_new_id("asn_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	struct db_actor actor = h_actor(ctx);
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_assent_grant(c, &actor, id, owner, identity, expires_ms, &out,
					    &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	snprintf(ctx->location, sizeof ctx->location, "/v1/assents/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201,
		json_pack("{s:s, s:s, s:s, s:o, s:i, s:n, s:o}", "assent_id", id, "owner", owner,
			  "source_identity", identity, "expires_at", h_time(expires_ms), "revision", 1,
			  "revoked_at", "created_at", h_time(out.at_ms)));
}

void h_assent_revoke(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "assent_id");
	int64_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	struct db_rows rows = {0};
	bool if_match_first;
	if (!h_acquire(ctx, &c))
		return;
	struct db_actor actor = h_actor(ctx);
	enum rg_status st;
	if (!h_guard_write(ctx, expected, &if_match_first)) {
		/* Answer from the current revision without writing. */
		st = db_assent_get(c, ctx->tenant_id, id, &rows, &ctx->dberr);
		const struct db_assent *a = st == RG_OK && rows.n == 1 ? rows.row : NULL;
		if (a && !may_see(ctx, a))
			h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only revoke its own assents.",
				  NULL);
		else if (a)
			h_stale(ctx, a->revision, if_match_first);
		else if (st == RG_OK)
			h_problem(ctx, PROBLEM_NOT_FOUND, "No such assent.", NULL);
		goto out;
	}
	st = db_assent_revoke(c, &actor, id, expected, speaks_for(ctx), &out, &ctx->dberr);
	if (st != RG_OK)
		goto out;
	if (h_mem_refused(ctx, &out, if_match_first, "assent"))
		goto out;
	st = db_assent_get(c, ctx->tenant_id, id, &rows, &ctx->dberr);
	if (st == RG_OK && rows.n == 1) {
		h_etag(ctx, out.revision);
		h_reply(ctx, 200, assent_json(rows.row));
	} else if (st == RG_OK) { /* gone since its revocation */
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such assent.", NULL);
	}
out:
	h_db_release(ctx, c);
	db_rows_free(&rows);
	if (st != RG_OK)
		h_db_failed(ctx, st);
}
