/*
 * it_audit_db — the audit table is append-only in the database itself (openapi/openapi.yaml
 * "Audit", DESIGN.md: a trigger refuses UPDATE and DELETE): with a direct libpq connection to
 * DATABASE_URL, UPDATE and DELETE on audit_log fail with an error SQLSTATE and change no
 * row; afterwards the chain still verifies and new records are still appended.
 *
 * Rows are selected by their text containing this run's unique thread id, so the test does
 * not depend on column names and never touches another test's records outside a
 * transaction that is rolled back.
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

static struct it_server srv;
static char *tenant;
static char *admin;
static char *thread;
static PGconn *db;
static char *before; /* snapshot of our rows before the attempts */

static void put_mode(long long expected, const char *mode)
{
	char body[128], path[512];
	snprintf(body, sizeof body, "{\"expected_revision\":%lld,\"mode\":\"%s\"}", expected, mode);
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	struct it_resp r;
	it_request(&srv, "PUT", path, admin, body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void expect_verify(long long checked)
{
	char path[512];
	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=thread&resource_id=%s", thread);
	struct it_resp r;
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == checked &&
		     it_json_has_null(r.json, "first_bad_seq"),
		 "verify: expected {ok: true, checked: %lld, first_bad_seq: null}, got %s", checked,
		 r.body);
	it_resp_free(&r);
}

/* new: "<count>:<md5 of the rows' text>" for the audit rows of our thread */
static char *snapshot(void)
{
	const char *params[] = {thread};
	PGresult *res = PQexecParams(
	    db,
	    "SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY "
	    "t::text)), '') FROM audit_log t WHERE strpos(t::text, $1::text) > 0",
	    1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "snapshot query failed: %s", PQerrorMessage(db));
		PQclear(res);
		IT_FAIL("cannot read audit_log");
	}
	char *s = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return s;
}

/* runs sql (params: our thread id when nparams is 1) and requires it to fail with an error */
static void expect_refused(const char *sql, int nparams)
{
	const char *params[] = {thread};
	PGresult *res =
	    PQexecParams(db, sql, nparams, NULL, nparams ? params : NULL, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (st != PGRES_FATAL_ERROR || !state || strlen(state) != 5 ||
	    strncmp(state, "00", 2) == 0 || strncmp(state, "01", 2) == 0 ||
	    strncmp(state, "02", 2) == 0) {
		fprintf(stderr, "statement: %s\n  result: %s, %s rows, SQLSTATE %s\n", sql,
			PQresStatus(st), PQcmdTuples(res), state ? state : "none");
		PQclear(res);
		if (PQtransactionStatus(db) != PQTRANS_IDLE)
			PQclear(PQexec(db, "ROLLBACK")); /* undo it, for the other tests' sake */
		IT_FAIL("the database did not refuse: %s", sql);
	}
	fprintf(stderr, "refused as expected (SQLSTATE %s): %s\n", state, sql);
	PQclear(res);
}

static void exec_ok(const char *sql)
{
	PGresult *res = PQexec(db, sql);
	ExecStatusType st = PQresultStatus(res);
	PQclear(res);
	IT_CHECK(st == PGRES_COMMAND_OK, "%s failed: %s", sql, PQerrorMessage(db));
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
	tenant = it_unique("auditdb");
	thread = it_unique("thread");
	admin = it_token(tenant, "admin", "it-admin");
	return admin ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	PQfinish(db);
	free(tenant);
	free(thread);
	free(admin);
	free(before);
	return rc;
}

static void test_records_exist(void **state)
{
	(void)state;
	put_mode(0, "disabled");
	put_mode(1, "enabled");
	put_mode(2, "disabled");
	expect_verify(3);
	before = snapshot();
	IT_CHECK(strncmp(before, "3:", 2) == 0, "expected 3 audit_log rows for the thread, got %s",
		 before);
}

static void test_update_refused(void **state)
{
	(void)state;
	IT_CHECK(before != NULL, "no snapshot: test_records_exist failed");
	/* our rows, outside any transaction: if this succeeded it would stick */
	expect_refused(
	    "UPDATE audit_log SET action = 'x' WHERE strpos(audit_log::text, $1::text) > 0", 1);
	/* every row, as an operator would type it; inside a transaction that is rolled back
	 * whatever happens, so a broken trigger cannot damage the other tests' records */
	exec_ok("BEGIN");
	expect_refused("UPDATE audit_log SET action = 'x'", 0);
	exec_ok("ROLLBACK");
	char *now = snapshot();
	IT_CHECK(strcmp(now, before) == 0, "audit_log rows changed: %s → %s", before, now);
	free(now);
}

static void test_delete_refused(void **state)
{
	(void)state;
	IT_CHECK(before != NULL, "no snapshot: test_records_exist failed");
	expect_refused("DELETE FROM audit_log WHERE strpos(audit_log::text, $1::text) > 0", 1);
	exec_ok("BEGIN");
	expect_refused("DELETE FROM audit_log", 0);
	exec_ok("ROLLBACK");
	char *now = snapshot();
	IT_CHECK(strcmp(now, before) == 0, "audit_log rows changed: %s → %s", before, now);
	free(now);
}

static void test_still_verifies_and_appends(void **state)
{
	(void)state;
	expect_verify(3);
	put_mode(3, "enabled");
	expect_verify(4);
	char *now = snapshot();
	IT_CHECK(strncmp(now, "4:", 2) == 0, "expected 4 rows after one more PUT, got %s", now);
	free(now);
}

static void test_verify_detects_tampering(void **state)
{
	(void)state;
	/* verify must recompute the chain, not just answer ok: a superuser can bypass the
	 * trigger (session_replication_role = replica); change one record of a fresh thread
	 * that way and verify must name it */
	char *saved = thread;
	thread = it_unique("tampered");
	put_mode(0, "disabled");
	put_mode(1, "enabled");
	put_mode(2, "disabled");
	expect_verify(3);

	char path[512];
	snprintf(path, sizeof path, "/v1/audit?resource_type=thread&resource_id=%s", thread);
	struct it_resp r;
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *second = json_array_get(json_object_get(r.json, "items"), 1);
	long long seq = it_json_int(second, "seq", -1);
	it_resp_free(&r);
	IT_CHECK(seq > 0, "no second record");

	char seq_text[32];
	snprintf(seq_text, sizeof seq_text, "%lld", seq);
	const char *params[] = {seq_text, thread};
	exec_ok("BEGIN");
	exec_ok("SET LOCAL session_replication_role = replica");
	PGresult *res =
	    PQexecParams(db,
			 "UPDATE audit_log SET action = 'thread.memory_mode.tampered' "
			 "WHERE seq = $1::bigint AND strpos(audit_log::text, $2::text) > 0",
			 2, NULL, params, NULL, NULL, 0);
	bool updated =
	    PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	exec_ok(updated ? "COMMIT" : "ROLLBACK");
	IT_CHECK(updated, "could not tamper with the record as a superuser: %s",
		 PQerrorMessage(db));

	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=thread&resource_id=%s", thread);
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_false(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "first_bad_seq", -1) == seq,
		 "verify after tampering with seq %lld: expected {ok: false, first_bad_seq: %lld}, "
		 "got %s",
		 seq, seq, r.body);
	it_resp_free(&r);
	free(thread);
	thread = saved;
}

