/*
 * it_pipes — pipelined reads (GET memory-mode; server/pipes.c, db/pipe.c): the I/O thread
 * sends the read on a shared connection in pipeline mode and the poller answers it, so
 *   - the answer is the one the lane gives (same body, ETag, HEAD, 422 on a bad id, 401);
 *   - a read the database holds back holds no thread: /healthz answers while it waits; a
 *     pipe whose oldest read waits past PIPES_STALL_MS takes no more (the next reads go to
 *     a lane), and every read is answered 200 with the right body once the database lets
 *     them go;
 *   - a statement timeout answers 504 query_timeout (the database is fine);
 *   - a read still waiting when the drain ends is answered 503 shutting_down, and the
 *     process exits 0 within the drain;
 *   - pipes whose backends were terminated are noticed, closed and connected again, with
 *     no read lost meanwhile;
 *   - a pipe whose backend stopped answering (frozen with SIGSTOP) is given up after the
 *     statement timeout and a second: its read is answered 503, and it is connected again.
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

/* server/pipes.h's PIPES_COUNT: the pipes an instance keeps up. */
#define PIPES 1

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
	snprintf(dbname, sizeof dbname, "rg_it_pipes_%d", (int)getpid());
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
	tenant = it_unique("pipes");
	admin = it_token(tenant, "admin", "it-pipes");
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

/* The metric's value in GET /metrics, or -1. */
static double metric(const struct it_server *s, const char *series)
{
	struct it_resp r;
	it_request(s, "GET", "/metrics", NULL, NULL, NULL, &r);
	double v = r.status == 200 && r.body ? it_metric_value(r.body, series) : -1;
	it_resp_free(&r);
	return v;
}

/* Reads are pipelined only with the token verified from the cache, which is on once the
 * event listener is, and once the pipes are connected. A cache entry lives a second from its
 * verification: this lets the old one expire, verifies afresh (on a lane), and checks that
 * the next read is pipelined; the caller's read comes right after. */
