/* The route table, handed to server/'s router as data. Static paths come before templated
 * ones that could also fit them. */
#include "core/ids.h"
#include "handlers/handlers.h"

const struct h_route h_routes[] = {
	{"GET", "/healthz", h_healthz, 0, NULL},
	{"GET", "/readyz", h_readyz, 0, NULL},
	{"GET", "/metrics", h_metrics, 0, NULL},
	{"GET", "/openapi.yaml", h_openapi, 0, NULL},

	{"POST", "/v1/tokens", h_token_create, RG_SCOPE_ADMIN, h_token_create_body},
	{"GET", "/v1/tokens", h_token_list, RG_SCOPE_ADMIN, NULL},
	{"DELETE", "/v1/tokens/{token_id}", h_token_delete, RG_SCOPE_ADMIN, NULL},

	{"GET", "/v1/threads/{thread_id}/memory-mode", h_memory_mode_get, RG_SCOPE_MEMORY_READ, NULL},
	{"PUT", "/v1/threads/{thread_id}/memory-mode", h_memory_mode_put, RG_SCOPE_MEMORY_ADMIN,
	 h_memory_mode_body},

	{"GET", "/v1/goals/{goal_id}/agents/{agent_id}/preferences", h_pref_view,
	 RG_SCOPE_PREFERENCES_READ, NULL},
	{"PUT", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}", h_pref_remember,
	 RG_SCOPE_PREFERENCES_WRITE, h_pref_remember_body},
	{"POST", "/v1/goals/{goal_id}/agents/{agent_id}/preferences/{key}/retire", h_pref_retire,
	 RG_SCOPE_PREFERENCES_WRITE, h_pref_retire_body},
	{"GET", "/v1/goals/{goal_id}/agents/{agent_id}/preference-history", h_pref_history,
	 RG_SCOPE_PREFERENCES_READ, NULL},

	{"GET", "/v1/audit/verify", h_audit_verify, RG_SCOPE_AUDIT_READ, NULL},
	{"GET", "/v1/audit", h_audit_list, RG_SCOPE_AUDIT_READ, NULL},
};

const size_t h_routes_count = sizeof h_routes / sizeof h_routes[0];