/* ?order=newest lists the tenant's records newest first (a timeline opening on its latest
 * records), and its cursor walks back to the oldest: the same records, reversed. */
static void test_newest_first(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/v1/audit?limit=200", admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *oldest = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	size_t n = json_array_size(oldest), seen = 0;
	IT_CHECK(n >= 3, "a few records to list");
	char path[128] = "/v1/audit?order=newest&limit=2";
	for (int pages = 0; pages < 100; pages++) {
		it_request(&srv, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		const json_t *items = json_object_get(r.json, "items");
		for (size_t i = 0; i < json_array_size(items); i++, seen++)
			IT_CHECK(seen < n && it_json_int(json_array_get(items, i), "seq", -1) ==
						     it_json_int(json_array_get(oldest, n - 1 - seen),
								 "seq", -2),
				 "record %zu is not the oldest list's reversed: %s", seen, r.body);
		const char *next = it_json_str(r.json, "next_cursor");
		if (next)
			snprintf(path, sizeof path, "/v1/audit?order=newest&limit=2&after=%s", next);
		it_resp_free(&r);
		if (!next)
			break;
	}
	IT_CHECK(seen == n, "newest first listed %zu of %zu records", seen, n);
	json_decref(oldest);
	it_request(&srv, "GET", "/v1/audit?order=latest", admin, NULL, NULL, &r);
	IT_422(&r, "validation_failed", "order", true, "order=latest");
	it_resp_free(&r);
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
	    cmocka_unit_test(test_records_exist),
	    cmocka_unit_test(test_update_refused),
	    cmocka_unit_test(test_delete_refused),
	    cmocka_unit_test(test_still_verifies_and_appends),
	    cmocka_unit_test(test_verify_detects_tampering),
	    cmocka_unit_test(test_newest_first),
	    cmocka_unit_test(test_sigterm_exit_zero),
	};
	int rc = cmocka_run_group_tests_name("it_audit_db", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
