/* The provider contracts of openapi/openapi.yaml "Providers", "Decision context",
 * "Semantic preferences" as pure functions: permissions and URLs of the registry, provider
 * resolution, the decision-context request and response (decision_context_advisory_*_v0), the
 * doctor answer, the semantic-preference response, its corpus inventory and maintenance
 * guidance, and the digests of stateless receipts. Nothing here does I/O; every rule has its
 * unit test (tests/unit/test_provider_*.c). Decisions beside openapi/openapi.yaml:
 * docs/providers-contract.md. */
#ifndef RG_CORE_PROVIDER_H
#define RG_CORE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define RG_PROTO_DC "decision_context_advisory_provider_v0"
#define RG_PROTO_SP "semantic_preference_provider_v0"
#define RG_PERM_DC "decision_context.read"
#define RG_PERM_SP "semantic_preference.read"

#define RG_PROVIDER_URL_MAX 2048
#define RG_DC_MAX_RESULTS 8
#define RG_DC_NAMESPACE_MAX 120
#define RG_DC_RESOURCE_REF_MAX 512
#define RG_DC_SUMMARY_MAX 220
#define RG_DC_CONTENT_MAX 16000
#define RG_DC_REASON_MAX 120
/* "provider-" + 20 hex + NUL */
#define RG_PROVIDER_REF_SIZE 30
/* 16 hex + NUL */
#define RG_DIGEST16_SIZE 17

#define RG_SP_LIMIT_MAX 20
#define RG_SP_LIMIT_DEFAULT 5
#define RG_SP_ITEMS_MAX 100          /* more items than this in a response: invalid_response */
#define RG_SP_PREF_REF_MAX 512
#define RG_SP_SUMMARY_MAX 2000       /* a longer item: item_too_large */
#define RG_SP_INVENTORY_MAX 20
#define RG_SP_TEXT_MAX 512           /* scope_ref, write_actor_ref, source_of_truth */

/* ---- registry ------------------------------------------------------------------- */

/* The permission a provider of `protocol` must hold; NULL for an unknown protocol. */
const char *core_provider_permission(const char *protocol);

/* An endpoint or doctor URL we are willing to call: "http://" or "https://" (scheme
 * case-insensitive), a non-empty host (the bytes after "://" up to the first '/', '?' or
 * ':'), no userinfo ('@' before the first '/' after the scheme), no fragment ('#'), no byte
 * ≤ 0x20 or ≥ 0x7f, at most RG_PROVIDER_URL_MAX bytes. NULL → false. */
bool core_provider_url_valid(const char *url);

/* The URL the doctor calls: doctor_url when non-NULL, else endpoint_url + "/doctor" (one
 * trailing '/' of the endpoint dropped first). Writes into out[n] (NUL included); false when
 * it does not fit, and then out is "" (n > 0). */
bool core_provider_doctor_url(const char *endpoint_url, const char *doctor_url, char *out,
			      size_t n);

/* One registered provider as resolution sees it (strings borrowed). */
struct core_provider_cand {
	const char *extension_id;
	const char *protocol;
	bool enabled;
	bool ready; /* doctor_ready at its current revision */
};

enum core_resolve {
	CORE_RESOLVE_OK = 0,
	CORE_RESOLVE_MISSING,   /* provider_missing */
	CORE_RESOLVE_AMBIGUOUS, /* provider_ambiguous */
	CORE_RESOLVE_DISABLED,  /* provider_disabled */
	CORE_RESOLVE_NOT_READY, /* provider_not_ready */
};

/* Picks the provider of `protocol` among cands[0..n): with explicit_id, the candidate of that
 * id (none, or one of another protocol → MISSING; disabled → DISABLED; enabled but not ready
 * → NOT_READY); without, the single enabled and ready candidate of the protocol (none →
 * MISSING, several → AMBIGUOUS). Only a NULL explicit_id means "without" ("" is an id that
 * matches nothing). On OK *chosen is its index (chosen may be NULL); otherwise untouched. */
enum core_resolve core_provider_resolve(const struct core_provider_cand *cands, size_t n,
					const char *protocol, const char *explicit_id,
					size_t *chosen);
/* "provider_missing", ... (NULL for OK). */
const char *core_resolve_reason(enum core_resolve r);

