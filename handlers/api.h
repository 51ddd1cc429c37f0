/* What a handler sees of a request, and what it hands back. server/ fills the request part
 * (after routing, authentication, body parsing, field validation and the scope check),
 * calls the route's handler, and renders the reply. Handlers include core/ and db/ only. */
#ifndef RG_HANDLERS_API_H
#define RG_HANDLERS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "core/fields.h"
#include "core/hash.h"
#include "core/problem.h"
#include "db/db.h"

#define H_MAX_PARAMS 8

struct h_param {
	const char *name;  /* borrowed, without braces */
	const char *value; /* borrowed, URL-decoded */
};

struct h_ctx;
typedef void (*h_handler)(struct h_ctx *ctx);

/* A response header a handler adds (both strings static). */
struct h_header {
	const char *name;
	const char *value;
};

/* An outbound call to a provider (server/outbound.c does the HTTP; see
 * docs/providers-contract.md for its transport rules). */
#define H_CALL_BODY_MAX (1024 * 1024)
enum h_call_outcome {
	H_CALL_OK = 0,       /* a 2xx answer; its body in the result */
	H_CALL_HTTP_ERROR,   /* any other status, a redirect included (never followed) */
	H_CALL_TIMEOUT,      /* the deadline passed (connecting or reading) */
	H_CALL_UNREACHABLE,  /* resolve, connect, TLS or transport failure */
	H_CALL_OVERSIZE,     /* more than H_CALL_BODY_MAX bytes */
};
struct h_call {
	const char *method;   /* "GET" or "POST" */
	const char *url;      /* http:// or https:// */
	const char *body;     /* POST body (JSON) or NULL */
	size_t body_len;
	unsigned deadline_ms; /* connect + transfer, ≥ 1 */
};
struct h_call_result {
	enum h_call_outcome outcome;
	long http_status;     /* 0 when no answer came */
	char *body;           /* new (free()), NUL-terminated; NULL unless H_CALL_OK */
	size_t body_len;
	long long latency_ms; /* wall time of the call */
};
/* What one provider call came to, for the metrics and the log line. No private text: ids,
 * codes and static rule names only. */
struct h_call_report {
	const char *call;         /* "retrieve" | "recall" | "doctor" */
	const char *extension_id;
	const char *outcome;      /* "ok" | "unavailable" | "invalid" | "http_error" | "timeout" |
				   * "unreachable" | "oversize" */
	const char *reason;       /* the reason code or failure kind answered, or NULL */
	const char *why;          /* the broken contract rule (static text), or NULL */
	long long latency_ms;
};

/* Where server/ runs a route's handler. */
enum h_lane {
	H_LANE_WORKER = 0, /* a worker thread: it may block on the database */
	H_LANE_INLINE,     /* the I/O thread: it never blocks (no database, no provider) */
	H_LANE_ELASTIC,    /* a lane that grows a thread per waiting request, for work that waits
			    * on something other than the pool: a provider (up to its deadline),
			    * a readiness probe (which must not queue behind busy workers) */
	H_LANE_LEDGER,     /* the elastic lane's threads, for a content read or a context load,
			    * which wait on the ledger (server/ledger.c), not on a provider, and
			    * must not hold a worker while they do */
};

struct h_ctx;
struct db_rows;

/* At most this many parameters for a one-statement read. */
#define H_READ_MAX_PARAMS 8

/* A route answered by one db/ statement: its parameters come from the request and its answer
 * is rendered from the statement's typed rows (db/row.h). The route's handler is h_read_run,
 * which runs the statement on a pool connection; server/ may send it on a pipe instead
 * (server/pipes.c) when the statement is pipeable (struct db_stmt, chosen in db/), and
 * answers with the same `answer`. */
struct h_read {
	const struct db_stmt *stmt;
	/* Fills the statement's stmt->nparams parameters (borrowed from ctx). */
	void (*params)(const struct h_ctx *ctx, const char **out);
	/* Answers from the statement's outcome: rows on RG_OK (borrowed), else ctx->dberr says
	 * why. */
	void (*answer)(struct h_ctx *ctx, enum rg_status st, const struct db_rows *rows);
};
/* The handler of a route with an h_read (handlers/gate.c). */
void h_read_run(struct h_ctx *ctx);

/* Where a route's statements run when hot standbys are configured
 * (RECALLGATE_READ_DATABASE_URL; docs/scaling.md). */
enum h_db {
	H_DB_AUTO = 0, /* a GET under /v1/ on a standby, anything else on the primary */
	H_DB_PRIMARY,  /* the primary: a GET that must see the primary's present (a content
			* read, which the ledger makes on the primary; event streams) */
	H_DB_STANDBY,  /* a standby: a POST that only reads (search, explain) */
};

/* A route's scope that asks only for a valid token, whatever its scopes: the handler checks
 * scopes itself (/mcp, whose tools each need their own route's scope). */
#define H_SCOPE_TOKEN (1u << 31)

