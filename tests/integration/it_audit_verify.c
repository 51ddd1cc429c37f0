/*
 * it_audit_verify — GET /v1/audit/verify in pages (openapi/openapi.yaml "Audit"): a tenant of
 * 25,000 records (tests/bench/audit_seed.sql: 2,500 thread chains of 10 records, interleaved so
 * that every chain crosses every page boundary) is walked with limit=10000; the limits at their
 * edges; bad, edited and foreign cursors are 422 naming `after`; another tenant is never
 * checked; a record whose predecessor was rewritten on the previous page is found exactly at
 * the page boundary; jsonb details the C canonicaliser must sort and escape like
 * canonical_json(); a statement timeout answers 504 query_timeout, not 503.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"

#define THREADS 2500
#define POSITIONS 10
#define PAGE 10000

static struct it_server srv;
static char *tenant_a, *tenant_b, *admin_a, *admin_b;
static PGconn *db;
static long long total_a; /* records of tenant A */

/* new: the text of a file, or NULL */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

/* one value of a one-row query (params text) as a number; fails the test on an error */
static long long query_int(const char *sql, int n, const char *const *params)
{
	PGresult *res = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		fprintf(stderr, "%s\n", PQerrorMessage(db));
		PQclear(res);
		IT_FAIL("query failed: %s", sql);
	}
	long long v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

static void exec_ok(const char *sql, int n, const char *const *params)
{
	PGresult *res = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	PQclear(res);
	IT_CHECK(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s failed: %s", sql,
		 PQerrorMessage(db));
}

/* GET /v1/audit/verify?<query>; r must be freed */
static void verify(const char *token, const char *query, struct it_resp *r)
{
	char path[1024];
	snprintf(path, sizeof path, "/v1/audit/verify%s%s", *query ? "?" : "", query);
	it_request(&srv, "GET", path, token, NULL, NULL, r);
}

/* One page: expects 200 and {ok, checked, first_bad_seq}; copies next_cursor (or "") */
static void expect_page(const char *token, const char *query, bool ok, long long checked,
			long long first_bad, char cursor[64])
{
	struct it_resp r;
	verify(token, query, &r);
	IT_STATUS(&r, 200);
	const char *next = it_json_str(r.json, "next_cursor");
	IT_CHECK((ok ? json_is_true(json_object_get(r.json, "ok"))
		     : json_is_false(json_object_get(r.json, "ok"))) &&
		     it_json_int(r.json, "checked", -1) == checked &&
		     (first_bad ? it_json_int(r.json, "first_bad_seq", -1) == first_bad
				: it_json_has_null(r.json, "first_bad_seq")) &&
		     (next != NULL || it_json_has_null(r.json, "next_cursor")),
		 "verify?%s: expected ok %d, checked %lld, first_bad_seq %lld, got %s", query, ok,
		 checked, first_bad, r.body);
	snprintf(cursor, 64, "%s", next ? next : "");
	it_resp_free(&r);
}

static void put_mode(const char *token, const char *thread, long long expected, int want)
{
	char body[128], path[512];
	snprintf(body, sizeof body, "{\"expected_revision\":%lld,\"mode\":\"disabled\"}", expected);
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	struct it_resp r;
	it_request(&srv, "PUT", path, token, body, NULL, &r);
	IT_STATUS(&r, want);
	it_resp_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	db = PQconnectdb(getenv("DATABASE_URL"));
	if (PQstatus(db) != CONNECTION_OK) {
		fprintf(stderr, "FAIL: cannot connect to DATABASE_URL: %s", PQerrorMessage(db));
		return -1;
	}
	if (it_server_start(&srv, NULL) != 0)
		return -1;
	tenant_a = it_unique("verify-a");
	tenant_b = it_unique("verify-b");
	admin_a = it_token(tenant_a, "admin", "it-admin");
	admin_b = it_token(tenant_b, "admin", "it-admin");
	return admin_a && admin_b ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = srv.pid > 0 && it_server_stop(&srv) != 0 ? -1 : 0;
	PQfinish(db);
	free(tenant_a);
	free(tenant_b);
	free(admin_a);
	free(admin_b);
	return rc;
}

