/* tools/call: a transport adapter onto the gate (handlers/gate.c). The tool's arguments become
 * the route's path parameters, query and body; the gate checks them as it checks an HTTP
 * request's and makes the handler's context; the route's handler runs, and its answer becomes
 * a CallToolResult: structuredContent is the /v1 answer's body, or the problem (isError)
 * that /v1 would have answered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsn.h"
#include "db/standby.h"
#include "handlers/common.h"
#include "handlers/mcp_internal.h"
#include "handlers/mcp_rpc.h"

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

/* A tool's array argument as the values of a repeated query argument. */
static size_t args_query_all(const struct h_ctx *ctx, const char *name, const char **out,
			     size_t max)
{
	const json_t *v = json_object_get(ctx->server_data, name);
	size_t n = 0;
	if (json_is_string(v) && max > 0)
		out[n++] = json_string_value(v);
	for (size_t i = 0; json_is_array(v) && i < json_array_size(v) && n < max; i++)
		if (json_is_string(json_array_get(v, i)))
			out[n++] = json_string_value(json_array_get(v, i));
	return n;
}

/* An array of strings only (a repeated query parameter's values): an item of another type
 * must be refused, not skipped, or it would drop the filter it stood for. */
static bool strings_only(const json_t *v)
{
	size_t i;
	const json_t *item;
	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item))
			return false;
	}
	return true;
}

/* The query parameter of t named name, or NULL. */
static const struct field_spec *query_param(const struct mcp_tool *t, const char *name)
{
	for (const struct field_spec *q = t->query; q && q->name; q++)
		if (strcmp(q->name, name) == 0)
			return q;
	return NULL;
}

struct path_walk {
	struct call_input *in;
	const json_t *args;
};

/* One path parameter from the arguments: a string (the gate checks it as a path's). */
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

/* Splits the arguments into path parameters, query parameters and body; what cannot be
 * mapped onto the route goes to in->errors. */
static void split_arguments(const struct mcp_tool *t, const struct h_route *route,
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
		const struct field_spec *q = query_param(t, key);
		if (q) { /* the handler checks the values, as it checks a query string's */
			char num[24];
			if (json_is_integer(v)) {
				snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
				json_object_set_new(in->query, key, json_string(num));
			} else if (json_is_string(v)) {
				json_object_set(in->query, key, v);
			} else if (q->type == F_ARRAY && strings_only(v)) {
				json_object_set(in->query, key, v); /* a repeated parameter */
			} else {
				core_fields_error(in->errors, key,
						  q->type == F_ARRAY ? "must be an array of strings"
								     : "must be a string or an integer");
			}
		} else if (in->body) {
			json_object_set(in->body, key, v); /* validated with the body */
		} else {
			core_fields_error(in->errors, key, FIELDS_REASON_UNKNOWN);
			in->unknown = true;
		}
	}
	/* A required field that may be null is optional in the tool's schema: absent is null. */
	for (const struct field_spec *f = route->body; in->body && f && f->name; f++)
		if (f->required && f->nullable && json_object_get(in->body, f->name) == NULL)
			json_object_set_new(in->body, f->name, json_null());
}

/* The problem a handler (or the gate) answered, as /v1 renders it (server/reply.c). */
static json_t *problem_of(const struct h_ctx *sub)
{
	json_t *p = core_problem_new(sub->problem_code, sub->problem_detail, sub->request_id,
				     sub->problem_errors, sub->current_revision);
	if (p && sub->problem_extra)
		json_object_update_missing(p, sub->problem_extra);
	return p;
}

/* The handler's answer as JSON (new), or NULL when it answered nothing usable. */
static json_t *answer_of(struct h_ctx *sub, bool *is_error)
{
	*is_error = sub->problem_code != PROBLEM_NONE;
	if (*is_error)
		return problem_of(sub);
	if (sub->content_type) /* written with jsonw: parse it back */
		return json_loadb(sub->raw, sub->raw_len, 0, NULL);
	if (sub->status == 204)
		return json_object();
	json_t *reply = sub->reply;
	sub->reply = NULL;
	return reply;
}

