/* core/provider: the decision-context call (openapi/openapi.yaml "Decision context",
 * docs/providers-contract.md) — its deadline and request, and every rule of the provider's
 * response at its edges. Response cases are rows of a table: a valid response, a few member
 * mutations, and the expected verdict. */
#include "unit.h"

#include <jansson.h>

#include "core/provider.h"
#include "provider_helpers.h"

/* ---- decision-context request ------------------------------------------------------- */

static void test_deadline(void **state)
{
	(void)state;
	assert_true(core_dc_deadline_seconds(30, 10) == 10.0);
	assert_true(core_dc_deadline_seconds(2.5, 10) == 2.5);
	assert_true(core_dc_deadline_seconds(10, 10) == 10.0);
	assert_true(core_dc_deadline_seconds(120, 1) == 1.0);
	assert_true(core_dc_deadline_seconds(1, 120) == 1.0);
	assert_true(core_dc_deadline_seconds(9.75, 10) == 9.75);
}

#define DC_REQ_HEAD                                                                              \
	"{\"max_results\":3,\"namespace\":\"ns\",\"observed_at\":\"2026-01-02T03:04:05Z\","      \
	"\"operation\":\"retrieve\",\"query\":\"the query\",\"query_summary\":\"a summary\","    \
	"\"schema_version\":\"decision_context_advisory_retrieve_request_v0\","                  \
	"\"scope_ref\":\"host-session:codex:abc\",\"timeout_seconds\":"

static json_t *dc_request(double timeout)
{
	return core_dc_request("ns", "host-session:codex:abc", "the query", "a summary", 3, timeout,
			       "2026-01-02T03:04:05Z");
}

static void test_dc_request(void **state)
{
	(void)state;
	json_t *r = dc_request(10);
	assert_int_equal(json_object_size(r), 9);
	assert_true(json_is_integer(json_object_get(r, "timeout_seconds")));
	assert_true(json_is_integer(json_object_get(r, "max_results")));
	assert_json_text(r, DC_REQ_HEAD "10}");
	assert_json_text(dc_request(1.0), DC_REQ_HEAD "1}");
	assert_json_text(dc_request(120), DC_REQ_HEAD "120}");

	r = dc_request(2.5);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_json_text(r, DC_REQ_HEAD "2.5}");
	r = dc_request(0.25);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_true(json_real_value(json_object_get(r, "timeout_seconds")) == 0.25);
	json_decref(r);
	r = dc_request(119.999);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_true(json_real_value(json_object_get(r, "timeout_seconds")) == 119.999);
	json_decref(r);
}

/* ---- decision-context response ------------------------------------------------------- */

#define DC_GOOD                                                                                  \
	"{\"schema_version\": \"decision_context_advisory_retrieve_response_v0\", \"ok\": true, " \
	"\"status\": \"completed\", \"reason_code\": null, \"items\": ["                         \
	"{\"resource_ref\": \"fake-private-ref-1\", \"summary\": \"first\", "                    \
	"\"content\": \"FAKE-CONTENT-7f3a one\", \"score\": 0.5}, "                              \
	"{\"resource_ref\": \"fake-private-ref-2\", \"summary\": \"second\", "                   \
	"\"content\": \"FAKE-CONTENT-7f3a two\", \"score\": null}]}"

/* status unavailable with its reason and no items */
#define UNAVAILABLE(reason)                                                                       \
	SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", reason),                   \
		SET(TOP, "items", "[]")

struct dc_row {
	const char *name;
	struct mutation m[MUTATIONS_MAX];
	int max_results;
	enum core_dc_verdict want;
	const char *reason; /* the reason_code handed back for UNAVAILABLE */
};

#define OK_ CORE_DC_COMPLETED
#define BAD CORE_DC_INVALID

