/*
 * it_preferences_intents — the seed's table of user intents as data (remember, replace with
 * the negative, a one-time exception, forget, a quoted example, a later unrelated write), each
 * write through the seed's recipe (preview, execute, read back) with its history item and audit
 * record; and a preview writes nothing (remember, correct, retire; stale and invalid previews).
 * openapi/openapi.yaml "Conventions", "Preferences", docs/preferences-contract.md, the seed's
 * "Explicit Agent preferences" … "Fresh-turn adoption". Helpers: preferences_helpers.h.
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

/* ================================================================ the seed's table */

#define S_REVIEWER M_STMT "-1 Ask the designated reviewer before merging."
#define S_NO_REVIEWER M_STMT "-2 Do not ask a reviewer before merging."
#define S_COMMITS M_STMT "-6 Write commit messages in English."

enum step_op { NO_CALL, DO_REMEMBER, DO_RETIRE };

/* One user message, what the host does with it, and the view of REVIEW_KEY afterwards. */
struct intent_step {
	const char *intent; /* the user's words (the seed's "User intent") */
	enum step_op op;    /* the seed's "Update" */
	const char *key;
	const char *statement;
	const char *source_ref;
	const char *source_quote;
	/* the seed's "Next fresh decision": what a fresh read of REVIEW_KEY shows */
	const char *want_state;
	const char *want_statement; /* NULL: null */
	long long want_revision;
	const char *gone[3]; /* must not appear anywhere in the view */
	const char *kept[3]; /* statements still in history */
};

/* clang-format off */
static const struct intent_step intent_table[] = {
    {"Use the designated reviewer from now on", DO_REMEMBER, REVIEW_KEY, S_REVIEWER,
     M_SREF "-owner-message-1", M_QUOTE "-1 Use the designated reviewer for my changes.",
     "active", S_REVIEWER, 1, {NULL}, {S_REVIEWER}},
    {"Stop asking a reviewer", DO_REMEMBER, REVIEW_KEY, S_NO_REVIEWER, M_SREF "-owner-message-2",
     M_QUOTE "-2 Stop asking a reviewer.", "active", S_NO_REVIEWER, 2, {M_STMT "-1"},
     {S_REVIEWER, S_NO_REVIEWER}},
    /* a one-time exception: the durable preference stays, nothing is written */
    {"This time skip the reviewer", NO_CALL, NULL, NULL, NULL, NULL, "active", S_NO_REVIEWER, 2,
     {M_STMT "-1"}, {S_REVIEWER, S_NO_REVIEWER}},
    {"Forget this preference", DO_RETIRE, REVIEW_KEY, NULL, M_SREF "-owner-message-4",
     M_QUOTE "-4 Forget my review preference.", "retired", NULL, 3, {M_STMT "-1", M_STMT "-2"},
     {S_REVIEWER, S_NO_REVIEWER}},
    /* a quotation is not a user correction: the caller does not call */
    {"Here is an example: \xe2\x80\x9cstop asking a reviewer\xe2\x80\x9d", NO_CALL, NULL, NULL,
     NULL, NULL, "retired", NULL, 3, {M_STMT "-1", M_STMT "-2"}, {S_REVIEWER, S_NO_REVIEWER}},
    /* a later, unrelated write must not resurrect the retired statements */
    {"(later) Write commit messages in English", DO_REMEMBER, "style.commits", S_COMMITS,
     M_SREF "-owner-message-6", M_QUOTE "-6 Commit messages in English, please.", "retired",
     NULL, 4, {M_STMT "-1", M_STMT "-2"}, {S_REVIEWER, S_NO_REVIEWER}},
};
/* clang-format on */

/* does some history item carry this statement? */
static bool history_has_statement(const json_t *hist, const char *statement)
{
	size_t i;
	const json_t *it;
	json_array_foreach (hist, i, it) {
		if (it_json_str_is(it, "statement", statement))
			return true;
	}
	return false;
}