/* ---- doctor ---------------------------------------------------------------------- */

enum core_doctor {
	CORE_DOCTOR_OK = 0,
	CORE_DOCTOR_INVALID,  /* doctor_invalid_response: not an object, ok not true, protocol
			       * missing or not a string */
	CORE_DOCTOR_MISMATCH, /* doctor_protocol_mismatch: protocol is another string */
};
/* Judges a parsed doctor answer (borrowed; NULL = not JSON → INVALID). Members other than
 * ok and protocol are ignored; ok must be JSON true (not 1, not "true"). */
enum core_doctor core_doctor_check(const json_t *answer, const char *protocol);

/* ---- decision context (openapi/openapi.yaml "Decision context") ------------------ */

/* query_summary must be public-safe: false when any whitespace-separated word (leading
 * quotes and brackets "'`([{< and trailing quotes, brackets and punctuation "'`>}]).,;:!?
 * stripped — the backtick both ends, so `src/main.c` is caught; whitespace is ASCII
 * space, \t \n \v \f \r) is
 *   a URL: contains "://", or starts with "www." / "mailto:" / "file:" (case-insensitive);
 *   an e-mail address: x@y.z — at least one byte before '@' and a '.' after it with bytes
 *     on both sides;
 *   a file path: starts with "/" followed by a byte that is not '/' or a space, or with
 *     "~/", "./", "../", or a drive "C:\" / "C:/"; or contains '\'; or contains '/' and
 *     its last '/'-segment ends in '.' + 1..8 ASCII letters or digits ("src/main.c").
 * ("and/or", "n/a", "1/2" and "w/o" pass.) */
bool core_dc_summary_public_safe(const char *s);

/* scope_ref normalised before the provider boundary: "codex://threads/<id>" (prefix
 * case-sensitive) with <id> made of 1..256 bytes of [A-Za-z0-9._:-] →
 * "host-session:codex:<id>"; anything else is copied unchanged. Writes into out[n] (NUL
 * included); false when it does not fit, and then out is "" (n > 0). */
bool core_dc_scope_normalise(const char *scope_ref, char *out, size_t n);

/* "provider-" + the first 20 hex digits of SHA-256(extension_id "\n" namespace "\n"
 * resource_ref). The inputs are validated values within their bounds (RG_MAX_ID_BYTES,
 * RG_DC_NAMESPACE_MAX, RG_DC_RESOURCE_REF_MAX), hashed without allocating; a longer one is
 * a caller's bug and gives "" (never a hash of a truncated input). */
void core_dc_provider_ref(const char *extension_id, const char *namespace_,
			  const char *resource_ref, char out[RG_PROVIDER_REF_SIZE]);

/* min(request, provider) seconds. */
double core_dc_deadline_seconds(double request_timeout, int provider_timeout);

/* decision_context_advisory_retrieve_request_v0 (new; NULL when memory runs out):
 * schema_version "decision_context_advisory_retrieve_request_v0", operation "retrieve",
 * namespace, scope_ref (already normalised), query, query_summary, max_results,
 * timeout_seconds (a JSON integer when integral, else a real), observed_at. */
json_t *core_dc_request(const char *namespace_, const char *scope_ref, const char *query,
			const char *query_summary, int max_results, double timeout_seconds,
			const char *observed_at);

enum core_dc_verdict {
	CORE_DC_COMPLETED = 0, /* items valid: 0..max_results of them */
	CORE_DC_UNAVAILABLE,   /* a valid unavailable answer: *reason_code is the provider's */
	CORE_DC_INVALID,       /* contract_invalid: *why names the broken rule */
};
/* Judges a parsed response (borrowed; NULL = not JSON → INVALID) against
 * decision_context_advisory_retrieve_response_v0: exactly the members schema_version
 * ("decision_context_advisory_retrieve_response_v0"), ok (true), status, reason_code, items;
 * either status "completed", reason_code null and an array of at most max_results items,
 * each exactly {resource_ref (string 1..512 bytes), summary (1..220), content (1..16000),
 * score (a JSON number — integer or real — or null)}; or status "unavailable", reason_code
 * a string of 1..120 bytes without (ASCII) whitespace, and items []. Unknown members are
 * judged before missing ones, both before any value. *reason_code (borrowed from resp) is
 * set for UNAVAILABLE, NULL otherwise; *why (static text for the operator log: it never
 * quotes the response) for INVALID, NULL otherwise. Either out pointer may be NULL. A
 * negative max_results allows no item. */
