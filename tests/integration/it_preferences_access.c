/*
 * it_preferences_access — who reads and writes which journal, and what never leaks: isolation
 * between agents, goals and tenants; the preferences:read / preferences:write / admin scopes;
 * and privacy of statements, quotes and source references (audit records of both tenants,
 * /metrics, the server log). openapi/openapi.yaml "Conventions", "Preferences",
 * docs/preferences-contract.md. Helpers: preferences_helpers.h.
 *
 * test_privacy runs last: it looks at everything the tests before it wrote, then stops the
 * server and reads its log. (The other it_preferences_* executables make the same sweep over
 * their own writes in group_teardown_privacy.)
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

/* ================================================================ isolation */

static void expect_empty_journal(const char *token, const struct journal *j, const char *what)
{
	struct it_resp r;
	view_get(token, j, &r);
	IT_CHECK(rev_of(r.json) == EXP_NULL && entry_count(r.json) == 0,
		 "%s: expected {revision: null, entries: []}, got %s", what, r.body);
	IT_CHECK(!has_marker(r.body), "%s: the view leaks another journal: %s", what, r.body);
	it_resp_free(&r);
	json_t *h = history_all(token, j);
	IT_CHECK(json_array_size(h) == 0, "%s: history is not empty", what);
	json_decref(h);
}

