/* The gate: every request to a route passes here, whatever carried it: an HTTP request
 * (server/dispatch.c) or an MCP tool call (handlers/mcp_call.c). The transports find the
 * route and the caller; the gate checks in the contract's order (path parameters and body,
 * then scope) and makes the handler's h_ctx. And the one handler of the routes answered by
 * one statement (struct h_read), whichever way server/ runs their statement. */
#include <string.h>

#include "core/ids.h"
#include "core/lsn.h"
#include "core/jsonx.h"
#include "db/row.h"
#include "handlers/common.h"

bool h_route_reads(const struct h_route *route)
{
	if (route->db != H_DB_AUTO)
		return route->db == H_DB_STANDBY;
	return strcmp(route->method, "GET") == 0 && strncmp(route->path, "/v1/", 4) == 0;
}

bool h_route_writes(const struct h_route *route)
{
	return strcmp(route->method, "GET") != 0 && !h_route_reads(route);
}

/* The answer part of ctx, empty: the handler (or the gate's refusal) writes it. */
static void clear_answer(struct h_ctx *ctx)
{
	ctx->status = 0;
	ctx->reply = NULL;
	ctx->content_type = NULL;
	ctx->raw = NULL;
	ctx->raw_len = 0;
	ctx->raw_static = false;
	ctx->stream = NULL;
	ctx->etag[0] = '\0';
	ctx->location[0] = '\0';
	ctx->headers = NULL;
	ctx->nheaders = 0;
	ctx->problem_code = PROBLEM_NONE;
	ctx->problem_detail[0] = '\0';
	ctx->problem_errors = NULL;
	ctx->problem_extra = NULL;
	ctx->current_revision = -1;
	ctx->dberr = (struct db_error){0};
}

/* The body of a route that takes one: the transport's, or decoded from the bytes received
 * (415 without a JSON Content-Type, 400 when they are not JSON). NULL with the problem set. */
static json_t *take_body(struct h_ctx *ctx, struct h_request *in)
{
	json_t *body = in->body;
	in->body = NULL;
	if (body)
		return body;
	if (!h_json_content_type(in->content_type)) {
		h_problem(ctx, PROBLEM_UNSUPPORTED_MEDIA_TYPE, "The body must be application/json.",
			  NULL);
		return NULL;
	}
	body = core_json_parse_strict(ctx->raw_body, ctx->raw_body_len);
	if (body == NULL)
		h_problem(ctx, PROBLEM_INVALID_JSON, "The body is not valid JSON.", NULL);
	return body;
}

bool h_gate(struct h_ctx *ctx, struct h_request *in)
{
	const struct h_route *route = in->route;
	json_t *errors = in->errors ? in->errors : json_array();
	in->errors = NULL;
	ctx->route = route;
	ctx->params = in->params;
	ctx->nparams = in->nparams;
	ctx->body = NULL;
	clear_answer(ctx);

	/* Path parameters (422), with what the transport could not map onto the route, and the
	 * read-your-writes header (an MCP tool call keeps its /mcp request's). */
	for (size_t i = 0; i < in->nparams; i++)
		if (!core_id_valid(in->params[i].value))
			core_fields_error(errors, in->params[i].name, h_id_reason);
	const char *lsn = ctx->header ? ctx->header(ctx, H_MIN_LSN_HEADER) : NULL;
	if (lsn && !core_lsn_parse(lsn, &ctx->min_lsn))
		core_fields_error(errors, H_MIN_LSN_HEADER,
				  "must be a WAL position as Recallgate-Commit-LSN gives it (0/16B3748)");
	if (json_array_size(errors) > 0) {
		h_problem(ctx, in->unknown ? PROBLEM_UNKNOWN_FIELD : PROBLEM_VALIDATION_FAILED, NULL,
			  json_incref(errors));
		goto out;
	}
	/* The body (415, 400, 422) */
	if (route->body) {
		ctx->body = take_body(ctx, in);
		if (ctx->body == NULL)
			goto out;
		enum rg_problem code =
			core_fields_check_body(ctx->body, route->body, route->check, errors);
		if (code != PROBLEM_NONE) {
			h_problem(ctx, code, NULL, json_incref(errors));
			goto out;
		}
	}
	/* The scope (403); a route open to any token checks its own. */
	if (route->scope != 0 && route->scope != H_SCOPE_TOKEN &&
	    !core_scope_allows(ctx->scopes, route->scope)) {
		char detail[192];
		core_scope_needed_detail(route->scope, detail, sizeof detail);
		h_problem(ctx, PROBLEM_FORBIDDEN, detail, NULL);
	}
out:
	json_decref(errors);
	json_decref(in->body); /* a route without a body: nothing takes it */
	in->body = NULL;
	return ctx->problem_code == PROBLEM_NONE;
}

void h_read_run(struct h_ctx *ctx)
{
	const struct h_read *read = ctx->route->read;
	const char *params[H_READ_MAX_PARAMS];
	struct db_conn *c = NULL;
	struct db_rows rows = {0};
	if (read->stmt->nparams > H_READ_MAX_PARAMS) {
		h_problem(ctx, PROBLEM_INTERNAL, NULL, NULL);
		return;
	}
	read->params(ctx, params);
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_query(c, read->stmt, params, &rows, &ctx->dberr);
	h_db_release(ctx, c);
	read->answer(ctx, st, &rows);
	db_rows_free(&rows);
}
