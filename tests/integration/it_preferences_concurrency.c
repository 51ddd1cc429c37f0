/*
 * it_preferences_concurrency — writers that meet on one journal revision: the compare-and-swap
 * race (16 writers, one winner, one history item, one audit record; 16 copies of one uncertain
 * write, one applies and the others replay its receipt), uncertain-write retry (replay with the
 * original receipt and the current view; a changed same-id request → operation_conflict; a
 * stale revision → stale_revision), and If-Match (before expected_revision, after a known
 * operation id). openapi/openapi.yaml "Revisions and If-Match", "Preferences",
 * docs/preferences-contract.md. Helpers: preferences_helpers.h.
 */
#include <pthread.h>
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

#define RACERS 16

/* ================================================================ the CAS race */

struct racer {
	const char *path;
	const char *token;
	char body[512];
	char op[64];
	char statement[64];
	pthread_barrier_t *barrier;
	long status;
	bool current_is_null;
	long long current_revision;
	char code[64];
	char outcome[16];
	char receipt[1024]; /* compact, sorted */
};

static void *race(void *arg)
{
	struct racer *rc = arg;
	struct it_resp r;
	pthread_barrier_wait(rc->barrier);
	it_request(&srv, "PUT", rc->path, rc->token, rc->body, NULL, &r);
	rc->status = r.status;
	rc->current_is_null = it_json_has_null(r.json, "current_revision");
	rc->current_revision = it_json_int(r.json, "current_revision", -1);
	snprintf(rc->code, sizeof rc->code, "%s",
		 it_json_str(r.json, "code") ? it_json_str(r.json, "code") : "");
	snprintf(rc->outcome, sizeof rc->outcome, "%s",
		 it_json_str(r.json, "status") ? it_json_str(r.json, "status") : "");
	char *receipt =
	    json_is_object(json_object_get(r.json, "receipt"))
		? json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS)
		: NULL;
	snprintf(rc->receipt, sizeof rc->receipt, "%s", receipt ? receipt : "");
	free(receipt);
	it_resp_free(&r);
	return NULL;
}

/* RACERS writers remember `key` with expected_revision `from` (EXP_NULL: null) at once */
static void run_pref_race(const struct journal *j, const char *key, long long from, const char *tag)
{
	struct racer racers[RACERS];
	pthread_t tids[RACERS];
	pthread_barrier_t barrier;
	char path[1024];
	key_path(j, key, REMEMBER, path, sizeof path);
	long long after = from == EXP_NULL ? 1 : from + 1;
	size_t hist_before = history_count(j), audit_before = audit_count(j);

	assert_int_equal(pthread_barrier_init(&barrier, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		memset(&racers[i], 0, sizeof racers[i]);
		racers[i].path = path;
		racers[i].token = rw_a;
		racers[i].barrier = &barrier;
		snprintf(racers[i].op, sizeof racers[i].op, "race-%s-%d", tag, i);
		snprintf(racers[i].statement, sizeof racers[i].statement, M_STMT "-race-%s-%d", tag,
			 i);
		struct pw w = {racers[i].statement,
			       M_SREF "-race",
			       M_QUOTE "-race",
			       from,
			       racers[i].op,
			       NULL,
			       true};
		json_t *b = pw_body(REMEMBER, &w);
		char *text = json_dumps(b, JSON_COMPACT);
		snprintf(racers[i].body, sizeof racers[i].body, "%s", text);
		free(text);
		json_decref(b);
	}
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&tids[i], NULL, race, &racers[i]), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);

	int ok = 0, stale = 0, winner = -1, loser = -1;
	for (int i = 0; i < RACERS; i++) {
		if (racers[i].status == 201 && strcmp(racers[i].outcome, "applied") == 0) {
			ok++;
			winner = i;
		} else if (racers[i].status == 409 &&
			   strcmp(racers[i].code, "stale_revision") == 0) {
			stale++;
			loser = i;
			IT_CHECK(racers[i].current_revision == after,
				 "race %s: a loser answered current_revision %lld, expected %lld",
				 tag, racers[i].current_revision, after);
		} else {
			fprintf(stderr, "racer %d: status %ld code \"%s\" status \"%s\"\n", i,
				racers[i].status, racers[i].code, racers[i].outcome);
		}
	}
	IT_CHECK(ok == 1 && stale == RACERS - 1,
		 "race %s: %d × 201 applied and %d × 409 stale_revision (expected 1 and %d)", tag,
		 ok, stale, RACERS - 1);

	json_t *v = view_now(j);
	const json_t *e = entry_of(v, key);
	IT_CHECK(rev_of(v) == after, "race %s: the journal is at %lld, expected %lld", tag,
		 rev_of(v), after);
	IT_CHECK(e && it_json_str_is(e, "operation_id", racers[winner].op) &&
		     it_json_str_is(e, "statement", racers[winner].statement),
		 "race %s: the view does not show the winner's write", tag);
	json_decref(v);

	json_t *hist = history_all(rw_a, j);
	IT_CHECK(json_array_size(hist) == hist_before + 1,
		 "race %s: %zu history items, expected %zu", tag, json_array_size(hist),
		 hist_before + 1);
	const json_t *last = json_array_get(hist, json_array_size(hist) - 1);
	IT_CHECK(it_json_str_is(last, "operation_id", racers[winner].op),
		 "race %s: the new history item is not the winner's", tag);
	json_decref(hist);
	IT_CHECK(audit_count(j) == audit_before + 1, "race %s: %zu audit records, expected %zu",
		 tag, audit_count(j), audit_before + 1);

	/* a loser wrote nothing, its operation id included: the same request again is still
	 * just stale (not replayed, not an operation_conflict) */
	struct it_resp r;
	it_request(&srv, "PUT", path, rw_a, racers[loser].body, NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == after,
		 "the loser's retry: current_revision is not %lld", after);
	it_resp_free(&r);
}

