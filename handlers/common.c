#include "handlers/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "core/ids.h"
#include "core/problem.h"
#include "core/timefmt.h"
#include "db/standby.h"

const char h_id_reason[] = "must match " RG_ID_PATTERN;

void h_reply(struct h_ctx *ctx, int status, json_t *body)
{
	ctx->status = status;
	json_decref(ctx->reply);
	ctx->reply = body;
}

void h_reply_jsonw(struct h_ctx *ctx, int status, struct jsonw *w)
{
	ctx->raw = jsonw_finish(w, &ctx->raw_len);
	if (ctx->raw == NULL) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	ctx->status = status;
	ctx->content_type = "application/json; charset=utf-8";
}

void h_problem(struct h_ctx *ctx, enum rg_problem code, const char *detail, json_t *errors)
{
	ctx->status = core_problem_status(code);
	ctx->problem_code = code;
	snprintf(ctx->problem_detail, sizeof ctx->problem_detail, "%s",
		 detail ? detail : core_problem_default_detail(code));
	json_decref(ctx->problem_errors);
	ctx->problem_errors = errors;
}

void h_invalid(struct h_ctx *ctx, const char *field, const char *reason)
{
	json_t *errors = json_array();
	core_fields_error(errors, field, reason);
	h_problem(ctx, PROBLEM_VALIDATION_FAILED, NULL, errors);
}

void h_db_failed(struct h_ctx *ctx, enum rg_status st)
{
	/* A deadlock or serialization failure changed nothing: the caller may retry. */
	if (st == RG_RETRY)
		h_problem(ctx, PROBLEM_DATABASE_UNAVAILABLE,
			  "The database could not complete the request now; retry.", NULL);
	else if (st == RG_TIMEOUT && ctx->dberr.shutting_down) /* cancelled: nothing committed */
		h_problem(ctx, PROBLEM_SHUTTING_DOWN, NULL, NULL);
	else if (st == RG_TIMEOUT)
		h_problem(ctx, PROBLEM_QUERY_TIMEOUT, NULL, NULL);
	else if (st == RG_UNAVAILABLE)
		h_problem(ctx, PROBLEM_DATABASE_UNAVAILABLE,
			  "The database is unavailable; retry later.", NULL);
	else
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
}

enum rg_status h_db_acquire(struct h_ctx *ctx, struct db_conn **c)
{
	if (ctx->tx) {
		ctx->wrote = true;
		*c = ctx->tx;
		return RG_OK;
	}
	if (ctx->read_pool)
		return db_acquire(ctx->read_pool, c, &ctx->dberr);
	if (ctx->standbys && h_route_reads(ctx->route)) {
		db_release(ctx->pool, ctx->held); /* authentication's: the read goes elsewhere */
		ctx->held = NULL;
		return db_read_acquire(ctx->standbys, ctx->pool, ctx->min_lsn, &ctx->read_pool, c,
				       &ctx->dberr);
	}
	bool writes = h_route_writes(ctx->route);
	ctx->wrote = ctx->wrote || writes;
	enum rg_status st = RG_OK;
	if (ctx->held) {
		*c = ctx->held;
		ctx->held = NULL;
	} else {
		st = db_acquire(ctx->pool, c, &ctx->dberr);
	}
	/* The answer's Recallgate-Commit-LSN, in the write's round trip; a route that waits on
	 * the ledger writes there, and its answer has the batch's. */
	if (st == RG_OK && writes && ctx->route->lane != H_LANE_LEDGER)
		db_conn_track_commits(*c);
	return st;
}

void h_note_commit_lsn(struct h_ctx *ctx, const struct db_conn *c)
{
	uint64_t lsn;
	if (!db_conn_commit_lsn(c, &lsn))
		ctx->commit_lsn = 0; /* unknown: server/ asks after the request */
	else if (lsn > ctx->commit_lsn)
		ctx->commit_lsn = lsn; /* the latest: WAL positions only grow */
}

