/* core/provider: the semantic-preference call (openapi/openapi.yaml "Semantic preferences",
 * docs/providers-contract.md) — surface and context-key ids, the request, every rule of the
 * provider's response at its edges, item truncation to the limit, and the maintenance guidance
 * drawn from the corpus inventory. Response cases are rows of a table: a valid response, a few
 * member mutations, and the expected failure. */
#include "unit.h"

#include <jansson.h>

#include "core/provider.h"
#include "provider_helpers.h"

/* ---- semantic preferences: ids and request --------------------------------------------- */

static void test_sp_surface(void **state)
{
	(void)state;
	static const char *const good[] = {"a.b", "editor.compose", "mod-1.surf_2", "a.b.c",
					   "a1.b-_", "a-.b_", "x.y.z.w"};
	static const char *const bad[] = {"", "a", "editor", "A.b", "a.B", "1a.b", "a.1b",
					  "_a.b", "a._b", "a.-b", "a..b", ".a.b", "a.b.",
					  "a b.c", "a.b c", "a.b\xc3\xa9", "a.b/c", "a:b.c"};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		if (!core_sp_surface_valid(good[i]))
			fail_msg("surface %s should be valid", good[i]);
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		if (core_sp_surface_valid(bad[i]))
			fail_msg("surface %s should be invalid", bad[i]);
	assert_false(core_sp_surface_valid(NULL));

	char s[140];
	snprintf(s, sizeof s, "a.%.126s", xs); /* 128 bytes */
	assert_true(core_sp_surface_valid(s));
	snprintf(s, sizeof s, "a.%.127s", xs); /* 129 */
	assert_false(core_sp_surface_valid(s));
}

static void test_sp_context_key(void **state)
{
	(void)state;
	static const char *const good[] = {"a", "z", "a_b-1", "repo", "a9", "a-", "a_"};
	static const char *const bad[] = {"", "A", "1a", "_a", "-a", "a.b", "a b", "aB",
					  "\xc3\xa9", "a:b"};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		if (!core_sp_context_key_valid(good[i]))
			fail_msg("context key %s should be valid", good[i]);
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		if (core_sp_context_key_valid(bad[i]))
			fail_msg("context key %s should be invalid", bad[i]);
	assert_false(core_sp_context_key_valid(NULL));
	char k[70];
	snprintf(k, sizeof k, "%.64s", xs);
	assert_true(core_sp_context_key_valid(k));
	snprintf(k, sizeof k, "%.65s", xs);
	assert_false(core_sp_context_key_valid(k));
}

static void test_sp_request(void **state)
{
	(void)state;
	assert_json_text(core_sp_request("editor.compose", "tone", 5, NULL),
			 "{\"context\":{},\"limit\":5,\"query\":\"tone\","
			 "\"schema_version\":\"semantic_preference_provider_request_v0\","
			 "\"surface\":\"editor.compose\"}");
	json_t *ctx = parse("{\"repo\": \"recallgate\", \"lang\": \"c\"}");
	json_t *r = core_sp_request("a.b", "q", 20, ctx);
	assert_int_equal(json_object_size(r), 5);
	assert_true(json_is_integer(json_object_get(r, "limit")));
	/* the context is a copy: the caller's object is neither shared nor changed */
	assert_ptr_not_equal(json_object_get(r, "context"), ctx);
	assert_int_equal(ctx->refcount, 1);
	json_object_set_new(ctx, "later", json_string("x"));
	assert_json_text(r, "{\"context\":{\"lang\":\"c\",\"repo\":\"recallgate\"},\"limit\":20,"
			    "\"query\":\"q\","
			    "\"schema_version\":\"semantic_preference_provider_request_v0\","
			    "\"surface\":\"a.b\"}");
	json_decref(ctx);
}

static void test_sp_failure_name(void **state)
{
	(void)state;
	assert_null(core_sp_failure_name(CORE_SP_OK));
	assert_string_equal(core_sp_failure_name(CORE_SP_INVALID_RESPONSE), "invalid_response");
	assert_string_equal(core_sp_failure_name(CORE_SP_ITEM_TOO_LARGE), "item_too_large");
	assert_string_equal(core_sp_failure_name(CORE_SP_INVALID_CORPUS_INVENTORY),
			    "invalid_corpus_inventory");
}

