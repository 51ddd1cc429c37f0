#include "server/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/jsonx.h"
#include "core/problem.h"
#include "handlers/api.h"
#include "server/auth.h"
#include "server/conns.h"
#include "server/lanes.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/outbound.h"
#include "server/ratelimit.h"
#include "server/router.h"

#define DRAIN_FACTOR 8
#define HTTP_IO_THREADS 2
/* A worker parses, validates and renders outside its transaction: two per pool connection
 * keep the connections busy while the other half does that CPU work. */
#define HTTP_WORKERS_PER_CONNECTION 2
/* What a request may bring, within the default RECALLGATE_CONNECTION_MEMORY (8 KiB): every
 * documented request fits with room to spare. Past these it is answered 414 / 431 while the
 * connection's memory still allows an answer; past the memory, see on_uri and docs. */
#define HTTP_MAX_URI_BYTES 4096
#define HTTP_MAX_HEAD_BYTES 6144
#define HTTP_MAX_QUERY_PARAMS 64
/* Provider calls wait up to their deadline; each waits on a thread of its own. */
#define HTTP_ELASTIC_LANE_MAX 1024
/* The drain ends once nothing was in flight for this long (or at its deadline). */
#define HTTP_QUIET_MS 200
/* After the lanes stopped: time for their last answers to be sent. */
#define HTTP_FLUSH_MS 500

struct http_server {
	struct MHD_Daemon *daemon;
	const struct rg_config *cfg;
	struct db_pool *pool;
	const struct h_route *routes;
	size_t n_routes;
	struct lane *workers; /* handlers that may block on the database: one per connection */
	struct lane *elastic; /* handlers that wait on providers, and readiness */
	atomic_int in_flight;
	atomic_bool draining;
	atomic_llong drain_deadline_ms; /* CLOCK_MONOTONIC; valid once draining */
};

/* One per connection (its socket context): the header deadline, and what on_uri noted for
 * the request being parsed. */
struct conn_state {
	struct conn_entry *deadline;
	bool uri_too_long;
};

/* One per request: made on libmicrohttpd's first call, freed in the completion callback
 * (which runs even when the client goes away mid-upload). */
struct request {
	struct http_server *srv;
	struct MHD_Connection *conn;
	struct timespec started;
	char request_id[RG_MAX_REQUEST_ID_BYTES + 1];
	char method[16];
	enum router_result routed;
	size_t route_index;
	bool authenticated;
	struct auth_principal who;
	char *body;
	size_t body_len, body_cap;
	bool too_large;
	size_t drained; /* bytes discarded after the cap */
	int status;
	enum rg_problem problem_code;
	unsigned retry_after_s; /* with a 429 rate_limited */
	struct db_error dberr;
	/* The answer, made on any thread, queued by the I/O thread (MHD_queue_response may only
	 * be called from the access handler). */
	struct MHD_Response *resp;
	bool close;           /* the answer closes the connection (a framing error) */
	bool on_lane;         /* a lane runs dispatch: the database may be used */
	bool lane_done;       /* the lane finished and resumed the connection */
	struct db_conn *held; /* borrowed by authentication, handed to the handler */
	struct router_match match; /* large: keep it last */
};

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static const char *allowed_origin(const struct request *r)
{
	const char *origin = header(r->conn, "Origin");
	if (origin == NULL)
		return NULL;
	for (size_t i = 0; i < r->srv->cfg->n_origins; i++)
		if (strcmp(origin, r->srv->cfg->origins[i]) == 0)
			return origin;
	return NULL;
}

static void add_common_headers(struct request *r, struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "X-Request-Id", r->request_id);
	const char *origin = allowed_origin(r);
	if (origin) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
		MHD_add_response_header(resp, "Vary", "Origin");
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
					"ETag, Location, X-Request-Id");
	}
}

/* Keeps resp (consumed) as the answer with status; flush queues it. After SIGTERM every answer
 * closes its connection, so that kept-alive clients move to another instance. */