void h_db_release(struct h_ctx *ctx, struct db_conn *c)
{
	if (c != NULL && c == ctx->tx)
		return; /* server/ ends the request's transaction */
	if (c != NULL)
		h_note_commit_lsn(ctx, c);
	db_release(ctx->read_pool ? ctx->read_pool : ctx->pool, c);
}

bool h_acquire(struct h_ctx *ctx, struct db_conn **c)
{
	enum rg_status st = h_db_acquire(ctx, c);
	if (st != RG_OK)
		h_db_failed(ctx, st);
	return st == RG_OK;
}

const char *h_param(const struct h_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->nparams; i++)
		if (strcmp(ctx->params[i].name, name) == 0)
			return ctx->params[i].value;
	return NULL;
}

bool h_parse_digits(const char *s, int64_t *out)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 18 || s[n] != '\0') /* 18 digits cannot overflow */
		return false;
	*out = strtoll(s, NULL, 10);
	return true;
}

bool h_page(struct h_ctx *ctx, int def, int max, int *limit, int64_t *after)
{
	const char *l = ctx->query(ctx, "limit");
	const char *a = ctx->query(ctx, "after");
	int64_t v = def;
	char reason[64];
	if (l && (!h_parse_digits(l, &v) || v < 1 || v > max)) {
		snprintf(reason, sizeof reason, "must be an integer between 1 and %d", max);
		h_invalid(ctx, "limit", reason);
		return false;
	}
	*limit = (int)v;
	*after = 0;
	if (a && (!h_parse_digits(a, after) || *after < 1)) {
		h_invalid(ctx, "after", "must be a cursor returned as next_cursor");
		return false;
	}
	return true;
}

json_t *h_next_cursor(int rows, int limit, int64_t last_seq)
{
	char buf[24];
	if (rows <= limit)
		return json_null();
	snprintf(buf, sizeof buf, "%lld", (long long)last_seq);
	return json_string(buf);
}

void h_list(struct h_ctx *ctx, const struct h_list_query *q)
{
	struct db_rows rows = {0};
	struct db_conn *c = NULL;
	int limit;
	int64_t after, last = 0;
	if (!h_page(ctx, q->default_limit, q->max_limit ? q->max_limit : H_PAGE_MAX, &limit, &after))
		return;
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = q->fetch(ctx, c, q->arg, after, limit, &rows);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	json_t *items = json_array();
	for (size_t i = 0; i < rows.n && i < (size_t)limit; i++)
		json_array_append_new(items, q->render(db_rows_at(&rows, i), q->arg, &last));
	h_reply(ctx, 200, json_pack("{s:o, s:o}", "items", items, "next_cursor",
				    h_next_cursor((int)rows.n, limit, last)));
	db_rows_free(&rows);
}

const void *h_fetch_row(struct h_ctx *ctx, h_row_by_id_fn fetch, const char *id,
			const char *missing, struct db_rows *rows)
{
	struct db_conn *c = NULL;
	*rows = (struct db_rows){0};
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = fetch(c, ctx->tenant_id, id, rows, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return NULL;
	}
	if (rows->n == 0) {
		h_problem(ctx, PROBLEM_NOT_FOUND, missing, NULL);
		return NULL;
	}
	return db_rows_at(rows, 0);
}

bool h_answered(struct h_ctx *ctx, enum rg_status st)
{
	if (st != RG_OK)
		h_db_failed(ctx, st);
	return st != RG_OK || ctx->problem_code != PROBLEM_NONE;
}

void h_etag(struct h_ctx *ctx, int64_t revision)
{
	snprintf(ctx->etag, sizeof ctx->etag, "\"%lld\"", (long long)revision);
}

bool h_if_match(struct h_ctx *ctx, int64_t revision)
{
	int64_t named = -1;
	enum h_if_match im = h_if_match_revision(ctx, &named);
	if (im == H_IF_MATCH_NONE || (im == H_IF_MATCH_REVISION && revision >= 0 && named == revision))
		return true;
	h_problem(ctx, PROBLEM_PRECONDITION_FAILED,
		  "If-Match does not name the current revision.", NULL);
	ctx->current_revision = revision >= 0 ? revision : PROBLEM_NULL_REVISION;
	return false;
}