static void test_seed(void **state)
{
	(void)state;
	char *sql = slurp(RG_SOURCE_DIR "/tests/bench/audit_seed.sql");
	IT_CHECK(sql != NULL, "cannot read tests/bench/audit_seed.sql");
	exec_ok("BEGIN", 0, NULL);
	exec_ok("SET LOCAL session_replication_role = replica", 0, NULL);
	char threads[16], pos[16];
	snprintf(threads, sizeof threads, "%d", THREADS);
	for (int p = 1; p <= POSITIONS; p++) {
		snprintf(pos, sizeof pos, "%d", p);
		const char *params[] = {tenant_a, threads, pos};
		exec_ok(sql, 3, params);
	}
	exec_ok("COMMIT", 0, NULL);
	free(sql);
	/* records written by the service itself, with actor, request id and real details */
	put_mode(admin_a, "real-thread", 0, 200);
	put_mode(admin_b, "b-thread", 0, 200);
	const char *params[] = {tenant_a};
	total_a = query_int("SELECT count(*) FROM audit_log WHERE tenant_id = $1", 1, params);
	IT_CHECK(total_a == THREADS * POSITIONS + 2, "tenant A has %lld records", total_a);
}

static void test_walk_in_pages(void **state)
{
	(void)state;
	char cursor[64] = "", query[256];
	long long seen = 0;
	int pages = 0;
	do {
		long long want = total_a - seen < PAGE ? total_a - seen : PAGE;
		snprintf(query, sizeof query, "limit=%d%s%s", PAGE, *cursor ? "&after=" : "", cursor);
		expect_page(admin_a, query, true, want, 0, cursor);
		seen += want;
		pages++;
		IT_CHECK(pages <= 4, "the walk does not end");
	} while (*cursor);
	IT_CHECK(seen == total_a && pages == 3, "%d pages checked %lld of %lld records", pages,
		 seen, total_a);
	/* the default limit is 10000 */
	expect_page(admin_a, "", true, PAGE, 0, cursor);
	IT_CHECK(*cursor, "a first page of 10000 of %lld records has no next_cursor", total_a);
}

static void test_limits_at_their_edges(void **state)
{
	(void)state;
	char cursor[64], query[256];
	expect_page(admin_a, "limit=1", true, 1, 0, cursor);
	IT_CHECK(*cursor, "limit=1 gave no next_cursor");
	snprintf(query, sizeof query, "limit=1&after=%s", cursor);
	expect_page(admin_a, query, true, 1, 0, cursor);
	expect_page(admin_a, "limit=100000", true, total_a, 0, cursor);
	IT_CHECK(*cursor == '\0', "every record checked, yet a next_cursor: %s", cursor);
	expect_page(admin_a, "limit=0000002", true, 2, 0, cursor);
	static const char *const bad_limits[] = {"limit=0", "limit=100001", "limit=-1",
						 "limit=abc", "limit=", "limit=1e3",
						 "limit=0100001", "limit=99999999999999999999"};
	for (size_t i = 0; i < sizeof bad_limits / sizeof *bad_limits; i++) {
		struct it_resp r;
		verify(admin_a, bad_limits[i], &r);
		IT_422(&r, "validation_failed", "limit", true, bad_limits[i]);
		it_resp_free(&r);
	}
}

static void expect_bad_cursor(const char *token, const char *query)
{
	struct it_resp r;
	verify(token, query, &r);
	IT_422(&r, "validation_failed", "after", true, query);
	it_resp_free(&r);
}

