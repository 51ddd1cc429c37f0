/* POST /mcp under MCP revision 2026-07-28, the modern era: stateless by design, so there is no
 * initialize; every request names its revision and the client's capabilities in
 * params._meta, and mirrors its method (and a tool call's name) in headers that must agree
 * with the body. Every result says resultType and who answered; lists carry cache hints. The
 * tools are the same code as for the legacy revisions (mcp_tools_list, mcp_tools_call,
 * through the gate), so a tool call gets the same scope check, audit and answer in either
 * era. docs/mcp.md ("Revisions") names the spec page of every rule below. */
#include <string.h>

#include "core/hash.h"
#include "handlers/common.h"
#include "handlers/mcp_rpc.h"

#define MODERN MCP_REV_2026_07_28

/* Cache hints (server/utilities/caching): how long a client may keep an answer. tools/list
 * follows the token's scopes, so it is private to the caller; server/discover is the same for
 * everyone. Both change only with a new release of the server. */
#define MCP_TOOLS_TTL_MS 300000
#define MCP_DISCOVER_TTL_MS 3600000

/* A header value sent in the Base64 sentinel form (streamable-http, "Value Encoding"). */
#define SENTINEL_PREFIX "=?base64?"
#define SENTINEL_SUFFIX "?="
/* The longest decoded Mcp-Name compared; a tool name is at most 128 characters
 * (server/tools, "Tool Names"): a longer one names no tool anyway. */
#define MCP_NAME_MAX 512

const json_t *mcp_envelope_claim(const json_t *msg)
{
	const json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	return json_object_get(meta, MCP_META_PROTOCOL_VERSION);
}

/* Whether a standard header's value names the body's value: equal, or equal once decoded
 * from the Base64 sentinel. */
static bool header_names(const char *header, const char *body)
{
	size_t n = strlen(header), pre = strlen(SENTINEL_PREFIX), suf = strlen(SENTINEL_SUFFIX);
	if (n < pre + suf || strncmp(header, SENTINEL_PREFIX, pre) != 0 ||
	    strcmp(header + n - suf, SENTINEL_SUFFIX) != 0)
		return strcmp(header, body) == 0;
	unsigned char name[MCP_NAME_MAX];
	size_t len;
	return core_base64_decode(header + pre, n - pre - suf, name, sizeof name, &len) &&
	       len == strlen(body) && memcmp(name, body, len) == 0;
}

/* An HTTP-level refusal: status, and a JSON-RPC error that carries the request's id. */
static void refuse(struct h_ctx *ctx, int status, const json_t *id, int code,
		   const char *message)
{
	h_reply(ctx, status, mcp_rpc_error(id, code, message));
}

/* The per-request fields a request must carry beside its version (basic/index, "_meta"):
 * clientCapabilities, and clientInfo if sent must be an Implementation. */
static bool envelope_valid(const json_t *meta)
{
	const json_t *info = json_object_get(meta, MCP_META_CLIENT_INFO);
	return json_is_object(json_object_get(meta, MCP_META_CLIENT_CAPABILITIES)) &&
	       (info == NULL || (json_is_object(info) &&
				 json_is_string(json_object_get(info, "name")) &&
				 json_is_string(json_object_get(info, "version"))));
}

/* The headers of a request agree with its body (streamable-http, "Server Validation"): the
 * method in Mcp-Method, and a tool call's name in Mcp-Name. A notification need not send
 * them (the revision defines no header for it) but may not contradict its body. NULL when
 * they agree, else what is wrong. */
static const char *headers_disagree(const struct h_ctx *ctx, const json_t *msg, bool request)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *header = ctx->header(ctx, "Mcp-Method");
	if (header == NULL && request)
		return "Header mismatch: the Mcp-Method header is missing";
	if (header && strcmp(header, method) != 0)
		return "Header mismatch: Mcp-Method does not match the body's method";
	const char *name = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
	if (strcmp(method, "tools/call") != 0 || name == NULL)
		return NULL; /* no name to mirror: a missing one is the method's -32602 */
	header = ctx->header(ctx, "Mcp-Name");
	if (header == NULL)
		return request ? "Header mismatch: the Mcp-Name header is missing" : NULL;
	return header_names(header, name) ? NULL
					  : "Header mismatch: Mcp-Name does not match params.name";
}

/* Every result says it is complete (basic/index, "ResultType"; nothing here ever needs more
 * input) and who answered (basic/index, "Per-response protocol fields"). */
