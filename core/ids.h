/* Caller-chosen identifiers, request ids and scopes. */
#ifndef RG_CORE_IDS_H
#define RG_CORE_IDS_H

#include <stdbool.h>
#include <stddef.h>

#define RG_MAX_ID_BYTES 128
#define RG_MAX_REQUEST_ID_BYTES 128

/* Caller-chosen ids (thread_id, goal_id, agent_id, key, ...), as a JSON Schema / error text. */
#define RG_ID_PATTERN "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
/* Matches RG_ID_PATTERN. */
bool core_id_valid(const char *s);
/* ^[A-Za-z0-9._:-]{1,128}$ — a caller's X-Request-Id we are willing to echo. */
bool core_request_id_valid(const char *s);

enum rg_scope {
	RG_SCOPE_NONE = 0,
	RG_SCOPE_ADMIN = 1u << 0,
	RG_SCOPE_MEMORY_READ = 1u << 1,
	RG_SCOPE_MEMORY_WRITE = 1u << 2,
	RG_SCOPE_MEMORY_ADMIN = 1u << 3,
	RG_SCOPE_ASSENT_GRANT = 1u << 4,
	RG_SCOPE_PREFERENCES_READ = 1u << 5,
	RG_SCOPE_PREFERENCES_WRITE = 1u << 6,
	RG_SCOPE_PROVIDERS_ADMIN = 1u << 7,
	RG_SCOPE_DECISION_CONTEXT_READ = 1u << 8,
	RG_SCOPE_SEMANTIC_PREFERENCES_USE = 1u << 9,
	RG_SCOPE_ENVELOPES_READ = 1u << 10,
	RG_SCOPE_ENVELOPES_WRITE = 1u << 11,
	RG_SCOPE_AUDIT_READ = 1u << 12,
	RG_SCOPE_EVENTS_READ = 1u << 13,
};
#define RG_SCOPE_COUNT 14

/* The scope bit for a name, or RG_SCOPE_NONE when unknown. */
unsigned core_scope_from_name(const char *name);
/* The name of scope i (0 ≤ i < RG_SCOPE_COUNT), in the order of openapi/openapi.yaml "Scope".
 * */
const char *core_scope_name(unsigned i);
/* Which item of a scope list was refused: csv[offset .. offset+len) (len 0: an empty item),
 * and whether it is known but repeated. */
struct core_scope_csv_error {
	size_t offset, len;
	bool repeated;
};
/* Parses "a,b,c" into a scope mask. false on an unknown, empty or repeated scope, and then
 * *bad (when not NULL) names the item. */
bool core_scopes_parse_csv(const char *csv, unsigned *mask, struct core_scope_csv_error *bad);
/* The 403 detail for a route needing `needed`: "This endpoint needs the scope memory:write
 * (admin implies it)." Scope names are public. Written into out (cut to size, NUL-ended). */
void core_scope_needed_detail(unsigned needed, char *out, size_t size);
/* true when a token holding `held` may call a route needing `needed` (admin implies all). */
bool core_scope_allows(unsigned held, unsigned needed);

#endif