static void test_bad_and_foreign_cursors(void **state)
{
	(void)state;
	char cursor[64], query[512];
	expect_page(admin_a, "limit=5", true, 5, 0, cursor);
	expect_bad_cursor(admin_a, "after=12");
	expect_bad_cursor(admin_a, "after=");
	expect_bad_cursor(admin_a, "after=zz");
	/* edited: one hex digit of the seq changed */
	char edited[64];
	snprintf(edited, sizeof edited, "%s", cursor);
	edited[15] = edited[15] == '0' ? '1' : '0';
	snprintf(query, sizeof query, "after=%s", edited);
	expect_bad_cursor(admin_a, query);
	/* another tenant's cursor, and this tenant's under other filters */
	snprintf(query, sizeof query, "after=%s", cursor);
	expect_bad_cursor(admin_b, query);
	snprintf(query, sizeof query, "resource_type=thread&after=%s", cursor);
	expect_bad_cursor(admin_a, query);
	/* the cursor itself still works */
	snprintf(query, sizeof query, "limit=5&after=%s", cursor);
	expect_page(admin_a, query, true, 5, 0, cursor);
}

static void test_tenant_isolation(void **state)
{
	(void)state;
	char cursor[64];
	/* B: its token's record and one PUT, none of A's 25,000 */
	expect_page(admin_b, "limit=100000", true, 2, 0, cursor);
	IT_CHECK(*cursor == '\0', "B's only page has a next_cursor");
	expect_page(admin_b, "resource_type=thread&resource_id=thr-1", true, 0, 0, cursor);
}

/* jsonb prints keys shortest first; canonical_json sorts them bytewise, keeps numbers as
 * jsonb prints them and escapes strings like to_json: the C hash must agree on all of it. */
static void test_details_the_canonicaliser_must_get_right(void **state)
{
	(void)state;
	const char *params[] = {
	    tenant_b,
	    "{\"b\": 1, \"aa\": [1.50, -0, 1e3, {\"z\": null, \"Z\": true, \"\\u0001\": \"\\t\\\"é\\\\\"}],"
	    " \"a b\": {\"y\": {\"x\": []}, \"\": {}}, \"€\": \"/\\u001f\", \"a\": 12345678901234567890}"};
	exec_ok("INSERT INTO audit_log (tenant_id, action, resource_type, resource_id, details)"
		" VALUES ($1, 'thread.memory_mode.updated', 'thread', 'odd', $2::jsonb)",
		2, params);
	exec_ok("INSERT INTO audit_log (tenant_id, action, resource_type, resource_id, details,"
		" request_id) VALUES ($1, 'thread.memory_mode.updated', 'thread', 'odd', '[]',"
		" E'q\"\\\\\\n')",
		1, params);
	char cursor[64];
	expect_page(admin_b, "resource_type=thread&resource_id=odd", true, 2, 0, cursor);
}

/* The last record of page 1 is rewritten with a hash that recomputes: page 1 verifies, and
 * the first record of page 2, whose prev_hash no longer matches, is the first bad one. */
