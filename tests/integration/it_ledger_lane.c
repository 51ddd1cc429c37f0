/*
 * it_ledger_lane — content reads and context loads wait on the ledger on the elastic lane's
 * threads, not on a worker (handlers/routes.c, docs/edge-contract.md). The ledger is held
 * still by a session of the test's own that locks load_receipts, so that every batch of loads
 * waits on it:
 * - loads waiting on the ledger hold no worker: with two pool connections (one is the
 *   ledger's), three loads wait while a write is answered on the other worker; on a worker
 *   they took both, and the write waited out the acquire timeout;
 * - a load's match takes its pool connection within the acquire timeout: with the only one
 *   held past it, a load is answered 503 database_unavailable and counted as an acquire
 *   timeout;
 * - one tenant may have RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT reads and loads waiting at
 *   once: at the limit (2) its next load and its next content read are 429 rate_limited with
 *   Retry-After: 1 at once, another tenant's load is not refused, and a slot is free again
 *   when they are answered.
 * recallgate_ledger_waiting{queue="loads"} says how many loads wait.
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
#include <pthread.h>
#include <unistd.h>

#include "harness.h"

#define LOAD_BODY "{\"query\":\"ledger lane probe\"}"
#define WAITING_LOADS "recallgate_ledger_waiting{queue=\"loads\"}"

static char *tenant, *admin, *tenant2, *admin2;

static int group_setup(void **state)
{
	(void)state;
	tenant = it_unique("lane");
	admin = it_token(tenant, "admin", "it-ledger-lane");
	tenant2 = it_unique("lane2");
	admin2 = it_token(tenant2, "admin", "it-ledger-lane-2");
	return admin && admin2 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	free(admin);
	free(tenant);
	free(admin2);
	free(tenant2);
	return 0;
}

/* A context load on its own thread. */
struct load {
	const struct it_server *s;
	const char *token;
	struct it_resp resp;
	pthread_t tid;
};

static void *load_run(void *arg)
{
	struct load *l = arg;
	it_request(l->s, "POST", "/v1/memory/context", l->token, LOAD_BODY, NULL, &l->resp);
	return NULL;
}

static void load_start(struct load *l, const struct it_server *s, const char *token)
{
	*l = (struct load){.s = s, .token = token};
	IT_CHECK(pthread_create(&l->tid, NULL, load_run, l) == 0, "pthread_create");
}

/* Joins the load: it was answered 200. */
static void load_join(struct load *l)
{
	pthread_join(l->tid, NULL);
	IT_STATUS(&l->resp, 200);
	it_resp_free(&l->resp);
}

static double metric(const struct it_server *s, const char *series)
{
	struct it_resp r;
	it_request(s, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	double v = it_metric_value(r.body, series);
	it_resp_free(&r);
	return v;
}

/* Waits (at most 10 s) until n loads wait on the ledger. */
static void until_waiting(const struct it_server *s, int n)
{
	double v = -1;
	for (int i = 0; i < 500 && (v = metric(s, WAITING_LOADS)) < n; i++)
		it_sleep_ms(20);
	IT_CHECK(v == n, "%d loads should wait on the ledger, %g do", n, v);
}

/* A load answered once, so that its tenant's token is cached and its route warm. */
static void load_once(const struct it_server *s, const char *token)
{
	struct it_resp r;
	it_request(s, "POST", "/v1/memory/context", token, LOAD_BODY, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void test_loads_waiting_on_the_ledger_hold_no_worker(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=2", "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=500", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	load_once(&s, admin);
	PGconn *locker = it_db_lock("load_receipts", "EXCLUSIVE");
	struct load loads[3];
	for (int i = 0; i < 3; i++)
		load_start(&loads[i], &s, admin);
	until_waiting(&s, 3);
	char *path = it_mode_path("lane-write");
	struct it_resp w;
	long long t0 = it_now_ms();
	it_request(&s, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"enabled\"}", NULL,
		   &w);
	long long took = it_now_ms() - t0;
	long status = w.status;
	it_resp_free(&w);
	it_db_unlock(locker);
	for (int i = 0; i < 3; i++)
		load_join(&loads[i]);
	IT_CHECK(status == 200, "a write beside three loads waiting on the ledger answered %ld "
				"after %lld ms", status, took);
	IT_CHECK(metric(&s, WAITING_LOADS) == 0, "loads still wait after their answers");
	free(path);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_a_load_waits_for_a_connection_at_most_the_acquire_timeout(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=1", "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=300", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	load_once(&s, admin);
	double timeouts = metric(&s, "recallgate_db_pool_acquire_timeouts_total");
	/* a write waits on a lock while it holds the pool's only connection */
	PGconn *locker = it_db_lock("audit_log", "EXCLUSIVE");
	char *path = it_mode_path("lane-held");
	pid_t child = fork();
	IT_CHECK(child >= 0, "fork");
	if (child == 0) {
		struct it_resp w;
		it_request(&s, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"enabled\"}",
			   NULL, &w);
		_exit(w.status == 200 ? 0 : 1);
	}
	it_sleep_ms(200); /* the write has its worker: it waits on the lock from now on */
	struct it_resp r;
	it_request(&s, "POST", "/v1/memory/context", admin, LOAD_BODY, NULL, &r);
	IT_PROBLEM(&r, 503, "database_unavailable");
	it_resp_free(&r);
	IT_CHECK(metric(&s, "recallgate_db_pool_acquire_timeouts_total") > timeouts,
		 "the load's wait for a worker was not counted");
	it_db_unlock(locker);
	IT_CHECK(it_wait_pid(child, 10000) == 0, "the held write did not succeed");
	load_once(&s, admin);
	free(path);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

static void test_ledger_waits_per_tenant(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=2", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	load_once(&s, admin);
	load_once(&s, admin2);
	PGconn *locker = it_db_lock("load_receipts", "EXCLUSIVE");
	struct load mine[2], other;
	for (int i = 0; i < 2; i++)
		load_start(&mine[i], &s, admin);
	until_waiting(&s, 2);
	static const char *const refused[][2] = {
		{"POST", "/v1/memory/context"},
		{"GET", "/v1/memory/sources/src_00000000000000000000000000000000/content"},
	};
	for (size_t i = 0; i < 2; i++) {
		struct it_resp r;
		it_request(&s, refused[i][0], refused[i][1], admin,
			   refused[i][0][0] == 'P' ? LOAD_BODY : NULL, NULL, &r);
		IT_PROBLEM(&r, 429, "rate_limited");
		const char *ra = it_resp_header(&r, "Retry-After");
		IT_CHECK(ra && strcmp(ra, "1") == 0, "no Retry-After: 1 on %s", refused[i][1]);
		it_resp_free(&r);
	}
	load_start(&other, &s, admin2);
	until_waiting(&s, 3); /* another tenant's load was admitted beside them */
	it_db_unlock(locker);
	for (int i = 0; i < 2; i++)
		load_join(&mine[i]);
	load_join(&other);
	load_once(&s, admin); /* the slots are free again */
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_waiting_on_the_ledger_hold_no_worker),
		cmocka_unit_test(test_a_load_waits_for_a_connection_at_most_the_acquire_timeout),
		cmocka_unit_test(test_ledger_waits_per_tenant),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
