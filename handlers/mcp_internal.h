/* Private to handlers/mcp*.c: the MCP tools (mcp_tools.c: the table, the schemas generated
 * from the routes' field descriptions, and the adapter that calls a route's handler) and the
 * protocol revisions (mcp.c: JSON-RPC over Streamable HTTP). docs/mcp.md tells the story. */
#ifndef RG_HANDLERS_MCP_INTERNAL_H
#define RG_HANDLERS_MCP_INTERNAL_H

#include <stdbool.h>

#include "handlers/api.h"

/* The protocol revisions served, oldest first: what a message may use depends on it. */
enum mcp_revision {
	MCP_REV_2024_11_05 = 0,
	MCP_REV_2025_03_26, /* Streamable HTTP; batches; tool annotations */
	MCP_REV_2025_06_18, /* no batches; structuredContent, outputSchema, title */
	MCP_REV_2025_11_25, /* the last legacy revision: initialize handshake (versioning, "Legacy") */
	MCP_REV_2026_07_28, /* modern: stateless, _meta on every request, no initialize (mcp_modern.c) */
};

/* One tool: a thin adapter over one /v1 route (found by method and path in h_routes). */
struct mcp_tool {
	const char *name;
	const char *title;
	const char *description; /* for a model: what for, when not, what the codes mean */
	const char *method, *path;
	/* The route's query parameters (GET routes), as tool arguments: their types only; the
	 * handler validates their values as it does for /v1. NULL when none. */
	const struct field_spec *query;
	const char *output_schema; /* JSON Schema of the /v1 answer body (structuredContent) */
	/* Annotations (§13: recording a receipt, a disclosure or an audit record is not a
	 * modification; revoking or retiring is destructive; calling a provider is open). */
	bool read_only, destructive, idempotent, open_world;
};

#define MCP_TOOLS_MAX 32

extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_tools_count;

/* The tool of this name, or NULL. */
const struct mcp_tool *mcp_tool_find(const char *name);
/* The route a tool adapts (borrowed from h_routes), or NULL when the table lost it. */
const struct h_route *mcp_tool_route(const struct mcp_tool *t);
/* new: the tool's entry of tools/list for revision rev: name, description, inputSchema
 * (generated from the route's field descriptions and path parameters) and, from
 * 2025-06-18, title, outputSchema; from 2025-03-26, annotations. */
json_t *mcp_tool_describe(const struct mcp_tool *t, enum mcp_revision rev);
/* Calls fn(name, len, arg) for every {name} of a path template. */
void mcp_each_path_param(const char *tmpl, void (*fn)(const char *name, size_t len, void *arg),
			 void *arg);
/* new: the JSON Schema of a body described by spec (NULL-name terminated). */
json_t *mcp_schema_of_fields(const struct field_spec *spec);
/* new: the CallToolResult of calling t with arguments (borrowed, an object) on behalf of
 * ctx's caller: the route's handler runs with the h_ctx /v1 would build (path parameters,
 * body and query from the arguments, the same validation and scope check). charge: the call
 * pays the token's rate limit first (a batch's calls past the first): refused, it is an
 * isError rate_limited result. */
json_t *mcp_tool_call(struct h_ctx *ctx, const struct mcp_tool *t, const json_t *arguments,
		      enum mcp_revision rev, bool charge);

#endif
