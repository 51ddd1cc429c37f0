/*
 * it_envelopes_findings — what the envelope checks find (openapi/openapi.yaml
 * "Context envelopes"; docs/envelope-contract.md; issue 6):
 *
 *  - combined failures: every code, in the order of the contract's table, the worst verdict,
 *    the envelope's own failure_code, each failing check's detail naming the offending ids;
 *  - each missing required field as the finding of the check that owns it, the gate, hash and
 *    budget rules at their edges;
 *  - the freshness rules (listed path → hash, unlisted → root), an unknown workspace.
 *
 * Helpers: envelope_helpers.h. The fixture files come from RG_FIXTURES_DIR (set by CMake).
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envelope_helpers.h"

/* the detail of `check` names one of the NULL-terminated alternatives (an id or index) */
static void expect_detail_names(const json_t *ans, const char *check, ...)
{
	const char *detail = it_json_str(check_of(ans, check), "detail");
	bool found = false;
	va_list ap;
	va_start(ap, check);
	for (const char *alt = va_arg(ap, const char *); alt; alt = va_arg(ap, const char *))
		found |= detail && strstr(detail, alt) != NULL;
	va_end(ap);
	IT_CHECK(found, "the %s detail \"%s\" names no offending id or index", check,
		 detail ? detail : "(none)");
}

/* ================================================================ combined failures */