enum core_dc_verdict core_dc_validate_response(const json_t *resp, int max_results,
					       const char **reason_code, const char **why);

/* ---- semantic preferences (openapi/openapi.yaml "Semantic preferences") ---------- */

/* A surface id: ^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$ (at most 128 bytes). */
bool core_sp_surface_valid(const char *s);
/* A context key: ^[a-z][a-z0-9_-]{0,63}$ */
bool core_sp_context_key_valid(const char *s);

/* semantic_preference_provider_request_v0 (new; NULL when memory runs out):
 * schema_version, surface, query, limit, context (borrowed object, deep-copied; NULL → {}). */
json_t *core_sp_request(const char *surface, const char *query, int limit,
			const json_t *context);

enum core_sp_failure {
	CORE_SP_OK = 0,
	CORE_SP_INVALID_RESPONSE,          /* invalid_response */
	CORE_SP_ITEM_TOO_LARGE,            /* item_too_large */
	CORE_SP_INVALID_CORPUS_INVENTORY,  /* invalid_corpus_inventory */
};
/* "invalid_response", ... (NULL for OK). */
const char *core_sp_failure_name(enum core_sp_failure f);

/* Judges a parsed semantic_preference_provider_response_v0 (borrowed, must not be NULL):
 * an object with exactly schema_version ("semantic_preference_provider_response_v0"),
 * items (array of at most RG_SP_ITEMS_MAX objects, each exactly {preference_ref (string
 * 1..512), summary (string ≥ 1)}) and optionally corpus_inventory — otherwise
 * INVALID_RESPONSE. A summary over RG_SP_SUMMARY_MAX bytes or a preference_ref over 512
 * → ITEM_TOO_LARGE. corpus_inventory, when present, must be an array of at most 20
 * entries, each exactly {corpus_id (core_id_valid), scope_ref (1..512), read_role
 * primary|fallback|reference, write_mode read_only|provider_managed, write_actor_ref?
 * (string 1..512 or null), source_of_truth (1..512), writeback_triggers (array of unique
 * strings from explicit_feedback|source_truth_changed), closure_policy
 * none|write_wait_l2_read_scoped_recall} — otherwise INVALID_CORPUS_INVENTORY.
 * (corpus_inventory: null is present and not an array.) When a response breaks several
 * rules, INVALID_RESPONSE wins over ITEM_TOO_LARGE, which wins over
 * INVALID_CORPUS_INVENTORY, wherever the faults lie.
 * On OK, *items_out is a new array of the first `limit` items ({preference_ref, summary}
 * copies; limit ≤ 0 keeps none) and *truncated tells whether any were dropped. *why
 * (static) names the broken rule on failure, NULL on OK. On failure *items_out is NULL and
 * *truncated false. Any out pointer may be NULL. */
enum core_sp_failure core_sp_validate_response(const json_t *resp, int limit,
					       json_t **items_out, bool *truncated,
					       const char **why);

/* semantic_preference_maintenance_guidance_v0 (new) from a validated inventory (borrowed,
 * NULL when absent): {schema_version, corpus_ids (of the provider_managed entries, sorted,
 * unique), writeback_triggers (their union, sorted), closure_policies (theirs, sorted,
 * unique), closure_outcomes ["verified", "no_write_rationale"]}; json null when the
 * inventory is absent, empty, or every entry is read_only. */
json_t *core_sp_guidance(const json_t *inventory);

/* The first 16 hex digits of SHA-256(ref). */
void core_digest16(const char *ref, char out[RG_DIGEST16_SIZE]);
/* A new array of the digests of the strings of `refs` (borrowed array), sorted, unique.
 * Elements that are not strings are skipped; a NULL or non-array refs gives []. Meant for
 * the contract's short lists (≤ 20 refs): insertion sort. */
json_t *core_sp_digests(const json_t *refs);
/* A new array of the strings of `strings` (borrowed array), sorted (bytewise), unique. Same
 * rules for non-strings and non-arrays. */
json_t *core_sorted_unique(const json_t *strings);

#endif