struct h_route {
	const char *method;             /* "GET", "PUT", ... */
	const char *path;               /* template: "/v1/threads/{thread_id}/memory-mode" */
	h_handler handler;
	unsigned scope;                 /* required scope bits; 0 = public, no authentication */
	const struct field_spec *body;  /* the body's fields; NULL = the route takes no body */
	/* Rules across fields, run with the field checks (before the scope check): appends to
	 * errors and returns the problem code (422), or PROBLEM_NONE when the body is fine. */
	enum rg_problem (*check)(const json_t *body, json_t *errors);
	enum h_lane lane;
	/* When not NULL, the lane is chosen from the received body instead (body may be NULL):
	 * /mcp runs a tool that waits on a provider where that tool's route runs. */
	enum h_lane (*lane_for)(const char *body, size_t len);
	const struct h_read *read; /* NULL, or the one statement that answers it (handler:
				    * h_read_run) */
	/* The answer holds a secret (a new token): it may not be kept for an Idempotency-Key's
	 * replay (server/idempotency.c refuses the key). */
	bool secret_answer;
	enum h_db db;
};

#define H_MIN_LSN_HEADER "Recallgate-Min-LSN"
#define H_COMMIT_LSN_HEADER "Recallgate-Commit-LSN"

/* The route only reads: with standbys configured, its statements run on one (handlers/gate.c,
 * the one home of the rule). */
bool h_route_reads(const struct h_route *route);
/* The route writes: its 2xx answers carry Recallgate-Commit-LSN. Every method but GET,
 * except the POSTs that only read; a GET never does (a content read's disclosure is the
 * ledger's write, whose commit LSN the read hands its answer: h_ctx.content_read). */
bool h_route_writes(const struct h_route *route);

/* GET /v1/events: where a stream starts and what it sends (docs/events.md). */
struct h_events_request {
	const char *resource_type; /* NULL = any (borrowed for the call) */
	const char *resource_id;   /* NULL = any */
	int64_t after;             /* the stream sends the records with seq > after */
};

struct db_content_read;
struct db_delivery;

struct h_ctx {
	/* request (all borrowed) */
	const struct h_route *route;
	const struct h_param *params;
	size_t nparams;
	json_t *body;          /* validated against route->body; NULL when the route has none */
	const char *raw_body;  /* the bytes received (not NUL-terminated), NULL when none */
	size_t raw_body_len;
	const char *if_match;  /* NULL when absent */
	const char *if_none_match; /* NULL when absent */
	const char *request_id;
	const char *traceparent;
	const char *via; /* the transport, "rest" or "mcp" (a disclosure's `via`) */
	/* the caller (zero for public routes) */
	const char *tenant_id;
	const char *token_id;
	const char *token_name;
	unsigned scopes;
	/* services the composition root provides */
	struct db_pool *pool;       /* the primary's */
	struct db_standbys *standbys; /* hot standbys for reads, or NULL */
	/* Recallgate-Min-LSN: a read waits for a standby that replayed it (0: any) */
	uint64_t min_lsn;
	/* Where this request's reads went (set by its first h_db_acquire of a read route: the
	 * later ones go there too), or NULL. */
	struct db_pool *read_pool;
	/* A primary connection was taken for a route that writes: a 2xx answer carries
	 * Recallgate-Commit-LSN. commit_lsn is the position after the request's commits when it
	 * is known already (each write's connection asks in its commit's round trip, the ledger
	 * once per batch); 0: server/ asks after the request. */
	bool wrote;
	uint64_t commit_lsn;
	/* The connection server/ borrowed to verify the token, or NULL: h_db_acquire hands it to
	 * the handler's first acquire, so a request borrows from the pool once. server/
	 * releases it if the handler never takes it. */
	struct db_conn *held;
	/* A transaction server/ holds open for the request (a write with an Idempotency-Key,
	 * server/idempotency.c), or NULL: every h_db_acquire gets it, h_db_release leaves it. */
	struct db_conn *tx;
	bool shutting_down; /* SIGTERM came: the instance drains (readiness answers 503) */
	long long received_ms; /* CLOCK_MONOTONIC ms at the request's arrival */
	const char *(*query)(const struct h_ctx *ctx, const char *name); /* query argument */
	/* Every value of a repeated query argument, in order: up to max into out; the count. */
	size_t (*query_all)(const struct h_ctx *ctx, const char *name, const char **out,
			    size_t max);
	const char *(*header)(const struct h_ctx *ctx, const char *name); /* request header */
	/* Makes the reply an event stream of the caller's tenant; false with the problem set
	 * (503 too_many_streams or shutting_down). */
	bool (*events_open)(struct h_ctx *ctx, const struct h_events_request *req);
	/* An Origin header is present and is not one of RECALLGATE_CORS_ORIGINS */
	bool foreign_origin;
	void (*token_deleted)(const char *sha256_hex); /* drop from the verification cache */
	/* Charges one more request to the token's rate limit (RECALLGATE_RATE_LIMIT), for work
	 * that one HTTP request carries several of (an /mcp batch's tool calls past the first);
	 * false when refused. */
	bool (*rate_take)(const struct h_ctx *ctx);
	char *(*metrics_text)(size_t *len);            /* new: free() it */
	/* Calls a provider (blocking, bounded by call->deadline_ms; passes the request's
	 * traceparent on). Never call it while holding a database connection. */
	void (*provider_call)(const struct h_ctx *ctx, const struct h_call *call,
			      struct h_call_result *out);
	/* Counts and logs one provider call. */
	void (*provider_observe)(const struct h_ctx *ctx, const struct h_call_report *r);
	void *server_data;

