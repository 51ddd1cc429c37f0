/* Thread memory mode (openapi/openapi.yaml "Threads"): the first revisioned resource. */
#include <string.h>

#include "core/ids.h"
#include "db/threads.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

static const char *const modes[] = {"enabled", "disabled", NULL};

const struct field_spec h_memory_mode_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 0, .max = INT64_MAX,
	 .desc = "The thread's current revision from a read (0 for a "
		 "thread never set); else stale_revision."},
	{.name = "mode", .type = F_ENUM, .required = true, .values = modes,
	 .desc = "enabled lets the thread receive memory; disabled "
		 "makes retrieval select nothing for it."},
	{.name = NULL},
};

static json_t *mode_json(const char *thread_id, const struct db_thread_mode *m)
{
	return json_pack("{s:s, s:s, s:I, s:o}", "thread_id", thread_id, "mode", m->mode,
			 "revision", (json_int_t)m->revision, "effective_at",
			 m->revision > 0 ? h_time(m->effective_ms) : json_null());
}

static void memory_mode_params(const struct h_ctx *ctx, const char **out)
{
	out[0] = ctx->tenant_id;
	out[1] = h_param(ctx, "thread_id");
}

static void memory_mode_answer(struct h_ctx *ctx, enum rg_status st, const struct db_rows *rows)
{
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	struct db_thread_mode m;
	db_thread_mode_of(rows, &m);
	h_etag(ctx, m.revision);
	h_reply(ctx, 200, mode_json(h_param(ctx, "thread_id"), &m));
}

/* GET: one statement (db/threads.c's, pipeable). */
const struct h_read h_memory_mode_read = {&db_thread_mode_get_stmt, memory_mode_params,
					  memory_mode_answer};

/* Answers a refused write (409 or 412) from a fresh read. */
static enum rg_status refuse(struct h_ctx *ctx, struct db_conn *c, const char *thread_id,
			     bool if_match_first)
{
	struct db_thread_mode cur;
	enum rg_status st = db_thread_mode_get(c, ctx->tenant_id, thread_id, &cur, &ctx->dberr);
	if (st == RG_OK)
		h_stale(ctx, cur.revision, if_match_first);
	return st;
}

void h_memory_mode_put(struct h_ctx *ctx)
{
	const char *thread_id = h_param(ctx, "thread_id");
	json_int_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	const char *mode = json_string_value(json_object_get(ctx->body, "mode"));
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	struct db_thread_mode m;
	bool if_match_first;
	bool may_write = h_guard_write(ctx, expected, &if_match_first);

	enum rg_status st = h_db_acquire(ctx, &c);
	if (st != RG_OK)
		goto out;
	/* If-Match and expected_revision must both name the current revision: when they differ
	 * nothing is written; when they agree the compare-and-swap checks both (one round trip). */
	if (!may_write) {
		st = refuse(ctx, c, thread_id, if_match_first);
		goto out;
	}
	st = db_thread_mode_put(c, &actor, thread_id, expected, mode, &m, &ctx->dberr);
	if (st == RG_STALE)
		st = refuse(ctx, c, thread_id, if_match_first);
out:
	h_db_release(ctx, c);
	if (h_answered(ctx, st))
		return;
	h_etag(ctx, m.revision);
	json_t *body = mode_json(thread_id, &m);
	json_object_set_new(body, "previous_mode", json_string(m.previous_mode));
	h_reply(ctx, 200, body);
}
