/*
 * it_readiness — losing and regaining PostgreSQL (openapi/openapi.yaml "Operations", DESIGN.md
 * "a lost database connection is detected, the request answers 503 database_unavailable, and the
 * pool reconnects; the server itself never dies of it").
 *
 * Stops the shared PostgreSQL with the shell command in RG_PG_STOP_CMD and starts it again
 * with RG_PG_START_CMD (both set by scripts/test); without them the test FAILS. ctest runs it
 * alone (RUN_SERIAL). PostgreSQL is restarted in the teardown whatever happened.
 *
 * Because it runs alone it also holds a table lock on audit_log for a moment, to keep one
 * write in flight: with RECALLGATE_DB_POOL=1 the next request must get 503
 * database_unavailable after the acquire timeout, and SIGTERM must stop accepting, let the
 * in-flight write finish, and exit 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <signal.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"

static struct it_server srv;
static char *tenant;
static char *admin;
static char *thread;
static char *path;
static bool pg_stopped;
static PGconn *locker;	     /* holds LOCK TABLE audit_log while a write is in flight */
static struct it_server one; /* RECALLGATE_DB_POOL=1 */
static pthread_t flight_thread;
static bool flight_started;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int run_cmd(const char *env_name)
{
	const char *cmd = getenv(env_name);
	if (!cmd || !*cmd)
		return -1;
	fprintf(stderr, "running %s: %s\n", env_name, cmd);
	int st = system(cmd);
	return st;
}

/* polls GET url until it answers `status` or `secs` pass; returns the seconds it took or -1 */
static double wait_status(const char *url, long status, double secs)
{
	double t0 = now_s();
	while (now_s() - t0 <= secs) {
		struct it_resp r;
		it_request(&srv, "GET", url, NULL, NULL, NULL, &r);
		long got = r.status;
		it_resp_free(&r);
		if (got == status)
			return now_s() - t0;
		pause_ms(100);
	}
	return -1;
}

static int group_setup(void **state)
{
	(void)state;
	const char *stop = getenv("RG_PG_STOP_CMD"), *start = getenv("RG_PG_START_CMD");
	if (!stop || !*stop || !start || !*start) {
		fprintf(stderr,
			"FAIL: RG_PG_STOP_CMD and RG_PG_START_CMD must name shell commands that "
			"stop and start the test PostgreSQL (scripts/test sets them)\n");
		return -1;
	}
	if (it_server_start(&srv, NULL) != 0)
		return -1;
	tenant = it_unique("ready");
	thread = it_unique("thread");
	admin = it_token(tenant, "admin", "it-admin");
	char buf[512];
	snprintf(buf, sizeof buf, "/v1/threads/%s/memory-mode", thread);
	path = strdup(buf);
	return admin ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (locker) {
		PQfinish(locker); /* releases the lock, if a failed test left it held */
		locker = NULL;
	}
	if (flight_started) {
		pthread_join(flight_thread, NULL);
		flight_started = false;
	}
	if (one.pid > 0)
		(void)it_server_stop(&one);
	if (pg_stopped) {
		if (run_cmd("RG_PG_START_CMD") != 0)
			rc = -1;
		pg_stopped = false;
	}
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant);
	free(admin);
	free(thread);
	free(path);
	return rc;
}

static void test_ready_before(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void test_database_down(void **state)
{
	(void)state;
	int st = run_cmd("RG_PG_STOP_CMD");
	pg_stopped = true;
	IT_CHECK(st == 0, "RG_PG_STOP_CMD failed (status %d)", st);

	double t = wait_status("/readyz", 503, 5.0);
	IT_CHECK(t >= 0, "/readyz did not answer 503 within 5 s of stopping PostgreSQL");
	struct it_resp r;
	it_request(&srv, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 503);
	IT_CHECK(it_json_str_is(r.json, "status", "not_ready") &&
		     it_json_str_is(r.json, "reason", "database_unavailable"),
		 "/readyz body is not {status: not_ready, reason: database_unavailable}: %s",
		 r.body);
	it_resp_free(&r);

	it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_PROBLEM(&r, 503, "database_unavailable");
	IT_CHECK(strstr(r.body, "postgres") == NULL && strstr(r.body, "PQ") == NULL &&
		     strstr(r.body, "connection to server") == NULL,
		 "the 503 problem leaks database internals: %s", r.body);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, admin, "{\"expected_revision\":1,\"mode\":\"enabled\"}", NULL,
		   &r);
	IT_PROBLEM(&r, 503, "database_unavailable");
	it_resp_free(&r);

	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void test_database_back(void **state)
{
	(void)state;
	IT_CHECK(pg_stopped, "PostgreSQL was not stopped by the previous test");
	int st = run_cmd("RG_PG_START_CMD");
	pg_stopped = st != 0;
	IT_CHECK(st == 0, "RG_PG_START_CMD failed (status %d)", st);

	double t = wait_status("/readyz", 200, 10.0);
	IT_CHECK(t >= 0, "/readyz did not answer 200 within 10 s of restarting PostgreSQL");

	struct it_resp r;
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1 &&
		     it_json_str_is(r.json, "mode", "disabled"),
		 "after recovery: %s", r.body);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, admin, "{\"expected_revision\":1,\"mode\":\"enabled\"}", NULL,
		   &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2, "PUT after recovery: %s", r.body);
	it_resp_free(&r);
}

