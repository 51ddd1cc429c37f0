/* The provider contracts (core/provider.h) over fuzzed input. The first byte minus '0' is
 * max_results / limit ('8' → 8, '/' → -1); the rest is the provider's answer, parsed as the
 * handlers parse it (core_json_parse_strict) and judged as a decision-context response, a
 * semantic-preference response and a doctor answer; the same bytes as a C string go through
 * the URL, query_summary, scope_ref and surface rules. The verdicts must keep the promises
 * of core/provider.h:
 *   decision context: COMPLETED with no why, no reason and 0..max(0, max_results) items of
 *     exactly 4 members within their bounds; UNAVAILABLE with the response's reason_code
 *     (1..120 bytes, no whitespace) and no why; INVALID with a why and no reason; the same
 *     verdict without out pointers;
 *   semantic preference: OK with no why, the first `limit` items copied and truncated
 *     exactly when some were dropped, and the guidance sorted and unique; a failure with a
 *     why, no items and truncated false; the same verdict without out pointers;
 *   strings: an accepted URL is http(s), ≤ 2048 bytes of printable ASCII without '#'; a
 *     normalised scope_ref is NUL-terminated in its buffer, "" when it did not fit. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "core/jsonx.h"
#include "core/provider.h"
#include "fuzz.h"

static bool bytes_in(const json_t *v, size_t min, size_t max)
{
	return json_is_string(v) && json_string_length(v) >= min && json_string_length(v) <= max;
}

static void check_sorted_unique(const json_t *arr)
{
	FUZZ_ASSERT(json_is_array(arr));
	for (size_t i = 1; i < json_array_size(arr); i++)
		FUZZ_ASSERT(strcmp(json_string_value(json_array_get(arr, i - 1)),
				   json_string_value(json_array_get(arr, i))) < 0);
}

static void check_dc(const json_t *resp, int max_results)
{
	const char *reason = "unset", *why = "unset";
	enum core_dc_verdict v = core_dc_validate_response(resp, max_results, &reason, &why);
	const json_t *items = json_object_get(resp, "items");
	size_t i;
	json_t *item;
	FUZZ_ASSERT(core_dc_validate_response(resp, max_results, NULL, NULL) == v);
	switch (v) {
	case CORE_DC_COMPLETED:
		FUZZ_ASSERT(why == NULL && reason == NULL);
		FUZZ_ASSERT(json_array_size(items) <= (size_t)(max_results < 0 ? 0 : max_results));
		json_array_foreach(items, i, item) {
			const json_t *score = json_object_get(item, "score");
			FUZZ_ASSERT(json_object_size(item) == 4);
			FUZZ_ASSERT(bytes_in(json_object_get(item, "resource_ref"), 1, RG_DC_RESOURCE_REF_MAX));
			FUZZ_ASSERT(bytes_in(json_object_get(item, "summary"), 1, RG_DC_SUMMARY_MAX));
			FUZZ_ASSERT(bytes_in(json_object_get(item, "content"), 1, RG_DC_CONTENT_MAX));
			FUZZ_ASSERT(json_is_number(score) || json_is_null(score));
		}
		break;
	case CORE_DC_UNAVAILABLE:
		FUZZ_ASSERT(why == NULL && reason != NULL);
		FUZZ_ASSERT(reason == json_string_value(json_object_get(resp, "reason_code")));
		FUZZ_ASSERT(strlen(reason) >= 1 && strlen(reason) <= RG_DC_REASON_MAX);
		FUZZ_ASSERT(strpbrk(reason, " \t\n\v\f\r") == NULL);
		FUZZ_ASSERT(json_array_size(items) == 0);
		break;
	case CORE_DC_INVALID:
		FUZZ_ASSERT(why != NULL && why[0] != '\0' && reason == NULL);
		break;
	default:
		FUZZ_ASSERT(!"an unknown decision-context verdict");
	}
}

static void check_sp(const json_t *resp, int limit)
{
	json_t *unset = json_string("unset"), *out = unset; /* must be overwritten */
	bool truncated = true;
	const char *why = "unset";
	enum core_sp_failure f = core_sp_validate_response(resp, limit, &out, &truncated, &why);
	const json_t *items = json_object_get(resp, "items");
	size_t keep = limit < 0 ? 0 : (size_t)limit;
	FUZZ_ASSERT(core_sp_validate_response(resp, limit, NULL, NULL, NULL) == f);
	FUZZ_ASSERT((core_sp_failure_name(f) == NULL) == (f == CORE_SP_OK));
	if (f != CORE_SP_OK) {
		FUZZ_ASSERT(f == CORE_SP_INVALID_RESPONSE || f == CORE_SP_ITEM_TOO_LARGE ||
			    f == CORE_SP_INVALID_CORPUS_INVENTORY);
		FUZZ_ASSERT(out == NULL && !truncated && why != NULL && why[0] != '\0');
		json_decref(unset);
		return;
	}
	FUZZ_ASSERT(why == NULL && json_is_array(out) && json_array_size(items) <= RG_SP_ITEMS_MAX);
	FUZZ_ASSERT(json_array_size(out) == (json_array_size(items) < keep ? json_array_size(items) : keep));
	FUZZ_ASSERT(truncated == (json_array_size(items) > keep));
	for (size_t i = 0; i < json_array_size(items); i++) {
		const json_t *item = json_array_get(items, i);
		FUZZ_ASSERT(bytes_in(json_object_get(item, "preference_ref"), 1, RG_SP_PREF_REF_MAX));
		FUZZ_ASSERT(bytes_in(json_object_get(item, "summary"), 1, RG_SP_SUMMARY_MAX));
		FUZZ_ASSERT(i >= keep || json_equal(item, json_array_get(out, i)));
	}
	json_decref(out);
	json_decref(unset);

	const json_t *inv = json_object_get(resp, "corpus_inventory");
	FUZZ_ASSERT(inv == NULL || json_array_size(inv) <= RG_SP_INVENTORY_MAX);
	json_t *g = core_sp_guidance(inv);
	FUZZ_ASSERT(g != NULL);
	if (!json_is_null(g)) {
		FUZZ_ASSERT(json_array_size(json_object_get(g, "corpus_ids")) > 0);
		check_sorted_unique(json_object_get(g, "corpus_ids"));
		check_sorted_unique(json_object_get(g, "writeback_triggers"));
		check_sorted_unique(json_object_get(g, "closure_policies"));
	}
	json_decref(g);
}