	/* Reads a record's content for the answer and records its disclosure before it returns
	 * (server/ledger.c: with the concurrent reads in one commit, or in ctx->tx when the
	 * request holds one); rows: 0 or 1 struct db_mem_content (new). A recorded disclosure
	 * is the request's write: its answer carries the commit's Recallgate-Commit-LSN. The
	 * only way content leaves (docs/disclosures.md). It and deliver give back `held` first
	 * (the ledger takes a connection of its own): call them holding no other. */
	enum rg_status (*content_read)(struct h_ctx *ctx, const struct db_content_read *in,
				       struct db_rows *rows);
	/* Records a context load (its receipt and what it delivered) before its answer is sent
	 * (server/ledger.c: with the concurrent loads in one commit, or in ctx->tx when the
	 * request holds one). *stale > 0: an item stopped being retrievable, nothing was
	 * recorded, match again. */
	enum rg_status (*deliver)(struct h_ctx *ctx, const struct db_delivery *d, size_t *stale);

	/* reply, rendered by server/ */
	int status;
	json_t *reply;              /* new reference or NULL */
	const char *content_type;   /* non-JSON reply (metrics, openapi) */
	char *raw;                  /* with content_type: new (free()d by server) or static */
	size_t raw_len;
	bool raw_static;
	void *stream;               /* set by events_open: the reply is that stream */
	char etag[32];
	char location[256];
	const struct h_header *headers; /* static: added to a non-problem reply, or NULL */
	size_t nheaders;
	/* a problem reply */
	enum rg_problem problem_code; /* PROBLEM_NONE = the reply is not a problem */
	char problem_detail[200];
	json_t *problem_errors;     /* new reference or NULL */
	json_t *problem_extra;      /* new reference or NULL: members added to the problem */
	long long current_revision; /* -1 = none */
	/* operator detail of a failed database call, for the log line */
	struct db_error dberr;
};

/* A request to a route as its transport decoded it, for the gate. */
struct h_request {
	const struct h_route *route;
	const struct h_param *params; /* borrowed; values not yet checked */
	size_t nparams;
	/* The body of a route that takes one: built by the transport (an MCP tool's arguments;
	 * stolen), or NULL: the gate decodes ctx->raw_body, which content_type must say is JSON. */
	json_t *body;
	const char *content_type;
	/* 422 errors the transport found mapping its input onto the route (stolen, or NULL);
	 * unknown: among them an input no part of the route takes (422 unknown_field). */
	json_t *errors;
	bool unknown;
};

/* The gate (handlers/gate.c): every request to a route passes it, HTTP or an MCP tool call.
 * ctx comes with the transport's part (the caller, the services, the request id, the raw
 * body, the header and query callbacks); the gate sets the route's part (route, params, body)
 * and clears the answer, then checks in the contract's order: path parameters and body (422,
 * 415, 400), then scope (403). true when the route's handler may run; false with the problem
 * set in ctx, answered as a handler's. in->body and in->errors are taken either way. */
bool h_gate(struct h_ctx *ctx, struct h_request *in) RG_MUSTCHECK;

/* Sets up GET /.well-known/oauth-protected-resource (handlers/ops.c) for an OAuth issuer and
 * the resource (the public URL of /mcp), both borrowed for the call; an empty or NULL issuer
 * turns it off (404) and frees what it held. false when out of memory. */
bool h_oauth_configure(const char *issuer, const char *resource) RG_MUSTCHECK;

/* The route table (handlers/routes.c). */
extern const struct h_route h_routes[];
extern const size_t h_routes_count;

/* Shared with server/ (handlers/common.c): the event streams answer their own refusals. */
/* Sets a problem reply with the code's status (errors: stolen, may be NULL; detail: NULL
 * for the code's default detail). */
void h_problem(struct h_ctx *ctx, enum rg_problem code, const char *detail, json_t *errors);
/* Answers a failed db/ call: 503 database_unavailable, 504 query_timeout (statement
 * timeout), 503 shutting_down (cancelled by the drain), or 500 internal. */
void h_db_failed(struct h_ctx *ctx, enum rg_status st);
/* Takes the position after c's tracked commits into ctx->commit_lsn (db_conn_commit_lsn): the
 * latest, or 0 (ask) when the latest is unknown. */
void h_note_commit_lsn(struct h_ctx *ctx, const struct db_conn *c);

#endif
