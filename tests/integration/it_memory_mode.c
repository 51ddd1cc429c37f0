/*
 * it_memory_mode — thread memory mode end to end (openapi/openapi.yaml
 * "Revisions and If-Match", "Threads", "Audit"): defaults of a never-set thread, first write
 * from revision 0, ETag, stale writes (409 with current_revision, nothing written), If-Match
 * (412 first), the compare-and-swap race (16 writers, one winner, one audit record) from
 * revision 0 and from an existing revision, the audit hash chain, cursor pagination, tenant
 * isolation.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define RACERS 16

static struct it_server srv;
static char *tenant_a, *tenant_b;
static char *admin_a, *admin_b;
static char *reader_a;
static char *thread_a; /* written by tenant A only */

static char *audit_path(const char *thread, const char *extra)
{
	char buf[768];
	snprintf(buf, sizeof buf, "/v1/audit?resource_type=thread&resource_id=%s%s", thread,
		 extra ? extra : "");
	return strdup(buf);
}

static void put_mode(const char *token, const char *thread, long long expected, const char *mode,
		     const char *const *headers, struct it_resp *r)
{
	char body[128];
	char *path = it_mode_path(thread);
	snprintf(body, sizeof body, "{\"expected_revision\":%lld,\"mode\":\"%s\"}", expected, mode);
	it_request(&srv, "PUT", path, token, body, headers, r);
	free(path);
}

static void get_mode(const char *token, const char *thread, struct it_resp *r)
{
	char *path = it_mode_path(thread);
	it_request(&srv, "GET", path, token, NULL, NULL, r);
	free(path);
}

static void expect_mode(const char *token, const char *thread, const char *mode, long long rev)
{
	struct it_resp r;
	get_mode(token, thread, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", mode) && it_json_int(r.json, "revision", -1) == rev,
		 "%s: expected mode %s revision %lld, got %s", thread, mode, rev, r.body);
	char etag[32];
	snprintf(etag, sizeof etag, "\"%lld\"", rev);
	const char *got = it_resp_header(&r, "ETag");
	IT_CHECK(got && strcmp(got, etag) == 0, "ETag is %s, expected %s", got ? got : "none",
		 etag);
	it_resp_free(&r);
}

/* new: the thread's audit records of this token's tenant (all pages, limit 200) */
static json_t *audit_records(const char *token, const char *thread)
{
	char *path = audit_path(thread, "&limit=200");
	struct it_resp r;
	it_request(&srv, "GET", path, token, NULL, NULL, &r);
	free(path);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_has_null(r.json, "next_cursor"), "more than 200 records for one thread?");
	json_t *items = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	IT_CHECK(json_is_array(items), "audit items is not an array");
	return items;
}

static void expect_verify(const char *token, const char *query, long long checked)
{
	char path[768];
	snprintf(path, sizeof path, "/v1/audit/verify%s", query);
	struct it_resp r;
	it_request(&srv, "GET", path, token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == checked &&
		     it_json_has_null(r.json, "first_bad_seq"),
		 "%s: expected {ok: true, checked: %lld, first_bad_seq: null}, got %s", path,
		 checked, r.body);
	it_resp_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	if (it_server_start(&srv, NULL) != 0)
		return -1;
	tenant_a = it_unique("mm-a");
	tenant_b = it_unique("mm-b");
	thread_a = it_unique("thread");
	admin_a = it_token(tenant_a, "admin", "it-admin");
	reader_a = it_token(tenant_a, "memory:read", "it-reader");
	admin_b = it_token(tenant_b, "admin", "it-admin");
	return admin_a && reader_a && admin_b ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant_a);
	free(tenant_b);
	free(thread_a);
	free(admin_a);
	free(admin_b);
	free(reader_a);
	return rc;
}