/* ---- semantic preferences: response ---------------------------------------------------- */

#define SP_ENTRY_MANAGED                                                                          \
	"{\"corpus_id\": \"corp-a\", \"scope_ref\": \"scope-a\", \"read_role\": \"primary\", "   \
	"\"write_mode\": \"provider_managed\", \"write_actor_ref\": \"actor-1\", "                \
	"\"source_of_truth\": \"notes\", \"writeback_triggers\": [\"explicit_feedback\"], "       \
	"\"closure_policy\": \"write_wait_l2_read_scoped_recall\"}"
#define SP_ENTRY_READ_ONLY                                                                        \
	"{\"corpus_id\": \"corp-b\", \"scope_ref\": \"scope-b\", \"read_role\": \"fallback\", "  \
	"\"write_mode\": \"read_only\", \"source_of_truth\": \"wiki\", "                          \
	"\"writeback_triggers\": [], \"closure_policy\": \"none\"}"
#define SP_GOOD                                                                                   \
	"{\"schema_version\": \"semantic_preference_provider_response_v0\", \"items\": ["          \
	"{\"preference_ref\": \"pref-1\", \"summary\": \"Prefer tabs\"}, "                        \
	"{\"preference_ref\": \"pref-2\", \"summary\": \"Short answers\"}], "                     \
	"\"corpus_inventory\": [" SP_ENTRY_MANAGED ", " SP_ENTRY_READ_ONLY "]}"

struct sp_row {
	const char *name;
	struct mutation m[MUTATIONS_MAX];
	enum core_sp_failure want;
};

#define SP_OK CORE_SP_OK
#define INV_R CORE_SP_INVALID_RESPONSE
#define TOO_L CORE_SP_ITEM_TOO_LARGE
#define INV_C CORE_SP_INVALID_CORPUS_INVENTORY