static void check_strings(const char *s)
{
	if (core_provider_url_valid(s)) {
		FUZZ_ASSERT(strlen(s) <= RG_PROVIDER_URL_MAX);
		FUZZ_ASSERT(strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0);
		for (const char *p = s; *p; p++)
			FUZZ_ASSERT((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f && *p != '#');
	}
	(void)core_dc_summary_public_safe(s);
	(void)core_sp_surface_valid(s);
	(void)core_sp_context_key_valid(s);
	static const size_t sizes[] = {1, 2, 20, 300};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char out[300];
		bool fit = core_dc_scope_normalise(s, out, sizes[i]);
		FUZZ_ASSERT(memchr(out, '\0', sizes[i]) != NULL);
		FUZZ_ASSERT(fit || out[0] == '\0');
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	int limit = (int)data[0] - '0';
	const char *body = (const char *)data + 1;
	size_t len = size - 1;

	json_t *resp = core_json_parse_strict(body, len);
	check_dc(resp, limit);
	if (resp) {
		check_sp(resp, limit);
		(void)core_doctor_check(resp, RG_PROTO_DC);
		json_t *digests = core_sp_digests(resp), *sorted = core_sorted_unique(resp);
		check_sorted_unique(digests);
		check_sorted_unique(sorted);
		json_decref(digests);
		json_decref(sorted);
	}
	json_decref(resp);

	char *s = malloc(len + 1);
	FUZZ_ASSERT(s != NULL);
	memcpy(s, body, len);
	s[len] = '\0';
	check_strings(s);
	free(s);
	return 0;
}