static void test_intent_table(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	size_t nsteps = sizeof intent_table / sizeof *intent_table;
	char ops[sizeof intent_table / sizeof *intent_table][48];
	char hashes[sizeof intent_table / sizeof *intent_table][80];
	const char *actions[sizeof intent_table / sizeof *intent_table];
	size_t nwrites = 0;
	char last_review_op[48] = "";
	long long rev = EXP_NULL;

	/* a never-written journal */
	json_t *v0 = view_now(&j);
	IT_CHECK(rev_of(v0) == EXP_NULL && entry_count(v0) == 0,
		 "a never-written journal does not read revision null, entries []");
	json_decref(v0);

	for (size_t s = 0; s < nsteps; s++) {
		const struct intent_step *st = &intent_table[s];
		struct snap before;
		fprintf(stderr, "  step %zu: %s\n", s + 1, st->intent);
		snap_take(&j, &before);
		IT_CHECK(rev_of(before.view) == rev,
			 "step %zu: the journal is not at the expected "
			 "revision before the step",
			 s + 1);
		if (st->op == NO_CALL) {
			snap_expect_same(&j, &before, st->intent);
		} else {
			enum action act = st->op == DO_RETIRE ? RETIRE : REMEMBER;
			bool review = strcmp(st->key, REVIEW_KEY) == 0;
			const char *supersedes =
			    review && last_review_op[0] ? last_review_op : NULL;
			snprintf(ops[nwrites], sizeof ops[nwrites], "intent-op-%zu", s + 1);
			/* the seed's recipe: preview, execute, read back */
			struct pw w = {st->statement, st->source_ref, st->source_quote,
				       rev,           ops[nwrites],   NULL,
				       false};
			struct it_resp r;
			pref_send(rw_a, &j, act, st->key, &w, NULL, &r);
			IT_STATUS(&r, 200);
			check_write_answer(&r, "preview");
			long long next = rev == EXP_NULL ? 1 : rev + 1;
			IT_CHECK(rev_of(json_object_get(r.json, "view")) == next,
				 "step %zu: the preview's view is not at revision %lld", s + 1,
				 next);
			check_entry_after(json_object_get(r.json, "view"), act, st->key, &w, next,
					  "preview");
			it_resp_free(&r);
			snap_expect_same(&j, &before, "after the preview");

			w.execute = true;
			json_t *rc = apply_op(rw_a, &j, act, st->key, &w, supersedes);
			snprintf(hashes[nwrites], sizeof hashes[nwrites], "%s",
				 it_json_str(rc, "intent_hash"));
			json_decref(rc);
			actions[nwrites] =
			    act == REMEMBER ? "preference.remembered" : "preference.retired";
			if (review)
				snprintf(last_review_op, sizeof last_review_op, "%s", ops[nwrites]);
			nwrites++;
			rev = next;
			IT_CHECK(history_count(&j) == before.history + 1,
				 "step %zu: not exactly one new history item", s + 1);
			IT_CHECK(audit_count(&j) == before.audit + 1,
				 "step %zu: not exactly one new audit record", s + 1);
		}
		snap_free(&before);

		/* the next fresh decision reads the whole view */
		struct it_resp r;
		view_get(reader_a, &j, &r);
		IT_CHECK(rev_of(r.json) == st->want_revision,
			 "step %zu (%s): revision %lld, expected %lld", s + 1, st->intent,
			 rev_of(r.json), st->want_revision);
		const json_t *e = entry_of(r.json, REVIEW_KEY);
		IT_CHECK(e && it_json_str_is(e, "state", st->want_state),
			 "step %zu (%s): %s is not %s: %s", s + 1, st->intent, REVIEW_KEY,
			 st->want_state, r.body);
		if (st->want_statement)
			IT_CHECK(it_json_str_is(e, "statement", st->want_statement),
				 "step %zu (%s): the statement is not \"%s\": %s", s + 1,
				 st->intent, st->want_statement, r.body);
		else
			IT_CHECK(it_json_has_null(e, "statement"),
				 "step %zu (%s): the statement is not null: %s", s + 1, st->intent,
				 r.body);
		IT_CHECK(it_json_str_is(e, "operation_id", last_review_op),
			 "step %zu: %s's operation_id is not %s", s + 1, REVIEW_KEY,
			 last_review_op);
		for (size_t g = 0; g < 3 && st->gone[g]; g++)
			IT_CHECK(!contains(r.body, st->gone[g]),
				 "step %zu (%s): the superseded \"%s\" is still in the view: %s",
				 s + 1, st->intent, st->gone[g], r.body);
		it_resp_free(&r);
		json_t *hist = history_all(reader_a, &j);
		IT_CHECK(json_array_size(hist) == nwrites,
			 "step %zu: %zu history items, expected %zu", s + 1, json_array_size(hist),
			 nwrites);
		for (size_t k = 0; k < 3 && st->kept[k]; k++)
			IT_CHECK(history_has_statement(hist, st->kept[k]),
				 "step %zu: history lost \"%s\"", s + 1, st->kept[k]);
		json_decref(hist);
	}

	/* the retired entry names the retirement; the other key is untouched by it */
	json_t *v = view_now(&j);
	const json_t *e = entry_of(v, REVIEW_KEY);
	IT_CHECK(it_json_str_is(e, "source_ref", M_SREF "-owner-message-4") &&
		     it_json_int(e, "entry_revision", -1) == 3,
		 "the retired entry does not carry the retirement's source_ref and revision 3");
	e = entry_of(v, "style.commits");
	IT_CHECK(e && it_json_str_is(e, "statement", S_COMMITS) &&
		     it_json_int(e, "entry_revision", -1) == 4,
		 "style.commits is not active at entry_revision 4");
	IT_CHECK(entry_count(v) == 2, "expected 2 entries, got %zu", entry_count(v));
	json_decref(v);

	/* one audit record per operation, journal revisions, details without private text */
	json_t *recs = audit_of(admin_a, &j);
	IT_CHECK(json_array_size(recs) == nwrites, "%zu audit records, expected %zu",
		 json_array_size(recs), nwrites);
	char rid[256];
	snprintf(rid, sizeof rid, "%s/%s", j.goal, j.agent);
	for (size_t i = 0; i < nwrites; i++) {
		const json_t *rec = json_array_get(recs, i);
		const json_t *d = json_object_get(rec, "details");
		char *text = json_dumps(rec, JSON_COMPACT);
		IT_CHECK(it_json_str_is(rec, "action", actions[i]),
			 "record %zu: action is not %s: %s", i, actions[i], text);
		IT_CHECK(it_json_str_is(rec, "resource_type", "preference_journal") &&
			     it_json_str_is(rec, "resource_id", rid),
			 "record %zu: resource is not preference_journal %s: %s", i, rid, text);
		if (i == 0)
			IT_CHECK(
			    it_json_has_null(rec, "revision_before"),
			    "the journal's first audit record has revision_before not null: %s",
			    text);
		else
			IT_CHECK(it_json_int(rec, "revision_before", -1) == (long long)i,
				 "record %zu: revision_before: %s", i, text);
		IT_CHECK(it_json_int(rec, "revision_after", -1) == (long long)i + 1,
			 "record %zu: revision_after: %s", i, text);
		IT_CHECK(json_is_object(d) && json_object_size(d) == 3 &&
			     it_json_str_is(d, "operation_id", ops[i]) &&
			     it_json_str_is(d, "intent_hash", hashes[i]) &&
			     it_json_str(d, "key") != NULL,
			 "record %zu: details is not {key, operation_id, intent_hash} of the "
			 "operation: %s",
			 i, text);
		IT_CHECK(!has_marker(text), "record %zu holds private text: %s", i, text);
		free(text);
	}
	json_decref(recs);
	expect_audit_verify(admin_a, &j, (long long)nwrites);
}