static enum MHD_Result queue(struct request *r, unsigned status, struct MHD_Response *resp)
{
	if (resp == NULL)
		return MHD_NO;
	add_common_headers(r, resp);
	if (r->close || atomic_load(&r->srv->draining))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->status = (int)status;
	r->resp = resp;
	return MHD_YES;
}

/* On the I/O thread: queues the answer that queue kept; MHD_NO (close) when there is none. */
static enum MHD_Result flush(struct request *r)
{
	struct MHD_Response *resp = r->resp;
	if (resp == NULL)
		return MHD_NO;
	r->resp = NULL;
	enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static struct MHD_Response *json_response(json_t *body, const char *content_type)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct MHD_Response *resp;
	if (text == NULL)
		return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	else
		free(text);
	return resp;
}

/* A problem answer; errors is borrowed. */
static enum MHD_Result problem(struct request *r, enum rg_problem code, const char *detail,
			       json_t *errors, long long current_revision, const char *allow)
{
	unsigned status = (unsigned)core_problem_status(code);
	json_t *body = core_problem_new(code, detail, r->request_id, errors, current_revision);
	struct MHD_Response *resp = json_response(body, "application/problem+json; charset=utf-8");
	json_decref(body);
	if (resp == NULL)
		return MHD_NO;
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (code == PROBLEM_RATE_LIMITED) {
		char secs[sizeof "4294967295"];
		snprintf(secs, sizeof secs, "%u", r->retry_after_s);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->problem_code = code;
	return queue(r, status, resp);
}

/* A handler's problem, with its extra members (e.g. source_identity on an assent 403). */
static enum MHD_Result problem_with(struct request *r, enum rg_problem code,
				    const char *detail, json_t *errors, long long current_revision,
				    json_t *extra)
{
	unsigned status = (unsigned)core_problem_status(code);
	json_t *body = core_problem_new(code, detail, r->request_id, errors, current_revision);
	if (body && extra)
		json_object_update_missing(body, extra);
	struct MHD_Response *resp = json_response(body, "application/problem+json; charset=utf-8");
	json_decref(body);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->problem_code = code;
	return queue(r, status, resp);
}

static const char *ctx_query(const struct h_ctx *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx->server_data, MHD_GET_ARGUMENT_KIND, name);
}

static char *ctx_metrics(size_t *len)
{
	return metrics_render(len);
}

/* A provider's deadline counts from the request's arrival: time spent queueing for a lane or a
 * connection is taken off the call, so that the caller's answer still comes by then. */
static void ctx_provider_call(const struct h_ctx *ctx, const struct h_call *call,
			      struct h_call_result *out)
{
	struct h_call bounded = *call;
	long long spent = mono_ms() - ctx->received_ms;
	if (spent > 0)
		bounded.deadline_ms =
		    (long long)call->deadline_ms > spent + 1 ? call->deadline_ms - (unsigned)spent : 1;
	outbound_call(&bounded, ctx->traceparent, out);
}

static void ctx_provider_observe(const struct h_ctx *ctx, const struct h_call_report *r)
{
	metrics_provider(r->call, r->outcome);
	log_info(ctx->request_id, "provider %s extension_id=%s outcome=%s reason=%s%s%s latency_ms=%lld",
		 r->call, r->extension_id, r->outcome, r->reason ? r->reason : "-",
		 r->why ? " why=" : "", r->why ? r->why : "", r->latency_ms);
}

static bool json_content_type(const char *ct)
{
	static const char want[] = "application/json";
	if (ct == NULL || strncasecmp(ct, want, sizeof want - 1) != 0)
		return false;
	const char *rest = ct + sizeof want - 1;
	while (*rest == ' ')
		rest++;
	return *rest == '\0' || *rest == ';'; /* parameters (charset) may follow */
}

