/* it_envelopes_* verdict checks (envelope_helpers.h): the contract's tables of checks and
 * codes, and the shape, consistency and expected outcome of a verdict answer. */
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

/* the contract's tables, in their order */
const struct check_def env_checks[] = {
    {"claims_cite_refs", "lossy_summary"},
    {"refs_exist", "missing_source_ref"},
    {"refs_expandable", "unexpanded_required_ref"},
    {"hashes", "stale_context"},
    {"freshness", "stale_context"},
    {"receipt_chain", "unjoinable_receipt"},
    {"quality_gates", "quality_gate_missing"},
    {"readability", "readability_regression"},
    {"budget", "budget_exceeded"},
    {"declared_failure", NULL},
};
const size_t n_env_checks = sizeof env_checks / sizeof *env_checks;

const struct check_def rel_checks[] = {
    {"raw_context", "raw_context_leak"},
    {"usefulness", "missing_relevance"},
    {"accounting", "relevance_accounting_missing"},
    {"join", "unjoinable_relevance"},
    {"selection", "over_selection"},
};
const size_t n_rel_checks = sizeof rel_checks / sizeof *rel_checks;

static const char *code_verdict(const char *code)
{
	static const char *const drift[] = {"readability_regression", "budget_exceeded",
					    "over_selection"};
	for (size_t i = 0; i < sizeof drift / sizeof *drift; i++) {
		if (strcmp(code, drift[i]) == 0)
			return "DRIFT";
	}
	return "UNVERIFIABLE";
}

static int verdict_rank(const char *v)
{
	if (!v)
		return -1;
	if (strcmp(v, "MATCH") == 0)
		return 0;
	if (strcmp(v, "DRIFT") == 0)
		return 1;
	if (strcmp(v, "UNVERIFIABLE") == 0)
		return 2;
	return -1;
}

/* position of code in the envelope table (its first row), or -1 */
static int env_code_rank(const char *code)
{
	for (size_t i = 0; i < n_env_checks; i++) {
		if (env_checks[i].code && strcmp(env_checks[i].code, code) == 0)
			return (int)i;
	}
	return -1;
}

static bool rel_code_known(const char *code)
{
	for (size_t i = 0; i < n_rel_checks; i++) {
		if (strcmp(rel_checks[i].code, code) == 0)
			return true;
	}
	return false;
}

/* a code of the seed's failure_codes list */
static bool seed_code_known(const char *code)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(seed, "failure_codes"), i, c) {
		if (json_is_string(c) && strcmp(json_string_value(c), code) == 0)
			return true;
	}
	return false;
}

/* borrowed: the checks[] entry named `check`, or NULL */
const json_t *check_of(const json_t *ans, const char *check)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(ans, "checks"), i, c) {
		if (it_json_str_is(c, "check", check))
			return c;
	}
	return NULL;
}

static bool codes_have(const json_t *ans, const char *code)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(ans, "failure_codes"), i, c) {
		if (json_is_string(c) && strcmp(json_string_value(c), code) == 0)
			return true;
	}
	return false;
}

/*
 * The answer's shape and internal consistency (soft: reasons appended to why):
 * verdict one of three and the worst of the codes; failure_codes unique known strings
 * (envelopes: in the order of the table, the declared code — the envelope's own
 * failure_code — may come last); checks[] names every check once (envelopes: in the table's
 * order) with result pass|fail|skipped and a string detail; a failing check's code is listed
 * and a listed code has a failing check.
 */
