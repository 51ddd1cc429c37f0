/*
 * it_split — split reads (GET memory-mode; server/split.c): the I/O thread sends the read and
 * the split poller waits for its answer, so a read the database holds back
 *   - holds no thread: /healthz and lane routes answer while such reads wait, and every
 *     waiting read is answered 200 with the right body once the database lets it go;
 *   - answers 504 query_timeout when the statement times out (the database is fine);
 *   - is answered 503 shutting_down when the drain ends before its answer, and the process
 *     still exits 0 within the drain;
 * and the answer is the one the lane gives (same body, ETag, HEAD, 422 on a bad id).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "harness.h"

static char *tenant, *admin;
static char dbname[64], url[1024], base_url[1024];

/* A statement on the suite's database (CREATE / DROP DATABASE). */
static bool admin_exec(const char *sql)
{
	PGconn *c = PQconnectdb(base_url);
	bool ok = PQstatus(c) == CONNECTION_OK;
	if (ok) {
		PGresult *res = PQexec(c, sql);
		ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		if (!ok)
			fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
		PQclear(res);
	}
	PQfinish(c);
	return ok;
}

/* These tests lock thread_memory_modes for seconds, which would stall every other test on
 * the suite's database: they get a database of their own, migrated, on the same server. */
static int group_setup(void **state)
{
	(void)state;
	const char *given = getenv("DATABASE_URL");
	const char *slash = given ? strrchr(given, '/') : NULL;
	if (slash == NULL || strchr(slash, '?') ||
	    snprintf(base_url, sizeof base_url, "%s", given) >= (int)sizeof base_url)
		return -1;
	snprintf(dbname, sizeof dbname, "rg_it_split_%d", (int)getpid());
	snprintf(url, sizeof url, "%.*s/%s", (int)(slash - given), given, dbname);
	char sql[128];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", dbname);
	(void)admin_exec(sql);
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", dbname);
	if (!admin_exec(sql) || setenv("DATABASE_URL", url, 1) != 0)
		return -1;
	const char *args[] = {"migrate", NULL};
	struct it_proc p;
	if (it_run(args, NULL, 60, &p) != 0 || p.status != 0) {
		fprintf(stderr, "migrate: %s\n", p.err ? p.err : "");
		return -1;
	}
	it_proc_free(&p);
	tenant = it_unique("split");
	admin = it_token(tenant, "admin", "it-split");
	return admin ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	free(admin);
	free(tenant);
	setenv("DATABASE_URL", base_url, 1);
	char sql[128];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", dbname);
	return admin_exec(sql) ? 0 : -1;
}

/* A session that will hold thread_memory_modes in ACCESS EXCLUSIVE mode (lock_modes): reads
 * of it wait. */
static PGconn *locker_connect(void)
{
	PGconn *locker = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(locker) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(locker));
	return locker;
}

static void lock_modes(PGconn *locker)
{
	PGresult *res = PQexec(locker, "BEGIN; LOCK TABLE thread_memory_modes IN ACCESS EXCLUSIVE MODE");
	IT_CHECK(PQresultStatus(res) == PGRES_COMMAND_OK, "LOCK: %s", PQerrorMessage(locker));
	PQclear(res);
}

static void unlock_modes(PGconn *locker)
{
	PQclear(PQexec(locker, "ROLLBACK"));
	PQfinish(locker);
}

/* The metric's value in GET /metrics, or -1. */
static double metric(const struct it_server *s, const char *series)
{
	struct it_resp r;
	it_request(s, "GET", "/metrics", NULL, NULL, NULL, &r);
	double v = r.status == 200 && r.body ? it_metric_value(r.body, series) : -1;
	it_resp_free(&r);
	return v;
}

/* Reads are split only with the token verified from the cache, which is on once the event
 * listener is. A cache entry lives a second from its verification: this lets the old one
 * expire, verifies afresh (and prepares the read on a pool connection, on a lane), and checks
 * that the next read is split; the caller's read comes right after. */
