/* Private to server/: the server and the request as http.c (lifecycle, lanes, libmicrohttpd
 * callbacks), reply.c (answers) and dispatch.c (authentication and the handler call) share
 * them. Nothing outside server/ includes this. */
#ifndef RG_SERVER_REQUEST_H
#define RG_SERVER_REQUEST_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "core/ids.h"
#include "core/lsn.h"
#include "core/problem.h"
#include "db/db.h"
#include "db/row.h"
#include "handlers/api.h"
#include "server/auth.h"
#include "server/clock.h"
#include "server/clients.h"
#include "server/config.h"
#include "server/router.h"

struct lane;
struct conn_entry;

struct http_server {
	struct MHD_Daemon *daemon;
	const struct rg_config *cfg;
	struct db_pool *pool;
	struct db_standbys *standbys; /* hot standbys for reads, or NULL */
	const struct h_route *routes;
	size_t n_routes;
	struct lane *workers; /* handlers that may block on the database: one per connection */
	struct lane *elastic; /* handlers that wait on providers, and readiness */
	struct quota *provider_calls; /* provider waits on the elastic lane per tenant */
	struct quota *ledger_waits;   /* content reads and context loads there per tenant */
	atomic_int in_flight;
	atomic_bool draining;
	atomic_llong drain_deadline_ms; /* CLOCK_MONOTONIC; valid once draining */
};

/* One per connection (its socket context): the header deadline, and what on_uri noted for
 * the request being parsed. */
struct conn_state {
	struct conn_entry *deadline;
	bool uri_too_long;
	/* framing.c: on its I/O thread's list from the request line to the first access call */
	struct MHD_Connection *conn;
	struct conn_state *prev, *next;
	bool pending;
};

/* A write's Idempotency-Key (idempotency.c): its transaction, and a replayed answer's headers. */
#define IDEM_MAX_HEADERS 8
struct idem_request {
	unsigned char path_sha[32]; /* the path's SHA-256, taken when the request began */
	struct db_conn *tx;         /* the write's transaction, open while the handler runs */
	char fingerprint[65];
	const char *key;            /* the header's value (libmicrohttpd's) */
	json_t *kept_headers;       /* a replay's [[name, value], ...]: the strings below */
	char *content_type;         /* a replay's */
	struct h_header headers[IDEM_MAX_HEADERS];
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
	 * be called from the access handler); destroyed by request_done when it never was (the
	 * connection closed while suspended). */
	struct MHD_Response *resp;
	bool close;           /* the answer closes the connection (a framing error) */
	bool on_lane;         /* a lane runs dispatch: the database may be used */
	/* the lane it runs on (valid with on_lane): H_LANE_ELASTIC's handler may wait on a
	 * provider, H_LANE_LEDGER's waits on the ledger */
	enum h_lane lane;
	bool lane_done;       /* the lane finished and resumed the connection */
	struct db_conn *held; /* borrowed by authentication, handed to the handler */
	bool began;           /* dispatch's checks passed and ctx is the handler's */
	struct h_ctx ctx;
	/* pipes.c: a pipelined read's place in its pipe's list, and its outcome */
	struct request *pipe_next;
	long long pipe_sent_ms;
	enum rg_status pipe_st;
	struct db_rows pipe_rows;
	struct clients_ticket client; /* counted in flight for its forwarded client */
	struct conn_entry *conn_entry; /* its connection's deadlines (conns.h), or NULL */
	struct idem_request idem;     /* idempotency.c: a write with an Idempotency-Key */
	char commit_lsn[RG_LSN_SIZE]; /* a 2xx write's Recallgate-Commit-LSN, or "" */
	struct router_match match; /* large: keep it last */
};

static inline const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}


/* ---------------------------------------------------------------- http.c */

/* A fresh request id: a per-process random prefix and a counter. */
void http_new_request_id(char *out, size_t size);

/* ---------------------------------------------------------------- idempotency.c */

/* When the request began: notes what its fingerprint needs (the path) if it carries a key. */
void idem_note_path(struct request *r, const char *url);
/* On a lane, after dispatch's checks and before the handler: true when the handler is to
 * run (in the key's transaction when there is one); false when the answer is set in r->ctx
 * already (a replay, 409 operation_conflict, 422 for a bad key, or a database failure). */
bool idem_begin(struct request *r);
/* After the handler: a 2xx answer is kept with the write and both commit; anything else is
 * rolled back (a refused write wrote nothing). A failed commit answers 503 instead. */
void idem_end(struct request *r);
/* Frees what a replay kept (from the request's end; the transaction ended in idem_end). */
void idem_free(struct request *r);

/* ---------------------------------------------------------------- reply.c */

/* Keeps resp (consumed) as r's answer with status; MHD_NO when resp is NULL. Any thread. */
enum MHD_Result reply_queue(struct request *r, unsigned status, struct MHD_Response *resp);
/* On the I/O thread: queues the kept answer; MHD_NO (close) when there is none. */
enum MHD_Result reply_flush(struct request *r);
/* A problem answer (code's status and title; detail NULL: the code's default); errors is
 * borrowed; allow, when not NULL, becomes the Allow header. */
enum MHD_Result reply_problem(struct request *r, enum rg_problem code, const char *detail,
			      json_t *errors, long long current_revision, const char *allow);
/* For a suspended request whose handler will not run, from any thread: frees what dispatch
 * set up for it, keeps code's problem as its answer and resumes the connection, whose I/O
 * thread queues it. */
void reply_resume_problem(struct request *r, enum rg_problem code);
/* Whether the request's Origin header is one of RECALLGATE_CORS_ORIGINS (false when absent). */
bool reply_origin_allowed(const struct request *r);
/* The answer to a CORS preflight. */
enum MHD_Result reply_preflight(struct request *r);
/* The answer a handler left in ctx (its problem, raw text or JSON reply). */
enum MHD_Result reply_render(struct request *r, struct h_ctx *ctx);

/* ---------------------------------------------------------------- dispatch.c */

/* Verifies the bearer token once per request: from the cache on the I/O thread, with the
 * database on a lane. false after keeping the answer (401, 503, 504 or 500) in *ret; on the
 * I/O thread also when only the database can say (no answer kept). */
bool dispatch_authenticate(struct request *r, enum MHD_Result *ret);
/* Everything after the body has arrived: scope, path parameters, body, then the handler. */
enum MHD_Result dispatch(struct request *r);

/* Frees what dispatch's checks set up for a handler that will not run (nothing when they
 * did not run), its borrowed connection included. */
void dispatch_drop(struct request *r);

/* dispatch's checks, up to the handler call (a pipelined read's statement goes out after
 * them, from pipes.c). true when the handler may run: r->ctx is set up for it (dispatch then
 * runs the handler); otherwise the answer is kept in *ret. */
bool dispatch_begin(struct request *r, enum MHD_Result *ret) RG_MUSTCHECK;
struct db_pipe;
/* After dispatch_begin, for a route with an h_read: sends its statement on p (db_pipe_send's
 * outcome: RG_NOT_SENT when it is not pipeable). */
enum rg_status dispatch_pipe_send(struct request *r, struct db_pipe *p) RG_MUSTCHECK;
/* Answers a pipelined read from its statement's outcome (rows borrowed; on failure
 * r->ctx.dberr says why) with its route's h_read. Any thread. */
void dispatch_pipe_finish(struct request *r, enum rg_status st, const struct db_rows *rows);

#endif
