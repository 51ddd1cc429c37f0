/* The envelope and relevance verifiers (core/envelope.c) over fuzzed JSON. The value itself
 * is verified as an envelope — raw, not first validated against h_envelope_body, so the
 * verifier is held to any JSON — and so is its "envelope" member (the shape of the POST
 * body); with a snapshot when the value carries "fuzz_snapshot": {"root_hash", "files"}.
 * The value is also normalised as a context_relevance object, as a load receipt (with its
 * "relevance" member) and verified raw as a normalised event. Every verdict must be whole:
 *   envelopes: the 10 checks in their order (one lost to a failed json_pack would hide a
 *     finding), each {check, result pass|fail|skipped, detail}; failure codes unique and
 *     known; a code exactly when a check failed; the verdict the worst code's (MATCH for
 *     none);
 *   relevance: the 5 checks in their order, under the same rules. */
#include <stdbool.h>
#include <string.h>

#include "core/envelope.h"
#include "core/jsonx.h"
#include "fuzz.h"

static const char *const envelope_checks[] = {
	"claims_cite_refs", "refs_exist", "refs_expandable", "hashes", "freshness",
	"receipt_chain", "quality_gates", "readability", "budget", "declared_failure", NULL};
static const char *const relevance_checks[] = {"raw_context", "usefulness", "accounting",
					       "join", "selection", NULL};

static int severity(const char *verdict)
{
	FUZZ_ASSERT(verdict != NULL);
	if (strcmp(verdict, "MATCH") == 0)
		return 0;
	if (strcmp(verdict, "DRIFT") == 0)
		return 1;
	FUZZ_ASSERT(strcmp(verdict, "UNVERIFIABLE") == 0);
	return 2;
}

static void check_verdict(const struct env_verdict *v, const char *const *names)
{
	size_t i, j, n = 0, fails = 0;
	json_t *c;
	int worst = 0;
	while (names[n])
		n++;
	FUZZ_ASSERT(json_is_array(v->checks) && json_array_size(v->checks) == n);
	json_array_foreach(v->checks, i, c) {
		const char *result = json_string_value(json_object_get(c, "result"));
		const char *detail = json_string_value(json_object_get(c, "detail"));
		FUZZ_ASSERT(json_object_size(c) == 3);
		FUZZ_ASSERT(strcmp(json_string_value(json_object_get(c, "check")), names[i]) == 0);
		FUZZ_ASSERT(result && (strcmp(result, "pass") == 0 || strcmp(result, "fail") == 0 ||
				       strcmp(result, "skipped") == 0));
		FUZZ_ASSERT(detail && detail[0]);
		fails += strcmp(result, "fail") == 0;
	}
	FUZZ_ASSERT(json_is_array(v->failure_codes));
	json_array_foreach(v->failure_codes, i, c) {
		const char *verdict = core_env_code_verdict(json_string_value(c));
		FUZZ_ASSERT(verdict != NULL);
		if (severity(verdict) > worst)
			worst = severity(verdict);
		for (j = 0; j < i; j++)
			FUZZ_ASSERT(!json_equal(c, json_array_get(v->failure_codes, j)));
	}
	FUZZ_ASSERT((fails > 0) == (json_array_size(v->failure_codes) > 0));
	FUZZ_ASSERT(severity(v->verdict) == worst);
}

static void verify_envelope(const json_t *env, const struct env_snapshot *snap)
{
	struct env_verdict v;
	core_envelope_verify(env, snap, &v);
	check_verdict(&v, envelope_checks);
	core_env_verdict_free(&v);
}

static void verify_relevance(const json_t *normalised)
{
	struct env_verdict v;
	core_relevance_verify(normalised, &v);
	check_verdict(&v, relevance_checks);
	core_env_verdict_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *value = core_json_parse_strict((const char *)data, size);
	if (value == NULL)
		return 0;
	const json_t *fake = json_object_get(value, "fuzz_snapshot");
	const json_t *files = json_object_get(fake, "files");
	struct env_snapshot snap = {json_string_value(json_object_get(fake, "root_hash")), files};

	verify_envelope(value, NULL);
	if (json_is_object(files))
		verify_envelope(value, &snap);
	if (json_object_get(value, "envelope"))
		verify_envelope(json_object_get(value, "envelope"), json_is_object(files) ? &snap : NULL);

	json_t *n = core_relevance_from_context(value);
	FUZZ_ASSERT(n != NULL); /* the handler would answer 500 */
	verify_relevance(n);
	json_decref(n);
	/* A stored receipt always has loaded_inputs; without them json_pack refuses. */
	n = core_relevance_from_receipt(value, json_object_get(value, "relevance"));
	FUZZ_ASSERT(n != NULL || json_object_get(value, "loaded_inputs") == NULL);
	if (n)
		verify_relevance(n);
	json_decref(n);
	verify_relevance(value);
	json_decref(value);
	return 0;
}