static const struct sp_row sp_rows[] = {
	{"good", {{0}}, SP_OK},
	{"no inventory", {DEL(TOP, "corpus_inventory")}, SP_OK},
	{"no items", {SET(TOP, "items", "[]")}, SP_OK},
	/* the response's shape */
	{"unknown member", {SET(TOP, "truncated", "false")}, INV_R},
	{"missing items", {DEL(TOP, "items")}, INV_R},
	{"missing schema_version", {DEL(TOP, "schema_version")}, INV_R},
	{"other schema_version",
	 {SET(TOP, "schema_version", "\"semantic_preference_provider_response_v1\"")}, INV_R},
	{"request schema_version",
	 {SET(TOP, "schema_version", "\"semantic_preference_provider_request_v0\"")}, INV_R},
	{"schema_version null", {SET(TOP, "schema_version", "null")}, INV_R},
	{"items null", {SET(TOP, "items", "null")}, INV_R},
	{"items object", {SET(TOP, "items", "{}")}, INV_R},
	{"item not an object", {SET(TOP, "items", "[\"pref-1\"]")}, INV_R},
	{"item unknown member", {SET(ITEM0, "score", "1")}, INV_R},
	{"item without summary", {DEL(ITEM0, "summary")}, INV_R},
	{"item without preference_ref", {DEL(ITEM0, "preference_ref")}, INV_R},
	{"empty preference_ref", {SET(ITEM0, "preference_ref", "\"\"")}, INV_R},
	{"empty summary", {SET(ITEM0, "summary", "\"\"")}, INV_R},
	{"numeric preference_ref", {SET(ITEM0, "preference_ref", "1")}, INV_R},
	{"null summary", {SET(ITEM0, "summary", "null")}, INV_R},
	/* item sizes */
	{"preference_ref 512", {LONG(ITEM0, "preference_ref", 512)}, SP_OK},
	{"preference_ref 513", {LONG(ITEM0, "preference_ref", 513)}, TOO_L},
	{"summary 2000", {LONG(ITEM0, "summary", 2000)}, SP_OK},
	{"summary 2001", {LONG(ITEM0, "summary", 2001)}, TOO_L},
	/* precedence: invalid_response > item_too_large > invalid_corpus_inventory */
	{"too large, then a malformed item",
	 {SET(TOP, "items", "[{\"preference_ref\": \"p\", \"summary\": \"s\"}, "
			    "{\"preference_ref\": \"p\", \"summary\": \"s\", \"x\": 1}]"),
	  LONG(ITEM0, "summary", 2001)},
	 INV_R},
	{"too large and a bad inventory",
	 {LONG(ITEM0, "summary", 2001), SET(TOP, "corpus_inventory", "{}")}, TOO_L},
	{"a bad inventory and a malformed item",
	 {SET(TOP, "corpus_inventory", "{}"), SET(ITEM0, "summary", "\"\"")}, INV_R},
	{"a bad inventory and an unknown member",
	 {SET(TOP, "corpus_inventory", "{}"), SET(TOP, "extra", "1")}, INV_R},
	/* the inventory */
	{"inventory empty", {SET(TOP, "corpus_inventory", "[]")}, SP_OK},
	{"inventory null", {SET(TOP, "corpus_inventory", "null")}, INV_C},
	{"inventory object", {SET(TOP, "corpus_inventory", "{}")}, INV_C},
	{"inventory entry not an object", {SET(TOP, "corpus_inventory", "[\"corp-a\"]")}, INV_C},
	{"entry unknown member", {SET(INV0, "owner", "\"x\"")}, INV_C},
	{"entry without corpus_id", {DEL(INV0, "corpus_id")}, INV_C},
	{"entry without scope_ref", {DEL(INV0, "scope_ref")}, INV_C},
	{"entry without read_role", {DEL(INV0, "read_role")}, INV_C},
	{"entry without write_mode", {DEL(INV0, "write_mode")}, INV_C},
	{"entry without source_of_truth", {DEL(INV0, "source_of_truth")}, INV_C},
	{"entry without writeback_triggers", {DEL(INV0, "writeback_triggers")}, INV_C},
	{"entry without closure_policy", {DEL(INV0, "closure_policy")}, INV_C},
	{"entry without write_actor_ref", {DEL(INV0, "write_actor_ref")}, SP_OK},
	{"write_actor_ref null", {SET(INV0, "write_actor_ref", "null")}, SP_OK},
	{"write_actor_ref empty", {SET(INV0, "write_actor_ref", "\"\"")}, INV_C},
	{"write_actor_ref number", {SET(INV0, "write_actor_ref", "1")}, INV_C},
	{"write_actor_ref 512", {LONG(INV0, "write_actor_ref", 512)}, SP_OK},
	{"write_actor_ref 513", {LONG(INV0, "write_actor_ref", 513)}, INV_C},
	{"corpus_id with a space", {SET(INV0, "corpus_id", "\"corp a\"")}, INV_C},
	{"corpus_id starting with _", {SET(INV0, "corpus_id", "\"_corp\"")}, INV_C},
	{"corpus_id empty", {SET(INV0, "corpus_id", "\"\"")}, INV_C},
	{"corpus_id number", {SET(INV0, "corpus_id", "7")}, INV_C},
	{"corpus_id null", {SET(INV0, "corpus_id", "null")}, INV_C},
	{"corpus_id with id punctuation", {SET(INV0, "corpus_id", "\"Corp.1:a_b-c\"")}, SP_OK},
	{"corpus_id 128", {LONG(INV0, "corpus_id", 128)}, SP_OK},
	{"corpus_id 129", {LONG(INV0, "corpus_id", 129)}, INV_C},
	{"scope_ref empty", {SET(INV0, "scope_ref", "\"\"")}, INV_C},
	{"scope_ref null", {SET(INV0, "scope_ref", "null")}, INV_C},
	{"scope_ref 512", {LONG(INV0, "scope_ref", 512)}, SP_OK},
	{"scope_ref 513", {LONG(INV0, "scope_ref", 513)}, INV_C},
	{"source_of_truth empty", {SET(INV0, "source_of_truth", "\"\"")}, INV_C},
	{"source_of_truth number", {SET(INV0, "source_of_truth", "1")}, INV_C},
	{"source_of_truth 512", {LONG(INV0, "source_of_truth", 512)}, SP_OK},
	{"source_of_truth 513", {LONG(INV0, "source_of_truth", 513)}, INV_C},
	{"read_role fallback", {SET(INV0, "read_role", "\"fallback\"")}, SP_OK},
	{"read_role reference", {SET(INV0, "read_role", "\"reference\"")}, SP_OK},
	{"read_role secondary", {SET(INV0, "read_role", "\"secondary\"")}, INV_C},
	{"read_role Primary", {SET(INV0, "read_role", "\"Primary\"")}, INV_C},
	{"read_role null", {SET(INV0, "read_role", "null")}, INV_C},
	{"write_mode read_only", {SET(INV0, "write_mode", "\"read_only\"")}, SP_OK},
	{"write_mode read_write", {SET(INV0, "write_mode", "\"read_write\"")}, INV_C},
	{"write_mode array", {SET(INV0, "write_mode", "[\"read_only\"]")}, INV_C},
	{"closure_policy none", {SET(INV0, "closure_policy", "\"none\"")}, SP_OK},
	{"closure_policy always", {SET(INV0, "closure_policy", "\"always\"")}, INV_C},
	{"closure_policy empty", {SET(INV0, "closure_policy", "\"\"")}, INV_C},
	{"triggers empty", {SET(INV0, "writeback_triggers", "[]")}, SP_OK},
	{"triggers both",
	 {SET(INV0, "writeback_triggers", "[\"source_truth_changed\", \"explicit_feedback\"]")},
	 SP_OK},
	{"triggers repeated",
	 {SET(INV0, "writeback_triggers", "[\"explicit_feedback\", \"explicit_feedback\"]")},
	 INV_C},
	{"triggers unknown", {SET(INV0, "writeback_triggers", "[\"on_commit\"]")}, INV_C},
	{"triggers non-string", {SET(INV0, "writeback_triggers", "[1]")}, INV_C},
	{"triggers null item", {SET(INV0, "writeback_triggers", "[null]")}, INV_C},
	{"triggers a string", {SET(INV0, "writeback_triggers", "\"explicit_feedback\"")}, INV_C},
	{"triggers null", {SET(INV0, "writeback_triggers", "null")}, INV_C},
};

