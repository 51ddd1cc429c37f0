/*
 * it_decision_context_outcomes — what a decision-context retrieve answers, end to end
 * (openapi/openapi.yaml "Conventions", "Decision context"; docs/providers-contract.md
 * "Decision-context retrieve"; the seed decision-context-advisory-provider-v0), against the
 * fake provider (fake_provider.c):
 *
 *  - every fake mode → the receipt's status and reason_code (fail open: always 200), a
 *    refused connection → provider_unreachable, a slow provider with timeout_seconds 1
 *    answered within the deadline + 1 s;
 *  - resolution: none → provider_missing, two ready → provider_ambiguous, an explicit id that
 *    is disabled / not doctored / of the other protocol / unknown → provider_disabled /
 *    provider_not_ready / provider_missing; only enabled, doctor-ready providers count;
 *  - while eight slow provider calls are in flight, /healthz and a memory-mode read still
 *    answer within 500 ms;
 *  - the audit log, /metrics (a series per provider call outcome) and the server log hold no
 *    query, scope, content or resource ref.
 *
 * The request the provider receives and the receipts are in it_decision_context_requests,
 * the request bounds in it_decision_context_bounds. Helpers: decision_context_helpers.h.
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

#include "decision_context_helpers.h"

#define SLOW_CALLS 8

/* ================================================================ setup */

/* tenant A's providers (first test): one per fake mode plus the resolution cases */
static void test_setup_providers(void **state)
{
	(void)state;
	setup_providers();
}

/* ================================================================ modes */

static void test_modes(void **state)
{
	(void)state;
	char id[80];
	for (size_t i = 0; i < n_mode_cases; i++) {
		const struct mode_case *c = &mode_cases[i];
		it_mode_id("dc", c->mode, id, sizeof id);
		long before = it_fake_count(&fake, "dc", c->mode);
		expect_outcome(dc_a, dc_req(id), c->status, c->reason, id, 1, c->nitems, c->mode);
		IT_CHECK(it_fake_count(&fake, "dc", c->mode) == before + 1,
			 "%s: the provider was not called exactly once", c->mode);
	}
	/* full and too_many at the cap: 8 items pass, 9 are contract_invalid */
	json_t *req = dc_req("dc-full");
	json_object_set_new(req, "max_results", json_integer(8));
	expect_outcome(dc_a, req, "completed", NULL, "dc-full", 1, 8, "full, max_results 8");
	req = dc_req("dc-full");
	json_object_set_new(req, "max_results", json_integer(1));
	expect_outcome(dc_a, req, "completed", NULL, "dc-full", 1, 1, "full, max_results 1");
	req = dc_req("dc-too-many");
	json_object_set_new(req, "max_results", json_integer(8));
	expect_outcome(dc_a, req, "unavailable", "contract_invalid", "dc-too-many", 1, 0,
		       "too_many, max_results 8");
	/* good with max_results 1: two items are one too many */
	req = dc_req("dc-good");
	json_object_set_new(req, "max_results", json_integer(1));
	expect_outcome(dc_a, req, "unavailable", "contract_invalid", "dc-good", 1, 0,
		       "good, max_results 1");
}

static void test_unreachable(void **state)
{
	(void)state;
	expect_outcome(dc_a, dc_req("dc-unreachable"), "unavailable", "provider_unreachable",
		       "dc-unreachable", 1, 0, "a port that refuses connections");
}