struct inflight {
	const struct it_server *s;
	const char *token;
	char path[512];
	long status;
	long long revision;
};
static struct inflight flight; /* static: a failing test must not leave it dangling */

static void *fly(void *arg)
{
	struct inflight *f = arg;
	struct it_resp r;
	it_request(f->s, "PUT", f->path, f->token,
		   "{\"expected_revision\":0,\"mode\":\"disabled\"}", NULL, &r);
	f->status = r.status;
	f->revision = it_json_int(r.json, "revision", -1);
	it_resp_free(&r);
	return NULL;
}

static void locker_exec(const char *sql)
{
	PGresult *res = PQexec(locker, sql);
	ExecStatusType st = PQresultStatus(res);
	PQclear(res);
	IT_CHECK(st == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(locker));
}

static void test_pool_timeout_and_drain(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=1", "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=300", NULL};
	IT_CHECK(it_server_start(&one, env) == 0, "server with RECALLGATE_DB_POOL=1 did not start");
	char *t = it_unique("flight");
	snprintf(flight.path, sizeof flight.path, "/v1/threads/%s/memory-mode", t);
	free(t);
	flight.s = &one;
	flight.token = admin;
	struct it_resp r;
	it_request(&one, "GET", flight.path, admin, NULL, NULL, &r); /* warms the token cache */
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	locker = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(locker) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(locker));
	locker_exec("BEGIN");
	locker_exec("LOCK TABLE audit_log IN EXCLUSIVE MODE");

	/* the write waits for the lock while holding the pool's only connection */
	IT_CHECK(pthread_create(&flight_thread, NULL, fly, &flight) == 0, "pthread_create");
	flight_started = true;
	pause_ms(400);

	/* a read the workers run (GET memory-mode would go on a pipe, beside the pool) */
	double t0 = now_s();
	it_request(&one, "GET", "/v1/tokens", admin, NULL, NULL, &r);
	double took = now_s() - t0;
	IT_PROBLEM(&r, 503, "database_unavailable");
	it_resp_free(&r);
	IT_CHECK(took >= 0.25 && took < 5.0,
		 "the 503 came after %.2f s; expected after the 300 ms acquire timeout", took);
	it_request(&one, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	const char *line = strstr(r.body, "\nrecallgate_db_pool_acquire_timeouts_total");
	const char *sp = line ? strchr(line + 1, ' ') : NULL;
	IT_CHECK(sp && strtod(sp + 1, NULL) >= 1, "recallgate_db_pool_acquire_timeouts_total did "
						  "not count the timeout");
	it_resp_free(&r);

	/* SIGTERM with the write in flight: stop accepting, finish it, exit 0 */
	IT_CHECK(it_server_signal(&one, SIGTERM) == 0, "kill");
	pause_ms(500);
	it_request(&one, "GET", "/healthz", NULL, NULL, NULL, &r);
	long after_term = r.status;
	it_resp_free(&r);
	IT_CHECK(after_term == 0,
		 "a new request after SIGTERM was answered %ld: the server should "
		 "have stopped accepting",
		 after_term);
	IT_CHECK(flight.status == 0, "the in-flight write answered before the lock was released");
	locker_exec("ROLLBACK");
	pthread_join(flight_thread, NULL);
	flight_started = false;
	IT_CHECK(flight.status == 200 && flight.revision == 1,
		 "the in-flight write was not completed during the drain: status %ld revision %lld",
		 flight.status, flight.revision);
	int st = it_server_wait(&one, 12);
	IT_CHECK(st == 0, "exit status %d after draining (-2: still running after 12 s)", st);
	PQfinish(locker);
	locker = NULL;

	/* the write is really there */
	it_request(&srv, "GET", flight.path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "the drained write is not visible");
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
	    cmocka_unit_test(test_ready_before),      cmocka_unit_test(test_database_down),
	    cmocka_unit_test(test_database_back),     cmocka_unit_test(test_pool_timeout_and_drain),
	    cmocka_unit_test(test_sigterm_exit_zero),
	};
	int rc = cmocka_run_group_tests_name("it_readiness", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
