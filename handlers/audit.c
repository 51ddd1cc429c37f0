/* Audit (API.md §10): list with filters and cursor, verify the hash chains. */
#include <string.h>

#include "core/ids.h"
#include "db/audit.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

static const char *const resource_types[] = {
	"token", "thread", "source", "derivative", "assent", "preference_journal", "provider",
	"semantic_preference_config", "workspace", "envelope", NULL,
};

/* Resource ids are ids of this service or the caller's id pattern, joined by '/' for
 * composite resources ("<goal_id>/<agent_id>"). */
static bool resource_id_valid(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (n == 257 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
				  c == '/' || c == '-'))
			return false;
	}
	return n > 0;
}

/* Reads ?resource_type= and ?resource_id=; false after answering 422. */
static bool read_filters(struct h_ctx *ctx, const char **type, const char **id)
{
	*type = ctx->query(ctx, "resource_type");
	*id = ctx->query(ctx, "resource_id");
	if (*type) {
		bool known = false;
		for (const char *const *t = resource_types; *t; t++)
			known = known || strcmp(*t, *type) == 0;
		if (!known) {
			h_invalid(ctx, "resource_type", "must be a known resource type");
			return false;
		}
	}
	if (*id && !resource_id_valid(*id)) {
		h_invalid(ctx, "resource_id", "must match ^[A-Za-z0-9._:/-]{1,257}$");
		return false;
	}
	return true;
}

static json_t *opt_int(const PGresult *res, int row, int col)
{
	return db_null(res, row, col) ? json_null() : json_integer(db_int(res, row, col));
}

static json_t *opt_text(const PGresult *res, int row, int col)
{
	const char *s = db_text(res, row, col);
	return s ? json_string(s) : json_null();
}

struct audit_filters {
	const char *type, *id;
};

static enum rg_status fetch_audit(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				  int64_t after, int limit, PGresult **res)
{
	const struct audit_filters *f = arg;
	return db_audit_list(c, ctx->tenant_id, f->type, f->id, after, limit, res, &ctx->dberr);
}

static json_t *audit_row(const PGresult *res, int i, const void *arg, int64_t *cursor)
{
	(void)arg;
	json_t *details = json_loads(PQgetvalue(res, i, 9), 0, NULL);
	*cursor = db_int(res, i, 0);
	return json_pack("{s:I, s:o, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "seq",
			 (json_int_t)*cursor, "at", h_time(db_int(res, i, 1)), "actor_token_id",
			 opt_text(res, i, 2), "action", PQgetvalue(res, i, 3), "resource_type",
			 PQgetvalue(res, i, 4), "resource_id", PQgetvalue(res, i, 5),
			 "revision_before", opt_int(res, i, 6), "revision_after", opt_int(res, i, 7),
			 "request_id", opt_text(res, i, 8), "details",
			 details ? details : json_object(), "prev_hash", opt_text(res, i, 10), "hash",
			 PQgetvalue(res, i, 11));
}

void h_audit_list(struct h_ctx *ctx)
{
	struct audit_filters f;
	if (!read_filters(ctx, &f.type, &f.id))
		return;
	const struct h_list_query q = {H_PAGE_DEFAULT, &f, fetch_audit, audit_row};
	h_list(ctx, &q);
}

void h_audit_verify(struct h_ctx *ctx)
{
	const char *type, *id;
	struct db_audit_verdict v;
	struct db_conn *c = NULL;
	if (!read_filters(ctx, &type, &id))
		return;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_audit_verify(c, ctx->tenant_id, type, id, &v, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	h_reply(ctx, 200,
		json_pack("{s:b, s:I, s:o}", "ok", v.first_bad_seq == 0, "checked",
			  (json_int_t)v.checked, "first_bad_seq",
			  v.first_bad_seq ? json_integer(v.first_bad_seq) : json_null()));
}