static void test_timeout(void **state)
{
	(void)state;
	json_t *req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_integer(1));
	json_t *keep = json_incref(req);
	struct it_resp r;
	double t0 = it_now_s();
	retrieve(dc_a, req, NULL, &r);
	double took = it_now_s() - t0;
	const json_t *rc = answer_receipt(&r, false, "slow, timeout 1");
	expect_receipt(rc, keep, "unavailable", "provider_timeout", "dc-slow", 1, 0,
		       "slow, timeout 1");
	IT_CHECK(took < 2.0, "a provider call with timeout_seconds 1 answered after %.2f s", took);
	long long lat = it_json_int(rc, "latency_ms", -1);
	/* the call gets what is left of the request's 1 s after its wait for a lane and the
	 * database, less the answer's 100 ms reserve (server/dispatch.c): cut by that deadline,
	 * neither at once nor past the request's second */
	IT_CHECK(lat >= 600 && lat < 1000, "latency_ms %lld is not about the 1 s deadline", lat);
	it_resp_free(&r);
	json_decref(keep);
	/* the provider got timeout_seconds 1 */
	json_t *last = it_fake_last(&fake, "dc", "slow");
	json_t *sent = json_loads(it_json_str(last, "body"), 0, NULL);
	IT_CHECK(it_json_int(sent, "timeout_seconds", -1) == 1,
		 "the slow provider was not sent timeout_seconds 1: %s", it_json_str(last, "body"));
	json_decref(sent);
	json_decref(last);

	/* a fractional deadline: 1.5 s */
	req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_real(1.5));
	t0 = it_now_s();
	retrieve(dc_a, req, NULL, &r);
	took = it_now_s() - t0;
	IT_STATUS(&r, 200);
	IT_CHECK(
	    it_json_str_is(json_object_get(r.json, "receipt"), "reason_code", "provider_timeout"),
	    "slow with timeout 1.5: %s", r.body);
	IT_CHECK(took >= 1.4 && took < 2.5,
		 "a provider call with timeout_seconds 1.5 answered after %.2f s", took);
	it_resp_free(&r);
}

/* ================================================================ resolution */

static void test_resolution(void **state)
{
	(void)state;
	/* tenant A holds many ready providers: without an id, ambiguous */
	expect_outcome(dc_a, dc_req(NULL), "unavailable", "provider_ambiguous", NULL, NO_REV, 0,
		       "many ready, no extension_id");
	/* an explicit provider that is disabled or not ready is named with its revision; an
	 * explicit id naming no provider of the protocol is echoed without one */
	expect_outcome(dc_a, dc_req("dc-disabled"), "unavailable", "provider_disabled",
		       "dc-disabled", 2, 0, "explicit disabled");
	expect_outcome(dc_a, dc_req("dc-raw-off"), "unavailable", "provider_disabled", "dc-raw-off",
		       2, 0, "explicit disabled and never doctored");
	expect_outcome(dc_a, dc_req("dc-undoctored"), "unavailable", "provider_not_ready",
		       "dc-undoctored", 1, 0, "explicit never doctored");
	expect_outcome(dc_a, dc_req("dc-repointed"), "unavailable", "provider_not_ready",
		       "dc-repointed", 2, 0, "explicit, endpoint changed after the doctor");
	expect_outcome(dc_a, dc_req("sp-good"), "unavailable", "provider_missing", "sp-good",
		       NO_REV, 0, "explicit of the other protocol");
	expect_outcome(dc_a, dc_req("no-such-provider"), "unavailable", "provider_missing",
		       "no-such-provider", NO_REV, 0, "explicit unknown");

	/* a tenant without providers, and one with only a semantic-preference provider */
	char *t_none = it_unique("dc-none");
	char *tok_none = token_for(t_none, "admin");
	expect_outcome(tok_none, dc_req(NULL), "unavailable", "provider_missing", NULL, NO_REV, 0,
		       "no provider at all");
	provider_ready(tok_none, "only-sp", "sp", "good", 5);
	expect_outcome(tok_none, dc_req(NULL), "unavailable", "provider_missing", NULL, NO_REV, 0,
		       "only a provider of the other protocol");

	/* one ready beside a disabled one and an undoctored one: resolved */
	char *t_one = it_unique("dc-one");
	char *tok_one = token_for(t_one, "admin");
	provider_ready(tok_one, "only", "dc", "good", 5);
	provider_ready(tok_one, "off", "dc", "good", 5);
	provider_patch(tok_one, "off", "{\"expected_revision\":1,\"enabled\":false}");
	provider_raw(tok_one, "raw", furl("/dc/good"), 5);
	expect_outcome(tok_one, dc_req(NULL), "completed", NULL, "only", 1, 2,
		       "one enabled and ready among others");

	/* two ready: ambiguous, unless one is named */
	char *t_two = it_unique("dc-two");
	char *tok_two = token_for(t_two, "admin");
	provider_ready(tok_two, "first", "dc", "good", 5);
	provider_ready(tok_two, "second", "dc", "full", 5);
	expect_outcome(tok_two, dc_req(NULL), "unavailable", "provider_ambiguous", NULL, NO_REV, 0,
		       "two ready");
	expect_outcome(tok_two, dc_req("second"), "completed", NULL, "second", 1, 3,
		       "two ready, one named");
	/* disabling one resolves the other */
	provider_patch(tok_two, "first", "{\"expected_revision\":1,\"enabled\":false}");
	expect_outcome(tok_two, dc_req(NULL), "completed", NULL, "second", 1, 3,
		       "two, one disabled");

	free(t_none);
	free(tok_none);
	free(t_one);
	free(tok_one);
	free(t_two);
	free(tok_two);
}

