/* Tokens (openapi/openapi.yaml "Tokens"): create, list without secrets, delete. */
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "db/tokens.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

static bool scope_known(const char *s)
{
	return core_scope_from_name(s) != RG_SCOPE_NONE;
}

static const struct field_spec scope_item = {
	.type = F_STRING, .min = 1, .max = 64, .check = scope_known,
	.check_reason = "must be a known scope"};

const struct field_spec h_token_create_body[] = {
	{.name = "name", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "A label for the token, such as who will use it (not unique); an assent:grant "
		 "token speaks for the owner of this name."},
	{.name = "scopes", .type = F_ARRAY, .required = true, .min = 1, .max = RG_SCOPE_COUNT,
	 .item = &scope_item, .unique = true,
	 .desc = "What the token may do, each scope opening a family of routes; admin implies "
		 "every other scope."},
	{.name = NULL},
};

/* "a,b" from the body's validated scopes array, into out (≥ 512 bytes). */
static void scopes_csv(const json_t *arr, char *out, size_t size)
{
	size_t i;
	json_t *v;
	out[0] = '\0';
	json_array_foreach(arr, i, v) {
		if (i)
			strncat(out, ",", size - strlen(out) - 1);
		strncat(out, json_string_value(v), size - strlen(out) - 1);
	}
}

static json_t *scopes_json(const char *csv)
{
	json_t *arr = json_array();
	char buf[512];
	snprintf(buf, sizeof buf, "%s", csv);
	for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save))
		json_array_append_new(arr, json_string(s));
	return arr;
}

void h_token_create(struct h_ctx *ctx)
{
	const char *name = json_string_value(json_object_get(ctx->body, "name"));
	char csv[512], token[RG_TOKEN_SIZE], token_id[RG_ID_SIZE], digest[RG_SHA256_HEX_LEN + 1];
	int64_t created_ms = 0;
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;

	scopes_csv(json_object_get(ctx->body, "scopes"), csv, sizeof csv);
	if (!core_new_token(token) || !core_new_id("tok_", token_id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	core_sha256_hex(token, strlen(token), digest);
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_token_create(c, &actor, token_id, name, csv, digest, &created_ms,
				     &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	snprintf(ctx->location, sizeof ctx->location, "/v1/tokens/%s", token_id);
	h_reply(ctx, 201,
		json_pack("{s:s, s:s, s:o, s:s, s:o}", "token_id", token_id, "name", name, "scopes",
			  scopes_json(csv), "token", token, "created_at", h_time(created_ms)));
}

static enum rg_status fetch_tokens(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				   int64_t after, int limit, struct db_rows *rows)
{
	(void)arg;
	return db_token_list(c, ctx->tenant_id, after, limit, rows, &ctx->dberr);
}

static json_t *token_row(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct db_token_item *t = row;
	*cursor = t->seq;
	return json_pack("{s:s, s:s, s:o, s:o}", "token_id", t->token_id, "name", t->name, "scopes",
			 scopes_json(t->scopes_csv), "created_at", h_time(t->created_ms));
}

void h_token_list(struct h_ctx *ctx)
{
	const struct h_list_query q = {.default_limit = H_PAGE_DEFAULT,
				       .fetch = fetch_tokens,
				       .render = token_row};
	h_list(ctx, &q);
}

void h_token_delete(struct h_ctx *ctx)
{
	char digest[RG_SHA256_HEX_LEN + 1];
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_token_delete(c, &actor, h_param(ctx, "token_id"), digest, &ctx->dberr);
	h_db_release(ctx, c);
	if (st == RG_NOT_FOUND) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such token.", NULL);
		return;
	}
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	ctx->token_deleted(digest);
	h_reply(ctx, 204, NULL);
}
