/* From a received request to its handler: authentication, the check order of the contract,
 * the handler context, and the handler call. */
#include <stdlib.h>
#include <string.h>

#include "core/lsn.h"
#include "db/pipe.h"
#include "db/standby.h"
#include "handlers/api.h"
#include "server/events.h"
#include "server/ledger.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/outbound.h"
#include "server/quota.h"
#include "server/ratelimit.h"
#include "server/request.h"

static const char *ctx_query(const struct h_ctx *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx->server_data, MHD_GET_ARGUMENT_KIND, name);
}

struct query_values {
	const char *name;
	const char **out;
	size_t max, n;
};

static enum MHD_Result take_value(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	(void)kind;
	struct query_values *q = cls;
	if (key && value && strcmp(key, q->name) == 0 && q->n < q->max)
		q->out[q->n++] = value;
	return MHD_YES;
}

static size_t ctx_query_all(const struct h_ctx *ctx, const char *name, const char **out,
			    size_t max)
{
	struct query_values q = {.name = name, .out = out, .max = max};
	MHD_get_connection_values(ctx->server_data, MHD_GET_ARGUMENT_KIND, take_value, &q);
	return q.n;
}

static const char *ctx_header(const struct h_ctx *ctx, const char *name)
{
	return header(ctx->server_data, name);
}

/* An Origin that is neither one of RECALLGATE_CORS_ORIGINS nor this server's own loopback
 * origin (a page served by this very server on localhost, 127.0.0.1 or [::1]: Origin is then
 * "http://" + Host). A DNS-rebinding page has its own name in both Origin and Host, never a
 * loopback literal, so it stays foreign. */
static bool foreign_origin(struct request *r)
{
	const char *origin = header(r->conn, "Origin"), *host = header(r->conn, "Host");
	if (origin == NULL || reply_origin_allowed(r))
		return false;
	if (host == NULL || strncmp(origin, "http://", 7) != 0 || strcmp(origin + 7, host) != 0)
		return true;
	static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++) {
		size_t n = strlen(loopback[i]);
		if (strncmp(host, loopback[i], n) == 0 && (host[n] == '\0' || host[n] == ':'))
			return false;
	}
	return true;
}

static bool ctx_rate_take(const struct h_ctx *ctx)
{
	unsigned retry_after_s;
	return ratelimit_take(ctx->token_id, &retry_after_s);
}

/* The ledger takes a connection of its own: the one authentication borrowed goes back first,
 * so that a caller waiting on a batch holds none. */
static void give_back_held(struct h_ctx *ctx)
{
	db_release(ctx->pool, ctx->held);
	ctx->held = NULL;
}

static enum rg_status ctx_content_read(struct h_ctx *ctx, const struct db_content_read *in,
				       struct db_rows *rows)
{
	bool recorded;
	uint64_t lsn;
	give_back_held(ctx);
	enum rg_status st = ledger_read(ctx->tx, in, rows, &recorded, &lsn, &ctx->dberr);
	if (recorded) {
		ctx->wrote = true;
		ctx->commit_lsn = lsn; /* 0: unknown, or the request's transaction is to commit */
	}
	return st;
}

static enum rg_status ctx_deliver(struct h_ctx *ctx, const struct db_delivery *d,
				  size_t *stale)
{
	uint64_t lsn;
	give_back_held(ctx);
	enum rg_status st = ledger_deliver(ctx->tx, d, stale, &lsn, &ctx->dberr);
	/* The batch's: no question after the answer; 0 (unknown, or the request's transaction or
	 * a connection of the control's committed it) replaces the match's own, which came
	 * before the receipt's commit, so that server/ asks after the request. */
	if (st == RG_OK && *stale == 0)
		ctx->commit_lsn = lsn;
	return st;
}

static char *ctx_metrics(size_t *len)
{
	return metrics_render(len);
}

/* What a request needs after its provider call (its receipt's write, the answer), taken from
 * the call's time so that the answer, not the call, meets the caller's deadline. Measured
 * (scripts/bench-edge, 300 hung retrieves cut together, receipts committed with fsync on 8
 * pool connections): the answers came 102-120 ms after a cut at the deadline, 93-99 ms after
 * a cut 50 ms before it. */
#define PROVIDER_ANSWER_RESERVE_MS 100

/* A provider's deadline counts from the request's arrival: time spent waiting for a lane, the
 * database or an earlier call is taken off the call, and so is the answer's reserve. */
static void ctx_provider_call(const struct h_ctx *ctx, const struct h_call *call,
			      struct h_call_result *out)
{
	struct h_call bounded = *call;
	long long spent = mono_ms() - ctx->received_ms + PROVIDER_ANSWER_RESERVE_MS;
	if (spent < 0)
		spent = 0;
	bounded.deadline_ms = (long long)call->deadline_ms > spent + 1
				      ? call->deadline_ms - (unsigned)spent
				      : 1;
	outbound_call(&bounded, ctx->traceparent, out);
}