/* RACERS copies of one uncertain write (the same operation id, the same arguments) at once:
 * exactly one applies, every other one is replayed with the same receipt */
static void run_retry_race(const struct journal *j, const char *key, long long from,
			   const char *tag)
{
	struct racer racers[RACERS];
	pthread_t tids[RACERS];
	pthread_barrier_t barrier;
	char path[1024], op[64];
	key_path(j, key, REMEMBER, path, sizeof path);
	snprintf(op, sizeof op, "retry-race-%s", tag);
	long long after = from == EXP_NULL ? 1 : from + 1;
	size_t hist_before = history_count(j), audit_before = audit_count(j);
	struct pw w = {M_STMT "-retry-race",
		       M_SREF "-retry-race",
		       M_QUOTE "-retry-race",
		       from,
		       op,
		       NULL,
		       true};
	json_t *b = pw_body(REMEMBER, &w);
	char *text = json_dumps(b, JSON_COMPACT);
	json_decref(b);

	assert_int_equal(pthread_barrier_init(&barrier, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		memset(&racers[i], 0, sizeof racers[i]);
		racers[i].path = path;
		racers[i].token = rw_a;
		racers[i].barrier = &barrier;
		snprintf(racers[i].body, sizeof racers[i].body, "%s", text);
	}
	free(text);
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&tids[i], NULL, race, &racers[i]), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);

	int applied = 0, replayed = 0, winner = -1;
	for (int i = 0; i < RACERS; i++) {
		if (racers[i].status == 201 && strcmp(racers[i].outcome, "applied") == 0) {
			applied++;
			winner = i;
		} else if (racers[i].status == 200 && strcmp(racers[i].outcome, "replayed") == 0) {
			replayed++;
		} else {
			fprintf(stderr, "retry racer %d: status %ld code \"%s\" status \"%s\"\n", i,
				racers[i].status, racers[i].code, racers[i].outcome);
		}
	}
	IT_CHECK(applied == 1 && replayed == RACERS - 1,
		 "retry race %s: %d × 201 applied and %d × 200 replayed (expected 1 and %d)", tag,
		 applied, replayed, RACERS - 1);
	for (int i = 0; i < RACERS; i++)
		IT_CHECK(
		    strcmp(racers[i].receipt, racers[winner].receipt) == 0,
		    "retry race %s: racer %d answered another receipt\n  winner: %s\n  racer:  %s",
		    tag, i, racers[winner].receipt, racers[i].receipt);
	json_t *v = view_now(j);
	IT_CHECK(rev_of(v) == after, "retry race %s: the journal is at %lld, expected %lld", tag,
		 rev_of(v), after);
	json_decref(v);
	IT_CHECK(history_count(j) == hist_before + 1 && audit_count(j) == audit_before + 1,
		 "retry race %s: not exactly one history item and one audit record", tag);
}

