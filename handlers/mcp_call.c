/* tools/call: builds the h_ctx that /v1 would build for the tool's route (server/dispatch.c)
 * from the tool's arguments, in the same check order (path parameters, body, scope), runs
 * the route's handler and turns its reply into a CallToolResult: structuredContent is the /v1
 * answer's body, or the problem (isError) that /v1 would have answered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "handlers/common.h"
#include "handlers/mcp_internal.h"

/* What a tool's arguments turn into. */
struct call_input {
	struct h_param params[H_MAX_PARAMS];
	char names[H_MAX_PARAMS][64];
	size_t nparams;
	json_t *body;   /* the /v1 body (new), NULL for a route without one */
	json_t *query;  /* the query parameters as strings (new) */
	json_t *errors; /* 422 errors[] (new) */
	bool unknown;   /* an argument no part of the route takes */
};

static const char *args_query(const struct h_ctx *ctx, const char *name)
{
	return json_string_value(json_object_get(ctx->server_data, name));
}

static bool is_query(const struct mcp_tool *t, const char *name)
{
	for (const struct field_spec *q = t->query; q && q->name; q++)
		if (strcmp(q->name, name) == 0)
			return true;
	return false;
}

struct path_walk {
	struct call_input *in;
	const json_t *args;
};

/* One path parameter from the arguments, checked as dispatch checks a path's. */
static void take_path_param(const char *name, size_t len, void *arg)
{
	struct path_walk *w = arg;
	struct call_input *in = w->in;
	if (in->nparams == H_MAX_PARAMS)
		return;
	char *key = in->names[in->nparams];
	snprintf(key, sizeof in->names[0], "%.*s", (int)len, name);
	const json_t *v = json_object_get(w->args, key);
	if (v == NULL)
		core_fields_error(in->errors, key, "must be present");
	else if (!json_is_string(v))
		core_fields_error(in->errors, key, "must be a string");
	else if (!core_id_valid(json_string_value(v)))
		core_fields_error(in->errors, key, h_id_reason);
	else
		in->params[in->nparams++] =
			(struct h_param){.name = key, .value = json_string_value(v)};
}

static bool is_path_param(const char *tmpl, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strchr(tmpl, '{'); p; p = strchr(p + 1, '{'))
		if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '}')
			return true;
	return false;
}

/* Splits the arguments into path parameters, query parameters and body. false when they
 * cannot make a request (in->errors says why). */
static bool split_arguments(const struct mcp_tool *t, const struct h_route *route,
			    const json_t *args, struct call_input *in)
{
	const char *key;
	json_t *v;
	struct path_walk w = {in, args};
	mcp_each_path_param(route->path, take_path_param, &w);
	in->query = json_object();
	in->body = route->body ? json_object() : NULL;
	json_object_foreach((json_t *)args, key, v) {
		if (is_path_param(route->path, key))
			continue;
		if (is_query(t, key)) {
			char num[24];
			if (json_is_integer(v)) {
				snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
				json_object_set_new(in->query, key, json_string(num));
			} else if (json_is_string(v)) {
				json_object_set(in->query, key, v);
			} else {
				core_fields_error(in->errors, key, "must be a string or an integer");
			}
		} else if (in->body) {
			json_object_set(in->body, key, v); /* validated with the body */
		} else {
			core_fields_error(in->errors, key, FIELDS_REASON_UNKNOWN);
			in->unknown = true;
		}
	}
	return json_array_size(in->errors) == 0;
}

/* The problem a handler (or this adapter) answered, as /v1 renders it (server/reply.c). */
static json_t *problem_of(const struct h_ctx *sub, enum rg_problem code, const char *detail,
			  json_t *errors, long long current_revision)
{
	json_t *p = core_problem_new(code, detail, sub->request_id, errors, current_revision);
	if (p && sub->problem_extra)
		json_object_update_missing(p, sub->problem_extra);
	return p;
}

/* The handler's answer as JSON (new), or NULL when it answered nothing usable. */
static json_t *answer_of(struct h_ctx *sub, bool *is_error)
{
	*is_error = sub->problem_code != PROBLEM_NONE;
	if (*is_error)
		return problem_of(sub, sub->problem_code, sub->problem_detail, sub->problem_errors,
				  sub->current_revision);
	if (sub->content_type) /* written with jsonw: parse it back */
		return json_loadb(sub->raw, sub->raw_len, 0, NULL);
	if (sub->status == 204)
		return json_object();
	json_t *reply = sub->reply;
	sub->reply = NULL;
	return reply;
}

