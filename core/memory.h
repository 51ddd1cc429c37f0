/* Memory governance rules without I/O (openapi/openapi.yaml "Memory governance"): identities,
 * eligibility reasons and their explain order, context assembly under a token budget. */
#ifndef RG_CORE_MEMORY_H
#define RG_CORE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "core/hash.h"

#define RG_MEM_CONTENT_MAX 65536
#define RG_MEM_URI_MAX 2048
#define RG_MEM_LABELS_MAX 32
#define RG_MEM_LABEL_VALUE_MAX 256
#define RG_MEM_DERIVED_FROM_MAX 32
#define RG_MEM_QUERY_MAX 1000
#define RG_MEM_SEARCH_LIMIT_MAX 50
#define RG_MEM_SEARCH_LIMIT_DEFAULT 10
#define RG_MEM_CONTEXT_ITEMS_MAX 20
#define RG_MEM_CONTEXT_ITEMS_DEFAULT 8
#define RG_MEM_BUDGET_MAX 32000
#define RG_MEM_BUDGET_DEFAULT 4000
#define RG_MEM_CANDIDATES_MAX 50
#define RG_MEM_EXPLAIN_MAX 500

/* "sha256:" + 64 lowercase hex digits. */
bool core_sha256_ref_valid(const char *s);
/* scheme ":" rest, scheme ^[a-z][a-z0-9+.-]*$, no control characters or spaces. */
bool core_uri_valid(const char *s);
/* ^[a-z][a-z0-9_.-]{0,63}$ */
bool core_label_key_valid(const char *s);

/* A pointer's identity: "sha256:" + hex SHA-256 of owner "\n" uri "\n" content_hash
 * (owner "" for a non-foreign pointer). */
void core_memory_identity(const char *owner, const char *uri, const char *content_hash,
			  char out[RG_SHA256_TAGGED_SIZE]);

#define RG_MEM_REASONS_MAX 7

/* The reasons a record is ineligible, in explain order, into out (static strings); returns
 * how many. Same rules as core_memory_reasons, without allocating. */
size_t core_memory_reason_list(const char *stored_csv, bool is_source, bool assent_expired,
			       const char *out[RG_MEM_REASONS_MAX]);

/* The reasons a record is ineligible, in explain order, as a new JSON array: the stored
 * reasons (comma-separated, may be empty) plus the time-based one — assent_expired for a
 * source, upstream_ineligible for a derivative — when assent_expired is true. */
json_t *core_memory_reasons(const char *stored_csv, bool is_source, bool assent_expired);

/* Explain's reason for one record: thread_memory_disabled, else its first ineligible reason
 * (NULL when eligible), else selected (within the search limit) or beyond_limit. */
const char *core_memory_pick_reason(bool thread_disabled, const char *first_reason,
				    bool within_limit);

struct mem_candidate {
	const char *record_id;
	int64_t revision;
	const char *content;      /* the record's bytes */
	const char *content_hash; /* "sha256:…" */
};

/* Context assembly: candidates in rank order (at most RG_MEM_CANDIDATES_MAX); the first
 * max_items are selected; a selected item is delivered whole if ceil(bytes / 4) tokens fit
 * the budget left, else suppressed (budget_exceeded); the rest are suppressed (beyond_limit).
 * *items (new) receives the delivered items with content; returns the load receipt (new)
 * without content. */
json_t *core_memory_assemble(const struct mem_candidate *c, size_t n, int max_items,
			     int budget_tokens, const char *receipt_id, json_t **items);

#endif