static void test_combined_failures(void **state)
{
	(void)state;
	json_t *e;

	/* readability DRIFT + stale → UNVERIFIABLE with both */
	e = happy_copy();
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(
	    e, "source_refs[0].content_hash",
	    json_string("sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a9202"));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE", CODES("stale_context", "readability_regression"),
		    true, "readability DRIFT + stale source hash");

	/* two DRIFT codes → DRIFT */
	e = happy_copy();
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "DRIFT", CODES("readability_regression", "budget_exceeded"), true,
		    "readability DRIFT + over budget");

	/* three: lossy + unexpanded (src_002 is still cited) + budget */
	e = happy_copy();
	set_new(e, "summary.claims[0].source_ref_ids", json_array());
	del(e, "source_refs[1].expansion_command");
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("lossy_summary", "unexpanded_required_ref", "budget_exceeded"), true,
		    "lossy + unexpanded + over budget");

	/* three more: missing ref + duplicate receipt + absent test gate */
	e = happy_copy();
	set_new(e, "summary.claims[1].source_ref_ids", json_pack("[s]", "src_999"));
	set_new(e, "receipt_chain[2].receipt_hash",
		json_string(it_json_str(json_array_get(json_object_get(happy, "receipt_chain"), 0),
					"receipt_hash")));
	del(e, "quality_gates.test_evidence");
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("missing_source_ref", "unjoinable_receipt", "quality_gate_missing"), true,
		    "missing ref + duplicate receipt + absent test gate");

	/* all eight envelope codes at once, in the table's order */
	e = happy_copy();
	set_new(e, "compression.lossless_by_ref", json_false());
	set_new(e, "summary.claims[0].source_ref_ids", json_pack("[ss]", "src_001", "src_999"));
	del(e, "source_refs[0].expansion_command");
	set_new(
	    e, "source_refs[1].content_hash",
	    json_string("sha256:adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de5f"));
	set_new(e, "receipt_chain[1].receipt_hash",
		json_string(it_json_str(json_array_get(json_object_get(happy, "receipt_chain"), 0),
					"receipt_hash")));
	set_new(e, "quality_gates.test_evidence", json_string("DRIFT"));
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("lossy_summary", "missing_source_ref", "unexpanded_required_ref",
			  "stale_context", "unjoinable_receipt", "quality_gate_missing",
			  "readability_regression", "budget_exceeded"),
		    true, "all eight envelope failures");

	/* a malformed hash fails hashes and freshness: stale_context once */
	e = happy_copy();
	set_new(
	    e, "source_refs[1].content_hash",
	    json_string("sha256:ADF30BB9A2BC994F3D54B5C1A203BDBCB913F079FD7224F111E9E363B777DE55"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV(&r, "UNVERIFIABLE", CODES("stale_context"), true,
			   "upper-case hex hash (hashes and freshness both fail)");
		IT_CHECK(it_json_str_is(check_of(r.json, "hashes"), "result", "fail"),
			 "the hashes check does not fail on upper-case hex: %s", r.body);
		it_resp_free(&r);
	}

	/* the envelope's own failure_code is listed too (once) */
	e = happy_copy();
	set_new(e, "failure_code", json_string("budget_exceeded"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "DRIFT", CODES("budget_exceeded"), true, "budget_exceeded",
				"declared failure_code budget_exceeded");
		IT_CHECK(it_json_str_is(check_of(r.json, "declared_failure"), "result", "fail"),
			 "declared_failure does not fail for a declared code: %s", r.body);
		it_resp_free(&r);
	}
	e = happy_copy();
	set_new(e, "failure_code", json_string("budget_exceeded"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "DRIFT", CODES("budget_exceeded"), true, "budget_exceeded",
				"declared budget_exceeded that also fails");
		it_resp_free(&r);
	}
	e = happy_copy();
	set_new(e, "failure_code", json_string("stale_context"));
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "UNVERIFIABLE",
				CODES("readability_regression", "stale_context"), false,
				"stale_context", "declared stale_context + readability DRIFT");
		IT_CHECK(json_array_size(json_object_get(r.json, "failure_codes")) == 2,
			 "expected exactly two codes: %s", r.body);
		it_resp_free(&r);
	}
	/* an unknown declared code is ignored */
	e = happy_copy();
	set_new(e, "failure_code", json_string("not_a_known_code"));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "an unknown declared failure_code");

	/* each failing check's detail names the offending ids or indexes */
	struct {
		const char *check;
		const char *path;
		const char *value; /* JSON; NULL: delete */
		const char *alt1, *alt2;
	} details[] = {
	    {"refs_exist", "summary.claims[0].source_ref_ids", "[\"src_999\"]", "src_999", NULL},
	    {"refs_expandable", "source_refs[0].expansion_command", NULL, "src_001", NULL},
	    {"freshness", "source_refs[1].content_hash",
	     "\"sha256:adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de5f\"",
	     "src_002", "1"},
	    {"hashes", "source_refs[1].content_hash", "\"sha256:xyz\"", "src_002", "1"},
	    {"claims_cite_refs", "summary.claims[1].source_ref_ids", "[]", "1", NULL},
	    {"receipt_chain", "receipt_chain[2].tool", "\"\"", "2", NULL},
	};
	for (size_t i = 0; i < sizeof details / sizeof *details; i++) {
		e = happy_copy();
		if (details[i].value) {
			json_error_t err;
			json_t *v = json_loads(details[i].value, JSON_DECODE_ANY, &err);
			IT_CHECK(v != NULL, "bad test value %s", details[i].value);
			set_new(e, details[i].path, v);
		} else {
			del(e, details[i].path);
		}
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		IT_STATUS(&r, 201);
		IT_CHECK(it_json_str_is(check_of(r.json, details[i].check), "result", "fail"),
			 "%s does not fail: %s", details[i].check, r.body);
		expect_detail_names(r.json, details[i].check, details[i].alt1, details[i].alt2,
				    (const char *)NULL);
		it_resp_free(&r);
	}

	/* claim tokens count bytes, not characters: 2000 two-byte characters are 1000 tokens */
	{
		char *mb = repeat_utf8("é", 2000, "");
		size_t bytes =
		    strlen(mb) +
		    strlen(it_json_str(
			json_array_get(json_object_get(json_object_get(happy, "summary"), "claims"),
				       1),
			"text"));
		long long tokens = (long long)((bytes + 3) / 4);
		for (int over = 0; over <= 1; over++) {
			e = happy_copy();
			set_new(e, "summary.claims[0].text", json_string(mb));
			set_new(e, "context_budget.target_packet_tokens",
				json_integer(tokens - over));
			if (over)
				POST_EXPECT(ws_match, e, "DRIFT", CODES("budget_exceeded"), true,
					    "multi-byte claims one token over the target");
			else
				POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true,
					    "multi-byte claims exactly at the target");
		}
		free(mb);
	}

	/* relevance: three UNVERIFIABLE codes together */
	json_t *doc = relevance_copy();
	set_new(doc, "relevance.input_refs[0].content", json_string("raw text"));
	set_new(
	    doc, "relevance.input_refs[1].delivered_hash",
	    json_string("sha256:200000000000000000000000000000000000000000000000000000000000000f"));
	set_new(doc, "relevance.unused_count", json_integer(0));
	REL_EXPECT(
	    doc, "UNVERIFIABLE",
	    CODES("raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance"), true,
	    "raw context + unaccounted + unjoinable");
	/* DRIFT + UNVERIFIABLE → UNVERIFIABLE */
	doc = relevance_copy();
	set_new(doc, "selection.delivered_count", json_integer(2));
	set_new(doc, "loaded_inputs[0].text", json_string("raw text"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("raw_context_leak", "over_selection"), true,
		   "over selection + raw context");
	/* every relevance code at once */
	doc = relevance_copy();
	set_new(doc, "selection.delivered_count", json_integer(2));
	set_new(doc, "relevance.input_refs[0].raw_payload", json_string("raw"));
	set_new(
	    doc, "relevance.input_refs[2].delivered_hash",
	    json_string("sha256:2000000000000000000000000000000000000000000000000000000000000009"));
	set_new(doc, "relevance.decisive_count", json_integer(5));
	set_new(doc, "claims_usefulness", json_true());
	REL_EXPECT(doc, "UNVERIFIABLE",
		   CODES("raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance",
			 "over_selection"),
		   true, "raw + accounting + join + selection (usefulness with an event is fine)");
}