static enum MHD_Result preflight(struct request *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"",
								    MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	if (allowed_origin(r) && header(r->conn, "Access-Control-Request-Method")) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->match.allow);
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					"Authorization, Content-Type, If-Match, X-Request-Id, traceparent");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
	}
	return queue(r, 204, resp);
}

/* Renders what the handler left in ctx. */
static enum MHD_Result render(struct request *r, struct h_ctx *ctx)
{
	struct MHD_Response *resp;
	if (ctx->problem_code)
		return problem_with(r, ctx->problem_code, ctx->problem_detail,
				    ctx->problem_errors, ctx->current_revision, ctx->problem_extra);
	if (ctx->content_type) {
		resp = MHD_create_response_from_buffer(ctx->raw_len, ctx->raw,
						       ctx->raw_static ? MHD_RESPMEM_PERSISTENT
								       : MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			return MHD_NO;
		ctx->raw = NULL; /* owned by the response now */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctx->content_type);
	} else if (ctx->status == 204) {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		resp = json_response(ctx->reply, "application/json; charset=utf-8");
	}
	if (resp == NULL)
		return MHD_NO;
	if (ctx->etag[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, ctx->etag);
	if (ctx->location[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, ctx->location);
	if (strncmp(ctx->route->path, "/v1/", 4) == 0)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return queue(r, (unsigned)ctx->status, resp);
}

/* Verifies the bearer token once per request: from the cache on the I/O thread (on the
 * first call, so that a refused token's body is never read), with the database on a lane,
 * whose borrowed connection the handler then uses. false after keeping the answer (401, 503
 * or 500) in *ret; on the I/O thread also when only the database can say (no answer kept). */
static bool authenticate(struct request *r, enum MHD_Result *ret)
{
	if (r->authenticated || r->match.route->scope == 0)
		return true;
	const char *authorization = header(r->conn, "Authorization");
	enum rg_status st = r->on_lane ? auth_verify(r->srv->pool, authorization, &r->who,
						     &r->held, &r->dberr)
				       : auth_verify_cached(authorization, &r->who);
	if (st == RG_RETRY && !r->on_lane)
		return false;
	if (st == RG_OK) {
		r->authenticated = true;
		/* Once per request, before the body is read or checked: a refusal changes nothing. */
		if (ratelimit_take(r->who.token_id, &r->retry_after_s))
			return true;
		*ret = problem(r, PROBLEM_RATE_LIMITED, NULL, NULL, -1, NULL);
		return false;
	}
	if (st == RG_UNAVAILABLE)
		*ret = problem(r, PROBLEM_DATABASE_UNAVAILABLE,
			       "The database is unavailable; retry later.", NULL, -1, NULL);
	else if (st == RG_TIMEOUT)
		*ret = problem(r, PROBLEM_QUERY_TIMEOUT, NULL, NULL, -1, NULL);
	else if (st == RG_NOT_FOUND)
		*ret = problem(r, PROBLEM_UNAUTHENTICATED, "A valid bearer token is required.", NULL,
			       -1, NULL);
	else
		*ret = problem(r, PROBLEM_INTERNAL, "The request could not be completed.", NULL, -1,
			       NULL);
	return false;
}

/* Everything after the body has arrived (or, for a declared length over the cap, before it
 * is read): the check order of the contract is
 * route (404/405) → authentication (401) → path parameters and body (422/415/400) →
 * scope (403) → the handler. */
static enum MHD_Result dispatch(struct request *r)
{
	struct http_server *srv = r->srv;
	const struct h_route *route = r->match.route;
	const struct auth_principal *who = &r->who;
	json_t *body = NULL;
	enum MHD_Result ret;

	if (strcmp(r->method, "OPTIONS") == 0 && r->routed != ROUTER_NOT_FOUND)
		return preflight(r);
	if (r->routed == ROUTER_NOT_FOUND)
		return problem(r, PROBLEM_NOT_FOUND, "No resource at this path.", NULL, -1, NULL);
	if (r->routed == ROUTER_METHOD_NOT_ALLOWED)
		return problem(r, PROBLEM_METHOD_NOT_ALLOWED, "This path does not support the method.",
			       NULL, -1, r->match.allow);
	if (!authenticate(r, &ret))
		return ret;
	if (r->too_large)
		return problem(r, PROBLEM_PAYLOAD_TOO_LARGE, "The body exceeds the size limit.", NULL,
			       -1, NULL);
	for (size_t i = 0; i < r->match.nparams; i++) {
		if (!core_id_valid(r->match.params[i].value)) {
			json_t *errors = json_array();
			core_fields_error(errors, r->match.params[i].name,
					  "must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
			ret = problem(r, PROBLEM_VALIDATION_FAILED, NULL, errors, -1, NULL);
			json_decref(errors);
			return ret;
		}
	}
	if (route->body) {
		if (!json_content_type(header(r->conn, MHD_HTTP_HEADER_CONTENT_TYPE)))
			return problem(r, PROBLEM_UNSUPPORTED_MEDIA_TYPE,
				       "The body must be application/json.", NULL, -1, NULL);
		body = core_json_parse_strict(r->body, r->body_len);
		if (body == NULL)
			return problem(r, PROBLEM_INVALID_JSON, "The body is not valid JSON.", NULL, -1,
				       NULL);
		json_t *errors = json_array();
		enum fields_result fr = core_fields_validate(body, route->body, errors);
		enum rg_problem code =
			fr == FIELDS_OK && route->check ? route->check(body, errors) : PROBLEM_NONE;
		if (code) {
			ret = problem(r, code, NULL, errors, -1, NULL);
			json_decref(errors);
			json_decref(body);
			return ret;
		}
		if (fr != FIELDS_OK) {
			ret = problem(r,
				      fr == FIELDS_UNKNOWN ? PROBLEM_UNKNOWN_FIELD
							   : PROBLEM_VALIDATION_FAILED,
				      NULL, errors, -1, NULL);
			json_decref(errors);
			json_decref(body);
			return ret;
		}
		json_decref(errors);
	}
	if (route->scope != 0 && !core_scope_allows(who->scopes, route->scope)) {
		char detail[192];
		json_decref(body);
		core_scope_needed_detail(route->scope, detail, sizeof detail);
		return problem(r, PROBLEM_FORBIDDEN, detail, NULL, -1, NULL);
	}

	struct h_ctx ctx = {
		.route = route,
		.params = r->match.params,
		.nparams = r->match.nparams,
		.body = body,
		.if_match = header(r->conn, MHD_HTTP_HEADER_IF_MATCH),
		.request_id = r->request_id,
		.traceparent = header(r->conn, "traceparent"),
		.tenant_id = who->tenant_id,
		.token_id = who->token_id,
		.token_name = who->name,
		.scopes = who->scopes,
		.pool = srv->pool,
		.held = r->held,
		.shutting_down = atomic_load(&srv->draining),
		.received_ms = (long long)r->started.tv_sec * 1000 + r->started.tv_nsec / 1000000,
		.query = ctx_query,
		.token_deleted = auth_forget,
		.metrics_text = ctx_metrics,
		.provider_call = ctx_provider_call,
		.provider_observe = ctx_provider_observe,
		.server_data = r->conn,
		.current_revision = -1,
	};
	route->handler(&ctx);
	if (ctx.held) /* the handler needed no database */
		db_release(srv->pool, ctx.held);
	r->held = NULL;
	ret = render(r, &ctx);
	r->dberr = ctx.dberr;
	json_decref(ctx.reply);
	json_decref(ctx.problem_errors);
	json_decref(ctx.problem_extra);
	if (!ctx.raw_static)
		free(ctx.raw);
	json_decref(body);
	return ret;
}

/* Request ids need to be unique, not secret: a random per-process prefix and a counter
 * cost no system call (RAND_bytes checks for a fork with getpid on every call). */
static char request_id_prefix[17];
static atomic_ullong request_counter;

static void new_request_id(char *out, size_t size)
{
	unsigned long long n = atomic_fetch_add(&request_counter, 1);
	snprintf(out, size, "req_%s%016llx", request_id_prefix, n);
}

static struct request *request_new(struct http_server *srv, struct MHD_Connection *conn,
				   const char *method, const char *url)
{
	struct request *r = calloc(1, sizeof *r);
	if (r == NULL)
		return NULL;
	r->srv = srv;
	r->conn = conn;
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	snprintf(r->method, sizeof r->method, "%s", method);
	const char *rid = header(conn, "X-Request-Id");
	if (core_request_id_valid(rid))
		snprintf(r->request_id, sizeof r->request_id, "%s", rid);
	else
		new_request_id(r->request_id, sizeof r->request_id);
	r->routed = router_match(srv->routes, srv->n_routes, method, url, &r->match);
	/* Metrics and logs label a request by its path's template, also for a 405. */
	r->route_index = r->match.path_route ? (size_t)(r->match.path_route - srv->routes)
					     : srv->n_routes;
	atomic_fetch_add(&srv->in_flight, 1);
	return r;
}

static bool append_body(struct request *r, const char *data, size_t len)
{
	unsigned long max = r->srv->cfg->max_body;
	if (r->too_large) {
		/* libmicrohttpd cannot answer in the middle of a chunked upload, so the rest is
		 * drained to answer 413, but not forever: past DRAIN_FACTOR times the cap the
		 * connection is closed without an answer. */
		r->drained += len;
		return r->drained <= DRAIN_FACTOR * (size_t)max;
	}
	if (r->body_len + len > max) {
		r->too_large = true;
		free(r->body);
		r->body = NULL;
		r->body_len = 0;
		return true;
	}
	if (r->body_len + len > r->body_cap) {
		size_t cap = r->body_cap ? r->body_cap : 4096;
		while (cap < r->body_len + len)
			cap *= 2;
		char *nb = realloc(r->body, cap);
		if (nb == NULL)
			return false;
		r->body = nb;
		r->body_cap = cap;
	}
	memcpy(r->body + r->body_len, data, len);
	r->body_len += len;
	return true;
}

/* Counts Content-Length headers into *(unsigned *)cls: two of them make the body's length
 * ambiguous (a request smuggling vector behind a proxy). */
static enum MHD_Result count_content_length(void *cls, enum MHD_ValueKind kind, const char *key,
					    const char *value)
{
	(void)kind;
	(void)value;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		(*(unsigned *)cls)++;
	return MHD_YES;
}

/* The request's end: its metrics and access log line (when it was answered), then it is freed.
 * NULL is fine. */
static void request_done(struct request *r)
{
	if (r == NULL)
		return;
	struct http_server *srv = r->srv;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double secs = (double)(now.tv_sec - r->started.tv_sec) +
		      (double)(now.tv_nsec - r->started.tv_nsec) / 1e9;
	if (r->status != 0) {
		const char *route = r->route_index < srv->n_routes ? srv->routes[r->route_index].path
								   : "unmatched";
		metrics_observe(r->route_index, r->method, r->status, secs);
		log_access(r->request_id, r->method, route, r->status, secs * 1000.0,
			   core_problem_code(r->problem_code),
			   r->dberr.sqlstate, r->dberr.message);
	}
	free(r->body);
	free(r);
	atomic_fetch_sub(&srv->in_flight, 1);
}

/* On a lane: runs dispatch (the database and providers may be used), then hands the
 * connection back to its I/O thread, which queues the answer. What has not started by the
 * end of the drain is answered 503 shutting_down. */
static void run_on_lane(void *arg)
{
	struct request *r = arg;
	struct http_server *srv = r->srv;
	if (atomic_load(&srv->draining) && mono_ms() >= atomic_load(&srv->drain_deadline_ms))
		(void)problem(r, PROBLEM_SHUTTING_DOWN, NULL, NULL, -1, NULL);
	else
		(void)dispatch(r);
	if (r->held) { /* refused before the handler took it */
		db_release(srv->pool, r->held);
		r->held = NULL;
	}
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

/* From a lane's watchdog: no thread took the request within the acquire timeout, so no
 * database connection would have either. */
static void expire_on_lane(void *arg)
{
	struct request *r = arg;
	db_pool_count_acquire_timeout(r->srv->pool);
	snprintf(r->dberr.message, sizeof r->dberr.message, "no worker free within %u ms",
		 r->srv->cfg->db_acquire_timeout_ms);
	(void)problem(r, PROBLEM_DATABASE_UNAVAILABLE, NULL, NULL, -1, NULL);
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

/* Suspends the connection and hands the request to its lane. */
static enum MHD_Result to_lane(struct request *r)
{
	struct http_server *srv = r->srv;
	struct lane *lane = r->match.route && r->match.route->lane == H_LANE_ELASTIC
				    ? srv->elastic
				    : srv->workers;
	r->on_lane = true;
	MHD_suspend_connection(r->conn);
	if (!lane_submit(lane, run_on_lane, expire_on_lane, r)) {
		(void)problem(r, PROBLEM_SHUTTING_DOWN, NULL, NULL, -1, NULL);
		r->lane_done = true;
		MHD_resume_connection(r->conn);
	}
	return MHD_YES;
}

/* Whether dispatch can run on the I/O thread: it must not block. */
static bool dispatch_inline(const struct request *r)
{
	if (r->routed != ROUTER_FOUND || strcmp(r->method, "OPTIONS") == 0)
		return true; /* 404, 405, a preflight */
	if (r->match.route->scope != 0 && !r->authenticated)
		return false; /* the token needs the database */
	return r->too_large || r->match.route->lane == H_LANE_INLINE;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct request *r = *con_cls;

	if (r == NULL) {
		const union MHD_ConnectionInfo *sc =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		struct conn_state *cs = sc ? sc->socket_context : NULL;
		if (cs)
			conns_headers_done(cs->deadline);
		r = request_new(srv, conn, method, url);
		if (r == NULL)
			return MHD_NO;
		const union MHD_ConnectionInfo *hs =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
		bool uri_too_long = cs && cs->uri_too_long;
		if (uri_too_long || (hs && hs->header_size > HTTP_MAX_HEAD_BYTES)) {
			/* The connection's memory is nearly spent: libmicrohttpd sends this answer
			 * and closes without a completion call, so the request ends here. */
			if (cs)
				cs->uri_too_long = false;
			(void)problem(r, uri_too_long ? PROBLEM_URI_TOO_LONG : PROBLEM_HEADERS_TOO_LARGE,
				      NULL, NULL, -1, NULL);
			enum MHD_Result ret = flush(r);
			*con_cls = NULL;
			request_done(r);
			return ret;
		}
		*con_cls = r;
		/* Answer before reading a byte of the body whenever the answer cannot depend on it:
		 * no route (404/405), a missing or bad token (401), a declared length over the cap
		 * (413), or an ambiguous length. */
		const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		unsigned lengths = 0;
		MHD_get_connection_values(conn, MHD_HEADER_KIND, count_content_length, &lengths);
		/* Framing the body two ways is the request-smuggling shape (RFC 9112 §6.1): refuse
		 * it and close, so that nothing after it on the connection is read as a request. */
		if (lengths > 1 || (cl && header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING))) {
			r->close = true;
			(void)problem(r, PROBLEM_INVALID_REQUEST,
				      lengths > 1 ? "Conflicting Content-Length headers."
						  : "Content-Length and Transfer-Encoding together.",
				      NULL, -1, NULL);
			return flush(r);
		}
		if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && header(conn, "Host") == NULL) {
			(void)problem(r, PROBLEM_INVALID_REQUEST, "An HTTP/1.1 request needs Host.",
				      NULL, -1, NULL);
			return flush(r);
		}
		if (cl && strtoull(cl, NULL, 10) > srv->cfg->max_body)
			r->too_large = true;
		enum MHD_Result ret;
		if (r->routed == ROUTER_FOUND && !authenticate(r, &ret) && r->resp)
			return flush(r); /* refused from the cache alone (a missing or bad header) */
		if (r->routed != ROUTER_FOUND || r->too_large) {
			if (!dispatch_inline(r))
				return to_lane(r);
			(void)dispatch(r);
			return flush(r);
		}
		return MHD_YES;
	}
	if (r->lane_done)
		return flush(r); /* resumed: the lane's answer */
	if (*upload_data_size > 0) {
		if (r->status == 0 && !append_body(r, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->status != 0)
		return MHD_YES; /* already answered (early 413) */
	if (!dispatch_inline(r))
		return to_lane(r);
	(void)dispatch(r);
	return flush(r);
}

/* Connections start and end: the header deadline's bookkeeping (server/conns.c). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn_state *cs = calloc(1, sizeof *cs);
		const union MHD_ConnectionInfo *fd =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (cs && fd)
			cs->deadline = conns_opened(fd->connect_fd);
		*socket_context = cs;
	} else if (*socket_context) {
		struct conn_state *cs = *socket_context;
		conns_closed(cs->deadline);
		free(cs);
		*socket_context = NULL;
	}
}

/* libmicrohttpd's first look at a request: its URI, before the query parameters are stored in
 * the connection's memory pool. A query with more parameters than any route takes could
 * exhaust the pool, and libmicrohttpd 0.9.75 then leaves the request without an answer: such
 * a connection is shut down at once, so the client sees it closed. A long URI is only noted;
 * the first access call answers it 414. Returns NULL: *con_cls stays NULL. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	const union MHD_ConnectionInfo *sc =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn_state *cs = sc ? sc->socket_context : NULL;
	const char *query = strchr(uri, '?');
	size_t params = 0;
	for (const char *p = query; p; p = strchr(p + 1, '&'))
		params++;
	if (params > HTTP_MAX_QUERY_PARAMS) {
		const union MHD_ConnectionInfo *fd =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);
		log_warn(NULL, "http: closed a connection whose query has %zu parameters (at most %d)",
			 params, HTTP_MAX_QUERY_PARAMS);
	} else if (cs) {
		cs->uri_too_long = strlen(uri) > HTTP_MAX_URI_BYTES;
	}
	return NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	request_done(*con_cls);
	*con_cls = NULL;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decoding of the path and of query arguments, in place. %00 stays encoded: a NUL
 * would cut the string short behind the router's back ("/v1/tokens/x%00/y" would delete
 * token x); left as text it fails the id pattern or matches no route. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *out = s;
	(void)cls;
	(void)c;
	for (const char *in = s; *in; in++) {
		int hi, lo;
		if (*in == '%' && (hi = hex_digit(in[1])) >= 0 && (lo = hex_digit(in[2])) >= 0 &&
		    (hi << 4 | lo) != 0) {
			*out++ = (char)(hi << 4 | lo);
			in += 2;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
	return (size_t)(out - s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_warn(NULL, "http: %s", msg);
}

bool http_start(const struct rg_config *cfg, struct db_pool *pool, const struct h_route *routes,
		size_t n_routes, struct http_server **out)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
	struct addrinfo *ai = NULL;
	char port[8];
	snprintf(port, sizeof port, "%u", cfg->port);
	if (getaddrinfo(cfg->host, port, &hints, &ai) != 0 || ai == NULL) {
		log_error(NULL, "cannot resolve the listen address");
		return false;
	}
	struct http_server *srv = calloc(1, sizeof *srv);
	if (srv == NULL) {
		freeaddrinfo(ai);
		return false;
	}
	srv->cfg = cfg;
	srv->pool = pool;
	srv->routes = routes;
	srv->n_routes = n_routes;
	if (!core_random_hex(request_id_prefix, 8)) {
		log_error(NULL, "the random generator failed");
		freeaddrinfo(ai);
		free(srv);
		return false;
	}
	/* A few epoll I/O threads hold every connection (an idle one costs its memory pool and
	 * no thread); blocking work goes to the lanes through suspend/resume. */
	if (!conns_start(cfg->header_timeout * 1000u)) {
		freeaddrinfo(ai);
		free(srv);
		return false;
	}
	unsigned workers = cfg->db_pool * HTTP_WORKERS_PER_CONNECTION;
	if (!lane_start("workers", workers, workers, cfg->db_acquire_timeout_ms, &srv->workers) ||
	    !lane_start("elastic", 1, HTTP_ELASTIC_LANE_MAX, cfg->db_acquire_timeout_ms,
			&srv->elastic)) {
		lane_stop(srv->workers);
		conns_stop();
		freeaddrinfo(ai);
		free(srv);
		return false;
	}
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
			 MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6) /* [::] serves IPv4 too, whatever net.ipv6.bindv6only says */
		flags |= MHD_USE_DUAL_STACK;
	srv->daemon = MHD_start_daemon(
		flags, (uint16_t)cfg->port, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->connection_timeout,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_IO_THREADS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)cfg->connection_memory,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
		/* behind a gateway every connection comes from it: per-client limits are its job */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		cfg->trust_proxy ? 0u : (unsigned)cfg->max_client_connections,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
		MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
		MHD_OPTION_END);
	freeaddrinfo(ai);
	if (srv->daemon == NULL) {
		char addr[sizeof cfg->host + 8];
		log_error(NULL, "cannot listen on %s", cfg_addr_format(cfg, addr, sizeof addr));
		lane_stop(srv->elastic);
		lane_stop(srv->workers);
		conns_stop();
		free(srv);
		return false;
	}
	*out = srv;
	return true;
}

/* Sleeps in 10 ms steps until nothing has been in flight for quiet_ms, or the monotonic clock
 * reaches `until`. The quiet time lets a kept-alive client whose last answer just left send
 * its next request and get it answered with Connection: close, rather than find its
 * connection closed under it. */
static void wait_in_flight(struct http_server *srv, long long until, long long quiet_ms)
{
	long long busy_at = mono_ms();
	for (long long now = busy_at; now < until && now - busy_at < quiet_ms; now = mono_ms()) {
		if (atomic_load(&srv->in_flight) > 0)
			busy_at = now;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

void http_stop(struct http_server *srv, unsigned drain_ms)
{
	if (srv == NULL)
		return;
	/* Readiness answers 503 and every answer closes its connection from now on. */
	long long deadline = mono_ms() + drain_ms;
	atomic_store(&srv->drain_deadline_ms, deadline);
	atomic_store(&srv->draining, true);
	/* Provider calls end a second early: an abort lands within libcurl's one-second progress
	 * granularity, and the fail-open answer must still go out by the deadline. */
	outbound_cut_at(deadline - (drain_ms > 2000 ? 1000 : drain_ms / 2));
	MHD_socket listen = MHD_quiesce_daemon(srv->daemon);
	if (listen != MHD_INVALID_SOCKET)
		close(listen);
	wait_in_flight(srv, deadline, HTTP_QUIET_MS);
	/* What a lane has not started is answered 503 shutting_down; provider calls end at the
	 * deadline. A lane waits for its running handlers, so a committed write is answered. */
	lane_stop(srv->elastic);
	lane_stop(srv->workers);
	wait_in_flight(srv, mono_ms() + HTTP_FLUSH_MS, 0); /* those answers go out */
	MHD_stop_daemon(srv->daemon);
	conns_stop();
	free(srv);
}