static bool answer_shape_ok(const json_t *j, enum kind kind, const char *declared, char *why,
			    size_t n)
{
	size_t before = strlen(why);
	if (!json_is_object(j)) {
		soft(why, n, "the answer is not a JSON object");
		return false;
	}
	const char *verdict = it_json_str(j, "verdict");
	if (verdict_rank(verdict) < 0)
		soft(why, n, "verdict is not MATCH|DRIFT|UNVERIFIABLE");
	const json_t *codes = json_object_get(j, "failure_codes");
	const json_t *checks = json_object_get(j, "checks");
	if (!json_is_array(codes) || !json_is_array(checks)) {
		soft(why, n, "failure_codes or checks is not an array");
		return false;
	}
	int worst = 0, last_rank = -1;
	size_t i;
	const json_t *c;
	json_array_foreach (codes, i, c) {
		const char *code = json_string_value(c);
		if (!code) {
			soft(why, n, "failure_codes[%zu] is not a string", i);
			continue;
		}
		for (size_t k = 0; k < i; k++) {
			const char *other = json_string_value(json_array_get(codes, k));
			if (other && strcmp(other, code) == 0)
				soft(why, n, "failure code %s is listed twice", code);
		}
		bool is_declared = declared && strcmp(declared, code) == 0;
		bool known = kind == ENVELOPE ? (env_code_rank(code) >= 0 ||
						 (is_declared && seed_code_known(code)))
					      : rel_code_known(code);
		if (!known) {
			soft(why, n, "failure code %s is not a code of this endpoint", code);
			continue;
		}
		int vr = verdict_rank(code_verdict(code));
		worst = vr > worst ? vr : worst;
		if (kind == ENVELOPE) {
			int rank = env_code_rank(code);
			bool last = i + 1 == json_array_size(codes);
			if (rank >= 0 && rank < last_rank && !(is_declared && last))
				soft(why, n, "failure code %s is out of the table's order", code);
			if (rank >= 0 && !(is_declared && last))
				last_rank = rank;
		}
	}
	if (verdict_rank(verdict) >= 0 && verdict_rank(verdict) != worst)
		soft(why, n, "verdict %s is not the worst of the codes", verdict);

	const struct check_def *defs = kind == ENVELOPE ? env_checks : rel_checks;
	size_t ndefs = kind == ENVELOPE ? n_env_checks : n_rel_checks;
	if (json_array_size(checks) != ndefs)
		soft(why, n, "checks[] has %zu entries, expected %zu", json_array_size(checks),
		     ndefs);
	for (size_t d = 0; d < ndefs; d++) {
		const json_t *found = NULL;
		size_t count = 0, at = 0;
		json_array_foreach (checks, i, c) {
			if (it_json_str_is(c, "check", defs[d].check)) {
				found = c;
				count++;
				at = i;
			}
		}
		if (count != 1) {
			soft(why, n, "check %s appears %zu times", defs[d].check, count);
			continue;
		}
		if (kind == ENVELOPE && at != d)
			soft(why, n, "check %s is at checks[%zu], the table puts it at %zu",
			     defs[d].check, at, d);
		const char *res = it_json_str(found, "result");
		bool fail = res && strcmp(res, "fail") == 0;
		if (!res || (!fail && strcmp(res, "pass") != 0 && strcmp(res, "skipped") != 0))
			soft(why, n, "check %s: result is not pass|fail|skipped", defs[d].check);
		const json_t *detail = json_object_get(found, "detail");
		if (kind == ENVELOPE ? !json_is_string(detail)
				     : (detail && !json_is_string(detail) && !json_is_null(detail)))
			soft(why, n, "check %s: detail is not a string", defs[d].check);
		const char *code = defs[d].code ? defs[d].code : declared;
		if (fail && (!code || !codes_have(j, code)))
			soft(why, n, "check %s fails but its code %s is not listed", defs[d].check,
			     code ? code : "(none declared)");
	}
	json_array_foreach (codes, i, c) {
		const char *code = json_string_value(c);
		bool explained = false;
		for (size_t d = 0; code && d < ndefs; d++) {
			const char *dc = defs[d].code ? defs[d].code : declared;
			const json_t *ch = check_of(j, defs[d].check);
			if (dc && strcmp(dc, code) == 0 && it_json_str_is(ch, "result", "fail"))
				explained = true;
		}
		if (code && !explained)
			soft(why, n, "code %s is listed but no check that owns it fails", code);
	}
	if (kind == ENVELOPE) {
		if (!it_has_prefix_hex(it_json_str(j, "envelope_id"), "env_"))
			soft(why, n, "envelope_id is not env_ + 32 hex");
		if (it_json_int(j, "revision", -1) < 1)
			soft(why, n, "revision is not an integer >= 1");
		if (!it_is_timestamp_ms(it_json_str(j, "created_at")))
			soft(why, n, "created_at is not RFC 3339 UTC with milliseconds");
		const json_t *w = json_object_get(j, "workspace_id");
		const json_t *wr = json_object_get(j, "workspace_revision");
		if (!w || !wr || !(json_is_string(w) || json_is_null(w)) ||
		    !(json_is_integer(wr) || json_is_null(wr)) ||
		    json_is_null(w) != json_is_null(wr))
			soft(why, n,
			     "workspace_id/workspace_revision are not both present (both "
			     "null or a string and an integer)");
	}
	return strlen(why) == before;
}

/*
 * The expected outcome (soft). codes: NULL-terminated; exact: failure_codes is exactly codes
 * (envelopes: in that order; relevance: as a set); otherwise they are among failure_codes.
 */
bool outcome_ok(const struct it_resp *r, enum kind kind, long status, const char *verdict,
		const char *const *codes, bool exact, const char *declared, char *why, size_t n)
{
	size_t before = strlen(why);
	if (r->status != status) {
		soft(why, n, "status %ld, expected %ld", r->status, status);
		return false;
	}
	const char *ct = it_resp_header(r, "Content-Type");
	if (!ct || strncmp(ct, "application/json", 16) != 0)
		soft(why, n, "Content-Type is %s", ct ? ct : "none");
	if (!answer_shape_ok(r->json, kind, declared, why, n))
		return false;
	if (!it_json_str_is(r->json, "verdict", verdict))
		soft(why, n, "verdict is %s, expected %s", it_json_str(r->json, "verdict"),
		     verdict);
	size_t want = 0;
	for (; codes[want]; want++) {
		if (!codes_have(r->json, codes[want]))
			soft(why, n, "%s is not among failure_codes", codes[want]);
	}
	const json_t *got = json_object_get(r->json, "failure_codes");
	if (exact && json_array_size(got) != want)
		soft(why, n, "failure_codes has %zu entries, expected exactly %zu",
		     json_array_size(got), want);
	if (exact && kind == ENVELOPE && json_array_size(got) == want) {
		for (size_t i = 0; i < want; i++) {
			if (!json_is_string(json_array_get(got, i)) ||
			    strcmp(json_string_value(json_array_get(got, i)), codes[i]) != 0)
				soft(why, n, "failure_codes[%zu] is not %s", i, codes[i]);
		}
	}
	return strlen(why) == before;
}

void expect_outcome_at(const struct it_resp *r, enum kind kind, long status, const char *verdict,
		       const char *const *codes, bool exact, const char *declared, const char *what,
		       const char *file, int line)
{
	char why[2048] = "";
	if (outcome_ok(r, kind, status, verdict, codes, exact, declared, why, sizeof why))
		return;
	it_fail_at(file, line, "%s: %s\n  request: %s\n  answer %ld: %.3000s", what, why, r->desc,
		   r->status, r->body ? r->body : "");
}