static const struct dc_row dc_rows[] = {
	{"good: two items, scores 0.5 and null", {{0}}, 8, OK_, NULL},
	{"good at max_results = 2", {{0}}, 2, OK_, NULL},
	{"too many: max_results + 1", {{0}}, 1, BAD, NULL},
	{"no items", {SET(TOP, "items", "[]")}, 8, OK_, NULL},
	{"no items, max_results 0", {SET(TOP, "items", "[]")}, 0, OK_, NULL},
	{"integer score", {SET(ITEM0, "score", "1")}, 8, OK_, NULL},
	{"negative integer score", {SET(ITEM0, "score", "-3")}, 8, OK_, NULL},
	{"zero score", {SET(ITEM0, "score", "0")}, 8, OK_, NULL},
	{"large real score", {SET(ITEM0, "score", "1.5e300")}, 8, OK_, NULL},
	{"null score", {SET(ITEM0, "score", "null")}, 8, OK_, NULL},
	{"string score", {SET(ITEM0, "score", "\"0.5\"")}, 8, BAD, NULL},
	{"bool score", {SET(ITEM0, "score", "true")}, 8, BAD, NULL},
	{"false score", {SET(ITEM0, "score", "false")}, 8, BAD, NULL},
	{"array score", {SET(ITEM0, "score", "[0.5]")}, 8, BAD, NULL},
	{"object score", {SET(ITEM0, "score", "{}")}, 8, BAD, NULL},
	{"item without score", {DEL(ITEM0, "score")}, 8, BAD, NULL},
	{"item without resource_ref", {DEL(ITEM0, "resource_ref")}, 8, BAD, NULL},
	{"item without summary", {DEL(ITEM0, "summary")}, 8, BAD, NULL},
	{"item without content", {DEL(ITEM0, "content")}, 8, BAD, NULL},
	{"item unknown member", {SET(ITEM0, "FAKE-CONTENT-7f3a", "1")}, 8, BAD, NULL},
	{"item unknown null member", {SET(ITEM0, "extra", "null")}, 8, BAD, NULL},
	{"item renamed member", {DEL(ITEM0, "score"), SET(ITEM0, "scores", "1")}, 8, BAD, NULL},
	{"item not an object", {SET(TOP, "items", "[\"fake-private-ref-1\"]")}, 8, BAD, NULL},
	{"item null", {SET(TOP, "items", "[null]")}, 8, BAD, NULL},
	{"empty resource_ref", {SET(ITEM0, "resource_ref", "\"\"")}, 8, BAD, NULL},
	{"empty summary", {SET(ITEM0, "summary", "\"\"")}, 8, BAD, NULL},
	{"empty content", {SET(ITEM0, "content", "\"\"")}, 8, BAD, NULL},
	{"numeric resource_ref", {SET(ITEM0, "resource_ref", "1")}, 8, BAD, NULL},
	{"null summary", {SET(ITEM0, "summary", "null")}, 8, BAD, NULL},
	{"array content", {SET(ITEM0, "content", "[\"c\"]")}, 8, BAD, NULL},
	{"resource_ref 512", {LONG(ITEM0, "resource_ref", 512)}, 8, OK_, NULL},
	{"resource_ref 513", {LONG(ITEM0, "resource_ref", 513)}, 8, BAD, NULL},
	{"summary 220", {LONG(ITEM0, "summary", 220)}, 8, OK_, NULL},
	{"summary 221", {LONG(ITEM0, "summary", 221)}, 8, BAD, NULL},
	{"content 16000", {LONG(ITEM0, "content", 16000)}, 8, OK_, NULL},
	{"content 16001", {LONG(ITEM0, "content", 16001)}, 8, BAD, NULL},
	/* top level */
	{"unknown member", {SET(TOP, "FAKE-CONTENT-7f3a", "1")}, 8, BAD, NULL},
	{"unknown null member", {SET(TOP, "next_cursor", "null")}, 8, BAD, NULL},
	{"missing reason_code", {DEL(TOP, "reason_code")}, 8, BAD, NULL},
	{"missing items", {DEL(TOP, "items")}, 8, BAD, NULL},
	{"missing ok", {DEL(TOP, "ok")}, 8, BAD, NULL},
	{"missing status", {DEL(TOP, "status")}, 8, BAD, NULL},
	{"missing schema_version", {DEL(TOP, "schema_version")}, 8, BAD, NULL},
	{"other schema_version",
	 {SET(TOP, "schema_version", "\"decision_context_advisory_retrieve_response_v1\"")}, 8,
	 BAD, NULL},
	{"request schema_version",
	 {SET(TOP, "schema_version", "\"decision_context_advisory_retrieve_request_v0\"")}, 8,
	 BAD, NULL},
	{"ok false", {SET(TOP, "ok", "false")}, 8, BAD, NULL},
	{"ok 1", {SET(TOP, "ok", "1")}, 8, BAD, NULL},
	{"ok \"true\"", {SET(TOP, "ok", "\"true\"")}, 8, BAD, NULL},
	{"ok null", {SET(TOP, "ok", "null")}, 8, BAD, NULL},
	{"status done", {SET(TOP, "status", "\"done\"")}, 8, BAD, NULL},
	{"status Completed", {SET(TOP, "status", "\"Completed\"")}, 8, BAD, NULL},
	{"status null", {SET(TOP, "status", "null")}, 8, BAD, NULL},
	{"items null", {SET(TOP, "items", "null")}, 8, BAD, NULL},
	{"items object", {SET(TOP, "items", "{}")}, 8, BAD, NULL},
	/* status / reason_code mismatch */
	{"completed with a reason_code", {SET(TOP, "reason_code", "\"index_offline\"")}, 8, BAD,
	 NULL},
	{"completed with an empty reason_code", {SET(TOP, "reason_code", "\"\"")}, 8, BAD, NULL},
	{"unavailable with reason_code null", {UNAVAILABLE("null")}, 8, BAD, NULL},
	/* unavailable */
	{"unavailable", {UNAVAILABLE("\"index_offline\"")}, 8, CORE_DC_UNAVAILABLE,
	 "index_offline"},
	{"unavailable at max_results 0", {UNAVAILABLE("\"x\"")}, 0, CORE_DC_UNAVAILABLE, "x"},
	{"unavailable with punctuation",
	 {UNAVAILABLE("\"provider.index:offline/2\"")}, 8, CORE_DC_UNAVAILABLE,
	 "provider.index:offline/2"},
	{"unavailable with items",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\"")}, 8,
	 BAD, NULL},
	{"unavailable with items null",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\""),
	  SET(TOP, "items", "null")},
	 8, BAD, NULL},
	{"unavailable without items",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\""),
	  DEL(TOP, "items")},
	 8, BAD, NULL},
	{"reason_code empty", {UNAVAILABLE("\"\"")}, 8, BAD, NULL},
	{"reason_code number", {UNAVAILABLE("5")}, 8, BAD, NULL},
	{"reason_code false", {UNAVAILABLE("false")}, 8, BAD, NULL},
	{"reason_code with a space", {UNAVAILABLE("\"index offline\"")}, 8, BAD, NULL},
	{"reason_code with a leading space", {UNAVAILABLE("\" index_offline\"")}, 8, BAD, NULL},
	{"reason_code with a trailing newline", {UNAVAILABLE("\"index_offline\\n\"")}, 8, BAD, NULL},
	{"reason_code with a tab", {UNAVAILABLE("\"index\\toffline\"")}, 8, BAD, NULL},
	{"reason_code with a CR", {UNAVAILABLE("\"index\\roffline\"")}, 8, BAD, NULL},
	{"reason_code with a VT", {UNAVAILABLE("\"index\\u000boffline\"")}, 8, BAD, NULL},
	{"reason_code with a FF", {UNAVAILABLE("\"index\\foffline\"")}, 8, BAD, NULL},
	{"reason_code 120", {SET(TOP, "status", "\"unavailable\""), LONG(TOP, "reason_code", 120),
			     SET(TOP, "items", "[]")},
	 8, CORE_DC_UNAVAILABLE, NULL /* checked by length below */},
	{"reason_code 121", {SET(TOP, "status", "\"unavailable\""), LONG(TOP, "reason_code", 121),
			     SET(TOP, "items", "[]")},
	 8, BAD, NULL},
};