static void expect_sp(const char *name, const json_t *resp, enum core_sp_failure want)
{
	json_t *items = (json_t *)1;
	bool truncated = true;
	const char *why = "sentinel";
	enum core_sp_failure got = core_sp_validate_response(resp, 5, &items, &truncated, &why);
	if (got != want)
		fail_msg("%s: got %d, want %d (why: %s)", name, got, want, why ? why : "(none)");
	if (want == CORE_SP_OK) {
		assert_null(why);
		assert_true(json_is_array(items));
		json_decref(items);
	} else {
		assert_non_null(why);
		assert_null(strstr(why, pad_run));
		assert_null(strstr(why, "pref-1"));
		assert_null(items);
		assert_false(truncated);
	}
	assert_int_equal(core_sp_validate_response(resp, 5, NULL, NULL, NULL), want);
}

static void test_sp_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(sp_rows); i++) {
		json_t *doc = parse(SP_GOOD);
		apply(doc, sp_rows[i].m, MUTATIONS_MAX);
		expect_sp(sp_rows[i].name, doc, sp_rows[i].want);
		json_decref(doc);
	}
	static const char *const not_objects[] = {"[]", "null", "\"x\"", "{}"};
	for (size_t i = 0; i < N_ELEMS(not_objects); i++) {
		json_t *v = parse(not_objects[i]);
		expect_sp(not_objects[i], v, CORE_SP_INVALID_RESPONSE);
		json_decref(v);
	}
}

static void test_sp_whys(void **state)
{
	(void)state;
	static const struct why_row rows[] = {
		{{DEL(TOP, "items")}, "the response lacks a member"},
		{{SET(TOP, "extra", "1")}, "the response has an unknown member"},
		{{DEL(ITEM0, "summary")}, "an item lacks a member"},
		{{LONG(ITEM0, "summary", 2001)}, "summary is over 2000 bytes"},
		{{LONG(ITEM0, "preference_ref", 513)}, "preference_ref is over 512 bytes"},
		{{DEL(INV0, "scope_ref")}, "an inventory entry lacks a member"},
		{{SET(INV0, "extra", "1")}, "an inventory entry has an unknown member"},
		{{SET(INV0, "writeback_triggers", "[\"explicit_feedback\", \"explicit_feedback\"]")},
		 "repeats"},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		const char *why = NULL;
		json_t *doc = parse(SP_GOOD);
		apply(doc, rows[i].m, MUTATIONS_MAX);
		assert_int_not_equal(core_sp_validate_response(doc, 5, NULL, NULL, &why), CORE_SP_OK);
		if (strstr(why, rows[i].why_has) == NULL)
			fail_msg("why \"%s\" does not say \"%s\"", why, rows[i].why_has);
		json_decref(doc);
	}
}

