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
#include "core/problem.h"
#include "db/standby.h"
#include "server/events.h"
#include "server/framing.h"
#include "server/conns.h"
#include "server/lanes.h"
#include "server/ledger.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/outbound.h"
#include "server/pipes.h"
#include "server/quota.h"
#include "server/request.h"
#include "server/router.h"

#define DRAIN_FACTOR 8
#define HTTP_IO_THREADS 2
/* What a request may bring, within the default RECALLGATE_CONNECTION_MEMORY (8 KiB): every
 * documented request fits with room to spare. Past these it is answered 414 / 431 while the
 * connection's memory still allows an answer; past the memory, see on_uri and docs. */
#define HTTP_MAX_URI_BYTES 4096
#define HTTP_MAX_HEAD_BYTES 6144
#define HTTP_MAX_QUERY_PARAMS 64
/* Provider calls wait up to their deadline; each waits on a thread of its own. */
#define HTTP_ELASTIC_LANE_MAX 1024
/* The drain ends once nothing was in flight for this long (or at its deadline). */
#define HTTP_QUIET_MS 500
/* After the lanes stopped: time for their last answers to be sent. */
#define HTTP_FLUSH_MS 500
/* After the drain's deadline, statements still running are cancelled for this long. */
#define HTTP_CANCEL_MS 300

/* Request ids need to be unique, not secret: a random per-process prefix and a counter
 * cost no system call (RAND_bytes checks for a fork with getpid on every call). */
static char request_id_prefix[17];
static atomic_ullong request_counter;

void http_new_request_id(char *out, size_t size)
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
		http_new_request_id(r->request_id, sizeof r->request_id);
	r->routed = router_match(srv->routes, srv->n_routes, method, url, &r->match);
	idem_note_path(r, url);
	/* Metrics and logs label a request by its path's template, also for a 405. */
	r->route_index =
		r->match.path_route ? (size_t)(r->match.path_route - srv->routes) : srv->n_routes;
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

/* The request's end: its metrics and access log line (when it was answered), then it is freed,
 * with an answer it kept and never queued. NULL is fine. */
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
		const char *route = r->route_index < srv->n_routes
					    ? srv->routes[r->route_index].path
					    : "unmatched";
		metrics_observe(r->route_index, r->method, r->status, secs);
		log_access(r->request_id, r->method, route, r->status, secs * 1000.0,
			   core_problem_code(r->problem_code), r->dberr.sqlstate, r->dberr.message);
	}
	clients_leave(&r->client);
	dispatch_drop(r); /* nothing when the handler's context was already freed */
	idem_free(r);
	/* An answer a lane or a pipe made, never queued: the client went away while the request
	 * was suspended, and after the resume libmicrohttpd closed the connection without calling
	 * on_request again (or the daemon stopped first). */
	if (r->resp)
		MHD_destroy_response(r->resp);
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
	if (atomic_load(&srv->draining) && mono_ms() >= atomic_load(&srv->drain_deadline_ms)) {
		dispatch_drop(r);
		(void)reply_problem(r, PROBLEM_SHUTTING_DOWN, NULL, NULL, -1, NULL);
	} else {
		(void)dispatch(r);
	}
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
	reply_resume_problem(r, PROBLEM_DATABASE_UNAVAILABLE);
}

/* Hands the request, its connection suspended, to its lane. */
static enum MHD_Result submit_to_lane(struct request *r)
{
	struct http_server *srv = r->srv;
	const struct h_route *route = r->match.route;
	enum h_lane which = route ? route->lane : H_LANE_WORKER;
	if (route && route->lane_for) /* the route's work depends on its body (/mcp's tool) */
		which = route->lane_for(r->body, r->body_len);
	struct lane *lane = which == H_LANE_WORKER ? srv->workers : srv->elastic;
	r->on_lane = true;
	r->lane = which;
	if (!lane_submit(lane, run_on_lane, expire_on_lane, r))
		reply_resume_problem(r, PROBLEM_SHUTTING_DOWN);
	return MHD_YES;
}

/* Suspends the connection and hands the request to its lane. */
static enum MHD_Result to_lane(struct request *r)
{
	MHD_suspend_connection(r->conn);
	return submit_to_lane(r);
}

/* A route answered by one statement (an h_read), with its token from the cache: sent on a
 * pipe (pipes.c) when its statement is pipeable and a pipe can take it, after dispatch's
 * checks; else its handler runs on a lane. */
