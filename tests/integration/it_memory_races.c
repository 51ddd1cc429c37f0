/* Regression tests for two races a review found in memory governance (migration 0008):
 * concurrent writes must never leave a derivative eligible while one of its roots is
 * revoked. Each test repeats a real HTTP interleaving; before the fix they failed in more
 * than half of the iterations. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define ITERATIONS 12
#define DERIVERS 6

static struct it_server srv;
static char *admin;

struct call {
	const char *method;
	char path[160];
	char body[400];
	long status;
};

static void *run_call(void *arg)
{
	struct call *c = arg;
	struct it_resp r;
	it_request(&srv, c->method, c->path, admin, c->body, NULL, &r);
	c->status = r.status;
	it_resp_free(&r);
	return NULL;
}

/* Runs the calls at once (each on its own thread and connection). */
static void run_together(struct call *calls, size_t n)
{
	pthread_t t[16];
	for (size_t i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run_call, &calls[i]);
	for (size_t i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* POSTs body to path and copies the string member `field` of the 201 answer into out. */
static void create(const char *path, const char *body, const char *field, char out[64])
{
	struct it_resp r;
	it_request(&srv, "POST", path, admin, body, NULL, &r);
	IT_STATUS(&r, 201);
	snprintf(out, 64, "%s", it_json_str(r.json, field));
	it_resp_free(&r);
}

static void put_class(const char *src, int expected, const char *class)
{
	char path[160], body[128];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", src);
	snprintf(body, sizeof body, "{\"expected_revision\":%d,\"classification\":\"%s\"}", expected,
		 class);
	it_request(&srv, "PUT", path, admin, body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

/* A derivative created from a first-level derivative while its root is revoked. */
static void test_derive_during_revoke(void **state)
{
	(void)state;
	for (int i = 0; i < ITERATIONS; i++) {
		char s[64], d1[64], body[300];
		struct call calls[DERIVERS + 1];
		snprintf(body, sizeof body, "{\"source_kind\":\"note\",\"content\":\"race root %d\"}", i);
		create("/v1/memory/sources", body, "source_id", s);
		snprintf(body, sizeof body,
			 "{\"kind\":\"summary\",\"derived_from\":[{\"source_id\":\"%s\",\"revision\":1}],"
			 "\"content\":\"race level one %d\"}", s, i);
		create("/v1/memory/derivatives", body, "derivative_id", d1);
		for (int k = 0; k < DERIVERS; k++) {
			calls[k].method = "POST";
			snprintf(calls[k].path, sizeof calls[k].path, "/v1/memory/derivatives");
			snprintf(calls[k].body, sizeof calls[k].body,
				 "{\"kind\":\"cache\",\"derived_from\":[{\"source_id\":\"%s\","
				 "\"revision\":1}],\"content\":\"race level two %d %d\"}", d1, i, k);
		}
		calls[DERIVERS].method = "POST";
		snprintf(calls[DERIVERS].path, sizeof calls[DERIVERS].path,
			 "/v1/memory/sources/%s/revoke", s);
		snprintf(calls[DERIVERS].body, sizeof calls[DERIVERS].body,
			 "{\"expected_revision\":1,\"reason_code\":\"owner_request\"}");
		run_together(calls, DERIVERS + 1);
		IT_CHECK(calls[DERIVERS].status == 200, "iteration %d: revoke answered %ld", i,
			 calls[DERIVERS].status);
		for (int k = 0; k < DERIVERS; k++)
			IT_CHECK(calls[k].status == 201 || calls[k].status == 409,
				 "iteration %d: derive answered %ld", i, calls[k].status);

		char path[160];
		struct it_resp r;
		snprintf(path, sizeof path, "/v1/memory/sources/%s/readback", s);
		it_request(&srv, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_int(r.json, "residual_eligible", -1) == 0,
			 "iteration %d: %lld derivatives of a revoked source are still eligible", i,
			 it_json_int(r.json, "residual_eligible", -1));
		it_resp_free(&r);
	}
}

/* One derivative of two roots: a revocation of one root races a cold → active flip of
 * the other; the derivative must end ineligible. */
static void test_write_skew_two_roots(void **state)
{
	(void)state;
	for (int i = 0; i < ITERATIONS; i++) {
		char s1[64], s2[64], d[64], body[400];
		snprintf(body, sizeof body, "{\"source_kind\":\"note\",\"content\":\"skew one %d\"}", i);
		create("/v1/memory/sources", body, "source_id", s1);
		snprintf(body, sizeof body, "{\"source_kind\":\"note\",\"content\":\"skew two %d\"}", i);
		create("/v1/memory/sources", body, "source_id", s2);
		snprintf(body, sizeof body,
			 "{\"kind\":\"summary\",\"derived_from\":[{\"source_id\":\"%s\",\"revision\":1},"
			 "{\"source_id\":\"%s\",\"revision\":1}],\"content\":\"skew both %d\"}", s1, s2, i);
		create("/v1/memory/derivatives", body, "derivative_id", d);
		put_class(s2, 1, "cold");

		struct call calls[2] = {{.method = "POST"}, {.method = "PUT"}};
		snprintf(calls[0].path, sizeof calls[0].path, "/v1/memory/sources/%s/revoke", s1);
		snprintf(calls[0].body, sizeof calls[0].body,
			 "{\"expected_revision\":1,\"reason_code\":\"owner_request\"}");
		snprintf(calls[1].path, sizeof calls[1].path, "/v1/memory/sources/%s/classification", s2);
		snprintf(calls[1].body, sizeof calls[1].body,
			 "{\"expected_revision\":2,\"classification\":\"active\"}");
		run_together(calls, 2);
		IT_CHECK(calls[0].status == 200 && calls[1].status == 200,
			 "iteration %d: revoke %ld, classify %ld", i, calls[0].status, calls[1].status);

		char path[160];
		struct it_resp r;
		snprintf(path, sizeof path, "/v1/memory/derivatives/%s", d);
		it_request(&srv, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_str_is(r.json, "effective_retrieval_state", "ineligible"),
			 "iteration %d: the derivative of a revoked root is eligible", i);
		it_resp_free(&r);
	}
}

static int setup(void **state)
{
	(void)state;
	char *tenant = it_unique("races");
	admin = it_token(tenant, "admin", "admin");
	free(tenant);
	return admin && it_server_start(&srv, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	int rc = srv.pid > 0 && it_server_stop(&srv) != 0 ? -1 : 0;
	free(admin);
	return rc;
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive_during_revoke),
		cmocka_unit_test(test_write_skew_two_roots),
	};
	int rc = cmocka_run_group_tests_name("it_memory_races", tests, setup, teardown);
	it_cleanup();
	return rc;
}
