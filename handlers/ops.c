/* Operations (openapi/openapi.yaml "Operations"): no authentication. */
#include <stdatomic.h>

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
