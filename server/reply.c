/* Answers: common headers, problem+json, a handler's reply; kept on the request and queued by
 * the I/O thread (MHD_queue_response may only be called from the access handler). */
#include <stdlib.h>
#include <string.h>

#include "server/events.h"
#include "server/oauth.h"
#include "server/request.h"

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

bool reply_origin_allowed(const struct request *r)
{
	return allowed_origin(r) != NULL;
}

/* Retry-After on a refusal that says when to come back (429 rate_limited, 409
 * operation_conflict while its key is in flight), and on every 503 database_unavailable: a
 * failover or a restart is over in seconds, and a client or gateway that waits 1 s before
 * its retry does not add to the storm. */
static void add_retry_after(const struct request *r, enum rg_problem code,
			    struct MHD_Response *resp)
{
	unsigned s = r->retry_after_s;
	if (s == 0 && code == PROBLEM_DATABASE_UNAVAILABLE)
		s = 1;
	if (s == 0)
		return;
	char secs[sizeof "4294967295"];
	snprintf(secs, sizeof secs, "%u", s);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
}

static void add_common_headers(struct request *r, struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "X-Request-Id", r->request_id);
	const char *origin = allowed_origin(r);
	if (origin) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
		MHD_add_response_header(resp, "Vary", "Origin");
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
					"ETag, Location, X-Request-Id, Idempotent-Replayed, Retry-After, "
					H_COMMIT_LSN_HEADER);
	}
}

/* Keeps resp (consumed) as the answer with status; flush queues it. After SIGTERM every answer
 * closes its connection, so that kept-alive clients move to another instance. */
enum MHD_Result reply_queue(struct request *r, unsigned status, struct MHD_Response *resp)
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
enum MHD_Result reply_flush(struct request *r)
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
enum MHD_Result reply_problem(struct request *r, enum rg_problem code, const char *detail,
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
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					oauth_www_authenticate());
	add_retry_after(r, code, resp);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->problem_code = code;
	return reply_queue(r, status, resp);
}

void reply_resume_problem(struct request *r, enum rg_problem code)
{
	dispatch_drop(r);
	(void)reply_problem(r, code, NULL, NULL, -1, NULL);
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

/* A handler's problem, with its extra members (e.g. source_identity on an assent 403). */
static enum MHD_Result problem_with(struct request *r, enum rg_problem code, const char *detail,
				    json_t *errors, long long current_revision, json_t *extra)
{
	unsigned status = (unsigned)core_problem_status(code);
	json_t *body = core_problem_new(code, detail, r->request_id, errors, current_revision);
	if (body && extra)
		json_object_update_missing(body, extra);
	struct MHD_Response *resp = json_response(body, "application/problem+json; charset=utf-8");
	json_decref(body);
	if (resp == NULL)
		return MHD_NO;
	add_retry_after(r, code, resp);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->problem_code = code;
	return reply_queue(r, status, resp);
}

enum MHD_Result reply_preflight(struct request *r)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	if (allowed_origin(r) && header(r->conn, "Access-Control-Request-Method")) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->match.allow);
		MHD_add_response_header(
			resp, "Access-Control-Allow-Headers",
			"Authorization, Content-Type, If-Match, Idempotency-Key, X-Request-Id, "
			"traceparent, Recallgate-Min-LSN");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
	}
	return reply_queue(r, 204, resp);
}

/* Renders what the handler left in ctx. */
enum MHD_Result reply_render(struct request *r, struct h_ctx *ctx)
{
	struct MHD_Response *resp;
	if (ctx->problem_code)
		return problem_with(r, ctx->problem_code, ctx->problem_detail, ctx->problem_errors,
				    ctx->current_revision, ctx->problem_extra);
	if (ctx->stream) {
		resp = events_response(ctx->stream, r->conn);
		ctx->stream = NULL; /* the response's now (or discarded) */
	} else if (ctx->content_type) {
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
	for (size_t i = 0; i < ctx->nheaders; i++)
		MHD_add_response_header(resp, ctx->headers[i].name, ctx->headers[i].value);
	if (r->commit_lsn[0])
		MHD_add_response_header(resp, H_COMMIT_LSN_HEADER, r->commit_lsn);
	if (strncmp(ctx->route->path, "/v1/", 4) == 0)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return reply_queue(r, (unsigned)ctx->status, resp);
}
