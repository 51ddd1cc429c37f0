/*
 * it_ratelimit — per-token rate limits (openapi/openapi.yaml "Order of checks"): with
 * RECALLGATE_RATE_LIMIT=1 and RECALLGATE_RATE_BURST=3 a token gets exactly 3 answers at once,
 * then 429 rate_limited (problem+json, Retry-After in whole seconds ≥ 1); another token of
 * the same tenant is not affected; a refused PUT changes nothing (read back, audit); public
 * routes are never limited; /metrics counts the refusals without naming a token.
 *
 * No flakiness from timing: at 1 request per second with a burst of 3, four requests sent
 * within a second see exactly one refusal. A run slower than that (a loaded machine) may
 * see a refill; the count is then checked against the time it took.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"

#define BURST 3

static struct it_server srv;
static char *tenant;
static char *tok_a, *tok_b, *tok_c, *tok_reader;
static char *thread;
static char path[512];
static long refusals; /* 429s this server answered, for the metric */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A 429 rate_limited problem with Retry-After: whole seconds, at least 1. */
static long expect_rate_limited(struct it_resp *r)
{
	IT_PROBLEM(r, 429, "rate_limited");
	const char *ra = it_resp_header(r, "Retry-After");
	IT_CHECK(ra != NULL, "%s: 429 without Retry-After", r->desc);
	char *end;
	long secs = strtol(ra, &end, 10);
	IT_CHECK(*ra >= '0' && *ra <= '9' && *end == '\0' && secs >= 1,
		 "%s: Retry-After is \"%s\", not whole seconds >= 1", r->desc, ra);
	IT_CHECK(strstr(r->body, "tok_") == NULL, "the 429 names a token: %s", r->body);
	refusals++;
	return secs;
}

/* Sends GETs with token until the first 429: how many were answered 200 before it. The
 * elapsed time from the first request to the 429 in *elapsed. */
static int answers_before_429(const char *token, double *elapsed, long *retry_after)
{
	double t0 = now_s();
	for (int n = 0; n < 50; n++) {
		struct it_resp r;
		it_request(&srv, "GET", path, token, NULL, NULL, &r);
		if (r.status == 429) {
			*elapsed = now_s() - t0;
			*retry_after = expect_rate_limited(&r);
			it_resp_free(&r);
			return n;
		}
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	IT_FAIL("50 requests at once were never limited");
}

static void expect_burst(const char *token, const char *who)
{
	double elapsed;
	long retry_after;
	int n = answers_before_429(token, &elapsed, &retry_after);
	if (elapsed < 1.0)
		IT_CHECK(n == BURST, "%s: %d answers before the 429, want exactly %d", who, n,
			 BURST);
	else /* a slow machine: at most one more per second it took */
		IT_CHECK(n >= BURST && n <= BURST + (int)elapsed, "%s: %d answers in %.2f s", who,
			 n, elapsed);
	IT_CHECK(retry_after == 1, "%s: Retry-After %ld at 1 request per second", who,
		 retry_after);
}

static int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_RATE_LIMIT=1", "RECALLGATE_RATE_BURST=3", NULL};
	if (it_server_start(&srv, env) != 0)
		return -1;
	tenant = it_unique("rl");
	thread = it_unique("thread");
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	tok_a = it_token(tenant, "admin", "it-a");
	tok_b = it_token(tenant, "admin", "it-b");
	tok_c = it_token(tenant, "admin", "it-c");
	tok_reader = it_token(tenant, "memory:read,audit:read", "it-reader");
	return tok_a && tok_b && tok_c && tok_reader ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	if (srv.pid)
		it_server_stop(&srv);
	free(tenant);
	free(thread);
	free(tok_a);
	free(tok_b);
	free(tok_c);
	free(tok_reader);
	return 0;
}

/* Exactly the burst, then 429; another token of the same tenant has its own bucket; after
 * Retry-After the token is served again. */
static void test_burst_then_429(void **state)
{
	(void)state;
	expect_burst(tok_a, "token a");
	expect_burst(tok_b, "token b, same tenant");
	/* still refused at once, and a refusal took nothing: one second later one passes */
	struct it_resp r;
	it_request(&srv, "GET", path, tok_a, NULL, NULL, &r);
	long wait = expect_rate_limited(&r);
	it_resp_free(&r);
	it_sleep_ms(wait * 1000 + 100);
	it_request(&srv, "GET", path, tok_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

/* A refused PUT is never run: the resource, its revision and the audit are as before; the
 * check comes before the body's (a refused bad body is 429, not 400). */
static void test_refused_put_changes_nothing(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "PUT", path, tok_c, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	for (int i = 1; i < BURST; i++) { /* the rest of the burst */
		it_request(&srv, "GET", path, tok_c, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	it_request(&srv, "PUT", path, tok_c, "{\"expected_revision\":1,\"mode\":\"enabled\"}",
		   NULL, &r);
	expect_rate_limited(&r);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, tok_c, "{not json", NULL, &r);
	expect_rate_limited(&r);
	it_resp_free(&r);

	/* read back with another token */
	it_request(&srv, "GET", path, tok_reader, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", "disabled") && it_json_int(r.json, "revision", -1) == 1,
		 "after a refused PUT: %s", r.body);
	it_resp_free(&r);
	char audit[768];
	snprintf(audit, sizeof audit, "/v1/audit?resource_type=thread&resource_id=%s", thread);
	it_request(&srv, "GET", audit, tok_reader, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_is_array(items) && json_array_size(items) == 1,
		 "audit after one accepted and two refused PUTs: %s", r.body);
	it_resp_free(&r);
}

/* Public routes carry no token and are never limited, even with an exhausted token's header. */
static void test_public_routes_unlimited(void **state)
{
	(void)state;
	char auth[512];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok_c);
	const char *headers[] = {auth, NULL};
	for (int i = 0; i < 4 * BURST; i++) {
		struct it_resp r;
		it_request(&srv, "GET", "/healthz", NULL, NULL, i % 2 ? headers : NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
}

/* Every refusal is counted, and shows as a 429 by route; no token or tenant is named. */
static void test_metrics(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	double limited = it_metric_value(r.body, "recallgate_rate_limited_total");
	IT_CHECK(limited == (double)refusals, "recallgate_rate_limited_total is %g, %ld were refused",
		 limited, refusals);
	double by_status = it_metric_value(
	    r.body, "recallgate_http_requests_total{route=\"/v1/threads/{thread_id}/memory-mode\","
		    "method=\"PUT\",status=\"429\"}");
	IT_CHECK(by_status == 2, "PUT 429s by status: %g, want 2", by_status);
	IT_CHECK(it_metric_value(r.body, "recallgate_rate_limit_evictions_total") == 0,
		 "evictions with four tokens");
	IT_CHECK(strstr(r.body, tenant) == NULL && strstr(r.body, "tok_") == NULL &&
		     strstr(r.body, tok_a) == NULL,
		 "/metrics names a tenant or token");
	it_resp_free(&r);
	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "exit status %d after SIGTERM", st);
	IT_CHECK(!it_log_contains(&srv, tenant) && !it_log_contains(&srv, "tok_"),
		 "the log names a tenant or token id");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_burst_then_429),
	    cmocka_unit_test(test_refused_put_changes_nothing),
	    cmocka_unit_test(test_public_routes_unlimited),
	    cmocka_unit_test(test_metrics),
	};
	int rc = cmocka_run_group_tests_name("it_ratelimit", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