static void expect_dc(const char *name, const json_t *resp, int max_results,
		      enum core_dc_verdict want, const char *want_reason)
{
	const char *reason = "sentinel", *why = "sentinel";
	enum core_dc_verdict got = core_dc_validate_response(resp, max_results, &reason, &why);
	if (got != want)
		fail_msg("%s: got verdict %d, want %d (why: %s)", name, got, want,
			 why ? why : "(none)");
	if (want == CORE_DC_INVALID) {
		assert_non_null(why);
		assert_true(strlen(why) > 0);
		/* the operator's text never quotes the response */
		assert_null(strstr(why, "FAKE-CONTENT"));
		assert_null(strstr(why, "fake-private"));
		assert_null(strstr(why, pad_run));
		assert_null(reason);
	} else {
		assert_null(why);
	}
	if (want == CORE_DC_COMPLETED)
		assert_null(reason);
	if (want == CORE_DC_UNAVAILABLE) {
		assert_non_null(reason);
		if (want_reason)
			assert_string_equal(reason, want_reason);
		/* borrowed from the response */
		assert_ptr_equal(reason, json_string_value(json_object_get(resp, "reason_code")));
	}
	/* out pointers are optional */
	assert_int_equal(core_dc_validate_response(resp, max_results, NULL, NULL), want);
}

static void test_dc_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(dc_rows); i++) {
		json_t *doc = parse(DC_GOOD);
		apply(doc, dc_rows[i].m, MUTATIONS_MAX);
		expect_dc(dc_rows[i].name, doc, dc_rows[i].max_results, dc_rows[i].want,
			  dc_rows[i].reason);
		json_decref(doc);
	}
}

