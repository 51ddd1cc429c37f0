/* The route table, handed to server/'s router as data. Static paths come before templated
 * ones that could also fit them. */
#include "core/ids.h"
#include "handlers/handlers.h"

#define ROUTE(method, path, handler, scope) \
	{method, path, handler, scope, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO}
#define ROUTE_BODY(method, path, handler, scope, body, check) \
	{method, path, handler, scope, body, check, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO}
/* Answered by one statement (struct h_read): a worker runs it, or, when its statement is
 * pipeable, server/ may send it on a pipe (server/pipes.c) instead. */
#define ROUTE_READ(method, path, read, scope) \
	{method, path, h_read_run, scope, NULL, NULL, H_LANE_WORKER, NULL, read, false, H_DB_AUTO}
/* With standbys configured (RECALLGATE_READ_DATABASE_URL), a GET under /v1/ reads on one
 * (struct h_route's db): these say where the others go. A content read records its
 * disclosure and must not deliver what the primary already revoked: the primary. */
#define ROUTE_PRIMARY(method, path, handler, scope) \
	{method, path, handler, scope, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_PRIMARY}
/* A content read: the primary's, and it waits on the ledger, which reads the concurrent ones
 * together and records their disclosures in one commit (server/ledger.c), not on the pool:
 * the elastic lane's threads, so that as many reads as there are waiting share a batch
 * instead of as many as there are workers (docs/disclosures.md); over MCP the tool runs on
 * the request's lane. A context load matches on a pool connection, gives it back and waits on
 * the ledger for its receipt's commit: on a worker, the wait held one of the pool's workers, so
 * at most as many matches ran as workers were not waiting (at 32 connections a load kept
 * 0.87-0.89 of the control's throughput, 0.91-1.08 on the elastic lane's threads, whose batches
 * also hold more loads), and every other request waited behind loads in the workers' queue (a
 * source GET beside 32 loading connections: 230-247 req/s, p50 16-17 ms; 1.65-1.70 k/s, p50
 * 2.1 ms with the loads here). Its thread takes the match's connection from the pool itself:
 * handing the match to a worker and waiting for it (a lane call) stalled the workers' lane
 * at 192 connections (its mutex held through condition-variable wake-ups of 200 threads on 2
 * cores) until jobs expired. The bench's control (CMakeLists.txt) reads and records on a pool
 * connection: a worker's, as every other read. */
#ifndef RG_BENCH_NO_RECORDING
#define LEDGER_LANE H_LANE_LEDGER
#else
#define LEDGER_LANE H_LANE_WORKER
#endif
#define ROUTE_CONTENT(method, path, handler, scope) \
	{method, path, handler, scope, NULL, NULL, LEDGER_LANE, NULL, NULL, false, H_DB_PRIMARY}
#define ROUTE_LOAD(method, path, handler, scope, body) \
	{method, path, handler, scope, body, NULL, LEDGER_LANE, NULL, NULL, false, H_DB_AUTO}
#define ROUTE_STANDBY(method, path, handler, scope, body) \
	{method, path, handler, scope, body, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_STANDBY}
/* Answered on the I/O thread: no database, no provider, nothing that can block. */
#define ROUTE_INLINE(method, path, handler) \
	{method, path, handler, 0, NULL, NULL, H_LANE_INLINE, NULL, NULL, false, H_DB_AUTO}
/* Waits on a provider, or must not queue behind busy workers: the elastic lane, so that a hung
 * provider holds no worker. */
#define ROUTE_ELASTIC(method, path, handler, scope, body) \
	{method, path, handler, scope, body, NULL, H_LANE_ELASTIC, NULL, NULL, false, H_DB_AUTO}