/* ================================================================ required fields, edges */

struct finding_case {
	const char *op;
	const char *path;
	const char *value; /* JSON text for set */
	const char *verdict;
	const char *code; /* NULL: MATCH */
	bool exact;
};

static void test_findings_table(void **state)
{
	(void)state;
	/* every required field of the seed except envelope_id (422, test_limits_envelope) and
	 * failure_code, missing; then gate, hash, budget values at their edges */
	static const struct finding_case cases[] = {
	    {"delete", "workspace.root_hash", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "workspace.git_head", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "workspace", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "context_budget.max_input_tokens", NULL, "DRIFT", "budget_exceeded", true},
	    {"delete", "context_budget.target_packet_tokens", NULL, "DRIFT", "budget_exceeded",
	     true},
	    {"delete", "context_budget", NULL, "DRIFT", "budget_exceeded", true},
	    {"delete", "compression.strategy", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression.ratio_target", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression.lossless_by_ref", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "source_refs[0].path", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[0].range", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[0].content_hash", NULL, "UNVERIFIABLE", "missing_source_ref",
	     false},
	    {"delete", "source_refs", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[1].expansion_command", NULL, "UNVERIFIABLE",
	     "unexpanded_required_ref", true},
	    {"delete", "summary.claims[0].text", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "summary.claims[1].source_ref_ids", NULL, "UNVERIFIABLE", "lossy_summary",
	     true},
	    {"delete", "summary", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"set", "summary.claims", "[]", "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "receipt_chain[0].tool", NULL, "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"delete", "receipt_chain[2].receipt_hash", NULL, "UNVERIFIABLE", "unjoinable_receipt",
	     true},
	    {"delete", "receipt_chain", NULL, "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"set", "receipt_chain", "[]", "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"delete", "quality_gates.readability", NULL, "UNVERIFIABLE", "quality_gate_missing",
	     true},
	    {"delete", "quality_gates", NULL, "UNVERIFIABLE", "quality_gate_missing", true},
	    /* values */
	    {"set", "compression.lossless_by_ref", "false", "UNVERIFIABLE", "lossy_summary", true},
	    {"set", "source_refs[0].expansion_command", "\"\"", "UNVERIFIABLE",
	     "unexpanded_required_ref", true},
	    {"set", "source_refs[0].content_hash",
	     "\"sha1:830671b42a75b2f6d8120df44b05f8f340fb522d\"", "UNVERIFIABLE", "stale_context",
	     true},
	    {"set", "source_refs[0].content_hash",
	     "\"sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a920\"",
	     "UNVERIFIABLE", "stale_context", true},
	    {"set", "receipt_chain[0].tool", "\"\"", "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"set", "receipt_chain[0].receipt_hash", "\"sha256:0011\"", "UNVERIFIABLE",
	     "unjoinable_receipt", true},
	    {"set", "quality_gates.test_evidence", "\"DRIFT\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.test_evidence", "\"UNVERIFIABLE\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.readability", "\"UNVERIFIABLE\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.readability", "\"GOOD\"", "UNVERIFIABLE", "quality_gate_missing",
	     true},
	    {"set", "quality_gates.test_evidence", "\"match\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"delete", "quality_gates.freshness", NULL, "MATCH", NULL, true},
	    /* budget: 200000 - 12000 = 188000 */
	    {"set", "context_budget.target_packet_tokens", "188000", "MATCH", NULL, true},
	    {"set", "context_budget.target_packet_tokens", "188001", "DRIFT", "budget_exceeded",
	     true},
	    {"delete", "context_budget.reserved_response_tokens", NULL, "MATCH", NULL, true},
	    /* the receipt chain's other members are not required */
	    {"delete", "receipt_chain[0].action", NULL, "MATCH", NULL, true},
	    {"delete", "workspace.dirty", NULL, "MATCH", NULL, true},
	};
	size_t failures = 0;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct finding_case *c = &cases[i];
		json_t *e = happy_copy();
		if (strcmp(c->op, "set") == 0) {
			json_error_t err;
			json_t *v = json_loads(c->value, JSON_DECODE_ANY, &err);
			IT_CHECK(v != NULL, "bad test value %s", c->value);
			set_new(e, c->path, v);
		} else {
			del(e, c->path);
		}
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		char why[2048] = "";
		const char *codes[] = {c->code, NULL};
		if (!outcome_ok(&r, ENVELOPE, 201, c->verdict, codes, c->exact, NULL, why,
				sizeof why)) {
			failures++;
			fprintf(stderr,
				"FAIL finding: %s %s%s%s → expected %s%s %s: %s\n  answer %ld: "
				"%.2000s\n",
				c->op, c->path, c->value ? " = " : "", c->value ? c->value : "",
				c->exact ? "exactly " : "", c->code ? c->code : "(no code)",
				c->verdict, why, r.status, r.body ? r.body : "");
		}
		it_resp_free(&r);
	}

	/* the claims' own tokens against the target: ceil(bytes / 4) */
	size_t bytes = 0, i;
	const json_t *cl;
	json_array_foreach (json_object_get(json_object_get(happy, "summary"), "claims"), i, cl)
		bytes += strlen(it_json_str(cl, "text"));
	long long tokens = (long long)((bytes + 3) / 4);
	for (int over = 0; over <= 1; over++) {
		json_t *e = happy_copy();
		set_new(e, "context_budget.target_packet_tokens", json_integer(tokens - over));
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		char why[2048] = "";
		bool ok = over ? outcome_ok(&r, ENVELOPE, 201, "DRIFT", CODES("budget_exceeded"),
					    true, NULL, why, sizeof why)
			       : outcome_ok(&r, ENVELOPE, 201, "MATCH", NO_CODES, true, NULL, why,
					    sizeof why);
		if (!ok) {
			failures++;
			fprintf(stderr,
				"FAIL finding: target_packet_tokens %lld for claims of %zu bytes "
				"(%lld tokens): %s\n  answer %ld: %.2000s\n",
				tokens - over, bytes, tokens, why, r.status, r.body ? r.body : "");
		}
		it_resp_free(&r);
	}
	IT_CHECK(failures == 0, "%zu finding case(s) failed (see above)", failures);
}

