/*
 * it_envelopes_snapshots — workspace snapshots and the envelopes verified against them
 * (openapi/openapi.yaml "Context envelopes"; docs/envelope-contract.md; issue 6):
 *
 *  - re-verification: MATCH → UNVERIFIABLE stale_context after the snapshot changes, and back;
 *    verify without a workspace, verify's strict body;
 *  - workspace snapshot compare-and-swap, If-Match, GET, the audit of its writes;
 *  - races: concurrent first and next snapshot writes (one winner), concurrent verifies (none
 *    lost, one audit chain).
 *
 * Helpers: envelope_helpers.h. The fixture files come from RG_FIXTURES_DIR (set by CMake).
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
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

#include "envelope_helpers.h"

#define RACERS 8

/* ================================================================ verify */

static void test_verify_flip(void **state)
{
	(void)state;
	char ws[ID_MAX], id[ID_MAX];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "before the snapshot changes");
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	char created[64];
	it_copy_str(created, sizeof created, it_json_str(r.json, "created_at"));
	it_resp_free(&r);

	/* the workspace moves on: context.ts and the root change */
	char root2[72], h2[72];
	hash_of(0x2222ULL, root2);
	hash_of(0x3333ULL, h2);
	json_t *files = happy_files();
	json_object_set_new(json_array_get(files, 0), "content_hash", json_string(h2));
	snap_ok(ta.rw, ws, 1, root2, "head-2", files);

	/* the stored verdict does not change by itself */
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "verdict", "MATCH") &&
		     it_json_int(r.json, "revision", -1) == 1,
		 "the stored verdict changed without a verify: %s", r.body);
	it_resp_free(&r);

	/* verify → UNVERIFIABLE stale_context, revision 2 */
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "UNVERIFIABLE", CODES("stale_context"), true, NULL,
			  "verify after the snapshot changed", __FILE__, __LINE__);
	IT_CHECK(it_json_str_is(r.json, "envelope_id", id) &&
		     it_json_int(r.json, "revision", -1) == 2,
		 "verify: envelope_id / revision 2: %s", r.body);
	IT_CHECK(it_json_str_is(check_of(r.json, "freshness"), "result", "fail"),
		 "verify: freshness does not fail: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "workspace_id", ws) &&
		     it_json_int(r.json, "workspace_revision", -1) == 2,
		 "verify: workspace_revision is not 2: %s", r.body);
	json_t *verified = json_deep_copy(r.json);
	it_resp_free(&r);

	/* GET shows the new latest verdict */
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	expect_etag(&r, 2);
	char *a = dump(verified), *b = dump(r.json);
	IT_CHECK(json_equal(verified, r.json), "GET after verify differs:\n  verify: %s\n  GET: %s",
		 a, b);
	IT_CHECK(it_json_str_is(r.json, "created_at", created), "created_at moved on verify");
	free(a);
	free(b);
	json_decref(verified);
	it_resp_free(&r);

	/* verify again: still stale, revision 3 */
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "UNVERIFIABLE", CODES("stale_context"), true, NULL,
			  "second verify", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3, "revision is not 3: %s", r.body);
	it_resp_free(&r);

	/* the workspace goes back: MATCH again, revision 4 */
	snap_ok(ta.rw, ws, 2, happy_root(), happy_head(), happy_files());
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "verify after the snapshot was restored", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 4 &&
		     it_json_int(r.json, "workspace_revision", -1) == 3,
		 "revision 4 / workspace_revision 3: %s", r.body);
	it_resp_free(&r);

	/* an envelope without a workspace verifies too (freshness skipped) */
	env_post(ta.rw, NULL, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "without a workspace");
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "verify without a workspace", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2 &&
		     it_json_str_is(check_of(r.json, "freshness"), "result", "skipped"),
		 "verify without a workspace: %s", r.body);
	it_resp_free(&r);

	/* verify moves the revision, so If-Match, when sent, must name it (openapi/openapi.yaml
	 * "Revisions and If-Match"): "1" is stale (412, the revision stays 2), "2" passes
	 * (revision 3) */
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s/verify", id);
	const char *stale[] = {"If-Match: \"1\"", NULL}, *current[] = {"If-Match: \"2\"", NULL};
	it_request(&srv, "POST", path, ta.rw, "{}", stale, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	env_get(ta.reader, id, &r);
	IT_CHECK(r.status == 200 && it_json_int(r.json, "revision", -1) == 2,
		 "a verify refused by If-Match moved the revision: %s", r.body);
	it_resp_free(&r);
	it_request(&srv, "POST", path, ta.rw, "{}", current, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3, "If-Match \"2\": revision 3: %s",
		 r.body);
	it_resp_free(&r);

	/* verify's body is {} (strict) */
	it_request(&srv, "POST", path, ta.rw, "{\"colour\":\"blue\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	it_request(&srv, "POST", path, ta.rw, "[]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	env_get(ta.reader, id, &r);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3, "a refused verify moved the revision");
	it_resp_free(&r);
}

