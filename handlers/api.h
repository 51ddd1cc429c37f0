/* What a handler sees of a request, and what it hands back. server/ fills the request part
 * (after routing, authentication, body parsing, field validation and the scope check),
 * calls the route's handler, and renders the reply. Handlers include core/ and db/ only. */
#ifndef RG_HANDLERS_API_H
#define RG_HANDLERS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "core/fields.h"
#include "db/db.h"

#define H_MAX_PARAMS 8

struct h_param {
	const char *name;  /* borrowed, without braces */
	const char *value; /* borrowed, URL-decoded */
};

struct h_ctx;
typedef void (*h_handler)(struct h_ctx *ctx);

struct h_route {
	const char *method;             /* "GET", "PUT", ... */
	const char *path;               /* template: "/v1/threads/{thread_id}/memory-mode" */
	h_handler handler;
	unsigned scope;                 /* required scope bits; 0 = public, no authentication */
	const struct field_spec *body;  /* the body's fields; NULL = the route takes no body */
	/* Rules across fields, run with the field checks (before the scope check): appends to
	 * errors and returns the problem code (422), or NULL when the body is fine. */
	const char *(*check)(const json_t *body, json_t *errors);
};

struct h_ctx {
	/* request (all borrowed) */
	const struct h_route *route;
	const struct h_param *params;
	size_t nparams;
	json_t *body;          /* validated against route->body; NULL when the route has none */
	const char *if_match;  /* NULL when absent */
	const char *request_id;
	const char *traceparent;
	/* the caller (zero for public routes) */
	const char *tenant_id;
	const char *token_id;
	const char *token_name;
	unsigned scopes;
	/* services the composition root provides */
	struct db_pool *pool;
	const char *(*query)(const struct h_ctx *ctx, const char *name); /* query argument */
	void (*token_deleted)(const char *sha256_hex); /* drop from the verification cache */
	char *(*metrics_text)(size_t *len);            /* new: free() it */
	void *server_data;

	/* reply, rendered by server/ */
	int status;
	json_t *reply;              /* new reference or NULL */
	const char *content_type;   /* non-JSON reply (metrics, openapi) */
	char *raw;                  /* with content_type: new (free()d by server) or static */
	size_t raw_len;
	bool raw_static;
	char etag[32];
	char location[256];
	/* a problem reply */
	const char *problem_code;
	char problem_detail[200];
	json_t *problem_errors;     /* new reference or NULL */
	json_t *problem_extra;      /* new reference or NULL: members added to the problem */
	long long current_revision; /* -1 = none */
	/* operator detail of a failed database call, for the log line */
	struct db_error dberr;
};

/* The route table (handlers/routes.c). */
extern const struct h_route h_routes[];
extern const size_t h_routes_count;

#endif