static void ctx_provider_observe(const struct h_ctx *ctx, const struct h_call_report *r)
{
	metrics_provider(r->call, r->outcome);
	log_info(ctx->request_id,
		 "provider %s extension_id=%s outcome=%s reason=%s%s%s latency_ms=%lld", r->call,
		 r->extension_id, r->outcome, r->reason ? r->reason : "-", r->why ? " why=" : "",
		 r->why ? r->why : "", r->latency_ms);
}

/* Verifies the bearer token once per request: from the cache on the I/O thread (on the
 * first call, so that a refused token's body is never read), with the database on a lane,
 * whose borrowed connection the handler then uses. false after keeping the answer (401, 503
 * or 500) in *ret; on the I/O thread also when only the database can say (no answer kept). */
bool dispatch_authenticate(struct request *r, enum MHD_Result *ret)
{
	if (r->authenticated || r->match.route->scope == 0)
		return true;
	const char *authorization = header(r->conn, "Authorization");
	enum rg_status st =
		r->on_lane ? auth_verify(r->srv->pool, authorization, &r->who, &r->held, &r->dberr)
			   : auth_verify_cached(authorization, &r->who);
	if (st == RG_NEEDS_DATABASE && !r->on_lane)
		return false;
	if (st == RG_OK) {
		r->authenticated = true;
		/* Once per request, before the body is read: a refusal changes nothing. */
		if (ratelimit_take(r->who.token_id, &r->retry_after_s))
			return true;
		*ret = reply_problem(r, PROBLEM_RATE_LIMITED, NULL, NULL, -1, NULL);
		return false;
	}
	if (st == RG_UNAVAILABLE)
		*ret = reply_problem(r, PROBLEM_DATABASE_UNAVAILABLE,
				     "The database is unavailable; retry later.", NULL, -1, NULL);
	else if (st == RG_TIMEOUT)
		*ret = reply_problem(r, PROBLEM_QUERY_TIMEOUT, NULL, NULL, -1, NULL);
	else if (st == RG_NOT_FOUND)
		*ret = reply_problem(r, PROBLEM_UNAUTHENTICATED,
				     "A valid bearer token is required.", NULL, -1, NULL);
	else
		*ret = reply_problem(r, PROBLEM_INTERNAL, "The request could not be completed.",
				     NULL, -1, NULL);
	return false;
}

/* Everything after the body has arrived (or, for a declared length over the cap, before it
 * is read): the check order of the contract is
 * route (404/405) → authentication (401) → size (413) → the gate (handlers/gate.c: path
 * parameters and body 422/415/400, scope 403) → the handler. true when the handler may run:
 * r->ctx is set up for it; otherwise the answer is kept in *ret. */
bool dispatch_begin(struct request *r, enum MHD_Result *ret)
{
	struct http_server *srv = r->srv;
	const struct auth_principal *who = &r->who;

	if (strcmp(r->method, "OPTIONS") == 0 && r->routed != ROUTER_NOT_FOUND) {
		*ret = reply_preflight(r);
		return false;
	}
	if (r->routed == ROUTER_NOT_FOUND) {
		*ret = reply_problem(r, PROBLEM_NOT_FOUND, "No resource at this path.", NULL, -1,
				     NULL);
		return false;
	}
	if (r->routed == ROUTER_METHOD_NOT_ALLOWED) {
		*ret = reply_problem(r, PROBLEM_METHOD_NOT_ALLOWED,
				     "This path does not support the method.", NULL, -1,
				     r->match.allow);
		return false;
	}
	if (!dispatch_authenticate(r, ret))
		return false;
	if (r->too_large) {
		*ret = reply_problem(r, PROBLEM_PAYLOAD_TOO_LARGE,
				     "The body exceeds the size limit.", NULL, -1, NULL);
		return false;
	}

	/* The transport's part of the handler's context; the gate adds the route's. */
	r->ctx = (struct h_ctx){
		.raw_body = r->body,
		.raw_body_len = r->body_len,
		.if_match = header(r->conn, MHD_HTTP_HEADER_IF_MATCH),
		.if_none_match = header(r->conn, MHD_HTTP_HEADER_IF_NONE_MATCH),
		.request_id = r->request_id,
		.traceparent = header(r->conn, "traceparent"),
		.via = "rest",
		.tenant_id = who->tenant_id,
		.token_id = who->token_id,
		.token_name = who->name,
		.scopes = who->scopes,
		.pool = srv->pool,
		.standbys = srv->standbys,
		.held = r->held,
		.shutting_down = atomic_load(&srv->draining),
		.received_ms = (long long)r->started.tv_sec * 1000 + r->started.tv_nsec / 1000000,
		.query = ctx_query,
		.query_all = ctx_query_all,
		.header = ctx_header,
		.events_open = events_open,
		.foreign_origin = foreign_origin(r),
		.token_deleted = auth_forget,
		.rate_take = ctx_rate_take,
		.metrics_text = ctx_metrics,
		.provider_call = ctx_provider_call,
		.provider_observe = ctx_provider_observe,
		.content_read = ctx_content_read,
		.deliver = ctx_deliver,
		.server_data = r->conn,
	};
	r->held = NULL;
	r->began = true;
	struct h_request in = {
		.route = r->match.route,
		.params = r->match.params,
		.nparams = r->match.nparams,
		.content_type = header(r->conn, MHD_HTTP_HEADER_CONTENT_TYPE),
	};
	if (h_gate(&r->ctx, &in))
		return true;
	*ret = reply_render(r, &r->ctx);
	dispatch_drop(r);
	return false;
}

