/*
 * it_preferences_lifecycle — an entry's life after it is written: expiry (the entry reads
 * expired, nothing is written, a late retry replays; invalid and past expires_at are refused),
 * the retirement rules (unknown keys, re-remembering needs a fresh source_ref) and the history
 * walk (every operation once, oldest first, with its predecessor; never part of the view).
 * openapi/openapi.yaml "Preferences", docs/preferences-contract.md. Helpers:
 * preferences_helpers.h.
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

#include "preferences_helpers.h"

/* ================================================================ expiry */

static void test_expiry(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char exp[IT_TIME_LEN];
	long long exp_ms = it_now_ms() + 2000;
	it_rfc3339_ms(exp_ms, exp);
	struct pw w = {M_STMT "-exp Only this sprint.",
		       M_SREF "-exp",
		       M_QUOTE "-exp",
		       EXP_NULL,
		       "op-e1",
		       exp,
		       true};
	json_t *receipt1 = apply_op(rw_a, &j, REMEMBER, "sprint.rule", &w, NULL);
	char *receipt1_text = json_dumps(receipt1, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(receipt1);
	remember_ok(&j, "steady.rule", M_STMT "-steady", M_SREF "-steady", M_QUOTE "-steady", 1,
		    "op-e2", NULL);
	json_t *v = view_now(&j);
	const json_t *e = entry_of(v, "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "active") &&
		     it_json_str_is(e, "statement", w.statement),
		 "sprint.rule is not active before its expiry");
	json_decref(v);
	size_t hist = history_count(&j), aud = audit_count(&j);

	it_sleep_until_ms(exp_ms + 500);
	struct it_resp r;
	view_get(reader_a, &j, &r);
	e = entry_of(r.json, "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "expired") && it_json_has_null(e, "statement") &&
		     same_expiry(it_json_str(e, "expires_at"), exp) &&
		     it_json_int(e, "entry_revision", -1) == 1 &&
		     it_json_str_is(e, "operation_id", "op-e1"),
		 "after %s: sprint.rule is not {state: expired, statement: null, expires_at kept, "
		 "entry_revision 1}: %s",
		 exp, r.body);
	IT_CHECK(!contains(r.body, M_STMT "-exp"), "the expired statement is still in the view");
	IT_CHECK(rev_of(r.json) == 2, "expiry changed the journal revision");
	e = entry_of(r.json, "steady.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "active"), "steady.rule did not stay active");
	it_resp_free(&r);
	IT_CHECK(history_count(&j) == hist && audit_count(&j) == aud,
		 "expiry wrote history or audit records");

	/* the uncertain write retried after its expiry passed: replayed (the known operation id
	 * is decided before "in the future"), the original receipt, the current view */
	pref_send(rw_a, &j, REMEMBER, "sprint.rule", &w, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	char *got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt1_text) == 0,
		 "replay after expiry: not the original receipt\n  original: %s\n  replayed: %s",
		 receipt1_text, got ? got : "?");
	free(got);
	e = entry_of(json_object_get(r.json, "view"), "sprint.rule");
	IT_CHECK(e && it_json_str_is(e, "state", "expired") && it_json_has_null(e, "statement"),
		 "the replay after expiry does not show the current (expired) entry: %s", r.body);
	it_resp_free(&r);
	free(receipt1_text);
	/* the same operation id with other arguments is still a conflict */
	{
		struct pw c = w;
		c.statement = M_STMT "-exp changed";
		pref_send(rw_a, &j, REMEMBER, "sprint.rule", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	IT_CHECK(history_count(&j) == hist && audit_count(&j) == aud,
		 "the replay after expiry wrote history or audit records");

	/* not real dates, not in the future → 422 naming expires_at; nothing written */
	struct snap s;
	snap_take(&j, &s);
	char past[IT_TIME_LEN];
	it_rfc3339_ms(it_now_ms() - 5000, past);
	const char *bad[] = {
	    "2030-02-30T00:00:00Z",
	    "2029-02-29T00:00:00Z",
	    "2030-13-01T00:00:00Z",
	    "2030-01-01T24:00:01Z",
	    "2020-01-01T00:00:00Z",
	    "2000-01-01T00:00:00.000Z",
	    "tomorrow",
	    "",
	    "2099-01-01T00:00:00+02:00",
	    "2099-01-01T00:00:00+00:00",
	    "2099-01-01T00:00:00",
	    past,
	    /* the epoch is a past instant like any other, not "never expires" */
	    "1970-01-01T00:00:00Z",
	    "1970-01-01T00:00:00.000Z",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct pw c = {M_STMT "-bad-exp",
			       M_SREF "-bad-exp",
			       M_QUOTE "-bad-exp",
			       2,
			       "op-bad-exp",
			       bad[i],
			       true};
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "  expires_at: \"%s\"\n", c.expires_at);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	{
		/* a number is a wrong type */
		json_t *b =
		    json_pack("{s:s, s:s, s:s, s:I, s:s, s:i, s:b}", "statement", M_STMT "-bad-exp",
			      "source_ref", M_SREF "-bad-exp", "source_quote", M_QUOTE "-bad-exp",
			      "expected_revision", (json_int_t)2, "operation_id", "op-bad-exp",
			      "expires_at", 42, "execute", 1);
		char path[1024];
		key_path(&j, "other.rule", REMEMBER, path, sizeof path);
		send_json("PUT", path, rw_a, b, NULL, &r);
		json_decref(b);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	/* "in the future" is decided before If-Match and expected_revision */
	{
		const char *wrong_match[] = {"If-Match: \"9\"", NULL};
		struct pw c = {M_STMT "-bad-exp",
			       M_SREF "-bad-exp",
			       M_QUOTE "-bad-exp",
			       99,
			       "op-bad-exp",
			       past,
			       true};
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, NULL, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
		c.expected = 2;
		pref_send(rw_a, &j, REMEMBER, "other.rule", &c, wrong_match, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "expires_at");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after invalid expires_at");
	snap_free(&s);

	/* real dates in the future pass (a leap day; whole seconds; explicit null) */
	struct pw ok1 = {M_STMT "-leap",
			 M_SREF "-leap",
			 M_QUOTE "-leap",
			 2,
			 "op-e3",
			 "2096-02-29T23:59:59Z",
			 true};
	json_decref(apply_op(rw_a, &j, REMEMBER, "leap.rule", &ok1, NULL));
	{
		json_t *b =
		    json_pack("{s:s, s:s, s:s, s:I, s:s, s:n, s:b}", "statement",
			      M_STMT "-null-exp", "source_ref", M_SREF "-null-exp", "source_quote",
			      M_QUOTE "-null-exp", "expected_revision", (json_int_t)3,
			      "operation_id", "op-e4", "expires_at", "execute", 1);
		char path[1024];
		key_path(&j, "null.rule", REMEMBER, path, sizeof path);
		send_json("PUT", path, rw_a, b, NULL, &r);
		json_decref(b);
		IT_STATUS(&r, 201);
		const json_t *ne = entry_of(json_object_get(r.json, "view"), "null.rule");
		IT_CHECK(ne && it_json_has_null(ne, "expires_at"),
			 "expires_at null is not kept null");
		it_resp_free(&r);
	}

	/* a correction of the expired key makes it active again */
	remember_ok(&j, "sprint.rule", M_STMT "-exp2 Every sprint.", M_SREF "-exp2",
		    M_QUOTE "-exp2", 4, "op-e5", "op-e1");
}

/* ================================================================ retirement rules */

static void test_retire_rules(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* never-written journal: retire → 404 (after the expected_revision check) */
	struct pw rt = {NULL, M_SREF "-rt0", M_QUOTE "-rt0", EXP_NULL, "op-rt0", NULL, true};
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0, "a 404 retire wrote something");
	json_decref(v);

	remember_ok(&j, "rule.key", M_STMT "-rt1 Squash before merging.", M_SREF "-rt1",
		    M_QUOTE "-rt1", EXP_NULL, "op-rt1", NULL);
	struct snap s;
	snap_take(&j, &s);
	rt.expected = 1;
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	/* a stale retirement of an unknown key is stale first */
	rt.expected = 5;
	pref_send(rw_a, &j, RETIRE, "never.key", &rt, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after retiring unknown keys");
	snap_free(&s);

	retire_ok(&j, "rule.key", M_SREF "-rt-retire", M_QUOTE "-rt2 forget squashing", 1, "op-rt2",
		  "op-rt1");
	snap_take(&j, &s);
	/* re-remember with the retirement's source_ref → 422 naming source_ref */
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {M_STMT "-rt3 Squash again.",
			       M_SREF "-rt-retire",
			       M_QUOTE "-rt3",
			       2,
			       "op-rt3",
			       NULL,
			       exec == 1};
		pref_send(rw_a, &j, REMEMBER, "rule.key", &w, NULL, &r);
		expect_problem_private(&r, 422, "validation_failed");
		IT_FIELD(&r, "source_ref");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after re-remembering with the retirement's source_ref");
	snap_free(&s);

	/* with a fresh source_ref → 201 active again */
	remember_ok(&j, "rule.key", M_STMT "-rt4 Squash again.", M_SREF "-rt4-fresh",
		    M_QUOTE "-rt4", 2, "op-rt4", "op-rt2");
	v = view_now(&j);
	const json_t *e = entry_of(v, "rule.key");
	IT_CHECK(e && it_json_str_is(e, "state", "active") &&
		     it_json_str_is(e, "statement", M_STMT "-rt4 Squash again.") &&
		     it_json_int(e, "entry_revision", -1) == 3,
		 "rule.key is not active again at revision 3");
	char *text = json_dumps(v, JSON_COMPACT);
	IT_CHECK(!contains(text, M_STMT "-rt1"), "the first statement came back: %s", text);
	free(text);
	json_decref(v);
}

/* ================================================================ history walk */

static void test_history_walk(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* a never-written journal has an empty history */
	json_t *h0 = history_walk(rw_a, &j, 2, NULL);
	IT_CHECK(json_array_size(h0) == 0, "a never-written journal has history");
	json_decref(h0);

	struct step {
		enum action act;
		const char *key;
		const char *op;
		const char *pred; /* expected predecessor_operation_id */
	} steps[] = {
	    {REMEMBER, "alpha", "op-h1", NULL},    {REMEMBER, "beta", "op-h2", NULL},
	    {REMEMBER, "alpha", "op-h3", "op-h1"}, {RETIRE, "beta", "op-h4", "op-h2"},
	    {REMEMBER, "gamma", "op-h5", NULL},    {REMEMBER, "gamma", "op-h6", "op-h5"},
	    {RETIRE, "alpha", "op-h7", "op-h3"},
	};
	size_t n = sizeof steps / sizeof *steps;
	char stmts[sizeof steps / sizeof *steps][64], quotes[sizeof steps / sizeof *steps][64],
	    srefs[sizeof steps / sizeof *steps][64];
	for (size_t i = 0; i < n; i++) {
		snprintf(stmts[i], sizeof stmts[i], M_STMT "-h%zu", i + 1);
		snprintf(quotes[i], sizeof quotes[i], M_QUOTE "-h%zu", i + 1);
		snprintf(srefs[i], sizeof srefs[i], M_SREF "-h%zu", i + 1);
		struct pw w = {steps[i].act == REMEMBER ? stmts[i] : NULL,
			       srefs[i],
			       quotes[i],
			       i == 0 ? EXP_NULL : (long long)i,
			       steps[i].op,
			       NULL,
			       true};
		json_decref(apply_op(rw_a, &j, steps[i].act, steps[i].key, &w, steps[i].pred));
	}

	size_t pages = 0;
	json_t *h = history_walk(reader_a, &j, 2, &pages);
	IT_CHECK(json_array_size(h) == n, "the limit=2 walk returned %zu items, expected %zu",
		 json_array_size(h), n);
	IT_CHECK(pages == (n + 1) / 2, "the limit=2 walk took %zu pages, expected %zu", pages,
		 (n + 1) / 2);
	for (size_t i = 0; i < n; i++) {
		const json_t *it = json_array_get(h, i);
		char *text = json_dumps(it, JSON_COMPACT);
		IT_CHECK(it_json_str_is(it, "operation_id", steps[i].op),
			 "history item %zu is not %s (every operation once, oldest first): %s", i,
			 steps[i].op, text);
		/* exactly once */
		for (size_t k = 0; k < i; k++)
			IT_CHECK(!it_json_str_is(json_array_get(h, k), "operation_id", steps[i].op),
				 "%s appears twice", steps[i].op);
		IT_CHECK(it_json_str_is(it, "key", steps[i].key) &&
			     it_json_str_is(it, "action",
					    steps[i].act == REMEMBER ? "remember" : "retire") &&
			     it_json_int(it, "revision_after", -1) == (long long)i + 1 &&
			     it_json_str_is(it, "source_ref", srefs[i]) &&
			     it_json_str_is(it, "source_quote", quotes[i]),
			 "history item %zu: %s", i, text);
		if (steps[i].act == REMEMBER)
			IT_CHECK(it_json_str_is(it, "statement", stmts[i]),
				 "history item %zu does not keep its statement: %s", i, text);
		else
			IT_CHECK(it_json_has_null(it, "statement"),
				 "history of a retirement has a statement: %s", text);
		if (steps[i].pred)
			IT_CHECK(it_json_str_is(it, "predecessor_operation_id", steps[i].pred),
				 "history item %zu: predecessor_operation_id is not %s: %s", i,
				 steps[i].pred, text);
		else
			IT_CHECK(it_json_has_null(it, "predecessor_operation_id"),
				 "history item %zu: predecessor_operation_id is not null: %s", i,
				 text);
		free(text);
	}
	/* the whole history in one page equals the walk */
	json_t *one = history_walk(reader_a, &j, 200, &pages);
	IT_CHECK(json_equal(one, h) && pages == 1, "the limit=200 read differs from the walk");
	json_decref(one);
	json_decref(h);

	/* history is never part of the view */
	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == 3, "the view holds %zu entries, expected 3", entry_count(v));
	char *text = json_dumps(v, JSON_COMPACT);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(steps[i].op, "op-h6") == 0)
			continue; /* gamma's current statement */
		char needle[sizeof stmts[0] + 2]; /* the statement in quotes */
		IT_CHECK(snprintf(needle, sizeof needle, "\"%s\"", stmts[i]) < (int)sizeof needle,
			 "statement %zu does not fit its needle", i);
		IT_CHECK(!contains(text, needle), "the view shows history statement %s: %s",
			 stmts[i], text);
	}
	free(text);
	json_decref(v);

	/* limit bounds */
	const char *bad[] = {"limit=0", "limit=201", "limit=-1", "limit=abc"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[1024];
		snprintf(path, sizeof path, "/v1/goals/%s/agents/%s/preference-history?%s", j.goal,
			 j.agent, bad[i]);
		it_request(&srv, "GET", path, reader_a, NULL, NULL, &r);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_FIELD(&r, "limit");
		it_resp_free(&r);
	}
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_retire_rules),
	    cmocka_unit_test(test_history_walk),
	};
	int rc = cmocka_run_group_tests_name("it_preferences_lifecycle", tests, group_setup,
					     group_teardown_privacy);
	it_cleanup();
	return prefs_exit_status(rc);
}