static void test_isolation(void **state)
{
	(void)state;
	struct journal a1, a2, b1;
	journal_fresh(&a1);
	a2 = a1;
	b1 = a1;
	char *agent2 = it_unique("agent2");
	char *goal_b = it_unique("goalb");
	snprintf(a2.agent, sizeof a2.agent, "%s", agent2);
	snprintf(b1.goal, sizeof b1.goal, "%s", goal_b);
	free(agent2);
	free(goal_b);

	remember_ok(&a1, REVIEW_KEY, M_STMT "-iso Ask the reviewer.", M_SREF "-iso", M_QUOTE "-iso",
		    EXP_NULL, "op-iso1", NULL);
	expect_empty_journal(rw_a, &a2, "(goal A, agent 2)");
	expect_empty_journal(rw_a, &b1, "(goal B, agent 1)");
	expect_empty_journal(rw_b, &a1, "tenant B's (goal A, agent 1)");

	/* tenant B: A's revision is stale for B, A's key is unknown to B, A's op id is free */
	struct it_resp r;
	struct pw w = {
	    M_STMT "-iso-b", M_SREF "-iso-b", M_QUOTE "-iso-b", 1, "op-iso1", NULL, true};
	pref_send(rw_b, &a1, REMEMBER, REVIEW_KEY, &w, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "tenant B sees a current_revision for A's journal: %s", r.body);
	it_resp_free(&r);
	struct pw rt = {NULL, M_SREF "-iso-b", M_QUOTE "-iso-b", EXP_NULL, "op-iso-r", NULL, true};
	pref_send(rw_b, &a1, RETIRE, REVIEW_KEY, &rt, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	w.expected = EXP_NULL;
	json_decref(apply_op(rw_b, &a1, REMEMBER, REVIEW_KEY, &w, NULL));
	/* agent 2 of the same goal uses the same op id and key independently */
	struct pw w2 = {
	    M_STMT "-iso-a2", M_SREF "-iso-a2", M_QUOTE "-iso-a2", EXP_NULL, "op-iso1", NULL, true};
	json_decref(apply_op(rw_a, &a2, REMEMBER, REVIEW_KEY, &w2, NULL));

	/* A's journal is as it was */
	json_t *v = view_now(&a1);
	const json_t *e = entry_of(v, REVIEW_KEY);
	IT_CHECK(rev_of(v) == 1 && entry_count(v) == 1 &&
		     it_json_str_is(e, "statement", M_STMT "-iso Ask the reviewer."),
		 "tenant A's journal changed");
	json_decref(v);
	expect_empty_journal(rw_a, &b1, "(goal B, agent 1) after the other writes");

	/* audit: B's records are B's; A sees only its own for this journal */
	json_t *ra = audit_of(admin_a, &a1), *rb = audit_of(admin_b, &a1);
	IT_CHECK(json_array_size(ra) == 1 && json_array_size(rb) == 1,
		 "audit for (goal A, agent 1): tenant A %zu records, tenant B %zu (expected 1 and "
		 "1)",
		 json_array_size(ra), json_array_size(rb));
	IT_CHECK(it_json_int(json_array_get(ra, 0), "seq", -1) !=
		     it_json_int(json_array_get(rb, 0), "seq", -2),
		 "both tenants see the same audit record");
	json_decref(ra);
	json_decref(rb);
}

/* ================================================================ scopes */

static void test_scopes(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;
	char vp[512], hp[512];
	view_path(&j, vp, sizeof vp);
	snprintf(hp, sizeof hp, "/v1/goals/%s/agents/%s/preference-history", j.goal, j.agent);

	/* preferences:read cannot write */
	struct pw w = {M_STMT "-sc", M_SREF "-sc", M_QUOTE "-sc", EXP_NULL, "op-sc1", NULL, true};
	pref_send(reader_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	w.execute = false;
	pref_send(reader_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	w.execute = true;
	pref_send(other_a, &j, REMEMBER, "scope.key", &w, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	pref_send(NULL, &j, REMEMBER, "scope.key", &w, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL, "a refused write wrote");
	json_decref(v);

	/* preferences:write alone can write, but not read */
	json_decref(apply_op(writer_a, &j, REMEMBER, "scope.key", &w, NULL));
	struct pw rt = {NULL, M_SREF "-sc2", M_QUOTE "-sc2", 1, "op-sc2", NULL, true};
	pref_send(reader_a, &j, RETIRE, "scope.key", &rt, NULL, &r);
	expect_problem_private(&r, 403, "forbidden");
	it_resp_free(&r);
	const char *no_read[] = {writer_a, other_a};
	for (size_t i = 0; i < 2; i++) {
		it_request(&srv, "GET", vp, no_read[i], NULL, NULL, &r);
		expect_problem_private(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, "GET", hp, no_read[i], NULL, NULL, &r);
		expect_problem_private(&r, 403, "forbidden");
		it_resp_free(&r);
	}
	it_request(&srv, "GET", vp, NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	/* the reader reads */
	view_get(reader_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 1, "the reader does not see revision 1");
	it_resp_free(&r);
	/* admin implies both */
	json_decref(apply_op(admin_a, &j, RETIRE, "scope.key", &rt, "op-sc1"));
	view_get(admin_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 2, "admin does not see revision 2");
	it_resp_free(&r);
}

/* ================================================================ privacy */

static void test_privacy(void **state)
{
	(void)state;
	/* every test above wrote markers; add a failing write whose body the log could echo */
	struct journal j;
	journal_fresh(&j);
	remember_ok(&j, "privacy.key", M_STMT "-priv Secret working rule.", M_SREF "-priv",
		    M_QUOTE "-priv Secret words of the owner.", EXP_NULL, "op-priv1", NULL);
	struct it_resp r;
	struct pw w = {M_STMT "-priv-stale",
		       M_SREF "-priv-stale",
		       M_QUOTE "-priv-stale",
		       7,
		       "op-priv2",
		       NULL,
		       true};
	pref_send(rw_a, &j, REMEMBER, "privacy.key", &w, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	it_resp_free(&r);
	char *huge = text_of(M_STMT "-priv-huge-", 1201, 'h');
	w.statement = huge;
	w.expected = 1;
	pref_send(rw_a, &j, REMEMBER, "privacy.key", &w, NULL, &r);
	expect_problem_private(&r, 422, "validation_failed");
	it_resp_free(&r);
	free(huge);

	expect_no_private(admin_a, "tenant A");
	expect_no_private(admin_b, "tenant B");

	/* /metrics, then the whole server log */
	expect_server_private();
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_privacy), /* last: stops the server and reads its log */
	};
	int rc = cmocka_run_group_tests_name("it_preferences_access", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return prefs_exit_status(rc);
}