/* The CallToolResult: the answer as text, and as structuredContent from 2025-06-18 on; a
 * refusal's problem as text only, so it is sent once and no larger than /v1's (a model reads
 * the text; the output schema describes answers alone). Steals payload. */
static json_t *result_of(json_t *payload, bool is_error, enum mcp_revision rev)
{
	char *text = json_dumps(payload, JSON_COMPACT);
	json_t *result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				   text ? text : "{}", "isError", is_error);
	free(text);
	if (rev >= MCP_REV_2025_06_18 && !is_error)
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
	bool is_error = true;
	json_t *payload;
	if (route == NULL) {
		payload = core_problem_new(PROBLEM_INTERNAL, NULL, ctx->request_id, NULL, -1);
		return result_of(payload, is_error, rev);
	}
	/* First, as /v1 refuses it before anything else. */
	if (charge && !ctx->rate_take(ctx)) {
		payload = core_problem_new(PROBLEM_RATE_LIMITED, NULL, ctx->request_id, NULL, -1);
		return result_of(payload, is_error, rev);
	}
	struct call_input in = {.errors = json_array()};
	split_arguments(t, route, arguments, &in);
	/* The /mcp request's context carried to the tool's route: the same caller, services,
	 * request id and deadline (and a keyed POST /mcp's transaction, which the tool's writes
	 * join); no headers, no raw body, no event stream; the query from the arguments. */
	struct h_ctx sub = *ctx;
	sub.raw_body = NULL;
	sub.raw_body_len = 0;
	sub.if_match = sub.if_none_match = NULL;
	sub.foreign_origin = false;
	sub.via = "mcp";
	sub.query = args_query;
	sub.query_all = args_query_all;
	sub.header = no_header;
	sub.events_open = no_stream;
	sub.rate_take = NULL;
	sub.server_data = in.query;
	sub.commit_lsn = 0; /* this call's, if it gives one (a content read's disclosure) */
	sub.held = ctx->held; /* the connection authentication borrowed, if any */
	ctx->held = NULL;
	struct h_request req = {
		.route = route,
		.params = in.params,
		.nparams = in.nparams,
		.body = in.body,
		.errors = in.errors,
		.unknown = in.unknown,
	};
	if (h_gate(&sub, &req))
		route->handler(&sub);
	ctx->held = sub.held; /* not taken: server/ releases it with the request */
	ctx->wrote = ctx->wrote || sub.wrote; /* the answer carries Recallgate-Commit-LSN */
	sub.held = NULL;
	if (sub.dberr.sqlstate[0] || sub.dberr.message[0]) /* a later success keeps a failure */
		ctx->dberr = sub.dberr; /* for the request's log line (never private text) */
	payload = answer_of(&sub, &is_error);
	if (payload == NULL) {
		is_error = true;
		payload = core_problem_new(PROBLEM_INTERNAL, NULL, sub.request_id, NULL, -1);
	}
	/* A write's commit LSN, once it is committed (a keyed /mcp request commits after the
	 * call: its answer's Recallgate-Commit-LSN header says it then); a content read's is its
	 * disclosure's, which the read was given. */
	uint64_t lsn = sub.commit_lsn;
	bool lsn_known = sub.wrote && !is_error && ctx->tx == NULL &&
			 (lsn || db_commit_lsn(ctx->pool, &lsn, NULL) == RG_OK);
	/* The request's header reuses the newest, which is past every earlier tool's write; a
	 * write whose LSN is unknown leaves it to server/ to ask after the request. */
	if (sub.wrote && !is_error)
		ctx->commit_lsn = lsn_known ? lsn : 0;
	json_decref(sub.reply);
	json_decref(sub.problem_errors);
	json_decref(sub.problem_extra);
	if (!sub.raw_static)
		free(sub.raw);
	json_decref(sub.body);
	json_decref(in.query);
	json_t *result = result_of(payload, is_error, rev);
	if (lsn_known) {
		char text[RG_LSN_SIZE];
		core_lsn_format(lsn, text);
		json_object_set_new(result, "_meta", json_pack("{s:s}", MCP_META_COMMIT_LSN, text));
	}
	return result;
}