/* SP_GOOD with n items "pref-<i>" and m copies of the managed inventory entry (m < 0: no
 * inventory). */
static json_t *sp_with(size_t n, int m)
{
	json_t *doc = parse(SP_GOOD), *items = json_array(), *inv = json_array();
	json_t *entry = parse(SP_ENTRY_MANAGED);
	for (size_t i = 0; i < n; i++) {
		char ref[32];
		snprintf(ref, sizeof ref, "pref-%zu", i);
		json_array_append_new(items, json_pack("{s:s, s:s}", "preference_ref", ref,
						       "summary", "s"));
	}
	for (int i = 0; i < m; i++)
		json_array_append(inv, entry);
	json_decref(entry);
	json_object_set_new(doc, "items", items);
	if (m >= 0)
		json_object_set_new(doc, "corpus_inventory", inv);
	else {
		json_decref(inv);
		json_object_del(doc, "corpus_inventory");
	}
	return doc;
}

static void test_sp_counts(void **state)
{
	(void)state;
	json_t *doc = sp_with(RG_SP_ITEMS_MAX, -1);
	expect_sp("exactly ITEMS_MAX items", doc, CORE_SP_OK);
	json_decref(doc);
	doc = sp_with(RG_SP_ITEMS_MAX + 1, -1);
	expect_sp("ITEMS_MAX + 1 items", doc, CORE_SP_INVALID_RESPONSE);
	json_decref(doc);
	doc = sp_with(2, RG_SP_INVENTORY_MAX);
	expect_sp("20 inventory entries", doc, CORE_SP_OK);
	json_decref(doc);
	doc = sp_with(2, RG_SP_INVENTORY_MAX + 1);
	expect_sp("21 inventory entries", doc, CORE_SP_INVALID_CORPUS_INVENTORY);
	json_decref(doc);
}

static void expect_kept(const json_t *resp, int limit, size_t want_n, bool want_truncated)
{
	json_t *items = NULL;
	bool truncated = !want_truncated;
	assert_int_equal(core_sp_validate_response(resp, limit, &items, &truncated, NULL),
			 CORE_SP_OK);
	assert_int_equal(json_array_size(items), want_n);
	assert_int_equal(truncated, want_truncated);
	const json_t *all = json_object_get(resp, "items");
	for (size_t i = 0; i < want_n; i++) {
		/* copies, in order, equal to the provider's */
		assert_ptr_not_equal(json_array_get(items, i), json_array_get(all, i));
		assert_true(json_equal(json_array_get(items, i), json_array_get(all, i)));
		assert_int_equal(json_object_size(json_array_get(items, i)), 2);
	}
	json_decref(items);
}

static void test_sp_truncation(void **state)
{
	(void)state;
	json_t *doc = sp_with(RG_SP_LIMIT_MAX + 1, 1);
	expect_kept(doc, RG_SP_LIMIT_MAX, RG_SP_LIMIT_MAX, true);
	expect_kept(doc, RG_SP_LIMIT_MAX + 1, RG_SP_LIMIT_MAX + 1, false);
	expect_kept(doc, 1, 1, true);
	expect_kept(doc, 0, 0, true);
	expect_kept(doc, -1, 0, true);
	json_decref(doc);
	doc = sp_with(RG_SP_LIMIT_MAX, 1);
	expect_kept(doc, RG_SP_LIMIT_MAX, RG_SP_LIMIT_MAX, false);
	expect_kept(doc, 5, 5, true);
	json_decref(doc);
	doc = sp_with(0, 0);
	expect_kept(doc, 5, 0, false);
	expect_kept(doc, 0, 0, false);
	json_decref(doc);
	/* *truncated alone, without the items */
	doc = sp_with(3, -1);
	bool truncated = false;
	assert_int_equal(core_sp_validate_response(doc, 2, NULL, &truncated, NULL), CORE_SP_OK);
	assert_true(truncated);
	json_decref(doc);
}