static void warm(const struct it_server *s, const char *thread)
{
	for (int i = 0; i < 250 && metric(s, "recallgate_event_listener_up") != 1; i++)
		it_sleep_ms(20);
	it_sleep_ms(1100);
	char path[128];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	double before = metric(s, "recallgate_split_reads_total");
	for (int i = 0; i < 2; i++) {
		struct it_resp r;
		it_request(s, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	double split = metric(s, "recallgate_split_reads_total") - before;
	IT_CHECK(split >= 1, "no read was split (%.0f)", split);
}

struct reader {
	const struct it_server *s;
	char path[128];
	struct it_resp resp;
	pthread_t th;
};

static void *read_mode(void *arg)
{
	struct reader *rd = arg;
	it_request(rd->s, "GET", rd->path, admin, NULL, NULL, &rd->resp);
	return NULL;
}

static void start_readers(const struct it_server *s, struct reader *rd, int n, const char *thread)
{
	for (int i = 0; i < n; i++) {
		rd[i] = (struct reader){.s = s};
		snprintf(rd[i].path, sizeof rd[i].path, "/v1/threads/%s/memory-mode", thread);
		IT_CHECK(pthread_create(&rd[i].th, NULL, read_mode, &rd[i]) == 0, "thread");
	}
}

static void set_mode(const struct it_server *s, const char *thread)
{
	struct it_resp r;
	char path[128];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	it_request(s, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\"}", NULL,
		   &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void test_same_answer_as_the_lane(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	set_mode(&s, "split-same");
	warm(&s, "split-same");
	for (int i = 0; i < 20; i++) {
		struct it_resp r;
		it_request(&s, "GET", "/v1/threads/split-same/memory-mode", admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_str_is(r.json, "mode", "disabled") &&
			     it_json_int(r.json, "revision", -1) == 1 &&
			     strcmp(it_resp_header(&r, "ETag") ? it_resp_header(&r, "ETag") : "",
				    "\"1\"") == 0,
			 "read %d: %s", i, r.body);
		it_resp_free(&r);
	}
	struct it_resp r;
	it_request(&s, "HEAD", "/v1/threads/split-same/memory-mode", admin, NULL, NULL, &r);
	IT_CHECK(r.status == 200 && r.body_len == 0, "HEAD: %ld, %zu bytes", r.status, r.body_len);
	it_resp_free(&r);
	it_request(&s, "GET", "/v1/threads/bad%20id/memory-mode", admin, NULL, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&s, "GET", "/v1/threads/split-same/memory-mode", NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_waiting_reads_hold_no_thread(void **state)
{
	(void)state;
	/* one pool connection, so one worker: the read waits on it without that worker */
	const char *env[] = {"RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	set_mode(&s, "split-wait");
	PGconn *locker = locker_connect();
	warm(&s, "split-wait");
	lock_modes(locker);
	struct reader rd[1];
	start_readers(&s, rd, 1, "split-wait");
	double waiting = 0;
	for (int i = 0; i < 100 && waiting < 1; i++) {
		it_sleep_ms(20);
		waiting = metric(&s, "recallgate_split_reads_waiting");
	}
	struct it_resp h;
	long long t0 = it_now_ms();
	it_request(&s, "GET", "/healthz", NULL, NULL, NULL, &h);
	long long healthz_ms = it_now_ms() - t0;
	unlock_modes(locker);
	pthread_join(rd[0].th, NULL);
	IT_CHECK(waiting == 1, "recallgate_split_reads_waiting was %.0f while the read waited",
		 waiting);
	IT_CHECK(h.status == 200 && healthz_ms < 1000, "/healthz while the read waited: %ld in %lld ms",
		 h.status, healthz_ms);
	it_resp_free(&h);
	IT_CHECK(rd[0].resp.status == 200 && it_json_str_is(rd[0].resp.json, "mode", "disabled"),
		 "the read that waited on the lock: %ld %s", rd[0].resp.status, rd[0].resp.body);
	it_resp_free(&rd[0].resp);
	IT_CHECK(metric(&s, "recallgate_split_reads_waiting") == 0, "a read still waiting");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_statement_timeout_is_504(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	PGconn *locker = locker_connect();
	warm(&s, "split-slow");
	lock_modes(locker);
	struct reader rd[1];
	start_readers(&s, rd, 1, "split-slow");
	pthread_join(rd[0].th, NULL); /* statement_timeout: 5 s */
	unlock_modes(locker);
	IT_PROBLEM(&rd[0].resp, 504, "query_timeout");
	it_resp_free(&rd[0].resp);
	/* the connection is fine afterwards */
	struct it_resp r;
	it_request(&s, "GET", "/v1/threads/split-slow/memory-mode", admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_drain_answers_waiting_reads(void **state)
{
	(void)state;
	/* one pool connection: the read waits in the split poller (a read that a worker runs is
	 * waited for like any running handler) */
	const char *env[] = {"RECALLGATE_DRAIN_TIMEOUT=2", "RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	PGconn *locker = locker_connect();
	warm(&s, "split-drain");
	lock_modes(locker);
	struct reader rd[1];
	start_readers(&s, rd, 1, "split-drain");
	for (int i = 0; i < 100 && metric(&s, "recallgate_split_reads_waiting") < 1; i++)
		it_sleep_ms(20);
	long long t0 = it_now_ms();
	IT_CHECK(it_server_signal(&s, SIGTERM) == 0, "SIGTERM");
	int rc = it_server_wait(&s, 10);
	long long took = it_now_ms() - t0;
	unlock_modes(locker);
	pthread_join(rd[0].th, NULL);
	IT_PROBLEM(&rd[0].resp, 503, "shutting_down");
	it_resp_free(&rd[0].resp);
	IT_CHECK(rc == 0, "exit status %d after SIGTERM", rc);
	IT_CHECK(took < 3000 + 1000, "exit %lld ms after SIGTERM (drain 2 s)", took);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_answer_as_the_lane),
	    cmocka_unit_test(test_waiting_reads_hold_no_thread),
	    cmocka_unit_test(test_statement_timeout_is_504),
	    cmocka_unit_test(test_drain_answers_waiting_reads),
	};
	int rc = cmocka_run_group_tests_name("it_split", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
