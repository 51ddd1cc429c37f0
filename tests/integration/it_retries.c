/*
 * it_retries — a serialization failure or a deadlock (40001, 40P01) is retried in one place,
 * db_exec, a bounded number of times (DESIGN.md "Concurrency and the database"): a write whose
 * first attempt fails that way succeeds on its retry, counted in
 * recallgate_db_statement_retries_total; one that keeps failing is answered 503
 * database_unavailable after DB_STATEMENT_ATTEMPTS (3) attempts and writes nothing. The
 * failures are real PostgreSQL errors, raised by a trigger this test puts on
 * thread_memory_modes for its own threads only (a sequence decides "once": a nextval is not
 * rolled back with the failed statement).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static struct it_server srv;
static char *tenant, *admin, *prefix;
static PGconn *db;

static void sql(const char *text)
{
	PGresult *r = PQexec(db, text);
	IT_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", text, PQerrorMessage(db));
	PQclear(r);
}

static int group_setup(void **state)
{
	(void)state;
	tenant = it_unique("retry");
	admin = it_token(tenant, "admin", "it-retries");
	prefix = it_unique("it-retry");
	db = PQconnectdb(getenv("DATABASE_URL"));
	if (admin == NULL || PQstatus(db) != CONNECTION_OK)
		return -1;
	char text[1024];
	snprintf(text, sizeof text,
		 "CREATE SEQUENCE IF NOT EXISTS it_retry_seq;"
		 "CREATE OR REPLACE FUNCTION it_retry_inject() RETURNS trigger LANGUAGE plpgsql AS $$"
		 " BEGIN"
		 "  IF NEW.thread_id LIKE '%s-once-%%' AND nextval('it_retry_seq') %% 2 = 1 THEN"
		 "   RAISE EXCEPTION 'injected' USING ERRCODE = '40001'; END IF;"
		 "  IF NEW.thread_id LIKE '%s-always-%%' THEN"
		 "   RAISE EXCEPTION 'injected' USING ERRCODE = '40P01'; END IF;"
		 "  RETURN NEW;"
		 " END $$;"
		 "DROP TRIGGER IF EXISTS it_retry_inject ON thread_memory_modes;"
		 "CREATE TRIGGER it_retry_inject BEFORE INSERT OR UPDATE ON thread_memory_modes"
		 " FOR EACH ROW EXECUTE FUNCTION it_retry_inject()",
		 prefix, prefix);
	PGresult *r = PQexec(db, text);
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "setup: %s\n", PQerrorMessage(db));
	PQclear(r);
	return ok ? it_server_start(&srv, NULL) : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = it_server_stop(&srv) == 0 ? 0 : -1;
	sql("DROP TRIGGER IF EXISTS it_retry_inject ON thread_memory_modes");
	sql("DROP FUNCTION IF EXISTS it_retry_inject()");
	PQfinish(db);
	free(prefix);
	free(admin);
	free(tenant);
	return rc;
}

static double retries(void)
{
	struct it_resp m;
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &m);
	double v = it_metric_value(m.body, "recallgate_db_statement_retries_total");
	it_resp_free(&m);
	return v;
}

static void test_retried_once(void **state)
{
	(void)state;
	char path[200];
	snprintf(path, sizeof path, "/v1/threads/%s-once-1/memory-mode", prefix);
	double before = retries();
	/* whichever attempt the sequence makes fail first, the next one passes */
	for (int rev = 0; rev < 2; rev++) {
		char body[80];
		snprintf(body, sizeof body, "{\"expected_revision\":%d,\"mode\":\"%s\"}", rev,
			 rev ? "enabled" : "disabled");
		struct it_resp r;
		it_request(&srv, "PUT", path, admin, body, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_int(r.json, "revision", -1) == rev + 1, "revision: %s", r.body);
		it_resp_free(&r);
	}
	IT_CHECK(retries() >= before + 1, "no statement was retried (%.0f before, %.0f after)",
		 before, retries());
}

static void test_retries_are_bounded(void **state)
{
	(void)state;
	char path[200];
	snprintf(path, sizeof path, "/v1/threads/%s-always-1/memory-mode", prefix);
	double before = retries();
	struct it_resp r;
	it_request(&srv, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
		   NULL, &r);
	IT_PROBLEM(&r, 503, "database_unavailable");
	it_resp_free(&r);
	double after = retries();
	IT_CHECK(after == before + 2, "%.0f retries for 3 attempts, expected 2", after - before);
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_CHECK(r.status == 200 && it_json_int(r.json, "revision", -1) == 0,
		 "a failed write wrote: %s", r.body);
	it_resp_free(&r);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retried_once),
	    cmocka_unit_test(test_retries_are_bounded),
	};
	int rc = cmocka_run_group_tests_name("it_retries", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