static void test_dc_whys(void **state)
{
	(void)state;
	static const struct why_row rows[] = {
		{{DEL(TOP, "reason_code")}, "the response lacks a member"},
		{{SET(TOP, "extra", "1")}, "the response has an unknown member"},
		{{DEL(TOP, "reason_code"), SET(TOP, "extra", "1")}, "unknown member"},
		{{DEL(ITEM0, "score")}, "an item lacks a member"},
		{{SET(ITEM0, "extra", "1")}, "an item has an unknown member"},
		{{SET(TOP, "reason_code", "\"x\"")}, "completed with a reason_code"},
		{{UNAVAILABLE("null")}, "unavailable with a null reason_code"},
		{{UNAVAILABLE("\"a b\"")}, "whitespace"},
		{{SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"x\"")},
		 "unavailable with items"},
		{{SET(ITEM0, "score", "\"1\"")}, "score"},
		{{LONG(ITEM0, "content", 16001)}, "content"},
	};
	const char *why = NULL;
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *doc = parse(DC_GOOD);
		apply(doc, rows[i].m, MUTATIONS_MAX);
		assert_int_equal(core_dc_validate_response(doc, 8, NULL, &why), CORE_DC_INVALID);
		if (strstr(why, rows[i].why_has) == NULL)
			fail_msg("why \"%s\" does not say \"%s\"", why, rows[i].why_has);
		json_decref(doc);
	}
	assert_int_equal(core_dc_validate_response(NULL, 8, NULL, &why), CORE_DC_INVALID);
	assert_non_null(strstr(why, "not JSON"));
}

/* A completed response with n items. */
static json_t *dc_with_items(size_t n)
{
	json_t *doc = parse(DC_GOOD), *items = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(items, json_pack("{s:s, s:s, s:s, s:f}", "resource_ref", "r",
						       "summary", "s", "content", "c", "score", 0.1));
	json_object_set_new(doc, "items", items);
	return doc;
}

static void test_dc_max_results(void **state)
{
	(void)state;
	for (int max = 0; max <= RG_DC_MAX_RESULTS; max++) {
		json_t *exact = dc_with_items((size_t)max), *over = dc_with_items((size_t)max + 1);
		expect_dc("exactly max_results items", exact, max, CORE_DC_COMPLETED, NULL);
		expect_dc("max_results + 1 items", over, max, CORE_DC_INVALID, NULL);
		json_decref(exact);
		json_decref(over);
	}
	json_t *one = dc_with_items(1), *none = dc_with_items(0);
	expect_dc("negative max_results, an item", one, -1, CORE_DC_INVALID, NULL);
	expect_dc("negative max_results, no item", none, -1, CORE_DC_COMPLETED, NULL);
	json_decref(one);
	json_decref(none);
}

static void test_dc_not_objects(void **state)
{
	(void)state;
	expect_dc("NULL (not JSON)", NULL, 8, CORE_DC_INVALID, NULL);
	static const char *const texts[] = {"[]", "\"completed\"", "5", "null", "true", "{}"};
	for (size_t i = 0; i < N_ELEMS(texts); i++) {
		json_t *v = parse(texts[i]);
		expect_dc(texts[i], v, 8, CORE_DC_INVALID, NULL);
		json_decref(v);
	}
}

/* Byte bounds count bytes, not characters: 110 "é" are 220 bytes. */
static void test_dc_bytes_not_chars(void **state)
{
	(void)state;
	char summary[2 * 111 + 1] = "";
	for (int i = 0; i < 110; i++)
		strcat(summary, "\xc3\xa9");
	json_t *doc = parse(DC_GOOD);
	json_object_set_new(json_array_get(json_object_get(doc, "items"), 0), "summary",
			    json_string(summary));
	expect_dc("summary of 220 bytes (110 chars)", doc, 8, CORE_DC_COMPLETED, NULL);
	strcat(summary, "a");
	json_object_set_new(json_array_get(json_object_get(doc, "items"), 0), "summary",
			    json_string(summary));
	expect_dc("summary of 221 bytes (111 chars)", doc, 8, CORE_DC_INVALID, NULL);
	json_decref(doc);

	/* a reason_code of 120 bytes is handed back whole */
	doc = parse(DC_GOOD);
	json_object_set_new(doc, "status", json_string("unavailable"));
	json_object_set_new(doc, "reason_code", json_stringn(xs, RG_DC_REASON_MAX));
	json_object_set_new(doc, "items", json_array());
	const char *reason = NULL;
	assert_int_equal(core_dc_validate_response(doc, 8, &reason, NULL), CORE_DC_UNAVAILABLE);
	assert_int_equal(strlen(reason), RG_DC_REASON_MAX);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_dc_request),
		cmocka_unit_test(test_dc_rows),
		cmocka_unit_test(test_dc_whys),
		cmocka_unit_test(test_dc_max_results),
		cmocka_unit_test(test_dc_not_objects),
		cmocka_unit_test(test_dc_bytes_not_chars),
	};
	return cmocka_run_group_tests(tests, fill_xs, NULL);
}