/* ================================================================ concurrency */

struct slow_call {
	struct it_resp resp;
};

static void *slow_thread(void *arg)
{
	struct slow_call *c = arg;
	json_t *req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_integer(10));
	it_request_json(&srv, "POST", "/v1/decision-context/retrieve", dc_a, req, NULL, &c->resp);
	json_decref(req);
	return NULL;
}

static void test_slow_calls_do_not_block(void **state)
{
	(void)state;
	struct slow_call calls[SLOW_CALLS];
	pthread_t th[SLOW_CALLS];
	memset(calls, 0, sizeof calls);
	long before = it_fake_count(&fake, "dc", "slow");
	for (int i = 0; i < SLOW_CALLS; i++)
		IT_CHECK(pthread_create(&th[i], NULL, slow_thread, &calls[i]) == 0,
			 "pthread_create");
	/* wait until all eight are at the provider */
	double until = it_now_s() + 2.0;
	while (it_fake_count(&fake, "dc", "slow") < before + SLOW_CALLS && it_now_s() < until)
		it_sleep_ms(20);
	long in_flight = it_fake_count(&fake, "dc", "slow") - before;

	double worst_health = 0, worst_mode = 0;
	for (int round = 0; round < 3; round++) {
		struct it_resp r;
		double t0 = it_now_s();
		it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &r);
		double took = it_now_s() - t0;
		if (r.status != 200)
			took = 99;
		worst_health = took > worst_health ? took : worst_health;
		it_resp_free(&r);
		t0 = it_now_s();
		it_request(&srv, "GET", "/v1/threads/t/memory-mode", admin_a, NULL, NULL, &r);
		took = it_now_s() - t0;
		if (r.status != 200)
			took = 99;
		worst_mode = took > worst_mode ? took : worst_mode;
		it_resp_free(&r);
		it_sleep_ms(100);
	}
	for (int i = 0; i < SLOW_CALLS; i++)
		pthread_join(th[i], NULL);

	IT_CHECK(in_flight == SLOW_CALLS,
		 "only %ld of %d slow calls reached the provider within 2 s (calls queued?)",
		 in_flight, SLOW_CALLS);
	IT_CHECK(worst_health < 0.5, "/healthz took %.3f s while %d provider calls were in flight",
		 worst_health, SLOW_CALLS);
	IT_CHECK(worst_mode < 0.5,
		 "GET /v1/threads/t/memory-mode took %.3f s while %d provider calls were in flight",
		 worst_mode, SLOW_CALLS);
	for (int i = 0; i < SLOW_CALLS; i++) {
		IT_STATUS(&calls[i].resp, 200);
		const json_t *rc = json_object_get(calls[i].resp.json, "receipt");
		IT_CHECK(it_json_str_is(rc, "status", "completed") &&
			     it_json_int(rc, "item_count", -1) == 2,
			 "slow call %d: %s", i, calls[i].resp.body);
		it_resp_free(&calls[i].resp);
	}
}

/* ================================================================ privacy */

static void test_audit_and_metrics_privacy(void **state)
{
	(void)state;
	/* every audit record of the tenant (all pages) */
	expect_audit_private();

	struct it_resp r;
	get_metrics_private(&r);
	const char *series[] = {
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"ok\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"unavailable\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"invalid\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"http_error\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"timeout\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"unreachable\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"oversize\"}",
	    "recallgate_provider_calls_total{call=\"doctor\",outcome=\"ok\"}",
	};
	for (size_t i = 0; i < sizeof series / sizeof *series; i++)
		IT_CHECK(strstr(r.body, series[i]) != NULL, "/metrics has no series %s", series[i]);
	it_resp_free(&r);
}

/* last: stops the server and reads its log */
static void test_log_privacy(void **state)
{
	(void)state;
	expect_log_private();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_providers), /* first: tenant A's providers */
	    cmocka_unit_test(test_modes),
	    cmocka_unit_test(test_unreachable),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_resolution),
	    cmocka_unit_test(test_slow_calls_do_not_block),
	    cmocka_unit_test(test_audit_and_metrics_privacy),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server */
	};
	return DECISION_CONTEXT_MAIN("it_decision_context_outcomes", tests);
}