static void test_break_at_a_page_boundary(void **state)
{
	(void)state;
	const char *params[] = {tenant_a};
	long long first2 = query_int("SELECT seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq"
				     " OFFSET 10000 LIMIT 1",
				     1, params);
	long long last1 = query_int("SELECT seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq"
				    " OFFSET 9999 LIMIT 1",
				    1, params);
	char first2_text[24];
	snprintf(first2_text, sizeof first2_text, "%lld", first2);
	const char *p2[] = {tenant_a, first2_text};
	long long pred = query_int(
	    "SELECT p.seq FROM audit_log a JOIN audit_log p ON p.tenant_id = a.tenant_id"
	    " AND p.resource_type = a.resource_type AND p.resource_id = a.resource_id"
	    " AND p.chain_pos = a.chain_pos - 1 WHERE a.tenant_id = $1 AND a.seq = $2::bigint",
	    2, p2);
	IT_CHECK(pred <= last1, "the predecessor %lld of %lld is not on page 1 (ends at %lld)",
		 pred, first2, last1);
	char pred_text[24];
	snprintf(pred_text, sizeof pred_text, "%lld", pred);
	const char *pp[] = {tenant_a, pred_text};
	exec_ok("BEGIN", 0, NULL);
	exec_ok("SET LOCAL session_replication_role = replica", 0, NULL);
	exec_ok("UPDATE audit_log SET details = '{\"mode\": \"enabled\", \"forged\": true}'"
		" WHERE tenant_id = $1 AND seq = $2::bigint",
		2, pp);
	exec_ok("UPDATE audit_log SET hash = audit_hash(prev_hash, audit_log)"
		" WHERE tenant_id = $1 AND seq = $2::bigint",
		2, pp);
	exec_ok("COMMIT", 0, NULL);

	char cursor[64], query[256];
	expect_page(admin_a, "limit=10000", true, PAGE, 0, cursor);
	snprintf(query, sizeof query, "limit=10000&after=%s", cursor);
	expect_page(admin_a, query, false, PAGE, first2, cursor);
	/* a page that starts anywhere before it finds the same record */
	expect_page(admin_a, "limit=100000", false, total_a, first2, cursor);
	/* a content change without a new hash is found where it is (page 3) */
	long long third = query_int("SELECT seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq"
				    " OFFSET 20500 LIMIT 1",
				    1, params);
	char third_text[24];
	snprintf(third_text, sizeof third_text, "%lld", third);
	const char *p3[] = {tenant_a, third_text};
	exec_ok("BEGIN", 0, NULL);
	exec_ok("SET LOCAL session_replication_role = replica", 0, NULL);
	exec_ok("UPDATE audit_log SET revision_after = 99 WHERE tenant_id = $1 AND seq = $2::bigint",
		2, p3);
	exec_ok("COMMIT", 0, NULL);
	expect_page(admin_a, "limit=10000", true, PAGE, 0, cursor);
	snprintf(query, sizeof query, "limit=10000&after=%s", cursor);
	expect_page(admin_a, query, false, PAGE, first2, cursor);
	snprintf(query, sizeof query, "limit=10000&after=%s", cursor);
	expect_page(admin_a, query, false, total_a - 2 * PAGE, third, cursor);
	/* B is untouched by A's damage */
	expect_page(admin_b, "resource_type=thread&resource_id=b-thread", true, 1, 0, cursor);
}

/* A statement that outruns statement_timeout is 504 query_timeout: a second server whose
 * connections time out after 1 s waits on a row this test holds locked. */
static void test_statement_timeout_is_not_unavailable(void **state)
{
	(void)state;
	const char *url = getenv("DATABASE_URL");
	char env[1024];
	snprintf(env, sizeof env, "DATABASE_URL=%s%soptions=-c%%20statement_timeout%%3D1000", url,
		 strchr(url, '?') ? "&" : "?");
	IT_CHECK(strncmp(url, "postgres", 8) == 0, "DATABASE_URL is not a URI: %s", url);
	const char *const extra[] = {env, NULL};
	struct it_server slow;
	IT_CHECK(it_server_start(&slow, extra) == 0, "the second server did not start");
	const char *params[] = {tenant_b};
	exec_ok("BEGIN", 0, NULL);
	exec_ok("SELECT 1 FROM thread_memory_modes WHERE tenant_id = $1 AND thread_id = 'b-thread'"
		" FOR UPDATE",
		1, params);
	struct it_resp r;
	it_request(&slow, "PUT", "/v1/threads/b-thread/memory-mode", admin_b,
		   "{\"expected_revision\":1,\"mode\":\"enabled\"}", NULL, &r);
	exec_ok("ROLLBACK", 0, NULL);
	IT_PROBLEM(&r, 504, "query_timeout");
	IT_CHECK(it_json_str_is(r.json, "title", "Query timeout"), "title: %s", r.body);
	it_resp_free(&r);
	it_request(&slow, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	IT_CHECK(it_server_stop(&slow) == 0, "the second server did not stop cleanly");
	put_mode(admin_b, "b-thread", 1, 200); /* nothing was written by the timed-out PUT */
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed),
	    cmocka_unit_test(test_walk_in_pages),
	    cmocka_unit_test(test_limits_at_their_edges),
	    cmocka_unit_test(test_bad_and_foreign_cursors),
	    cmocka_unit_test(test_tenant_isolation),
	    cmocka_unit_test(test_details_the_canonicaliser_must_get_right),
	    cmocka_unit_test(test_break_at_a_page_boundary),
	    cmocka_unit_test(test_statement_timeout_is_not_unavailable),
	};
	int rc = cmocka_run_group_tests_name("it_audit_verify", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