/* After the handler: its answer rendered, the context's resources freed. */
static enum MHD_Result dispatch_end(struct request *r)
{
	struct h_ctx *ctx = &r->ctx;
	if (ctx->held) /* the handler needed no database */
		db_release(r->srv->pool, ctx->held);
	ctx->held = NULL;
	/* A write may have committed an audit record: other instances' streams hear of it (a
	 * route that only reads, a search's POST, has none to tell). */
	if (h_route_writes(ctx->route) && ctx->problem_code == PROBLEM_NONE)
		events_local_commit();
	enum MHD_Result ret = reply_render(r, ctx);
	r->dberr = ctx->dberr;
	dispatch_drop(r);
	return ret;
}

void dispatch_drop(struct request *r)
{
	struct h_ctx *ctx = &r->ctx;
	if (!r->began)
		return;
	r->began = false;
	if (ctx->held)
		db_release(r->srv->pool, ctx->held);
	if (ctx->stream) /* refused after it was admitted */
		events_discard(ctx->stream);
	json_decref(ctx->reply);
	json_decref(ctx->problem_errors);
	json_decref(ctx->problem_extra);
	if (!ctx->raw_static)
		free(ctx->raw);
	json_decref(ctx->body);
	*ctx = (struct h_ctx){0};
}

/* A write that succeeded carries where the primary's WAL stood after it: a read that sends it
 * back (Recallgate-Min-LSN) sees the write on any standby (docs/scaling.md). Without it (the
 * primary went away between the commit and this question) the answer goes without the
 * header: the write stands, and a client that has no LSN reads as it would without one.
 * A content read's LSN is its disclosure's, which the ledger asked once for its batch. */
static void note_commit_lsn(struct request *r)
{
	struct h_ctx *ctx = &r->ctx;
	uint64_t lsn;
	struct db_error err = {0};
	if (!ctx->wrote || ctx->problem_code != PROBLEM_NONE ||
	    ctx->status < 200 || ctx->status > 299)
		return;
	if (ctx->commit_lsn)
		core_lsn_format(ctx->commit_lsn, r->commit_lsn);
	else if (db_commit_lsn(r->srv->pool, &lsn, &err) == RG_OK)
		core_lsn_format(lsn, r->commit_lsn);
	else
		log_warn(r->request_id, "no commit LSN for the answer: %s", err.message);
}

enum MHD_Result dispatch(struct request *r)
{
	enum MHD_Result ret;
	if (!r->began && !dispatch_begin(r, &ret))
		return ret;
	/* One tenant may not take the whole elastic lane: with calls to hung providers, or with
	 * reads and loads waiting on the ledger. */
	const char *tenant = r->ctx.tenant_id;
	struct quota *share = !tenant || !tenant[0] ? NULL
			      : r->lane == H_LANE_ELASTIC ? r->srv->provider_calls
			      : r->lane == H_LANE_LEDGER  ? r->srv->ledger_waits
						      : NULL;
	if (share && !quota_take(share, tenant)) {
		r->retry_after_s = 1;
		h_problem(&r->ctx, PROBLEM_RATE_LIMITED,
			  r->lane == H_LANE_ELASTIC
				  ? "This tenant has as many provider calls in flight as it may; "
				    "retry later."
				  : "This tenant has as many reads and loads in flight as it may; "
				    "retry later.",
			  NULL);
		return dispatch_end(r);
	}
	if (idem_begin(r)) {
		r->ctx.route->handler(&r->ctx);
		idem_end(r);
	}
	note_commit_lsn(r);
	if (share)
		quota_give(share, tenant);
	return dispatch_end(r);
}

enum rg_status dispatch_pipe_send(struct request *r, struct db_pipe *p)
{
	const struct h_read *read = r->ctx.route->read;
	const char *params[H_READ_MAX_PARAMS];
	if (read == NULL || read->stmt->nparams > H_READ_MAX_PARAMS)
		return RG_NOT_SENT;
	read->params(&r->ctx, params);
	return db_pipe_send(p, read->stmt, params, &r->ctx.dberr);
}

void dispatch_pipe_finish(struct request *r, enum rg_status st, const struct db_rows *rows)
{
	r->ctx.route->read->answer(&r->ctx, st, rows);
	(void)dispatch_end(r);
}
