/* The MCP tools, one row each: the /v1 route a tool adapts, what it is for, the query
 * parameters of a GET route as arguments, the answer's schema and the annotations
 * (docs/mcp.md has the table with scopes). Everything a tool's arguments must satisfy comes
 * from the route's field descriptions (mcp_tools.c builds the input schema from them); what
 * every tool shares (scopes, the refusal's shape, untrusted content) is said once, in the
 * instructions (handlers/mcp.c). Descriptions say what a tool is for and when to use another.
 */
#include <stdint.h>

#include "core/audit.h"
#include "core/ids.h"
#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/mcp_internal.h"

/* ---- query parameters of the GET routes, as arguments ----------------------------- */

#define Q_LIMIT(most, absent)                                                                  \
	{.name = "limit", .type = F_INT, .min = 1, .max = (most), .dflt = #absent,             \
	 .desc = "Page size (default " #absent ")."}
#define Q_AFTER                                                                                \
	{.name = "after", .type = F_STRING, .min = 1, .max = 64,                               \
	 .desc = "The previous page's next_cursor, to read the next page."}
#define Q_ID(field, what)                                                                      \
	{.name = field, .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,                    \
	 .check = core_id_valid, .check_reason = h_id_reason, .desc = what}

/* The defaults the handlers apply, written out in Q_LIMIT's sentences. */
_Static_assert(H_PAGE_DEFAULT == 50, "source_list's limit default");

static const struct field_spec label_item = {.type = F_STRING, .min = 3, .max = 321};

static const struct field_spec source_list_query[] = {
	{.name = "classification", .type = F_ENUM, .values = h_source_classifications,
	 .desc = "Only sources of this classification."},
	{.name = "state", .type = F_ENUM, .values = h_mem_states,
	 .desc = "Only sources that retrieval may (eligible) or may not (ineligible) return now."},
	{.name = "source_kind", .type = F_ENUM, .values = h_source_kinds,
	 .desc = "Only sources of this kind."},
	Q_ID("thread_id", "Only sources stored for this thread."),
	{.name = "label", .type = F_ARRAY, .max = 32, .item = &label_item,
	 .desc = "Only sources with all of these labels, each written key:value."},
	{.name = "order", .type = F_ENUM, .values = h_source_list_orders,
	 .desc = "newest first (the default) or oldest first.", .dflt = "\"newest\""},
	{.name = "include", .type = F_ENUM, .values = h_source_list_includes,
	 .desc = "labels adds each source's labels to its item."},
	Q_LIMIT(200, 50),
	Q_AFTER,
	{.name = NULL},
};

static const struct field_spec source_get_query[] = {
	{.name = "as_of", .type = F_TIMESTAMP,
	 .desc = "A past instant: the source's eligibility as it was then (absent: now)."},
	{.name = NULL},
};

static const struct field_spec disclosures_query[] = {
	Q_ID("record_id", "Only deliveries of this source or derivative."),
	Q_ID("thread_id", "Only deliveries to this thread."),
	Q_ID("token_id", "Only deliveries to this token (tok_...)."),
	{.name = "since", .type = F_TIMESTAMP, .desc = "Only deliveries at or after this instant."},
	{.name = "until", .type = F_TIMESTAMP, .desc = "Only deliveries before this instant."},
	Q_LIMIT(1000, 100),
	Q_AFTER,
	{.name = NULL},
};

static const struct field_spec audit_verify_query[] = {
	{.name = "resource_type", .type = F_STRING, .min = 1, .max = 64,
	 .desc = "Only records of this resource type (source, thread, ...)."},
	/* up to 257 bytes, as audit.c's resource_id_valid takes: "<goal_id>/<agent_id>" */
	{.name = "resource_id", .type = F_STRING, .min = 1, .max = 257,
	 .desc = "Only records of this resource id (src_..., a thread_id, goal_id/agent_id for "
		 "preferences, ...)."},
	{.name = "after", .type = F_STRING, .min = 1, .max = 64,
	 .desc = "The next_cursor of the previous call with the same filters."},
	{.name = "limit", .type = F_INT, .min = 1, .max = 100000,
	 .desc = "How many records one call checks (default 10000).",
	 .dflt = FIELDS_DEFAULT(RG_AUDIT_VERIFY_DEFAULT)},
	{.name = NULL},
};

/* ---- answer schemas ------------------------------------------------------------------ */

/* What every answer of a tool holds at its top (openapi/openapi.yaml has each answer in
 * full): enough for a client to validate structuredContent, small enough that the whole
 * tools/list stays under 24 KiB (§13). */
#define S_ANSWER(...) "{\"type\":\"object\",\"required\":[" #__VA_ARGS__ "]}"

static const char search_out[] = S_ANSWER("items");
static const char explain_out[] = S_ANSWER("query_sha256", "items", "truncated");
static const char context_out[] = S_ANSWER("items", "load_receipt");
static const char receipt_out[] = S_ANSWER("receipt_id", "loaded_inputs", "suppressed_inputs");
static const char source_out[] = S_ANSWER("source_id", "revision", "effective_retrieval_state");
static const char content_out[] = "{\"type\":\"object\"}"; /* content or pointer */
static const char classify_out[] = S_ANSWER("source_id", "classification", "revision");
static const char readback_out[] = S_ANSWER("source_id", "revoked", "residual_eligible", "clean");
static const char revoke_out[] = S_ANSWER("source_id", "revision", "revoked_at", "readback");
static const char derivative_out[] = S_ANSWER("derivative_id", "revision", "provenance");
static const char mode_out[] = S_ANSWER("thread_id", "mode", "revision");
static const char mode_set_out[] = S_ANSWER("thread_id", "previous_mode", "mode", "revision");
static const char view_out[] = S_ANSWER("revision", "authority", "entries");
static const char pref_op_out[] = S_ANSWER("status", "receipt", "view");
static const char dc_out[] = S_ANSWER("receipt");
static const char envelope_out[] = S_ANSWER("envelope_id", "verdict", "failure_codes");
static const char audit_out[] = S_ANSWER("ok", "checked", "first_bad_seq", "next_cursor");
static const char page_out[] = S_ANSWER("items", "next_cursor");

/* ---- the tools ------------------------------------------------------------------------ */

#define READ .read_only = true, .idempotent = true

const struct mcp_tool mcp_tools[] = {
	{"memory_search", "Search governed memory",
	 "Finds the records retrieval may return now (never cold, revoked or unassented ones): "
	 "ids, no content.",
	 "POST", "/v1/memory/search", NULL, search_out, READ},
	{"memory_explain", "Explain what retrieval would select",
	 "Why each record matching the query would or would not be retrieved, with its rank; "
	 "as_of replays the past.",
	 "POST", "/v1/memory/retrieval/explain", NULL, explain_out, READ},
	{"memory_context", "Load memory into context, with a receipt",
	 "Loads the best eligible records into context within a budget, recording a load "
	 "receipt and who received what.",
	 "POST", "/v1/memory/context", NULL, context_out, .read_only = true},
	{"source_list", "List memory sources",
	 "Lists memory sources, newest first, without content; filters by classification, "
	 "state, kind, thread, labels.",
	 "GET", "/v1/memory/sources", source_list_query, page_out, READ},
	{"source_get", "Read a source's metadata",
	 "A record's metadata and whether retrieval may return it now, or as of a past "
	 "instant.",
	 "GET", "/v1/memory/sources/{source_id}", source_get_query, source_out, READ},
	{"source_content", "Read a source's content",
	 "A record's content (or its pointer), even when cold or revoked; the read is recorded "
	 "as a disclosure.",
	 "GET", "/v1/memory/sources/{source_id}/content", NULL, content_out, .read_only = true},
	{"source_create", "Store a memory source",
	 "Stores a memory source: inline content or a pointer; someone else's data needs its "
	 "owner's assent.",
	 "POST", "/v1/memory/sources", NULL, source_out, .read_only = false},
	{"source_classify", "Classify a source active or cold",
	 "cold holds a source and its derivatives back from retrieval (reversibly); active "
	 "releases it.",
	 "PUT", "/v1/memory/sources/{source_id}/classification", NULL, classify_out,
	 .idempotent = true},
	{"source_revoke", "Forget a source",
	 "Forgets a source for good: it and everything derived from it are never retrieved "
	 "again.",
	 "POST", "/v1/memory/sources/{source_id}/revoke", NULL, revoke_out, .destructive = true,
	 .idempotent = true},
	{"source_readback", "Prove a revoked source is gone",
	 "Proves a revocation: what of a source and its derivatives is still retrievable, and "
	 "who received them.",
	 "GET", "/v1/memory/sources/{source_id}/readback", NULL, readback_out, READ},
	{"derivative_create", "Store a summary of sources",
	 "Stores a summary or other derivative of eligible records, retrievable only while "
	 "they all are.",
	 "POST", "/v1/memory/derivatives", NULL, derivative_out, .read_only = false},
	{"memory_mode_get", "Read a thread's memory mode",
	 "Whether a thread receives memory (enabled) or nothing (disabled), and its revision.",
	 "GET", "/v1/threads/{thread_id}/memory-mode", NULL, mode_out, READ},
	{"memory_mode_set", "Turn a thread's memory on or off",
	 "Turns a thread's memory on or off; disabled, retrieval gives it nothing. No record "
	 "changes.",
	 "PUT", "/v1/threads/{thread_id}/memory-mode", NULL, mode_set_out, .idempotent = true},
	{"receipt_get", "Read a load receipt",
	 "A load receipt: which records memory_context delivered and which it suppressed, and "
	 "why.",
	 "GET", "/v1/context/load-receipts/{receipt_id}", NULL, receipt_out, READ},
	{"disclosures_list", "List who received what",
	 "Who received what: each delivery of a record's content, newest first, with token, "
	 "thread and receipt.",
	 "GET", "/v1/disclosures", disclosures_query, page_out, READ},
	{"preference_view", "Read an agent's preference journal",
	 "An agent's explicit preference journal for a goal: entries by key, and the journal's "
	 "revision.",
	 "GET", "/v1/goals/{goal_id}/agents/{agent_id}/preferences", NULL, view_out, READ},
	{"preference_remember", "Remember or correct a preference",
	 "Remembers a user's explicit preference in their words: preview (execute false), then "
	 "commit (execute true).",
	 "PUT", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}", NULL, pref_op_out,
	 .idempotent = true},
	{"preference_retire", "Retire a preference",
	 "Retires a preference at the user's request: preview (execute false), then commit "
	 "(execute true).",
	 "POST", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}/retire", NULL,
	 pref_op_out, .destructive = true, .idempotent = true},
	{"decision_context_retrieve", "Ask the advisory decision-context provider",
	 "Asks the registered decision-context provider (an external service) for advisory "
	 "items; fails open.",
	 "POST", "/v1/decision-context/retrieve", NULL, dc_out, .read_only = true,
	 .open_world = true},
	{"envelope_verify", "Re-verify a context envelope",
	 "Recomputes a context envelope's verdict (MATCH, DRIFT, UNVERIFIABLE) against its "
	 "snapshot now.",
	 "POST", "/v1/envelopes/{envelope_id}/verify", NULL, envelope_out, .read_only = false},
	{"audit_verify", "Verify the audit hash chains",
	 "Checks the tenant's audit hash chains; first_bad_seq names the first broken record.",
	 "GET", "/v1/audit/verify", audit_verify_query, audit_out, READ},
};

const size_t mcp_tools_count = sizeof mcp_tools / sizeof mcp_tools[0];
_Static_assert(sizeof mcp_tools / sizeof mcp_tools[0] <= MCP_TOOLS_MAX, "MCP_TOOLS_MAX");
