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
#include "server/log.h"
#include "server/metrics.h"
#include "server/outbound.h"
#include "server/router.h"

#define DRAIN_FACTOR 8

struct http_server {
	struct MHD_Daemon *daemon;
	const struct rg_config *cfg;
	struct db_pool *pool;
	const struct h_route *routes;
	size_t n_routes;
	atomic_int in_flight;
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
	const char *problem_code;
	struct db_error dberr;
	struct router_match match; /* large: keep it last */
};

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

/* Queues resp (consumed) with status. */
static enum MHD_Result queue(struct request *r, unsigned status, struct MHD_Response *resp)
{
	if (resp == NULL)
		return MHD_NO;
	add_common_headers(r, resp);
	r->status = (int)status;
	enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
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
static enum MHD_Result problem(struct request *r, unsigned status, const char *code,
			       const char *detail, json_t *errors, long long current_revision,
			       const char *allow)
{
	json_t *body = core_problem_new((int)status, code, detail, r->request_id, errors,
					current_revision);
	struct MHD_Response *resp = json_response(body, "application/problem+json; charset=utf-8");
	json_decref(body);
	if (resp == NULL)
		return MHD_NO;
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->problem_code = code;
	return queue(r, status, resp);
}

/* A handler's problem, with its extra members (e.g. source_identity on an assent 403). */
static enum MHD_Result problem_with(struct request *r, unsigned status, const char *code,
				    const char *detail, json_t *errors, long long current_revision,
				    json_t *extra)
{
	json_t *body = core_problem_new((int)status, code, detail, r->request_id, errors,
					current_revision);
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

static void ctx_provider_call(const struct h_ctx *ctx, const struct h_call *call,
			      struct h_call_result *out)
{
	outbound_call(call, ctx->traceparent, out);
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
		return problem_with(r, (unsigned)ctx->status, ctx->problem_code, ctx->problem_detail,
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

/* Verifies the bearer token once per request (on the first call when the body can be
 * refused unread). false after queuing the answer (401, 503 or 500) in *ret. */
static bool authenticate(struct request *r, enum MHD_Result *ret)
{
	if (r->authenticated || r->match.route->scope == 0)
		return true;
	enum rg_status st = auth_verify(r->srv->pool, header(r->conn, "Authorization"), &r->who,
					&r->dberr);
	if (st == RG_OK) {
		r->authenticated = true;
		return true;
	}
	if (st == RG_UNAVAILABLE)
		*ret = problem(r, 503, "database_unavailable",
			       "The database is unavailable; retry later.", NULL, -1, NULL);
	else if (st == RG_TIMEOUT)
		*ret = problem(r, 504, "query_timeout",
			       "The database did not finish the request within its time limit; retry, "
			       "or ask for less.",
			       NULL, -1, NULL);
	else if (st == RG_NOT_FOUND)
		*ret = problem(r, 401, "unauthenticated", "A valid bearer token is required.", NULL,
			       -1, NULL);
	else
		*ret = problem(r, 500, "internal", "The request could not be completed.", NULL, -1,
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
		return problem(r, 404, "not_found", "No resource at this path.", NULL, -1, NULL);
	if (r->routed == ROUTER_METHOD_NOT_ALLOWED)
		return problem(r, 405, "method_not_allowed", "This path does not support the method.",
			       NULL, -1, r->match.allow);
	if (!authenticate(r, &ret))
		return ret;
	if (r->too_large)
		return problem(r, 413, "payload_too_large", "The body exceeds the size limit.", NULL,
			       -1, NULL);
	for (size_t i = 0; i < r->match.nparams; i++) {
		if (!core_id_valid(r->match.params[i].value)) {
			json_t *errors = json_array();
			core_fields_error(errors, r->match.params[i].name,
					  "must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
			ret = problem(r, 422, "validation_failed", "A path parameter is not valid.",
				      errors, -1, NULL);
			json_decref(errors);
			return ret;
		}
	}
	if (route->body) {
		if (!json_content_type(header(r->conn, MHD_HTTP_HEADER_CONTENT_TYPE)))
			return problem(r, 415, "unsupported_media_type",
				       "The body must be application/json.", NULL, -1, NULL);
		body = core_json_parse_strict(r->body, r->body_len);
		if (body == NULL)
			return problem(r, 400, "invalid_json", "The body is not valid JSON.", NULL, -1,
				       NULL);
		json_t *errors = json_array();
		enum fields_result fr = core_fields_validate(body, route->body, errors);
		const char *code = fr == FIELDS_OK && route->check ? route->check(body, errors) : NULL;
		if (code) {
			ret = problem(r, 422, code, "The body is not valid.", errors, -1, NULL);
			json_decref(errors);
			json_decref(body);
			return ret;
		}
		if (fr != FIELDS_OK) {
			ret = problem(r, 422, fr == FIELDS_UNKNOWN ? "unknown_field" : "validation_failed",
				      fr == FIELDS_UNKNOWN ? "The body has a field this endpoint does not accept."
							   : "The body is not valid.",
				      errors, -1, NULL);
			json_decref(errors);
			json_decref(body);
			return ret;
		}
		json_decref(errors);
	}
	if (route->scope != 0 && !core_scope_allows(who->scopes, route->scope)) {
		json_decref(body);
		return problem(r, 403, "forbidden", "The token lacks the scope this endpoint needs.",
			       NULL, -1, NULL);
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
		.query = ctx_query,
		.token_deleted = auth_forget,
		.metrics_text = ctx_metrics,
		.provider_call = ctx_provider_call,
		.provider_observe = ctx_provider_observe,
		.server_data = r->conn,
		.current_revision = -1,
	};
	route->handler(&ctx);
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct request *r = *con_cls;
	(void)version;

	if (r == NULL) {
		r = request_new(srv, conn, method, url);
		if (r == NULL)
			return MHD_NO;
		*con_cls = r;
		/* Answer before reading a byte of the body whenever the answer cannot depend on it:
		 * no route (404/405), a missing or bad token (401), a declared length over the cap
		 * (413), or an ambiguous length. */
		const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		unsigned lengths = 0;
		MHD_get_connection_values(conn, MHD_HEADER_KIND, count_content_length, &lengths);
		if (lengths > 1)
			return problem(r, 400, "invalid_json", "Conflicting Content-Length headers.",
				       NULL, -1, NULL);
		if (cl && strtoull(cl, NULL, 10) > srv->cfg->max_body)
			r->too_large = true;
		if (r->routed != ROUTER_FOUND || r->too_large)
			return dispatch(r);
		enum MHD_Result ret;
		if (!authenticate(r, &ret))
			return ret;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (r->status == 0 && !append_body(r, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->status != 0)
		return MHD_YES; /* already answered (early 413) */
	return dispatch(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct request *r = *con_cls;
	(void)conn;
	(void)toe;
	if (r == NULL)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double secs = (double)(now.tv_sec - r->started.tv_sec) +
		      (double)(now.tv_nsec - r->started.tv_nsec) / 1e9;
	if (r->status != 0) {
		const char *route = r->route_index < srv->n_routes ? srv->routes[r->route_index].path
								   : "unmatched";
		metrics_observe(r->route_index, r->method, r->status, secs);
		log_access(r->request_id, r->method, route, r->status, secs * 1000.0, r->problem_code,
			   r->dberr.sqlstate, r->dberr.message);
	}
	free(r->body);
	free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&srv->in_flight, 1);
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
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6) /* [::] serves IPv4 too, whatever net.ipv6.bindv6only says */
		flags |= MHD_USE_DUAL_STACK;
	srv->daemon = MHD_start_daemon(
		flags, (uint16_t)cfg->port, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->connection_timeout,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
		MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
		MHD_OPTION_END);
	freeaddrinfo(ai);
	if (srv->daemon == NULL) {
		char addr[sizeof cfg->host + 8];
		log_error(NULL, "cannot listen on %s", cfg_addr_format(cfg, addr, sizeof addr));
		free(srv);
		return false;
	}
	*out = srv;
	return true;
}

void http_stop(struct http_server *srv, unsigned drain_ms)
{
	if (srv == NULL)
		return;
	MHD_socket listen = MHD_quiesce_daemon(srv->daemon);
	if (listen != MHD_INVALID_SOCKET)
		close(listen);
	for (unsigned waited = 0; atomic_load(&srv->in_flight) > 0 && waited < drain_ms; waited += 10) {
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(srv->daemon);
	free(srv);
}
