/* Verdicts for project-telos.context-envelope/v1 envelopes and context relevance events
 * (openapi/openapi.yaml "Context envelopes", seed context-envelope-v1.json), without I/O. Every
 * check is its own function; docs/envelope-contract.md lists them with their codes. */
#ifndef RG_CORE_ENVELOPE_H
#define RG_CORE_ENVELOPE_H

#include <stdbool.h>
#include <jansson.h>

#define RG_ENV_REFS_MAX 256
#define RG_ENV_CLAIMS_MAX 256
#define RG_ENV_CLAIM_TEXT_MAX 4000
#define RG_ENV_CLAIM_REFS_MAX 32
#define RG_ENV_RECEIPTS_MAX 64
#define RG_ENV_SNAPSHOT_FILES_MAX 10000
#define RG_REL_INPUTS_MAX 256

/* The workspace as stored: root_hash and {path: content_hash}. NULL files = no snapshot. */
struct env_snapshot {
	const char *root_hash;
	const json_t *files; /* borrowed object */
};

/* What a verification found. codes and checks are new references. */
struct env_verdict {
	const char *verdict; /* "MATCH" | "DRIFT" | "UNVERIFIABLE" (static) */
	json_t *failure_codes;
	json_t *checks;
};

/* The verdict a failure code carries (seed negative_test_cases); NULL for an unknown code. */
const char *core_env_code_verdict(const char *code);

/* Runs every envelope check. env is borrowed; snap may be NULL (freshness skipped). */
void core_envelope_verify(const json_t *env, const struct env_snapshot *snap,
			  struct env_verdict *out);

/* A relevance event normalised: {selected_count, delivered_count, claims_usefulness,
 * loaded_inputs: [{input_id, delivered_hash, …}], relevance: {…} | null}. */
void core_relevance_verify(const json_t *normalised, struct env_verdict *out);

/* Builds the normalised form from the seed's context_relevance object (new reference). */
json_t *core_relevance_from_context(const json_t *context_relevance);

/* Builds the normalised form from a stored load receipt and a submitted relevance object
 * (both borrowed; new reference). */
json_t *core_relevance_from_receipt(const json_t *load_receipt, const json_t *relevance);

void core_env_verdict_free(struct env_verdict *v);

#endif