static void complete(json_t *result)
{
	json_object_set_new(result, "resultType", json_string("complete"));
	json_t *meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, MCP_META_SERVER_INFO, mcp_server_info());
}

static void cache_hints(json_t *result, json_int_t ttl_ms, const char *scope)
{
	json_object_set_new(result, "ttlMs", json_integer(ttl_ms));
	json_object_set_new(result, "cacheScope", json_string(scope));
}

/* The answer to a request that passed the checks (new), or NULL for a method this revision
 * does not have. */
static json_t *dispatch(struct h_ctx *ctx, const json_t *id, const char *method,
			const json_t *params)
{
	json_t *answer, *result;
	if (strcmp(method, "server/discover") == 0) {
		result = mcp_discover_result();
		cache_hints(result, MCP_DISCOVER_TTL_MS, "public");
		answer = mcp_rpc_result(id, result);
	} else if (strcmp(method, "tools/list") == 0) {
		answer = mcp_tools_list(ctx, id, params, MODERN);
		result = json_object_get(answer, "result");
		if (result)
			cache_hints(result, MCP_TOOLS_TTL_MS, "private");
	} else if (strcmp(method, "tools/call") == 0) {
		/* one message a request: the HTTP request paid the rate limit */
		answer = mcp_tools_call(ctx, id, params, MODERN, false);
	} else {
		return NULL; /* initialize and ping too: 2026-07-28 removed them */
	}
	result = json_object_get(answer, "result");
	if (result)
		complete(result);
	return answer;
}

/* The first check that fails answers (docs/mcp.md, "Revisions"): a JSON-RPC request, a version
 * claim in the body and the same in the header, a version served, the rest of the envelope,
 * the standard headers, then the method. Each refusal is the spec's HTTP status and code;
 * errors of the method itself (bad params, an unknown tool) stay in-band (200). */
void mcp_modern_serve(struct h_ctx *ctx, const json_t *msg, const char *version)
{
	enum mcp_msg_kind kind = mcp_classify(msg);
	const json_t *id = json_object_get(msg, "id");
	if (kind != MCP_MSG_REQUEST && kind != MCP_MSG_NOTIFICATION) {
		refuse(ctx, 400, id, RPC_INVALID_REQUEST,
		       "Invalid request: a 2026-07-28 message is a JSON-RPC request or notification");
		return;
	}
	bool request = kind == MCP_MSG_REQUEST;
	const json_t *params = json_object_get(msg, "params");
	const char *claim = json_string_value(mcp_envelope_claim(msg));
	if (claim == NULL) {
		if (!request) {
			ctx->status = 202; /* the revision defines no notification over HTTP: ignored */
			return;
		}
		refuse(ctx, 400, id, RPC_INVALID_PARAMS,
		       "Invalid params: a 2026-07-28 request carries params._meta with the string "
		       MCP_META_PROTOCOL_VERSION " and the object " MCP_META_CLIENT_CAPABILITIES);
		return;
	}
	if (version == NULL ? request : strcmp(version, claim) != 0) {
		refuse(ctx, 400, id, RPC_HEADER_MISMATCH,
		       version ? "Header mismatch: MCP-Protocol-Version does not match _meta "
				 MCP_META_PROTOCOL_VERSION
			       : "Header mismatch: the MCP-Protocol-Version header is missing");
		return;
	}
	if (mcp_revision_of(claim) != MODERN) {
		/* a legacy revision too: it is served after initialize, never per request */
		h_reply(ctx, 400, mcp_unsupported_version(id, claim));
		return;
	}
	if (request && !envelope_valid(json_object_get(params, "_meta"))) {
		refuse(ctx, 400, id, RPC_INVALID_PARAMS,
		       "Invalid params: _meta " MCP_META_CLIENT_CAPABILITIES " must be an object, and "
		       MCP_META_CLIENT_INFO " an object with the strings name and version");
		return;
	}
	const char *wrong = headers_disagree(ctx, msg, request);
	if (wrong) {
		refuse(ctx, 400, id, RPC_HEADER_MISMATCH, wrong);
		return;
	}
	if (!request) {
		ctx->status = 202;
		return;
	}
	json_t *answer = dispatch(ctx, id, json_string_value(json_object_get(msg, "method")), params);
	if (answer == NULL)
		refuse(ctx, 404, id, RPC_METHOD_NOT_FOUND, "Method not found");
	else
		h_reply(ctx, 200, answer);
}