static void warm(const struct it_server *s, const char *thread)
{
	for (int i = 0; i < 250 && (metric(s, "recallgate_event_listener_up") != 1 ||
				    metric(s, "recallgate_pipes_connected") != PIPES);
	     i++)
		it_sleep_ms(20);
	it_sleep_ms(1100);
	char path[128];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	double before = metric(s, "recallgate_pipe_reads_total");
	for (int i = 0; i < 2; i++) {
		struct it_resp r;
		it_request(s, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	double piped = metric(s, "recallgate_pipe_reads_total") - before;
	IT_CHECK(piped >= 1, "no read was pipelined (%.0f)", piped);
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
	set_mode(&s, "pipes-same");
	warm(&s, "pipes-same");
	for (int i = 0; i < 20; i++) {
		struct it_resp r;
		it_request(&s, "GET", "/v1/threads/pipes-same/memory-mode", admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_str_is(r.json, "mode", "disabled") &&
			     it_json_int(r.json, "revision", -1) == 1 &&
			     strcmp(it_resp_header(&r, "ETag") ? it_resp_header(&r, "ETag") : "",
				    "\"1\"") == 0,
			 "read %d: %s", i, r.body);
		it_resp_free(&r);
	}
	struct it_resp r;
	it_request(&s, "HEAD", "/v1/threads/pipes-same/memory-mode", admin, NULL, NULL, &r);
	IT_CHECK(r.status == 200 && r.body_len == 0, "HEAD: %ld, %zu bytes", r.status, r.body_len);
	it_resp_free(&r);
	it_request(&s, "GET", "/v1/threads/bad%20id/memory-mode", admin, NULL, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&s, "GET", "/v1/threads/pipes-same/memory-mode", NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_waiting_reads_hold_no_thread(void **state)
{
	(void)state;
	/* one pool connection, so one worker: the reads wait on the pipes without it */
	const char *env[] = {"RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	set_mode(&s, "pipes-wait");
	warm(&s, "pipes-wait");
	/* reads of thread_memory_modes wait on this session's lock */
	PGconn *locker = it_db_lock("thread_memory_modes", "ACCESS EXCLUSIVE");
	/* One read per pipe, each stalled past PIPES_STALL_MS (50 ms) before the next: the read
	 * after them finds every pipe stalled and runs on the lane (its worker waits on the lock
	 * too), and so does the one after that (queued behind the worker). */
	enum { N = PIPES + 2 };
	struct reader rd[N];
	double waiting[N] = {0};
	for (int n = 0; n < N; n++) {
		start_readers(&s, rd + n, 1, "pipes-wait");
		it_sleep_ms(150);
		waiting[n] = metric(&s, "recallgate_pipe_reads_waiting");
	}
	struct it_resp h;
	long long t0 = it_now_ms();
	it_request(&s, "GET", "/healthz", NULL, NULL, NULL, &h);
	long long healthz_ms = it_now_ms() - t0;
	it_db_unlock(locker);
	for (int n = 0; n < N; n++)
		pthread_join(rd[n].th, NULL);
	for (int n = 0; n < N; n++)
		IT_CHECK(waiting[n] == (n < PIPES ? n + 1 : PIPES),
			 "recallgate_pipe_reads_waiting was %.0f after %d held reads (%d pipes)",
			 waiting[n], n + 1, PIPES);
	IT_CHECK(h.status == 200 && healthz_ms < 1000, "/healthz while the reads waited: %ld in %lld ms",
		 h.status, healthz_ms);
	it_resp_free(&h);
	for (int n = 0; n < N; n++) {
		IT_CHECK(rd[n].resp.status == 200 && it_json_str_is(rd[n].resp.json, "mode", "disabled"),
			 "read %d that waited on the lock: %ld %s", n, rd[n].resp.status,
			 rd[n].resp.body);
		it_resp_free(&rd[n].resp);
	}
	IT_CHECK(metric(&s, "recallgate_pipe_reads_waiting") == 0, "a read still waiting");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_statement_timeout_is_504(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	warm(&s, "pipes-slow");
	/* reads of thread_memory_modes wait on this session's lock */
	PGconn *locker = it_db_lock("thread_memory_modes", "ACCESS EXCLUSIVE");
	struct reader rd[1];
	start_readers(&s, rd, 1, "pipes-slow");
	pthread_join(rd[0].th, NULL); /* statement_timeout: 5 s */
	it_db_unlock(locker);
	IT_PROBLEM(&rd[0].resp, 504, "query_timeout");
	it_resp_free(&rd[0].resp);
	/* the connection is fine afterwards */
	struct it_resp r;
	it_request(&s, "GET", "/v1/threads/pipes-slow/memory-mode", admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* The pipe is a property of the statement, not of a route: the preference view (another
 * db/ module's pipeable read) goes out on it too, with the lane's answer. */
static void test_preference_view_is_piped(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	warm(&s, "pipes-pref");
	const char *path = "/v1/goals/pipes-goal/agents/pipes-agent/preferences";
	double before = metric(&s, "recallgate_pipe_reads_total");
	for (int i = 0; i < 3; i++) {
		struct it_resp r;
		it_request(&s, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(json_is_null(json_object_get(r.json, "revision")) &&
			     json_array_size(json_object_get(r.json, "entries")) == 0,
			 "an empty journal: %s", r.body);
		it_resp_free(&r);
	}
	double piped = metric(&s, "recallgate_pipe_reads_total") - before;
	IT_CHECK(piped >= 1, "no preference view went out on the pipe (%.0f)", piped);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* A cold pipe prepares its statement in the group of its first read. A read sent while that
 * Parse is unanswered must not ride on it: here the Parse waits on a lock past the statement
 * timeout and fails, and a second read sent behind it, which would then fail 26000 (a 500),
 * goes to the worker lane instead. Afterwards the pipe prepares again and answers. */
static void test_reads_behind_a_failed_parse(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	for (int i = 0; i < 250 && metric(&s, "recallgate_pipes_connected") != PIPES; i++)
		it_sleep_ms(20);
	/* the token in the cache (a read goes out on a pipe only then), the statement cold */
	struct it_resp t;
	it_request(&s, "GET", "/v1/tokens", admin, NULL, NULL, &t);
	IT_STATUS(&t, 200);
	it_resp_free(&t);
	PGconn *locker = it_db_lock("thread_memory_modes", "ACCESS EXCLUSIVE");
	struct reader rd[2];
	start_readers(&s, rd, 1, "pipes-cold");
	it_sleep_ms(20); /* within PIPES_STALL_MS: the pipe would still take the next read */
	start_readers(&s, rd + 1, 1, "pipes-cold");
	for (int n = 0; n < 2; n++)
		pthread_join(rd[n].th, NULL); /* statement_timeout: 5 s */
	it_db_unlock(locker);
	for (int n = 0; n < 2; n++) {
		IT_PROBLEM(&rd[n].resp, 504, "query_timeout");
		it_resp_free(&rd[n].resp);
	}
	for (int i = 0; i < 3; i++) {
		struct it_resp r;
		it_request(&s, "GET", "/v1/threads/pipes-cold/memory-mode", admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	IT_CHECK(metric(&s, "recallgate_pipe_reads_total") >= 1, "no read went through the pipe");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_drain_answers_waiting_reads(void **state)
{
	(void)state;
	/* one pool connection: the read waits on a pipe (a read that a worker runs is waited for
	 * like any running handler) */
	const char *env[] = {"RECALLGATE_DRAIN_TIMEOUT=2", "RECALLGATE_DB_POOL=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	warm(&s, "pipes-drain");
	PGconn *locker = it_db_lock("thread_memory_modes", "ACCESS EXCLUSIVE");
	struct reader rd[1];
	start_readers(&s, rd, 1, "pipes-drain");
	for (int i = 0; i < 100 && metric(&s, "recallgate_pipe_reads_waiting") < 1; i++)
		it_sleep_ms(20);
	long long t0 = it_now_ms();
	IT_CHECK(it_server_signal(&s, SIGTERM) == 0, "SIGTERM");
	int rc = it_server_wait(&s, 10);
	long long took = it_now_ms() - t0;
	it_db_unlock(locker);
	pthread_join(rd[0].th, NULL);
	IT_PROBLEM(&rd[0].resp, 503, "shutting_down");
	it_resp_free(&rd[0].resp);
	IT_CHECK(rc == 0, "exit status %d after SIGTERM", rc);
	IT_CHECK(took < 3000 + 1000, "exit %lld ms after SIGTERM (drain 2 s)", took);
}

/* One integer from sql on the test's database. */
static int query_int(const char *sql)
{
	PGconn *c = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
	PGresult *res = PQexec(c, sql);
	IT_CHECK(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
	int n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(c);
	return n;
}

/* Terminates every connection of the server under test (pool, pipes, event listener). */
static int terminate_backends(void)
{
	return query_int("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
			 " WHERE datname = current_database() AND application_name LIKE 'recallgate%'"
			 " AND pid <> pg_backend_pid()");
}

static void test_pipes_reconnect(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	warm(&s, "pipes-back");
	int killed = terminate_backends();
	IT_CHECK(killed >= PIPES + 1, "%d backends terminated (the pipes and a pool connection)",
		 killed);
	/* The poller hears each pipe's end at once (its socket is watched): reads go to the other
	 * pipe or a lane meanwhile, and none is lost to a dead pipe. */
	it_sleep_ms(200);
	for (int i = 0; i < 30; i++) {
		struct it_resp r;
		it_request(&s, "GET", "/v1/threads/pipes-back/memory-mode", admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		it_sleep_ms(20);
	}
	double up = 0;
	for (int i = 0; i < 150 && (up = metric(&s, "recallgate_pipes_connected")) != PIPES; i++)
		it_sleep_ms(20);
	IT_CHECK(up == PIPES, "%.0f pipes up 3 s after their backends were terminated", up);
	warm(&s, "pipes-back"); /* and they take reads again */
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* The pipes' backends frozen (SIGSTOP): a host that stopped answering without closing the
 * connection. A read sent on a pipe is answered 503 once it has waited past the statement
 * timeout and a second (not after TCP's minutes), and the pipes are connected again. */
static void test_frozen_pipe_is_given_up(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	warm(&s, "pipes-frozen");
	int pids[PIPES] = {0};
	for (int i = 0; i < PIPES; i++) {
		char sql[256];
		snprintf(sql, sizeof sql,
			 "SELECT coalesce((SELECT pid FROM pg_stat_activity WHERE datname ="
			 " current_database() AND application_name = 'recallgate pipe' ORDER BY pid"
			 " OFFSET %d LIMIT 1), 0)",
			 i);
		pids[i] = query_int(sql);
		IT_CHECK(pids[i] > 0 && kill(pids[i], SIGSTOP) == 0, "cannot freeze pipe %d", i);
	}
	struct it_resp r;
	long long t0 = it_now_ms();
	it_request(&s, "GET", "/v1/threads/pipes-frozen/memory-mode", admin, NULL, NULL, &r);
	long long took = it_now_ms() - t0;
	for (int i = 0; i < PIPES; i++)
		(void)kill(pids[i], SIGCONT);
	IT_PROBLEM(&r, 503, "database_unavailable");
	it_resp_free(&r);
	IT_CHECK(took >= 5500 && took < 8000, "answered after %lld ms (statement timeout 5 s + 1 s)",
		 took);
	double up = 0;
	for (int i = 0; i < 150 && (up = metric(&s, "recallgate_pipes_connected")) != PIPES; i++)
		it_sleep_ms(20);
	IT_CHECK(up == PIPES, "%.0f pipes up 3 s after they were given up", up);
	warm(&s, "pipes-frozen");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* epoch_ms() (used by GET memory-mode's statement and most others) must stay inlinable:
 * declared more immutable than its body, PostgreSQL ran it through fmgr_sql, parsing and
 * planning its body on every execution, at half the statement's throughput (migration
 * 0013). The plan shows the inlined expression, not a call. */
static void test_epoch_ms_is_inlined(void **state)
{
	(void)state;
	PGconn *c = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
	PGresult *res = PQexec(c, "EXPLAIN (VERBOSE, COSTS OFF) SELECT epoch_ms(now())");
	IT_CHECK(PQresultStatus(res) == PGRES_TUPLES_OK, "EXPLAIN: %s", PQerrorMessage(c));
	bool inlined = false, called = false;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *line = PQgetvalue(res, i, 0);
		inlined |= strstr(line, "EXTRACT(epoch FROM now())") != NULL;
		called |= strstr(line, "epoch_ms(") != NULL;
	}
	PQclear(res);
	PQfinish(c);
	IT_CHECK(inlined && !called, "epoch_ms() is not inlined into the plan");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_answer_as_the_lane),
	    cmocka_unit_test(test_waiting_reads_hold_no_thread),
	    cmocka_unit_test(test_statement_timeout_is_504),
	    cmocka_unit_test(test_reads_behind_a_failed_parse),
	    cmocka_unit_test(test_preference_view_is_piped),
	    cmocka_unit_test(test_drain_answers_waiting_reads),
	    cmocka_unit_test(test_pipes_reconnect),
	    cmocka_unit_test(test_frozen_pipe_is_given_up),
	    cmocka_unit_test(test_epoch_ms_is_inlined),
	};
	int rc = cmocka_run_group_tests_name("it_pipes", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
