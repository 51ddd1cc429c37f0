/* Operations (openapi/openapi.yaml "Operations"): no authentication. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "db/embedded.h"
#include "db/migrate.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

void h_healthz(struct h_ctx *ctx)
{
	h_reply(ctx, 200, json_pack("{s:s}", "status", "ok"));
}

/* Whether the last check that reached the database found the migrations current. */
static atomic_bool last_ready;

void h_readyz(struct h_ctx *ctx)
{
	if (ctx->shutting_down) {
		h_reply(ctx, 503,
			json_pack("{s:s, s:s}", "status", "not_ready", "reason", "shutting_down"));
		return;
	}
	struct db_conn *c = NULL;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK) {
		st = db_migrations_current(c, &ctx->dberr);
		atomic_store(&last_ready, st == RG_OK);
	} else if (db_error_is_pool_busy(&ctx->dberr) && atomic_load(&last_ready)) {
		/* Every connection is at work: the database answers, it is only busy. Readiness
		 * must not flap under load, or a gateway pulls every instance at once. */
		st = RG_OK;
	}
	h_db_release(ctx, c);
	if (st == RG_OK) {
		h_reply(ctx, 200, json_pack("{s:s}", "status", "ready"));
		return;
	}
	h_reply(ctx, 503,
		json_pack("{s:s, s:s}", "status", "not_ready", "reason",
			  st == RG_STALE ? "migrations_pending" : "database_unavailable"));
}

void h_metrics(struct h_ctx *ctx)
{
	ctx->status = 200;
	ctx->content_type = "text/plain; version=0.0.4; charset=utf-8";
	ctx->raw = ctx->metrics_text(&ctx->raw_len);
	if (ctx->raw == NULL)
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
}

void h_openapi(struct h_ctx *ctx)
{
	ctx->status = 200;
	ctx->content_type = "application/yaml";
	ctx->raw = (char *)rg_openapi_yaml;
	ctx->raw_len = rg_openapi_yaml_len;
	ctx->raw_static = true;
}

/* RFC 9728 protected resource metadata (docs/mcp.md, "OAuth 2.1"): built once by h_oauth_configure, served
 * as it is. NULL while OAuth is off. */
static char *resource_metadata;
static size_t resource_metadata_len;

bool h_oauth_configure(const char *issuer, const char *resource)
{
	free(resource_metadata);
	resource_metadata = NULL;
	if (issuer == NULL || issuer[0] == '\0')
		return true;
	json_t *scopes = json_array();
	for (unsigned i = 0; scopes && i < RG_SCOPE_COUNT; i++)
		json_array_append_new(scopes, json_string(core_scope_name(i)));
	json_t *doc = json_pack("{s:s, s:[s], s:o, s:[s], s:s}", "resource", resource,
				"authorization_servers", issuer, "scopes_supported", scopes,
				"bearer_methods_supported", "header", "resource_name", "recallgate");
	resource_metadata = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	resource_metadata_len = resource_metadata ? strlen(resource_metadata) : 0;
	return resource_metadata != NULL;
}

void h_oauth_resource_metadata(struct h_ctx *ctx)
{
	if (resource_metadata == NULL) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "OAuth is not configured on this server.", NULL);
		return;
	}
	ctx->status = 200;
	ctx->content_type = "application/json";
	ctx->raw = resource_metadata;
	ctx->raw_len = resource_metadata_len;
	ctx->raw_static = true;
}