static void test_never_set_defaults(void **state)
{
	(void)state;
	struct it_resp r;
	get_mode(reader_a, thread_a, &r);
	IT_STATUS(&r, 200);
	const char *ct = it_resp_header(&r, "Content-Type");
	IT_CHECK(ct && strncmp(ct, "application/json", 16) == 0, "Content-Type is %s",
		 ct ? ct : "none");
	IT_CHECK(json_is_object(r.json) && json_object_size(r.json) == 4,
		 "expected exactly {thread_id, mode, revision, effective_at}: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "thread_id", thread_a), "thread_id not echoed");
	IT_CHECK(it_json_str_is(r.json, "mode", "enabled"),
		 "a never-set thread does not read enabled");
	IT_CHECK(json_is_integer(json_object_get(r.json, "revision")) &&
		     it_json_int(r.json, "revision", -1) == 0,
		 "a never-set thread does not read revision 0");
	IT_CHECK(it_json_has_null(r.json, "effective_at"), "effective_at is not null");
	const char *etag = it_resp_header(&r, "ETag");
	IT_CHECK(etag && strcmp(etag, "\"0\"") == 0, "ETag is %s, expected \"0\"",
		 etag ? etag : "none");
	it_resp_free(&r);
	json_t *recs = audit_records(admin_a, thread_a);
	IT_CHECK(json_array_size(recs) == 0, "a read wrote an audit record");
	json_decref(recs);
}

static void test_first_write_and_etag(void **state)
{
	(void)state;
	struct it_resp r;
	const char *rid[] = {"X-Request-Id: it-mm-first-write", NULL};
	put_mode(admin_a, thread_a, 0, "disabled", rid, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_object_size(r.json) == 5,
		 "expected exactly {thread_id, previous_mode, mode, revision, effective_at}: %s",
		 r.body);
	IT_CHECK(it_json_str_is(r.json, "thread_id", thread_a), "thread_id");
	IT_CHECK(it_json_str_is(r.json, "previous_mode", "enabled"),
		 "previous_mode of a first write is not enabled");
	IT_CHECK(it_json_str_is(r.json, "mode", "disabled"), "mode");
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1");
	IT_CHECK(it_is_timestamp_ms(it_json_str(r.json, "effective_at")),
		 "effective_at is not RFC 3339 UTC with milliseconds");
	const char *etag = it_resp_header(&r, "ETag");
	IT_CHECK(etag && strcmp(etag, "\"1\"") == 0, "PUT ETag is %s, expected \"1\"",
		 etag ? etag : "none");
	char *effective = strdup(it_json_str(r.json, "effective_at"));
	it_resp_free(&r);

	get_mode(reader_a, thread_a, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", "disabled") &&
		     it_json_int(r.json, "revision", -1) == 1,
		 "GET after PUT: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "effective_at", effective),
		 "GET effective_at differs from the PUT's");
	etag = it_resp_header(&r, "ETag");
	IT_CHECK(etag && strcmp(etag, "\"1\"") == 0, "GET ETag is %s, expected \"1\"",
		 etag ? etag : "none");
	it_resp_free(&r);
	free(effective);

	json_t *recs = audit_records(admin_a, thread_a);
	IT_CHECK(json_array_size(recs) == 1, "expected 1 audit record, got %zu",
		 json_array_size(recs));
	json_t *rec = json_array_get(recs, 0);
	IT_CHECK(it_json_str_is(rec, "action", "thread.memory_mode.updated"),
		 "action is not thread.memory_mode.updated");
	IT_CHECK(it_json_str_is(rec, "resource_type", "thread"), "resource_type is not thread");
	IT_CHECK(it_json_str_is(rec, "request_id", "it-mm-first-write"),
		 "request_id is not the PUT's X-Request-Id");
	IT_CHECK(it_json_int(rec, "revision_before", -1) == 0 &&
		     it_json_int(rec, "revision_after", -1) == 1,
		 "revisions are not 0 → 1");
	IT_CHECK(it_json_has_null(rec, "prev_hash"), "first record's prev_hash is not null");
	IT_CHECK(it_is_sha256_ref(it_json_str(rec, "hash")), "hash is not sha256:<64 hex>");
	IT_CHECK(it_json_str(rec, "actor_token_id") &&
		     strncmp(it_json_str(rec, "actor_token_id"), "tok_", 4) == 0,
		 "actor_token_id is not a token id");
	json_decref(recs);
}

static void test_same_mode_again_bumps_revision(void **state)
{
	(void)state;
	struct it_resp r;
	put_mode(admin_a, thread_a, 1, "disabled", NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "previous_mode", "disabled") &&
		     it_json_int(r.json, "revision", -1) == 2,
		 "rewrite of the same mode: %s", r.body);
	it_resp_free(&r);
	expect_mode(reader_a, thread_a, "disabled", 2);
}

static void test_stale_revision(void **state)
{
	(void)state;
	struct it_resp r;
	long long stale[] = {0, 1, 3, 1000};
	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
		put_mode(admin_a, thread_a, stale[i], "enabled", NULL, &r);
		IT_PROBLEM(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2,
			 "current_revision is not 2: %s", r.body);
		it_resp_free(&r);
	}
	expect_mode(reader_a, thread_a, "disabled", 2);
	json_t *recs = audit_records(admin_a, thread_a);
	IT_CHECK(json_array_size(recs) == 2, "a stale write added an audit record");
	json_decref(recs);
}