/* ---- maintenance guidance -------------------------------------------------------------- */

#define ENTRY(id, mode, triggers, policy)                                                        \
	"{\"corpus_id\": \"" id "\", \"scope_ref\": \"s\", \"read_role\": \"primary\", "          \
	"\"write_mode\": \"" mode "\", \"source_of_truth\": \"t\", \"writeback_triggers\": "      \
	triggers ", \"closure_policy\": \"" policy "\"}"
#define PM "provider_managed"
#define RO "read_only"
#define WW "write_wait_l2_read_scoped_recall"
#define EF "\"explicit_feedback\""
#define STC "\"source_truth_changed\""
#define GUIDANCE(ids, triggers, policies)                                                         \
	"{\"schema_version\": \"semantic_preference_maintenance_guidance_v0\", \"corpus_ids\": "  \
	ids ", \"writeback_triggers\": " triggers ", \"closure_policies\": " policies            \
	", \"closure_outcomes\": [\"verified\", \"no_write_rationale\"]}"

static void test_guidance(void **state)
{
	(void)state;
	static const struct {
		const char *name, *inventory, *want;
	} rows[] = {
		{"empty", "[]", "null"},
		{"all read_only",
		 "[" ENTRY("a", RO, "[" EF "]", WW) ", " ENTRY("b", RO, "[]", "none") "]", "null"},
		{"one managed",
		 "[" ENTRY("a", PM, "[" EF "]", WW) "]",
		 GUIDANCE("[\"a\"]", "[" EF "]", "[\"" WW "\"]")},
		{"sorted, read_only left out",
		 "[" ENTRY("corp-b", PM, "[" STC ", " EF "]", WW) ", "
		     ENTRY("corp-c", RO, "[" STC "]", "none") ", "
		     ENTRY("corp-a", PM, "[" EF "]", "none") "]",
		 GUIDANCE("[\"corp-a\", \"corp-b\"]", "[" EF ", " STC "]",
			  "[\"none\", \"" WW "\"]")},
		{"read_only policies and triggers are not theirs",
		 "[" ENTRY("m", PM, "[]", "none") ", " ENTRY("r", RO, "[" STC "]", WW) "]",
		 GUIDANCE("[\"m\"]", "[]", "[\"none\"]")},
		{"unique",
		 "[" ENTRY("a", PM, "[" EF "]", "none") ", " ENTRY("a", PM, "[" EF ", " STC "]",
								"none") ", "
		     ENTRY("B", PM, "[" STC "]", "none") "]",
		 GUIDANCE("[\"B\", \"a\"]", "[" EF ", " STC "]", "[\"none\"]")},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *inv = parse(rows[i].inventory);
		/* every row's inventory is valid */
		json_t *resp = json_pack("{s:s, s:[], s:O}", "schema_version",
					 "semantic_preference_provider_response_v0", "items",
					 "corpus_inventory", inv);
		assert_int_equal(core_sp_validate_response(resp, 5, NULL, NULL, NULL), CORE_SP_OK);
		json_decref(resp);
		json_t *g = core_sp_guidance(inv);
		assert_non_null(g);
		assert_json_equal_text(g, rows[i].want);
		if (json_is_object(g))
			assert_int_equal(json_object_size(g), 5);
		json_decref(g);
		json_decref(inv);
	}
	json_t *g = core_sp_guidance(NULL);
	assert_true(json_is_null(g));
	json_decref(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sp_surface),
		cmocka_unit_test(test_sp_context_key),
		cmocka_unit_test(test_sp_request),
		cmocka_unit_test(test_sp_failure_name),
		cmocka_unit_test(test_sp_rows),
		cmocka_unit_test(test_sp_whys),
		cmocka_unit_test(test_sp_counts),
		cmocka_unit_test(test_sp_truncation),
		cmocka_unit_test(test_guidance),
	};
	return cmocka_run_group_tests(tests, fill_xs, NULL);
}
