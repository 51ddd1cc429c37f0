/* Private to handlers/mcp.c (the endpoint, the legacy revisions and what both eras answer
 * alike) and handlers/mcp_modern.c (revision 2026-07-28): JSON-RPC framing and the methods
 * the two eras share. docs/mcp.md ("Revisions") tells which rule comes from which spec page. */
#ifndef RG_HANDLERS_MCP_RPC_H
#define RG_HANDLERS_MCP_RPC_H

#include <stdbool.h>

#include "handlers/mcp_internal.h"

/* JSON-RPC 2.0's error codes; the one the transport uses for an HTTP-level refusal of the
 * legacy revisions (what the official TypeScript SDK's server answers); and the codes
 * 2026-07-28 reserves for itself (basic/index, "Error Codes"). */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_TRANSPORT_REFUSED (-32000)
#define RPC_HEADER_MISMATCH (-32020)
#define RPC_UNSUPPORTED_VERSION (-32022)

/* The per-request _meta keys of 2026-07-28 (basic/index, "_meta"). */
#define MCP_META_PROTOCOL_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define MCP_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
/* Read your writes across tool calls (docs/scaling.md): a tool that wrote gives its commit
 * LSN in its result's _meta; a later call may send it back in its params._meta, as the
 * Recallgate-Commit-LSN / Recallgate-Min-LSN headers do over HTTP. */
#define MCP_META_COMMIT_LSN "io.recallgate/commit-lsn"
#define MCP_META_MIN_LSN "io.recallgate/min-lsn"

enum mcp_msg_kind { MCP_MSG_INVALID, MCP_MSG_REQUEST, MCP_MSG_NOTIFICATION, MCP_MSG_RESPONSE };

/* What a JSON value is as a JSON-RPC 2.0 message of MCP (whose ids are never null). */
enum mcp_msg_kind mcp_classify(const json_t *m);
/* The revision a version string names, or -1 (s may be NULL). */
int mcp_revision_of(const char *s);

/* new: {"jsonrpc":"2.0","id":id,"error":{code,message}}; id borrowed (NULL or not a valid
 * id: null). */
json_t *mcp_rpc_error(const json_t *id, int code, const char *message);
/* new: the UnsupportedProtocolVersionError (-32022) naming every revision served and the one
 * asked for (requested: borrowed, may be NULL). */
json_t *mcp_unsupported_version(const json_t *id, const char *requested);
/* new: {"jsonrpc":"2.0","id":id,"result":result}; steals result. */
json_t *mcp_rpc_result(const json_t *id, json_t *result);
/* new: {"name":"recallgate","version":...}: the server's Implementation. */
json_t *mcp_server_info(void);
/* new: the DiscoverResult's members of 2026-07-28 (server/discover): supportedVersions,
 * capabilities, serverInfo and the instructions initialize gives the legacy revisions. */
json_t *mcp_discover_result(void);
/* new: the answer to tools/list (params borrowed, may be NULL): the tools whose route's scope
 * the token holds, described for rev; one page. */
json_t *mcp_tools_list(const struct h_ctx *ctx, const json_t *id, const json_t *params,
		       enum mcp_revision rev);
/* new: the answer to tools/call (params borrowed, may be NULL) through the gate; charge: see
 * mcp_tool_call. */
json_t *mcp_tools_call(struct h_ctx *ctx, const json_t *id, const json_t *params,
		       enum mcp_revision rev, bool charge);

/* The _meta protocol-version claim of a single message (borrowed: any JSON type), or NULL
 * when it carries none: the mark of a message of the modern era. */
const json_t *mcp_envelope_claim(const json_t *msg);
/* Answers msg (borrowed, an object) under 2026-07-28: the request carries a _meta claim, or
 * its MCP-Protocol-Version header (version, may be NULL) names that revision. */
void mcp_modern_serve(struct h_ctx *ctx, const json_t *msg, const char *version);

#endif