/* ================================================================ snapshot CAS */

static void test_snapshot_cas(void **state)
{
	(void)state;
	char ws[ID_MAX], path[256];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct it_resp r;

	/* never written: GET 404, a number → 409 with current_revision null */
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	snap_put(ta.rw, ws, snap_body(3, happy_root(), happy_head(), happy_files()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "409 on a never-written workspace without current_revision null: %s", r.body);
	it_resp_free(&r);

	/* If-Match on a never-written workspace: "1" fails, nothing is written */
	const char *im1_new[] = {"If-Match: \"1\"", NULL};
	snap_put(ta.rw, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), im1_new,
		 &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* first write: null → revision 1 */
	snap_put(ta.rw, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, false);
	it_resp_free(&r);

	/* stale: null again, 2, 7 */
	long long stale[] = {EXP_NULL, 2, 7};
	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
		snap_put(ta.rw, ws, snap_body(stale[i], happy_root(), "x", json_array()), NULL, &r);
		IT_PROBLEM(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
			 "current_revision is not 1: %s", r.body);
		it_resp_free(&r);
	}

	/* GET: the shape + files */
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, true);
	json_t *want = happy_files();
	size_t i;
	const json_t *f;
	json_array_foreach (want, i, f) {
		bool found = false;
		size_t k;
		const json_t *g;
		json_array_foreach (json_object_get(r.json, "files"), k, g)
			found |= it_json_str_is(g, "path", it_json_str(f, "path")) &&
				 it_json_str_is(g, "content_hash", it_json_str(f, "content_hash"));
		IT_CHECK(found, "GET snapshot lacks %s: %s", it_json_str(f, "path"), r.body);
	}
	json_decref(want);
	it_resp_free(&r);

	/* revision 1 → 2 with three files */
	json_t *three = happy_files();
	char h[72];
	hash_of(7, h);
	json_array_append_new(three, json_pack("{ss ss}", "path", "README.md", "content_hash", h));
	snap_ok(ta.rw, ws, 1, happy_root(), "head-2", three);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 2, happy_root(), "head-2", 3, true);
	it_resp_free(&r);

	/* If-Match: wrong → 412, nothing changes; right → 200 */
	const char *im1[] = {"If-Match: \"1\"", NULL};
	snap_put(ta.rw, ws, snap_body(2, happy_root(), "head-x", json_array()), im1, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	const char *im2[] = {"If-Match: \"2\"", NULL};
	snap_put(ta.rw, ws, snap_body(2, happy_root(), "head-3", json_array()), im2, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 3, happy_root(), "head-3", 0, false);
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 3, happy_root(), "head-3", 0, true);
	it_resp_free(&r);

	/* expected_revision is required */
	json_t *b = snap_body(3, happy_root(), "h", json_array());
	json_object_del(b, "expected_revision");
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision missing");
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "workspace", ws) == 3,
		 "three snapshot writes, not three audit records");
}

/* ================================================================ races */

struct racer {
	const char *method;
	const char *path;
	const char *token;
	const char *body;
	long status;
	long long revision;
	long long current_revision;
	char code[64];
};

static void *race_one(void *arg)
{
	struct racer *rc = arg;
	struct it_resp r;
	it_request(&srv, rc->method, rc->path, rc->token, rc->body, NULL, &r);
	rc->status = r.status;
	rc->revision = it_json_int(r.json, "revision", -1);
	rc->current_revision = it_json_int(r.json, "current_revision", -1);
	const char *code = it_json_str(r.json, "code");
	snprintf(rc->code, sizeof rc->code, "%s", code ? code : "");
	it_resp_free(&r);
	return NULL;
}