/* ================================================================ freshness rules */

static void post_against(const char *root, json_t *files, const char *verdict,
			 const char *const *codes, const char *what)
{
	char ws[ID_MAX];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, root, "another-head", files);
	POST_EXPECT(ws, happy_copy(), verdict, codes, true, what);
}

static void test_freshness_rules(void **state)
{
	(void)state;
	char other_root[72];
	hash_of(0xabcdefULL, other_root);
	/* listed paths decide by their hashes, whatever the root */
	post_against(other_root, happy_files(), "MATCH", NO_CODES,
		     "both refs listed with equal hashes, another root");
	/* an unlisted path falls back to the root */
	json_t *one = happy_files();
	json_array_remove(one, 1);
	post_against(other_root, one, "UNVERIFIABLE", CODES("stale_context"),
		     "src_002 unlisted, another root");
	one = happy_files();
	json_array_remove(one, 1);
	post_against(happy_root(), one, "MATCH", NO_CODES, "src_002 unlisted, the same root");
	post_against(happy_root(), json_array(), "MATCH", NO_CODES, "no files, the same root");
	post_against(other_root, json_array(), "UNVERIFIABLE", CODES("stale_context"),
		     "no files, another root");
	/* a listed path with another hash is stale even when the root matches */
	json_t *moved = happy_files();
	char h[72];
	hash_of(42, h);
	json_object_set_new(json_array_get(moved, 1), "content_hash", json_string(h));
	post_against(happy_root(), moved, "UNVERIFIABLE", CODES("stale_context"),
		     "src_002 listed with another hash, the same root");

	/* an unknown workspace → 404, nothing stored */
	char ws[ID_MAX];
	ws_fresh(ws);
	struct it_resp r;
	size_t before = audit_count(ta.admin, "envelope", NULL);
	env_post(ta.rw, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "envelope", NULL) == before,
		 "a refused envelope was audited");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_combined_failures),
	    cmocka_unit_test(test_findings_table),
	    cmocka_unit_test(test_freshness_rules),
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_findings", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