static json_t *result_of(json_t *payload, bool is_error, enum mcp_revision rev)
{
	char *text = json_dumps(payload, JSON_COMPACT);
	json_t *result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				   text ? text : "{}", "isError", is_error);
	free(text);
	if (rev >= MCP_REV_2025_06_18)
		json_object_set_new(result, "structuredContent", payload);
	else
		json_decref(payload);
	return result;
}

/* A tool call carries no request headers of its own (a revision guard is the body's
 * expected_revision) and never opens an event stream. */
static const char *no_header(const struct h_ctx *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

static bool no_stream(struct h_ctx *ctx, const struct h_events_request *req)
{
	(void)req;
	h_problem(ctx, PROBLEM_INTERNAL, NULL, NULL);
	return false;
}

json_t *mcp_tool_call(struct h_ctx *ctx, const struct mcp_tool *t, const json_t *arguments,
		      enum mcp_revision rev, bool charge)
{
	const struct h_route *route = mcp_tool_route(t);
	struct call_input in = {.errors = json_array()};
	json_t *payload = NULL;
	bool is_error = true;
	struct h_ctx sub = {
		.route = route,
		.params = in.params,
		.request_id = ctx->request_id,
		.traceparent = ctx->traceparent,
		.tenant_id = ctx->tenant_id,
		.token_id = ctx->token_id,
		.token_name = ctx->token_name,
		.scopes = ctx->scopes,
		.pool = ctx->pool,
		.tx = ctx->tx, /* a keyed POST /mcp: the tool's writes join its transaction */
		.shutting_down = ctx->shutting_down,
		.received_ms = ctx->received_ms,
		.query = args_query,
		.header = no_header,
		.events_open = no_stream,
		.token_deleted = ctx->token_deleted,
		.metrics_text = ctx->metrics_text,
		.provider_call = ctx->provider_call,
		.provider_observe = ctx->provider_observe,
		.current_revision = -1,
	};
	if (route == NULL) {
		payload = problem_of(&sub, PROBLEM_INTERNAL, NULL, NULL, -1);
		goto out;
	}
	/* First, as /v1 refuses it before anything else. */
	if (charge && !ctx->rate_take(ctx)) {
		payload = problem_of(&sub, PROBLEM_RATE_LIMITED, NULL, NULL, -1);
		goto out;
	}
	/* The order of /v1: path parameters and body (422), then the scope (403). */
	if (!split_arguments(t, route, arguments, &in)) {
		payload = problem_of(&sub, in.unknown ? PROBLEM_UNKNOWN_FIELD
						      : PROBLEM_VALIDATION_FAILED,
				     NULL, in.errors, -1);
		goto out;
	}
	if (route->body) {
		enum rg_problem code =
			core_fields_check_body(in.body, route->body, route->check, in.errors);
		if (code != PROBLEM_NONE) {
			payload = problem_of(&sub, code, NULL, in.errors, -1);
			goto out;
		}
	}
	if (!core_scope_allows(ctx->scopes, route->scope)) {
		char detail[192];
		core_scope_needed_detail(route->scope, detail, sizeof detail);
		payload = problem_of(&sub, PROBLEM_FORBIDDEN, detail, NULL, -1);
		goto out;
	}
	sub.nparams = in.nparams;
	sub.body = in.body;
	sub.server_data = in.query;
	sub.held = ctx->held; /* the connection authentication borrowed, if any */
	ctx->held = NULL;
	route->handler(&sub);
	ctx->held = sub.held; /* not taken: server/ releases it with the request */
	sub.held = NULL;
	if (sub.dberr.sqlstate[0] || sub.dberr.message[0]) /* a later success keeps a failure */
		ctx->dberr = sub.dberr; /* for the request's log line (never private text) */
	payload = answer_of(&sub, &is_error);
	if (payload == NULL) {
		is_error = true;
		payload = problem_of(&sub, PROBLEM_INTERNAL, NULL, NULL, -1);
	}
out:
	json_decref(sub.reply);
	json_decref(sub.problem_errors);
	json_decref(sub.problem_extra);
	if (!sub.raw_static)
		free(sub.raw);
	json_decref(in.body);
	json_decref(in.query);
	json_decref(in.errors);
	return result_of(payload, is_error, rev);
}