enum h_if_match h_if_match_revision(const struct h_ctx *ctx, int64_t *rev)
{
	const char *v = ctx->if_match;
	char digits[24];
	if (v == NULL || strcmp(v, "*") == 0)
		return H_IF_MATCH_NONE;
	size_t n = strlen(v);
	if (n < 3 || n - 2 >= sizeof digits || v[0] != '"' || v[n - 1] != '"')
		return H_IF_MATCH_INVALID;
	memcpy(digits, v + 1, n - 2);
	digits[n - 2] = '\0';
	return h_parse_digits(digits, rev) ? H_IF_MATCH_REVISION : H_IF_MATCH_INVALID;
}

bool h_guard_write(const struct h_ctx *ctx, int64_t expected, bool *if_match_first)
{
	int64_t rev = 0;
	enum h_if_match im = h_if_match_revision(ctx, &rev);
	*if_match_first = im != H_IF_MATCH_NONE;
	return im == H_IF_MATCH_NONE || (im == H_IF_MATCH_REVISION && rev == expected);
}

void h_stale(struct h_ctx *ctx, int64_t current, bool if_match_first)
{
	int64_t rev = -1;
	if (if_match_first && (h_if_match_revision(ctx, &rev) != H_IF_MATCH_REVISION || rev != current))
		h_problem(ctx, PROBLEM_PRECONDITION_FAILED,
			  "If-Match does not name the current revision.", NULL);
	else
		h_problem(ctx, PROBLEM_STALE_REVISION, "expected_revision is not the current revision.",
			  NULL);
	ctx->current_revision = current;
}

void h_stale_of(struct h_ctx *ctx, const int64_t *current, bool if_match_first)
{
	h_stale(ctx, current ? *current : 0, if_match_first);
	if (current == NULL)
		ctx->current_revision = PROBLEM_NULL_REVISION;
}

struct db_actor h_actor(const struct h_ctx *ctx)
{
	struct db_actor a = {ctx->tenant_id, ctx->token_id, ctx->request_id};
	return a;
}

json_t *h_time(int64_t epoch_ms)
{
	char buf[RG_TIME_SIZE];
	core_time_format(epoch_ms, buf);
	return json_string(buf);
}

bool h_query_enum(struct h_ctx *ctx, const char *name, const char *const *values,
		  const char **out)
{
	*out = ctx->query(ctx, name);
	if (*out == NULL)
		return true;
	for (const char *const *v = values; *v; v++)
		if (strcmp(*v, *out) == 0)
			return true;
	h_invalid(ctx, name, "must be one of the allowed values");
	return false;
}

bool h_query_id(struct h_ctx *ctx, const char *name, const char **out)
{
	*out = ctx->query(ctx, name);
	if (*out && !core_id_valid(*out)) {
		h_invalid(ctx, name, h_id_reason);
		return false;
	}
	return true;
}

int64_t h_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool h_as_of(struct h_ctx *ctx, const char *text, int64_t *as_of)
{
	*as_of = RG_TIME_NONE;
	if (text == NULL)
		return true;
	if (!core_time_parse(text, as_of) || *as_of > h_now_ms()) {
		*as_of = RG_TIME_NONE;
		h_invalid(ctx, "as_of", "must be an RFC 3339 date-time, not in the future");
		return false;
	}
	return true;
}

json_t *h_time_or_null(int64_t epoch_ms)
{
	return epoch_ms == RG_TIME_NONE ? json_null() : h_time(epoch_ms);
}

bool h_json_content_type(const char *ct)
{
	static const char want[] = "application/json";
	if (ct == NULL || strncasecmp(ct, want, sizeof want - 1) != 0)
		return false;
	const char *rest = ct + sizeof want - 1;
	while (*rest == ' ')
		rest++;
	return *rest == '\0' || *rest == ';'; /* parameters (charset) may follow */
}