const struct h_route h_routes[] = {
	ROUTE_INLINE("GET", "/healthz", h_healthz),
	ROUTE_ELASTIC("GET", "/readyz", h_readyz, 0, NULL),
	ROUTE_INLINE("GET", "/metrics", h_metrics),
	ROUTE_INLINE("GET", "/openapi.yaml", h_openapi),
	/* RFC 9728: the root form the 401s name, and the path form of the resource /mcp. */
	ROUTE_INLINE("GET", "/.well-known/oauth-protected-resource", h_oauth_resource_metadata),
	ROUTE_INLINE("GET", "/.well-known/oauth-protected-resource/mcp", h_oauth_resource_metadata),
	ROUTE_INLINE("GET", "/ui", h_ui_redirect),
	ROUTE_INLINE("GET", "/ui/", h_ui_index),
	ROUTE_INLINE("GET", "/ui/{file}", h_ui_file),
	ROUTE_INLINE("GET", "/ui/views/{file}", h_ui_file),
	/* Any valid token: each tool checks its own route's scope. The lane is the called tool's
	 * route's (a provider's tool runs on the elastic lane). */
	{"POST", "/mcp", h_mcp, H_SCOPE_TOKEN, NULL, NULL, H_LANE_WORKER, h_mcp_lane, NULL, false, H_DB_AUTO},

	/* Its answer is the token itself: never kept for an Idempotency-Key's replay. */
	{"POST", "/v1/tokens", h_token_create, RG_SCOPE_ADMIN, h_token_create_body, NULL,
	 H_LANE_WORKER, NULL, NULL, true, H_DB_AUTO},
	ROUTE("GET", "/v1/tokens", h_token_list, RG_SCOPE_ADMIN),
	ROUTE("DELETE", "/v1/tokens/{token_id}", h_token_delete, RG_SCOPE_ADMIN),

	ROUTE_READ("GET", "/v1/threads/{thread_id}/memory-mode", &h_memory_mode_read,
		   RG_SCOPE_MEMORY_READ),
	ROUTE_BODY("PUT", "/v1/threads/{thread_id}/memory-mode", h_memory_mode_put,
		   RG_SCOPE_MEMORY_ADMIN, h_memory_mode_body, NULL),

	ROUTE_BODY("POST", "/v1/memory/sources", h_source_create, RG_SCOPE_MEMORY_WRITE,
		   h_source_create_body, h_source_create_check),
	ROUTE("GET", "/v1/memory/sources", h_source_list, RG_SCOPE_MEMORY_READ),
	ROUTE("GET", "/v1/memory/sources/{source_id}", h_source_get, RG_SCOPE_MEMORY_READ),
	ROUTE_CONTENT("GET", "/v1/memory/sources/{source_id}/content", h_source_content,
		      RG_SCOPE_MEMORY_READ),
	ROUTE_BODY("PUT", "/v1/memory/sources/{source_id}/classification", h_source_classify,
		   RG_SCOPE_MEMORY_ADMIN, h_classification_body, NULL),
	ROUTE_BODY("POST", "/v1/memory/sources/{source_id}/revoke", h_source_revoke,
		   RG_SCOPE_MEMORY_ADMIN, h_revoke_body, NULL),
	ROUTE("GET", "/v1/memory/sources/{source_id}/readback", h_source_readback,
	      RG_SCOPE_MEMORY_READ),
	ROUTE("GET", "/v1/memory/sources/{source_id}/disclosures", h_source_disclosures,
	      RG_SCOPE_AUDIT_READ),
	ROUTE_BODY("POST", "/v1/memory/derivatives", h_derivative_create, RG_SCOPE_MEMORY_WRITE,
		   h_derivative_body, h_derivative_check),
	ROUTE("GET", "/v1/memory/derivatives", h_derivative_list, RG_SCOPE_MEMORY_READ),
	ROUTE("GET", "/v1/memory/derivatives/{derivative_id}", h_derivative_get,
	      RG_SCOPE_MEMORY_READ),
	ROUTE_STANDBY("POST", "/v1/memory/search", h_memory_search, RG_SCOPE_MEMORY_READ,
		      h_search_body),
	ROUTE_STANDBY("POST", "/v1/memory/retrieval/explain", h_memory_explain,
		      RG_SCOPE_MEMORY_READ, h_explain_body),
	ROUTE_LOAD("POST", "/v1/memory/context", h_memory_context, RG_SCOPE_MEMORY_READ,
		   h_context_body),
	ROUTE("GET", "/v1/context/load-receipts", h_load_receipts_list, RG_SCOPE_AUDIT_READ),
	ROUTE("GET", "/v1/context/load-receipts/{receipt_id}", h_load_receipt_get,
	      RG_SCOPE_MEMORY_READ),
	ROUTE("GET", "/v1/disclosures", h_disclosures_list, RG_SCOPE_AUDIT_READ),
	ROUTE_BODY("POST", "/v1/assents", h_assent_grant, RG_SCOPE_ASSENT_GRANT, h_assent_body,
		   h_assent_check),
	ROUTE("GET", "/v1/assents/{assent_id}", h_assent_get, RG_SCOPE_ASSENT_GRANT),
	ROUTE_BODY("POST", "/v1/assents/{assent_id}/revoke", h_assent_revoke,
		   RG_SCOPE_ASSENT_GRANT, h_assent_revoke_body, NULL),

	ROUTE_BODY("PUT", "/v1/workspaces/{workspace_id}/snapshot", h_snapshot_put,
		   RG_SCOPE_ENVELOPES_WRITE, h_snapshot_body, h_snapshot_check),
	ROUTE("GET", "/v1/workspaces/{workspace_id}/snapshot", h_snapshot_get,
	      RG_SCOPE_ENVELOPES_READ),
	ROUTE_BODY("POST", "/v1/envelopes", h_envelope_create, RG_SCOPE_ENVELOPES_WRITE,
		   h_envelope_body, NULL),
	ROUTE("GET", "/v1/envelopes/{envelope_id}", h_envelope_get, RG_SCOPE_ENVELOPES_READ),
	ROUTE_BODY("POST", "/v1/envelopes/{envelope_id}/verify", h_envelope_verify,
		   RG_SCOPE_ENVELOPES_WRITE, h_empty_body, NULL),
	ROUTE_BODY("POST", "/v1/context/relevance-checks", h_relevance_check,
		   RG_SCOPE_ENVELOPES_READ, h_relevance_body, h_relevance_body_check),

	ROUTE_READ("GET", "/v1/goals/{goal_id}/agents/{agent_id}/preferences", &h_pref_view_read,
		   RG_SCOPE_PREFERENCES_READ),
	ROUTE_BODY("PUT", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}",
		   h_pref_remember, RG_SCOPE_PREFERENCES_WRITE, h_pref_remember_body, NULL),
	ROUTE_BODY("POST", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}/retire",
		   h_pref_retire, RG_SCOPE_PREFERENCES_WRITE, h_pref_retire_body, NULL),
	ROUTE("GET", "/v1/goals/{goal_id}/agents/{agent_id}/preference-history", h_pref_history,
	      RG_SCOPE_PREFERENCES_READ),

	ROUTE_BODY("POST", "/v1/providers", h_provider_create, RG_SCOPE_PROVIDERS_ADMIN,
		   h_provider_create_body, h_provider_create_check),
	ROUTE("GET", "/v1/providers", h_provider_list, RG_SCOPE_PROVIDERS_ADMIN),
	ROUTE("GET", "/v1/providers/{extension_id}", h_provider_get, RG_SCOPE_PROVIDERS_ADMIN),
	ROUTE_BODY("PATCH", "/v1/providers/{extension_id}", h_provider_patch,
		   RG_SCOPE_PROVIDERS_ADMIN, h_provider_patch_body, NULL),
	ROUTE("DELETE", "/v1/providers/{extension_id}", h_provider_delete,
	      RG_SCOPE_PROVIDERS_ADMIN),
	ROUTE_ELASTIC("POST", "/v1/providers/{extension_id}/doctor", h_provider_doctor,
		       RG_SCOPE_PROVIDERS_ADMIN, NULL),

	ROUTE_ELASTIC("POST", "/v1/decision-context/retrieve", h_dc_retrieve,
		       RG_SCOPE_DECISION_CONTEXT_READ, h_dc_retrieve_body),
	ROUTE("GET", "/v1/decision-context/receipts/{receipt_id}", h_dc_receipt_get,
	      RG_SCOPE_DECISION_CONTEXT_READ),
	ROUTE("POST", "/v1/decision-context/sync", h_dc_sync, RG_SCOPE_DECISION_CONTEXT_READ),

	ROUTE("GET", "/v1/semantic-preferences/config", h_sp_config_get,
	      RG_SCOPE_SEMANTIC_PREFERENCES_USE),
	ROUTE_BODY("PUT", "/v1/semantic-preferences/config", h_sp_config_put,
		   RG_SCOPE_SEMANTIC_PREFERENCES_USE, h_sp_config_body, NULL),
	ROUTE_ELASTIC("POST", "/v1/semantic-preferences/recall", h_sp_recall,
		       RG_SCOPE_SEMANTIC_PREFERENCES_USE, h_sp_recall_body),
	ROUTE_BODY("POST", "/v1/semantic-preferences/receipts/application",
		   h_sp_application_receipt, RG_SCOPE_SEMANTIC_PREFERENCES_USE,
		   h_sp_application_body, NULL),
	ROUTE_BODY("POST", "/v1/semantic-preferences/receipts/maintenance",
		   h_sp_maintenance_receipt, RG_SCOPE_SEMANTIC_PREFERENCES_USE,
		   h_sp_maintenance_body, NULL),

	ROUTE("GET", "/v1/audit/verify", h_audit_verify, RG_SCOPE_AUDIT_READ),
	ROUTE("GET", "/v1/audit", h_audit_list, RG_SCOPE_AUDIT_READ),
	ROUTE_PRIMARY("GET", "/v1/events", h_events, RG_SCOPE_EVENTS_READ),
};

const size_t h_routes_count = sizeof h_routes / sizeof h_routes[0];