static void test_if_match(void **state)
{
	(void)state;
	struct it_resp r;
	/* thread_a is at revision 2 */
	const char *mismatch[] = {"If-Match: \"5\"", "If-Match: \"1\"", "If-Match: abc",
				  "If-Match: \"\""};
	for (size_t i = 0; i < sizeof mismatch / sizeof *mismatch; i++) {
		const char *h[] = {mismatch[i], NULL};
		put_mode(admin_a, thread_a, 2, "enabled", h, &r);
		if (r.status != 412)
			fprintf(stderr, "header: %s\n", mismatch[i]);
		IT_PROBLEM(&r, 412, "precondition_failed");
		it_resp_free(&r);
	}
	/* If-Match is checked before expected_revision: a mismatch with a stale body is 412 */
	const char *h7[] = {"If-Match: \"7\"", NULL};
	put_mode(admin_a, thread_a, 0, "enabled", h7, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	expect_mode(reader_a, thread_a, "disabled", 2);

	/* If-Match agrees but the body is stale → 409 */
	const char *h2[] = {"If-Match: \"2\"", NULL};
	put_mode(admin_a, thread_a, 1, "enabled", h2, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision is not 2");
	it_resp_free(&r);

	/* matching If-Match → 200 */
	put_mode(admin_a, thread_a, 2, "enabled", h2, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3 &&
		     it_json_str_is(r.json, "previous_mode", "disabled"),
		 "If-Match \"2\" PUT: %s", r.body);
	it_resp_free(&r);
	/* If-Match: * always agrees */
	const char *star[] = {"If-Match: *", NULL};
	put_mode(admin_a, thread_a, 3, "disabled", star, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 4, "If-Match * PUT: %s", r.body);
	it_resp_free(&r);
	expect_mode(reader_a, thread_a, "disabled", 4);
	json_t *recs = audit_records(admin_a, thread_a);
	IT_CHECK(json_array_size(recs) == 4, "expected 4 audit records, got %zu",
		 json_array_size(recs));
	json_decref(recs);
}

/* ---------------------------------------------------------------- the CAS race */

struct racer {
	const char *path;
	const char *token;
	char body[128];
	char rid_header[80];
	char rid[64];
	pthread_barrier_t *barrier;
	long status;
	long long current_revision;
	long long revision;
	char code[64];
};

static void *race(void *arg)
{
	struct racer *rc = arg;
	const char *hdrs[] = {rc->rid_header, NULL};
	struct it_resp r;
	pthread_barrier_wait(rc->barrier);
	it_request(&srv, "PUT", rc->path, rc->token, rc->body, hdrs, &r);
	rc->status = r.status;
	rc->current_revision = it_json_int(r.json, "current_revision", -1);
	rc->revision = it_json_int(r.json, "revision", -1);
	snprintf(rc->code, sizeof rc->code, "%s",
		 it_json_str(r.json, "code") ? it_json_str(r.json, "code") : "");
	it_resp_free(&r);
	return NULL;
}

/* RACERS writers PUT with expected_revision `from` at the same moment */
static void run_race(const char *thread, long long from)
{
	struct racer racers[RACERS];
	pthread_t tids[RACERS];
	pthread_barrier_t barrier;
	char *path = it_mode_path(thread);
	assert_int_equal(pthread_barrier_init(&barrier, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		memset(&racers[i], 0, sizeof racers[i]);
		racers[i].path = path;
		racers[i].token = admin_a;
		racers[i].barrier = &barrier;
		snprintf(racers[i].body, sizeof racers[i].body,
			 "{\"expected_revision\":%lld,\"mode\":\"%s\"}", from,
			 i % 2 ? "enabled" : "disabled");
		snprintf(racers[i].rid, sizeof racers[i].rid, "race-%lld-%d", from, i);
		snprintf(racers[i].rid_header, sizeof racers[i].rid_header,
			 "X-Request-Id: race-%lld-%d", from, i);
	}
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&tids[i], NULL, race, &racers[i]), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);

	int ok = 0, stale = 0, winner = -1;
	for (int i = 0; i < RACERS; i++) {
		if (racers[i].status == 200) {
			ok++;
			winner = i;
			IT_CHECK(racers[i].revision == from + 1, "winner answered revision %lld",
				 racers[i].revision);
		} else if (racers[i].status == 409 &&
			   strcmp(racers[i].code, "stale_revision") == 0) {
			stale++;
			IT_CHECK(racers[i].current_revision == from + 1,
				 "a loser answered current_revision %lld, expected %lld",
				 racers[i].current_revision, from + 1);
		} else {
			fprintf(stderr, "racer %d: status %ld code %s\n", i, racers[i].status,
				racers[i].code);
		}
	}
	IT_CHECK(
	    ok == 1 && stale == RACERS - 1,
	    "race from revision %lld: %d × 200 and %d × 409 stale_revision (expected 1 and %d)",
	    from, ok, stale, RACERS - 1);
	expect_mode(reader_a, thread, winner % 2 ? "enabled" : "disabled", from + 1);

	json_t *recs = audit_records(admin_a, thread);
	IT_CHECK(json_array_size(recs) == (size_t)from + 1,
		 "after the race from revision %lld: %zu audit records, expected %lld", from,
		 json_array_size(recs), from + 1);
	json_t *last = json_array_get(recs, json_array_size(recs) - 1);
	IT_CHECK(it_json_str_is(last, "request_id", racers[winner].rid),
		 "the race's audit record is not the winner's request (%s)",
		 it_json_str(last, "request_id") ? it_json_str(last, "request_id") : "null");
	IT_CHECK(it_json_int(last, "revision_before", -1) == from &&
		     it_json_int(last, "revision_after", -1) == from + 1,
		 "race record revisions are not %lld → %lld", from, from + 1);
	json_decref(recs);
	free(path);
}

static void test_cas_race_first_write(void **state)
{
	(void)state;
	char *thread = it_unique("race0");
	run_race(thread, 0);
	char q[512];
	snprintf(q, sizeof q, "?resource_type=thread&resource_id=%s", thread);
	expect_verify(admin_a, q, 1);
	free(thread);
}

static void test_cas_race_existing(void **state)
{
	(void)state;
	char *thread = it_unique("race3");
	for (long long rev = 0; rev < 3; rev++) {
		struct it_resp r;
		put_mode(admin_a, thread, rev, rev % 2 ? "enabled" : "disabled", NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	run_race(thread, 3);
	char q[512];
	snprintf(q, sizeof q, "?resource_type=thread&resource_id=%s", thread);
	expect_verify(admin_a, q, 4);
	free(thread);
}

/* ---------------------------------------------------------------- audit */

static void test_audit_chain(void **state)
{
	(void)state;
	json_t *recs = audit_records(admin_a, thread_a);
	size_t n = json_array_size(recs);
	IT_CHECK(n == 4, "expected 4 records for thread_a, got %zu", n);
	const char *prev = NULL;
	long long prev_seq = -1, prev_rev = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *rec = json_array_get(recs, i);
		long long seq = it_json_int(rec, "seq", -1);
		IT_CHECK(seq > prev_seq, "seq does not increase");
		if (i == 0)
			IT_CHECK(it_json_has_null(rec, "prev_hash"), "first prev_hash is not null");
		else
			IT_CHECK(it_json_str_is(rec, "prev_hash", prev),
				 "record %zu: prev_hash is not the previous record's hash", i);
		IT_CHECK(it_json_int(rec, "revision_before", -1) == prev_rev &&
			     it_json_int(rec, "revision_after", -1) == prev_rev + 1,
			 "record %zu: revisions are not %lld → %lld", i, prev_rev, prev_rev + 1);
		IT_CHECK(json_is_object(json_object_get(rec, "details")),
			 "details is not an object");
		IT_CHECK(it_is_timestamp_ms(it_json_str(rec, "at")), "at is malformed");
		prev = it_json_str(rec, "hash");
		IT_CHECK(it_is_sha256_ref(prev), "hash is malformed");
		prev_seq = seq;
		prev_rev++;
	}
	json_decref(recs);
	char q[512];
	snprintf(q, sizeof q, "?resource_type=thread&resource_id=%s", thread_a);
	expect_verify(admin_a, q, 4);
}

static void test_audit_pagination_and_verify_all(void **state)
{
	(void)state;
	/* every record of tenant A, one per page, each exactly once, in seq order */
	struct it_resp r;
	it_request(&srv, "GET", "/v1/audit?limit=200", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_has_null(r.json, "next_cursor"), "tenant A has > 200 records?");
	json_t *all = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	size_t total = json_array_size(all);
	IT_CHECK(total >= 9, "expected at least 9 records for tenant A, got %zu", total);

	char *cursor = NULL;
	size_t walked = 0, pages = 0;
	for (;;) {
		char path[512];
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(path, sizeof path, "/v1/audit?limit=1&after=%s", esc);
			free(esc);
		} else {
			snprintf(path, sizeof path, "/v1/audit?limit=1");
		}
		it_request(&srv, "GET", path, admin_a, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		json_t *items = json_object_get(r.json, "items");
		json_t *next = json_object_get(r.json, "next_cursor");
		IT_CHECK(json_is_array(items) && json_array_size(items) <= 1, "page size > limit");
		IT_CHECK(json_is_string(next) || json_is_null(next),
			 "next_cursor is not string|null");
		if (json_array_size(items) == 1) {
			IT_CHECK(walked < total, "pagination returned more records than exist");
			json_t *want = json_array_get(all, walked);
			IT_CHECK(it_json_int(json_array_get(items, 0), "seq", -1) ==
				     it_json_int(want, "seq", -2),
				 "page %zu holds seq %lld, expected %lld", pages,
				 it_json_int(json_array_get(items, 0), "seq", -1),
				 it_json_int(want, "seq", -2));
			walked++;
		} else {
			/* an empty page may only be the last one */
			IT_CHECK(json_is_null(next), "an empty page with a next_cursor");
		}
		pages++;
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
		IT_CHECK(pages <= total + 1, "pagination does not end");
	}
	IT_CHECK(walked == total, "walked %zu records of %zu", walked, total);
	json_decref(all);

	/* verify over all of tenant A's chains checks every record */
	expect_verify(admin_a, "", (long long)total);
}

static void test_tenant_isolation(void **state)
{
	(void)state;
	struct it_resp r;
	/* B reads its own default for the same thread id */
	get_mode(admin_b, thread_a, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", "enabled") &&
		     it_json_int(r.json, "revision", -1) == 0 &&
		     it_json_has_null(r.json, "effective_at"),
		 "tenant B sees tenant A's mode: %s", r.body);
	it_resp_free(&r);
	/* B cannot write A's row: expected_revision 4 (A's) is stale for B */
	put_mode(admin_b, thread_a, 4, "enabled", NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 0, "B's current revision is not 0");
	it_resp_free(&r);
	expect_mode(reader_a, thread_a, "disabled", 4);

	/* B's audit contains none of A's records */
	it_request(&srv, "GET", "/v1/audit?limit=200", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *a_items = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/audit?limit=200", admin_b, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	size_t i, j;
	json_t *a, *b;
	json_array_foreach (json_object_get(r.json, "items"), j, b) {
		json_array_foreach (a_items, i, a) {
			IT_CHECK(it_json_int(a, "seq", -1) != it_json_int(b, "seq", -2),
				 "tenant B's audit list holds tenant A's record seq %lld",
				 it_json_int(a, "seq", -1));
		}
	}
	IT_CHECK(strstr(r.body, thread_a) == NULL, "tenant B's audit mentions tenant A's thread");
	it_resp_free(&r);
	json_decref(a_items);
	json_t *recs = audit_records(admin_b, thread_a);
	IT_CHECK(json_array_size(recs) == 0, "tenant B lists tenant A's thread records");
	json_decref(recs);
	char q[512];
	snprintf(q, sizeof q, "?resource_type=thread&resource_id=%s", thread_a);
	expect_verify(admin_b, q, 0);

	/* B writes its own row for the same thread id; A's stays as it was */
	put_mode(admin_b, thread_a, 0, "disabled", NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1 &&
		     it_json_str_is(r.json, "previous_mode", "enabled"),
		 "tenant B's first write: %s", r.body);
	it_resp_free(&r);
	expect_mode(admin_b, thread_a, "disabled", 1);
	expect_mode(reader_a, thread_a, "disabled", 4);
	expect_verify(admin_b, q, 1);
	expect_verify(admin_a, q, 4);
}

static void test_sigterm_exit_zero(void **state)
{
	(void)state;
	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_never_set_defaults),
	    cmocka_unit_test(test_first_write_and_etag),
	    cmocka_unit_test(test_same_mode_again_bumps_revision),
	    cmocka_unit_test(test_stale_revision),
	    cmocka_unit_test(test_if_match),
	    cmocka_unit_test(test_cas_race_first_write),
	    cmocka_unit_test(test_cas_race_existing),
	    cmocka_unit_test(test_audit_chain),
	    cmocka_unit_test(test_audit_pagination_and_verify_all),
	    cmocka_unit_test(test_tenant_isolation),
	    cmocka_unit_test(test_sigterm_exit_zero),
	};
	int rc = cmocka_run_group_tests_name("it_memory_mode", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
