/* Audit (openapi/openapi.yaml, /v1/audit and /v1/events): list with filters and cursor,
 * verify the hash chains, open an event stream. */
#include <stdlib.h>
#include <string.h>

#include "core/audit.h"
#include "core/ids.h"
#include "db/audit.h"
#include "db/events.h"
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

struct audit_filters {
	const char *type, *id;
	bool newest;
};

static enum rg_status fetch_audit(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				  int64_t after, int limit, struct db_rows *rows)
{
	const struct audit_filters *f = arg;
	return db_audit_list(c, ctx->tenant_id, f->type, f->id, f->newest, after, limit, rows,
			     &ctx->dberr);
}

static json_t *audit_row(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct core_audit_record *r = row;
	*cursor = r->seq;
	return core_audit_record_json(r);
}

void h_audit_list(struct h_ctx *ctx)
{
	static const char *const orders[] = {"oldest", "newest", NULL};
	struct audit_filters f;
	const char *order;
	if (!read_filters(ctx, &f.type, &f.id) || !h_query_enum(ctx, "order", orders, &order))
		return;
	f.newest = order && strcmp(order, "newest") == 0;
	const struct h_list_query q = {.default_limit = H_PAGE_DEFAULT,
				       .arg = &f,
				       .fetch = fetch_audit,
				       .render = audit_row};
	h_list(ctx, &q);
}

/* Reads ?limit= (1..RG_AUDIT_VERIFY_MAX) and ?after= (a cursor of this tenant and these
 * filters); false after answering 422. */
static bool read_verify_page(struct h_ctx *ctx, const char *type, const char *id, int *limit,
			     int64_t *after)
{
	const char *l = ctx->query(ctx, "limit");
	const char *a = ctx->query(ctx, "after");
	*limit = RG_AUDIT_VERIFY_DEFAULT;
	*after = 0;
	if (l) {
		int64_t v = 0;
		/* leading zeros are fine, as for every other limit (h_page) */
		if (!h_parse_digits(l, &v) || v < 1 || v > RG_AUDIT_VERIFY_MAX) {
			h_invalid(ctx, "limit", "must be an integer between 1 and 100000");
			return false;
		}
		*limit = (int)v;
	}
	if (a && !core_audit_cursor_decode(ctx->tenant_id, type, id, a, after)) {
		h_invalid(ctx, "after",
			  "must be a next_cursor returned by this endpoint for the same filters");
		return false;
	}
	return true;
}

struct verify_page {
	int64_t checked, first_bad_seq, last_seq;
	bool more;
};

/* false when memory ran out (jsonb's text is always JSON). */
static bool check_record(const struct db_audit_check *row, struct verify_page *p)
{
	const struct core_audit_record *r = &row->record;
	const char *expected_prev = row->expected_prev;
	char computed[RG_SHA256_TAGGED_SIZE];
	if (!core_audit_hash(r, row->hash_at, computed))
		return false;
	bool prev_ok = r->prev_hash && expected_prev ? strcmp(r->prev_hash, expected_prev) == 0
						     : r->prev_hash == expected_prev;
	p->last_seq = r->seq;
	p->checked++;
	if ((!prev_ok || strcmp(computed, r->hash) != 0) && p->first_bad_seq == 0)
		p->first_bad_seq = p->last_seq;
	return true;
}

/* Checks up to `limit` records after `after`, in chunks of RG_AUDIT_VERIFY_CHUNK rows: the
 * database reads rows and probes each record's predecessor; hashing happens here. */
static enum rg_status verify_page(struct h_ctx *ctx, struct db_conn *c, const char *type,
				  const char *id, int64_t after, int limit, struct verify_page *p)
{
	*p = (struct verify_page){.last_seq = after};
	for (int remaining = limit; remaining > 0;) {
		int n = remaining < RG_AUDIT_VERIFY_CHUNK ? remaining : RG_AUDIT_VERIFY_CHUNK;
		struct db_rows rows = {0};
		enum rg_status st = db_audit_verify_chunk(c, ctx->tenant_id, type, id, p->last_seq,
							  n, &rows, &ctx->dberr);
		if (st != RG_OK)
			return st;
		for (size_t i = 0; i < rows.n && i < (size_t)n && st == RG_OK; i++)
			st = check_record(db_rows_at(&rows, i), p) ? RG_OK : RG_NOMEM;
		p->more = rows.n > (size_t)n;
		db_rows_free(&rows);
		remaining -= n;
		if (st != RG_OK || !p->more)
			return st;
	}
	return RG_OK;
}

void h_audit_verify(struct h_ctx *ctx)
{
	const char *type, *id;
	int limit;
	int64_t after;
	struct verify_page p;
	struct db_conn *c = NULL;
	if (!read_filters(ctx, &type, &id) || !read_verify_page(ctx, type, id, &limit, &after))
		return;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = verify_page(ctx, c, type, id, after, limit, &p);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	char cursor[RG_AUDIT_CURSOR_SIZE];
	if (p.more)
		core_audit_cursor_encode(ctx->tenant_id, type, id, p.last_seq, cursor);
	h_reply(ctx, 200,
		json_pack("{s:b, s:I, s:o, s:o}", "ok", p.first_bad_seq == 0, "checked",
			  (json_int_t)p.checked, "first_bad_seq",
			  p.first_bad_seq ? json_integer(p.first_bad_seq) : json_null(),
			  "next_cursor", p.more ? json_string(cursor) : json_null()));
}

void h_events(struct h_ctx *ctx)
{
	struct h_events_request req = {.after = -1};
	if (!read_filters(ctx, &req.resource_type, &req.resource_id))
		return;
	/* A reconnecting EventSource sends Last-Event-ID; it wins over the ?after= it was first
	 * opened with. */
	const char *last_id = ctx->header(ctx, "Last-Event-ID");
	const char *after = ctx->query(ctx, "after");
	if (last_id && !h_parse_digits(last_id, &req.after)) {
		h_invalid(ctx, "Last-Event-ID", "must be an event id (a seq) this stream sent");
		return;
	}
	if (!last_id && after && !h_parse_digits(after, &req.after)) {
		h_invalid(ctx, "after", "must be an event id (a seq)");
		return;
	}
	if (req.after < 0) { /* from now: after the newest seq drawn */
		struct db_conn *c;
		int64_t newest = 0;
		if (!h_acquire(ctx, &c))
			return;
		enum rg_status st = db_events_newest_seq(c, &newest, &ctx->dberr);
		h_db_release(ctx, c);
		if (st != RG_OK) {
			h_db_failed(ctx, st);
			return;
		}
		req.after = newest;
	}
	ctx->events_open(ctx, &req);
}
