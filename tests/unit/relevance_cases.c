/* core/envelope: the relevance case table (docs/envelope-contract.md), run by
 * test_envelope_relevance.c and matched against the seed's negative cases by
 * test_envelope_seed.c. Each row is the seed's context_relevance, its load_only_variant, or a
 * load receipt shaped like openapi/openapi.yaml "LoadReceipt", a few JSON-pointer mutations,
 * and the expected per-check results, failure codes and verdict. */
#include "unit.h"

#include "envelope_helpers.h"

#define INPUT_REF(n) "/relevance/input_refs/" #n

/* clang-format off */
struct rel_case rel_cases[] = {
	{"context_relevance", REL_CONTEXT, {{0}}, false, {NULL}, {NULL}, "MATCH"},
	{"load_only_variant", REL_LOAD_ONLY, {{0}}, true, {NULL}, {NULL}, "MATCH"},
	{"load_receipt with relevance", REL_RECEIPT, {{0}}, false, {NULL}, {NULL}, "MATCH"},
	{"load_receipt without relevance", REL_RECEIPT, {DEL("/relevance")}, true, {NULL}, {NULL},
	 "MATCH"},

	/* accounting → relevance_accounting_missing */
	{"selected_count_not_accounted_by_relevance_buckets", REL_CONTEXT,
	 {SET("/relevance/unused_count", "0")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: a bucket count absent", REL_CONTEXT, {DEL("/relevance/unknown_count")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: buckets sum above selected_count", REL_CONTEXT,
	 {SET("/relevance/unknown_count", "1")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: selected_count grew", REL_CONTEXT, {SET("/selection/selected_count", "4")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: unknown label", REL_CONTEXT, {SET(INPUT_REF(2) "/relevance", JS("irrelevant"))},
	 false, {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: label absent", REL_CONTEXT, {DEL(INPUT_REF(1) "/relevance")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: every label valid, buckets sum", REL_CONTEXT,
	 {SET(INPUT_REF(2) "/relevance", JS("unknown")), SET("/relevance/unused_count", "0"),
	  SET("/relevance/unknown_count", "1")},
	 false, {NULL}, {NULL}, "MATCH"},
	{"accounting: against the receipt's selected_count", REL_RECEIPT,
	 {SET("/load_receipt/selected_count", "4")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},

	/* usefulness → missing_relevance */
	{"usefulness_claim_without_relevance_event", REL_CONTEXT,
	 {SET("/relevance", "null"), SET("/claims_usefulness", "true")}, true, {"usefulness"},
	 {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: claimed by the load receipt contract, no relevance", REL_CONTEXT,
	 {DEL("/relevance"), SET("/receipt_contract/load_receipt/claims_usefulness", "true")}, true,
	 {"usefulness"}, {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: claimed with a relevance event passes", REL_CONTEXT,
	 {SET("/claims_usefulness", "true")}, false, {NULL}, {NULL}, "MATCH"},
	{"usefulness: load only, claimed", REL_LOAD_ONLY, {SET("/claims_usefulness", "true")}, true,
	 {"usefulness"}, {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: the receipt claims it, no relevance", REL_RECEIPT,
	 {DEL("/relevance"), SET("/load_receipt/claims_usefulness", "true")}, true, {"usefulness"},
	 {"missing_relevance"}, "UNVERIFIABLE"},

	/* selection → over_selection */
	{"relevance_labels_more_inputs_than_delivered", REL_CONTEXT,
	 {SET("/selection/delivered_count", "2")}, false, {"selection"}, {"over_selection"}, "DRIFT"},
	{"selection: against the receipt's delivered_count", REL_RECEIPT,
	 {SET("/load_receipt/delivered_count", "2")}, false, {"selection"}, {"over_selection"},
	 "DRIFT"},

	/* join → unjoinable_relevance */
	{"relevance_points_to_context_never_delivered", REL_CONTEXT,
	 {SET(INPUT_REF(2) "/input_id", JS("ctx_in_004"))}, false, {"join"}, {"unjoinable_relevance"},
	 "UNVERIFIABLE"},
	{"join: delivered_hash differs", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/delivered_hash", JS(DELIVERED(3)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: the source_hash is not the delivered_hash", REL_CONTEXT,
	 {SET(INPUT_REF(0) "/delivered_hash", JS(SOURCE(1)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: delivered_hash absent", REL_CONTEXT, {DEL(INPUT_REF(0) "/delivered_hash")}, false,
	 {"join"}, {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: a suppressed input of the receipt", REL_RECEIPT,
	 {SET(INPUT_REF(2) "/input_id", JS("ctx_in_004")), SET(INPUT_REF(2) "/delivered_hash", JS(SOURCE(4)))},
	 false, {"join"}, {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: the receipt delivered other bytes", REL_RECEIPT,
	 {SET("/load_receipt/loaded_inputs/0/delivered_hash", JS(DELIVERED(9)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},

	/* raw_context → raw_context_leak */
	{"relevance_event_contains_raw_context", REL_CONTEXT,
	 {SET(INPUT_REF(0) "/content", JS("raw text"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: text on an input_ref", REL_CONTEXT, {SET(INPUT_REF(2) "/text", JS("raw"))}, false,
	 {"raw_context"}, {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: raw_context on an input_ref", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/raw_context", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: raw_payload on an input_ref", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/raw_payload", "{\"bytes\": \"raw\"}")}, false, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: content on a loaded input", REL_CONTEXT,
	 {SET("/loaded_inputs/1/content", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: text on a loaded input, no relevance event", REL_CONTEXT,
	 {SET("/loaded_inputs/2/text", JS("raw")), SET("/relevance", "null")}, true, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: raw_payload on a loaded input of the receipt", REL_RECEIPT,
	 {SET("/load_receipt/loaded_inputs/0/raw_payload", JS("raw"))}, false, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: content on a receipt's relevance input_ref", REL_RECEIPT,
	 {SET(INPUT_REF(0) "/content", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},

	/* where the members are read from */
	{"source: top-level counts", REL_CONTEXT,
	 {DEL("/selection"), SET("/selected_count", "3"), SET("/delivered_count", "3")}, false, {NULL},
	 {NULL}, "MATCH"},
	{"source: top-level delivered_count is read", REL_CONTEXT,
	 {DEL("/selection"), SET("/selected_count", "3"), SET("/delivered_count", "2")}, false,
	 {"selection"}, {"over_selection"}, "DRIFT"},
	{"source: relevance_event instead of relevance", REL_CONTEXT,
	 {MOVE("/relevance", "/relevance_event")}, false, {NULL}, {NULL}, "MATCH"},
	{"source: relevance_event is checked", REL_CONTEXT,
	 {MOVE("/relevance", "/relevance_event"), SET("/relevance_event/unused_count", "5")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},

	/* combined: every code once, in the order of the checks, the worst verdict */
	{"combined: raw, accounting, join, selection", REL_CONTEXT,
	 {SET("/selection/delivered_count", "2"),
	  SET(INPUT_REF(0) "/delivered_hash", JS(DELIVERED(7))),
	  SET(INPUT_REF(1) "/raw_payload", JS("raw")),
	  SET("/relevance/unknown_count", "5")},
	 false, {"raw_context", "accounting", "join", "selection"},
	 {"raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance", "over_selection"},
	 "UNVERIFIABLE"},
	{"combined: raw and missing relevance", REL_LOAD_ONLY,
	 {SET("/claims_usefulness", "true"),
	  SET("/loaded_inputs", "[{\"input_id\": \"ctx_in_001\", \"content\": \"raw\"}]")},
	 true, {"raw_context", "usefulness"}, {"raw_context_leak", "missing_relevance"},
	 "UNVERIFIABLE"},

	/* Last on purpose: the counts are integers >= 0 as the relevance body allows (no upper
	 * bound), and 2 * INT64_MAX + 2 + 3 = 2^64 + 3 is not 3. core/envelope.c sums them in a
	 * json_int_t: signed overflow (UBSan aborts the binary; without it the sum wraps to 3). */
	{"accounting: huge buckets do not wrap to selected_count", REL_CONTEXT,
	 {SET("/relevance/decisive_count", "9223372036854775807"),
	  SET("/relevance/supporting_count", "9223372036854775807"),
	  SET("/relevance/unused_count", "2"), SET("/relevance/unknown_count", "3")},
	 false, {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
};
/* clang-format on */

_Static_assert(N_ELEMS(rel_cases) == REL_CASE_COUNT, "REL_CASE_COUNT is the number of rows");