static void test_race(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	/* from a never-written journal (expected_revision null) */
	run_pref_race(&j, "race.key", EXP_NULL, "null");
	/* from an existing revision */
	run_pref_race(&j, "race.key", 1, "one");
	expect_audit_verify(admin_a, &j, 2);
	/* concurrent copies of one uncertain write, on a fresh and on an existing journal */
	struct journal j2;
	journal_fresh(&j2);
	run_retry_race(&j2, "retry.key", EXP_NULL, "null");
	run_retry_race(&j2, "retry.key", 1, "one");
	expect_audit_verify(admin_a, &j2, 2);
}

/* ================================================================ uncertain-write retry */

static void test_uncertain_retry(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct pw w1 = {M_STMT "-r1 Deploy only on weekdays.",
			M_SREF "-r1",
			M_QUOTE "-r1 weekdays",
			EXP_NULL,
			"op-r1",
			"2099-06-01T12:00:00Z",
			true};
	json_t *receipt1 = apply_op(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL);
	json_t *view1 = view_now(&j);
	char *receipt1_text = json_dumps(receipt1, JSON_COMPACT | JSON_SORT_KEYS);

	/* another write in between, so the current view differs from the original one */
	it_sleep_ms(20);
	remember_ok(&j, REVIEW_KEY, M_STMT "-r2 Ask the reviewer.", M_SREF "-r2", M_QUOTE "-r2", 1,
		    "op-r2", NULL);
	json_t *view2 = view_now(&j);
	IT_CHECK(!json_equal(view1, view2), "the second write did not change the view?");

	/* the uncertain write retried: same id, same arguments (expected_revision null, now
	 * stale) → replayed, the original receipt, the current view; nothing written */
	it_sleep_ms(20);
	for (int preview = 0; preview < 2; preview++) {
		struct it_resp r;
		w1.execute = preview == 0;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL, &r);
		IT_STATUS(&r, 200);
		check_write_answer(&r, "replayed");
		char *got =
		    json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
		IT_CHECK(got && strcmp(got, receipt1_text) == 0,
			 "%s replay: the receipt is not the original one\n  original: %s\n  "
			 "replayed: %s",
			 preview ? "preview" : "execute", receipt1_text, got ? got : "?");
		free(got);
		IT_CHECK(json_equal(json_object_get(r.json, "view"), view2),
			 "%s replay: the view is not the current one: %s",
			 preview ? "preview" : "execute", r.body);
		it_resp_free(&r);
	}
	w1.execute = true;
	struct snap s;
	snap_take(&j, &s);
	IT_CHECK(s.history == 2 && s.audit == 2, "a replay wrote: history %zu, audit %zu",
		 s.history, s.audit);

	/* the same id with a changed argument → operation_conflict, whatever the revision */
	const long long revs[] = {EXP_NULL, 1, 2, 7};
	for (size_t i = 0; i < sizeof revs / sizeof *revs; i++) {
		struct pw c = w1;
		struct it_resp r;
		c.expected = revs[i];
		c.statement = M_STMT "-r1 Deploy on any day.";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	{
		struct pw c = w1;
		struct it_resp r;
		c.source_quote = M_QUOTE "-r1 changed quote";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		c = w1;
		c.expires_at = NULL;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* same id, same arguments, another key */
		c = w1;
		pref_send(rw_a, &j, REMEMBER, "deploy.window2", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* same id as a retirement of the same key */
		c = w1;
		c.expected = 2;
		pref_send(rw_a, &j, RETIRE, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
		/* a preview of a changed same-id request is a conflict too */
		c = w1;
		c.execute = false;
		c.expected = 2;
		c.statement = M_STMT "-r1 Deploy on any day.";
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the conflicts");

	/* a new id with a stale revision → stale_revision with current_revision */
	const long long stale[] = {EXP_NULL, 1, 3, 1000};
	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
		struct pw c = {M_STMT "-r3", M_SREF "-r3", M_QUOTE "-r3", stale[i],
			       "op-r3",      NULL,         true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2,
			 "stale: current_revision is not 2: %s", r.body);
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the stale writes");
	snap_free(&s);

	/* a retirement retried: replayed with its receipt; the replay of the original remember
	 * after the retirement does not resurrect the statement */
	struct pw wr = {NULL, M_SREF "-r4", M_QUOTE "-r4 forget the window", 2, "op-r4",
			NULL, true};
	json_t *receipt4 = apply_op(rw_a, &j, RETIRE, "deploy.window", &wr, "op-r1");
	char *receipt4_text = json_dumps(receipt4, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *view3 = view_now(&j);
	struct it_resp r;
	pref_send(rw_a, &j, RETIRE, "deploy.window", &wr, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	char *got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt4_text) == 0,
		 "retire replay: the receipt is not the original one\n  original: %s\n  replayed: "
		 "%s",
		 receipt4_text, got ? got : "?");
	free(got);
	IT_CHECK(json_equal(json_object_get(r.json, "view"), view3),
		 "retire replay: the view is not the current one");
	it_resp_free(&r);
	{
		struct pw c = wr;
		c.source_quote = M_QUOTE "-r4 another quote";
		pref_send(rw_a, &j, RETIRE, "deploy.window", &c, NULL, &r);
		expect_problem_private(&r, 409, "operation_conflict");
		it_resp_free(&r);
	}
	pref_send(rw_a, &j, REMEMBER, "deploy.window", &w1, NULL, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	got = json_dumps(json_object_get(r.json, "receipt"), JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(got && strcmp(got, receipt1_text) == 0,
		 "the late replay does not answer the original receipt");
	free(got);
	const json_t *e = entry_of(json_object_get(r.json, "view"), "deploy.window");
	IT_CHECK(e && it_json_str_is(e, "state", "retired") && it_json_has_null(e, "statement"),
		 "a replay after the retirement shows the old projection: %s", r.body);
	IT_CHECK(!contains(r.body, M_STMT "-r1"), "a replay resurrected the old statement: %s",
		 r.body);
	it_resp_free(&r);
	expect_view_equal(&j, view3, "after the late replay");
	IT_CHECK(history_count(&j) == 3 && audit_count(&j) == 3,
		 "retries wrote history or audit records");

	/* stale on a never-written journal: current_revision null */
	struct journal j2;
	journal_fresh(&j2);
	struct pw c = {M_STMT "-r5", M_SREF "-r5", M_QUOTE "-r5", 1, "op-r5", NULL, true};
	pref_send(rw_a, &j2, REMEMBER, "deploy.window", &c, NULL, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "stale on a never-written journal: current_revision is not null: %s", r.body);
	it_resp_free(&r);
	json_t *v = view_now(&j2);
	IT_CHECK(rev_of(v) == EXP_NULL && entry_count(v) == 0, "the stale write wrote something");
	json_decref(v);

	free(receipt1_text);
	free(receipt4_text);
	json_decref(receipt1);
	json_decref(receipt4);
	json_decref(view1);
	json_decref(view2);
	json_decref(view3);
}

/* ================================================================ If-Match */

static void test_if_match(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	struct it_resp r;

	/* a never-written journal has no ETag: If-Match "1" fails, * passes */
	struct pw w = {M_STMT "-im1", M_SREF "-im1", M_QUOTE "-im1", EXP_NULL, "op-im1",
		       NULL,          true};
	const char *h1[] = {"If-Match: \"1\"", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, h1, &r);
	expect_problem_private(&r, 412, "precondition_failed");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "a 412 on a never-written journal does not carry current_revision: null: %s",
		 r.body);
	it_resp_free(&r);
	const char *h0[] = {"If-Match: \"0\"", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, h0, &r);
	expect_problem_private(&r, 412, "precondition_failed");
	it_resp_free(&r);
	const char *star[] = {"If-Match: *", NULL};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w, star, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);

	/* at revision 1: "1" passes */
	struct pw w2 = {M_STMT "-im2", M_SREF "-im2", M_QUOTE "-im2", 1, "op-im2", NULL, true};
	pref_send(rw_a, &j, REMEMBER, "match.key", &w2, h1, &r);
	IT_STATUS(&r, 201);
	check_write_answer(&r, "applied");
	IT_CHECK(rev_of(json_object_get(r.json, "view")) == 2, "If-Match \"1\" write: %s", r.body);
	it_resp_free(&r);

	/* at revision 2: wrong ones fail with 412 (before the expected_revision check) */
	struct snap s;
	snap_take(&j, &s);
	const char *wrong[] = {"If-Match: \"1\"", "If-Match: \"3\"", "If-Match: 2",
			       "If-Match: \"\"", "If-Match: \"abc\""};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		const char *h[] = {wrong[i], NULL};
		struct pw c = {M_STMT "-im3", M_SREF "-im3", M_QUOTE "-im3", 2, "op-im3",
			       NULL,          true};
		pref_send(rw_a, &j, REMEMBER, "match.key", &c, h, &r);
		if (r.status != 412)
			fprintf(stderr, "  header: %s\n", wrong[i]);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
		c.expected = 1; /* stale as well: 412 comes first */
		pref_send(rw_a, &j, REMEMBER, "match.key", &c, h, &r);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
		struct pw rt = {NULL, M_SREF "-im4", M_QUOTE "-im4", 2, "op-im4", NULL, true};
		pref_send(rw_a, &j, RETIRE, "match.key", &rt, h, &r);
		expect_problem_private(&r, 412, "precondition_failed");
		it_resp_free(&r);
	}
	/* matching If-Match but a stale body → 409 */
	const char *h2[] = {"If-Match: \"2\"", NULL};
	struct pw c = {M_STMT "-im5", M_SREF "-im5", M_QUOTE "-im5", 1, "op-im5", NULL, true};
	pref_send(rw_a, &j, REMEMBER, "match.key", &c, h2, &r);
	expect_problem_private(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision is not 2");
	it_resp_free(&r);
	snap_expect_same(&j, &s, "after If-Match failures");
	snap_free(&s);

	/* a known operation id is decided before If-Match: the replay answers 200 */
	pref_send(rw_a, &j, REMEMBER, "match.key", &w2, h1, &r);
	IT_STATUS(&r, 200);
	check_write_answer(&r, "replayed");
	it_resp_free(&r);

	/* the current one passes for a retirement */
	struct pw rt = {NULL, M_SREF "-im6", M_QUOTE "-im6", 2, "op-im6", NULL, true};
	pref_send(rw_a, &j, RETIRE, "match.key", &rt, h2, &r);
	IT_STATUS(&r, 201);
	check_write_answer(&r, "applied");
	it_resp_free(&r);
	view_get(reader_a, &j, &r); /* ETag "3" checked inside */
	IT_CHECK(rev_of(r.json) == 3, "the journal is not at revision 3");
	it_resp_free(&r);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_race),
	    cmocka_unit_test(test_uncertain_retry),
	    cmocka_unit_test(test_if_match),
	};
	int rc = cmocka_run_group_tests_name("it_preferences_concurrency", tests, group_setup,
					     group_teardown_privacy);
	it_cleanup();
	return prefs_exit_status(rc);
}