static void race(struct racer *rcs, size_t n)
{
	pthread_t th[RACERS];
	IT_CHECK(n <= RACERS, "too many racers");
	for (size_t i = 0; i < n; i++)
		IT_CHECK(pthread_create(&th[i], NULL, race_one, &rcs[i]) == 0, "pthread_create");
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* exactly one 200 at revision `win`, every other racer 409 stale_revision with current `win` */
static void expect_one_winner(const struct racer *rcs, size_t n, long long win, const char *what)
{
	size_t winners = 0;
	for (size_t i = 0; i < n; i++) {
		if (rcs[i].status == 200) {
			winners++;
			IT_CHECK(rcs[i].revision == win,
				 "%s: the winner got revision %lld, not %lld", what,
				 rcs[i].revision, win);
		} else {
			IT_CHECK(rcs[i].status == 409 &&
				     strcmp(rcs[i].code, "stale_revision") == 0 &&
				     rcs[i].current_revision == win,
				 "%s: racer %zu got %ld %s (current_revision %lld), expected 409 "
				 "stale_revision with current_revision %lld",
				 what, i, rcs[i].status, rcs[i].code, rcs[i].current_revision, win);
		}
	}
	IT_CHECK(winners == 1, "%s: %zu winners", what, winners);
}

static void test_races(void **state)
{
	(void)state;
	char ws[ID_MAX], path[256], id[ID_MAX];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct racer rcs[RACERS];
	char *bodies[RACERS];

	/* the first write of a workspace: one wins, the others see revision 1 */
	for (size_t i = 0; i < RACERS; i++) {
		char head[32];
		snprintf(head, sizeof head, "race-head-%zu", i);
		bodies[i] =
		    dump_new(json_pack("{sn ss ss so}", "expected_revision", "root_hash",
				       happy_root(), "git_head", head, "files", happy_files()));
		rcs[i] = (struct racer){"PUT", path, ta.rw, bodies[i], 0, 0, 0, ""};
	}
	race(rcs, RACERS);
	expect_one_winner(rcs, RACERS, 1, "racing first snapshot writes");
	for (size_t i = 0; i < RACERS; i++)
		free(bodies[i]);

	/* the next write, all from revision 1 */
	for (size_t i = 0; i < RACERS; i++) {
		char head[32];
		snprintf(head, sizeof head, "race-2-head-%zu", i);
		bodies[i] =
		    dump_new(json_pack("{si ss ss so}", "expected_revision", 1, "root_hash",
				       happy_root(), "git_head", head, "files", happy_files()));
		rcs[i] = (struct racer){"PUT", path, ta.rw, bodies[i], 0, 0, 0, ""};
	}
	race(rcs, RACERS);
	expect_one_winner(rcs, RACERS, 2, "racing snapshot writes from revision 1");
	for (size_t i = 0; i < RACERS; i++)
		free(bodies[i]);
	IT_CHECK(audit_count(ta.admin, "workspace", ws) == 2,
		 "two winning snapshot writes, not two audit records");

	/* concurrent verifies: each one a new revision, none lost */
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "the raced envelope");
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	char vpath[128];
	snprintf(vpath, sizeof vpath, "/v1/envelopes/%s/verify", id);
	for (size_t i = 0; i < RACERS; i++)
		rcs[i] = (struct racer){"POST", vpath, ta.rw, "{}", 0, 0, 0, ""};
	race(rcs, RACERS);
	bool seen[RACERS + 2] = {false};
	for (size_t i = 0; i < RACERS; i++) {
		IT_CHECK(rcs[i].status == 200, "concurrent verify %zu: status %ld %s", i,
			 rcs[i].status, rcs[i].code);
		long long rev = rcs[i].revision;
		IT_CHECK(rev >= 2 && rev <= RACERS + 1 && !seen[rev],
			 "concurrent verifies: revision %lld twice or out of 2..%d", rev,
			 RACERS + 1);
		seen[rev] = true;
	}
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == RACERS + 1,
		 "after %d verifies the revision is not %d: %s", RACERS, RACERS + 1, r.body);
	expect_etag(&r, RACERS + 1);
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "envelope", id) == RACERS + 1,
		 "the envelope's audit does not hold 1 + %d records", RACERS);
	char apath[256];
	snprintf(apath, sizeof apath, "/v1/audit/verify?resource_type=envelope&resource_id=%s", id);
	get(apath, ta.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == RACERS + 1,
		 "the envelope's audit chain after concurrent verifies: %s", r.body);
	it_resp_free(&r);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_verify_flip),
	    cmocka_unit_test(test_snapshot_cas),
	    cmocka_unit_test(test_races),
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_snapshots", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