static enum MHD_Result to_pipe(struct request *r)
{
	enum MHD_Result ret;
	if (!dispatch_begin(r, &ret))
		return reply_flush(r);
	MHD_suspend_connection(r->conn);
	/* With standbys the pipe is the first one's: it takes a read that standby may serve now
	 * (a pipe cannot wait for a Recallgate-Min-LSN). */
	struct db_standbys *sb = r->srv->standbys;
	if ((sb == NULL || db_standby_ready(sb, 0, r->ctx.min_lsn)) && pipes_submit(r)) {
		if (sb)
			db_standby_served(sb, 0);
		return MHD_YES;
	}
	return submit_to_lane(r); /* dispatch runs the handler there */
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
		const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		unsigned long long length = cl ? strtoull(cl, NULL, 10) : 0;
		bool with_body = length > 0 || header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
		if (cs)
			conns_headers_done(cs->deadline, with_body);
		framing_request_seen(cs);
		r = request_new(srv, conn, method, url);
		if (r == NULL)
			return MHD_NO;
		r->conn_entry = cs ? cs->deadline : NULL;
		const union MHD_ConnectionInfo *hs =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
		bool uri_too_long = cs && cs->uri_too_long;
		if (uri_too_long || (hs && hs->header_size > HTTP_MAX_HEAD_BYTES)) {
			/* The connection's memory is nearly spent: libmicrohttpd sends this answer
			 * and closes without a completion call, so the request ends here. */
			if (cs)
				cs->uri_too_long = false;
			(void)reply_problem(
				r, uri_too_long ? PROBLEM_URI_TOO_LONG : PROBLEM_HEADERS_TOO_LARGE,
				NULL, NULL, -1, NULL);
			enum MHD_Result ret = reply_flush(r);
			*con_cls = NULL;
			request_done(r);
			return ret;
		}
		*con_cls = r;
		/* Answer before reading a byte of the body whenever the answer cannot depend on it:
		 * no route (404/405), a missing or bad token (401), a declared length over the cap
		 * (413), or an ambiguous length. */
		/* Framing the body two ways is the request-smuggling shape, and a coding we cannot
		 * decode leaves the body's end unknown (RFC 9112 §6.1, §6.3): refuse it at once
		 * and close, so that nothing after it on the connection is read as a request. */
		const char *refusal = framing_refusal(conn);
		if (refusal != NULL) {
			r->close = true;
			(void)reply_problem(r, PROBLEM_INVALID_REQUEST, refusal, NULL, -1, NULL);
			return reply_flush(r);
		}
		if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && header(conn, "Host") == NULL) {
			(void)reply_problem(r, PROBLEM_INVALID_REQUEST,
					    "An HTTP/1.1 request needs Host.", NULL, -1, NULL);
			return reply_flush(r);
		}
		/* Behind a gateway: the requests in flight of one forwarded client are limited as
		 * connections of one address are without it (clients.h). */
		char client[CLIENTS_KEY_MAX + 1];
		if (srv->cfg->trust_proxy &&
		    clients_forwarded(header(conn, "X-Forwarded-For"), client, sizeof client) &&
		    !clients_enter(client, &r->client)) {
			r->retry_after_s = 1;
			(void)reply_problem(r, PROBLEM_RATE_LIMITED,
					    "Too many requests in flight from this client.", NULL, -1,
					    NULL);
			return reply_flush(r);
		}
		if (length > srv->cfg->max_body)
			r->too_large = true;
		enum MHD_Result ret;
		if (r->routed == ROUTER_FOUND && !dispatch_authenticate(r, &ret) && r->resp)
			return reply_flush(
				r); /* refused from the cache alone (a missing or bad header) */
		if (r->routed != ROUTER_FOUND || r->too_large) {
			if (!dispatch_inline(r))
				return to_lane(r);
			(void)dispatch(r);
			return reply_flush(r);
		}
		return MHD_YES;
	}
	if (r->lane_done)
		return reply_flush(r); /* resumed: the lane's answer */
	if (*upload_data_size > 0) {
		if (r->status == 0 && !append_body(r, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	conns_body_done(r->conn_entry); /* the final call: the body is complete */
	if (r->status != 0)
		return MHD_YES; /* already answered (early 413) */
	if (r->authenticated && r->routed == ROUTER_FOUND && r->match.route->read &&
	    !atomic_load(&srv->draining))
		return to_pipe(r);
	if (!dispatch_inline(r))
		return to_lane(r);
	(void)dispatch(r);
	return reply_flush(r);
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
		framing_request_seen(cs);
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
		log_warn(NULL,
			 "http: closed a connection whose query has %zu parameters (at most %d)",
			 params, HTTP_MAX_QUERY_PARAMS);
	} else if (cs) {
		conns_request_line(cs->deadline);
		cs->uri_too_long = strlen(uri) > HTTP_MAX_URI_BYTES;
		framing_uri_seen(cs, conn);
	}
	return NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	request_done(*con_cls);
	*con_cls = NULL;
	const union MHD_ConnectionInfo *sc =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn_state *cs = sc ? sc->socket_context : NULL;
	if (cs)
		conns_answered(cs->deadline); /* the next request's head is awaited */
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

bool http_start(const struct rg_config *cfg, struct db_pool *pool, struct db_standbys *standbys,
		const struct h_route *routes, size_t n_routes, struct http_server **out)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
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
	srv->standbys = standbys;
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
	if (!conns_start(cfg->header_timeout * 1000u, cfg->connection_timeout * 1000u)) {
		freeaddrinfo(ai);
		free(srv);
		return false;
	}
	/* One worker per pool connection: the lane's queue is FIFO, the pool's semaphore is not.
	 * With twice as many workers as connections a GET's p99 at 32 connections went from
	 * 3 ms to 231 ms (workers overtaking each other at the pool). */
	if (!quota_new(cfg->max_provider_calls_per_tenant, &srv->provider_calls) ||
	    !quota_new(cfg->max_ledger_waits_per_tenant, &srv->ledger_waits) ||
	    !lane_start("workers", cfg->db_pool, cfg->db_pool, cfg->db_acquire_timeout_ms,
			&srv->workers) ||
	    !lane_start("elastic", 1, HTTP_ELASTIC_LANE_MAX, cfg->db_acquire_timeout_ms,
			&srv->elastic) ||
	    !pipes_start(standbys ? db_standby_conninfo(standbys, 0) : cfg->database_url) ||
	    !ledger_start(srv->pool)) {
		pipes_stop(0);
		lane_stop(srv->elastic);
		lane_stop(srv->workers);
		quota_free(srv->provider_calls);
		quota_free(srv->ledger_waits);
		conns_stop();
		freeaddrinfo(ai);
		free(srv);
		return false;
	}
	/* MHD_USE_TURBO: accept4 and fewer system calls per request; GET memory-mode at 32
	 * connections went from 19.5-26.5k to 25.3-29.7k req/s, p99 4.7-17 ms to 2.8-2.9 ms. */
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
			 MHD_USE_TURBO | MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6) /* [::] serves IPv4 too, whatever net.ipv6.bindv6only says */
		flags |= MHD_USE_DUAL_STACK;
	srv->daemon = MHD_start_daemon(
		flags, (uint16_t)cfg->port, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
		framing_mhd_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)cfg->connection_timeout, MHD_OPTION_THREAD_POOL_SIZE,
		(unsigned)HTTP_IO_THREADS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)cfg->connection_memory, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_URI_LOG_CALLBACK,
		on_uri, srv,
		/* behind a gateway every connection comes from it: per-client limits are its job */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		cfg->trust_proxy ? 0u : (unsigned)cfg->max_client_connections,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_UNESCAPE_CALLBACK,
		unescape, NULL, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (srv->daemon == NULL) {
		char addr[sizeof cfg->host + 8];
		log_error(NULL, "cannot listen on %s", cfg_addr_format(cfg, addr, sizeof addr));
		pipes_stop(0);
		lane_stop(srv->elastic);
		lane_stop(srv->workers);
		ledger_stop();
		quota_free(srv->provider_calls);
		quota_free(srv->ledger_waits);
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
	for (long long now = busy_at; now < until; now = mono_ms()) {
		if (atomic_load(&srv->in_flight) > 0)
			busy_at = now;
		else if (now - busy_at >= quiet_ms) /* with quiet_ms 0: as soon as none is */
			break;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* Handlers still running at the drain's deadline: their statements are cancelled (again and
 * again: a cancel that finds its connection between two statements is lost). PostgreSQL
 * rolls a cancelled statement back, so the handler answers 503 shutting_down for work that
 * did not commit, and the exit stays within the drain time + 1 s. */
static void cancel_running(struct http_server *srv, long long until)
{
	for (;;) {
		struct lane_stats w, e;
		lane_get_stats(srv->workers, &w);
		lane_get_stats(srv->elastic, &e);
		if (w.busy + e.busy == 0 || mono_ms() >= until)
			return;
		db_pool_cancel_busy(srv->pool);
		db_standbys_cancel_busy(srv->standbys);
		struct timespec ts = {0, 20 * 1000000L};
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
	/* Event streams end now (their clients resume elsewhere with Last-Event-ID); none may
	 * stay suspended when the daemon stops. */
	events_drain();
	/* Quiesced, each epoll I/O thread takes the listening socket out of its set on its next
	 * turn: closing it now would let one of them find a closed descriptor (libmicrohttpd then
	 * aborts). shutdown() refuses new connections at once; close() waits for the stop. */
	MHD_socket listen = MHD_quiesce_daemon(srv->daemon);
	if (listen != MHD_INVALID_SOCKET)
		shutdown(listen, SHUT_RDWR);
	wait_in_flight(srv, deadline, HTTP_QUIET_MS);
	cancel_running(srv, mono_ms() + HTTP_CANCEL_MS);
	/* What a lane has not started is answered 503 shutting_down; provider calls end at the
	 * deadline. A lane waits for its running handlers, so a committed write is answered. */
	lane_stop(srv->elastic);
	lane_stop(srv->workers);
	ledger_stop(); /* after the handlers that wait on it */
	/* Pipelined reads are read-only: what has no answer by the deadline is answered 503. */
	pipes_stop(deadline);
	wait_in_flight(srv, mono_ms() + HTTP_FLUSH_MS, 0); /* those answers go out */
	MHD_stop_daemon(srv->daemon);
	if (listen != MHD_INVALID_SOCKET)
		close(listen);
	conns_stop();
	quota_free(srv->provider_calls);
	quota_free(srv->ledger_waits);
	free(srv);
}