/* ================================================================ preview */

static void test_preview_writes_nothing(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* on a never-written journal: the would-be revision is 1 */
	struct pw p0 = {M_STMT "-p0", M_SREF "-p0", M_QUOTE "-p0", EXP_NULL, "op-p0", NULL, false};
	pref_send(rw_a, &j, REMEMBER, "first.key", &p0, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), REMEMBER, "first.key", &p0, 1,
			  "preview on an empty journal");
	IT_CHECK(entry_count(json_object_get(r.json, "view")) == 1, "the preview view has extras");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0,
		 "a preview wrote into a never-written journal");
	json_decref(v);
	IT_CHECK(history_count(&j) == 0 && audit_count(&j) == 0, "a preview wrote history/audit");

	/* a preview does not consume its operation id: the same request executed applies */
	p0.execute = true;
	json_decref(apply_op(rw_a, &j, REMEMBER, "first.key", &p0, NULL));

	struct snap s;
	snap_take(&j, &s);
	/* remember another key */
	struct pw p1 = {M_STMT "-p1", M_SREF "-p1",           M_QUOTE "-p1", 1,
			"op-p1",      "2099-01-01T00:00:00Z", false};
	pref_send(rw_a, &j, REMEMBER, "second.key", &p1, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	const json_t *pv = json_object_get(r.json, "view");
	IT_CHECK(rev_of(pv) == 2, "the preview's view is not at revision 2: %s", r.body);
	check_entry_after(pv, REMEMBER, "second.key", &p1, 2, "preview");
	check_entry_after(pv, REMEMBER, "first.key", &p0, 1, "preview (untouched key)");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a remember preview");

	/* correct a key */
	struct pw p2 = {M_STMT "-p2", M_SREF "-p2", M_QUOTE "-p2", 1, "op-p2", NULL, false};
	pref_send(rw_a, &j, REMEMBER, "first.key", &p2, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), REMEMBER, "first.key", &p2, 2,
			  "correction preview");
	IT_CHECK(!contains(r.body, M_STMT "-p0\""), "the correction preview still shows the old "
						    "statement");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a correction preview");

	/* retire */
	struct pw p3 = {NULL, M_SREF "-p3", M_QUOTE "-p3", 1, "op-p3", NULL, false};
	pref_send(rw_a, &j, RETIRE, "first.key", &p3, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "preview");
	check_entry_after(json_object_get(r.json, "view"), RETIRE, "first.key", &p3, 2,
			  "retire preview");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after a retire preview");
	/* GET still shows the old revision (ETag checked by view_get) */
	view_get(reader_a, &j, &r);
	IT_CHECK(rev_of(r.json) == 1, "GET after previews is not at revision 1");
	it_resp_free(&r);

	/* a preview validates everything: stale, bad body, unknown retire key */
	struct pw bad = p1;
	bad.expected = 5;
	pref_send(rw_a, &j, REMEMBER, "second.key", &bad, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
		 "preview stale: current_revision");
	it_resp_free(&r);
	bad = p1;
	bad.expires_at = "2020-01-01T00:00:00Z";
	pref_send(rw_a, &j, REMEMBER, "second.key", &bad, NULL, &r);
	expect_problem_private(&r, 422, "validation_failed");
	IT_FIELD(&r, "expires_at");
	it_resp_free(&r);
	bad = p3;
	pref_send(rw_a, &j, RETIRE, "never.key", &bad, NULL, &r);
	expect_problem_private(&r, 404, "not_found");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after rejected previews");
	snap_free(&s);

	/* executing the previewed operation applies it (201, not replayed) */
	p1.execute = true;
	json_decref(apply_op(rw_a, &j, REMEMBER, "second.key", &p1, NULL));
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intent_table),
	    cmocka_unit_test(test_preview_writes_nothing),
	};
	int rc = cmocka_run_group_tests_name("it_preferences_intents", tests, group_setup,
					     group_teardown_privacy);
	it_cleanup();
	return prefs_exit_status(rc);
}
