/*
 * it_limits_routes — the limits of a request's path, query and headers (openapi/openapi.yaml
 * "HTTP framing and the edge"; foundation-contract HTTP): caller-chosen ids in the path,
 * pagination limits and other query parameters, 404 for an unknown route and 405 with Allow for
 * a wrong method (both before auth), X-Request-Id (echoed when valid, replaced when not), and a
 * clean exit on SIGTERM. Request bodies are it_limits_bodies'. Helpers: limits_helpers.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "limits_helpers.h"

/* ---------------------------------------------------------------- path and query */

static void test_thread_id_pattern(void **state)
{
	(void)state;
	char id128[129], id129[130];
	memset(id128, 'a', 128);
	id128[0] = 'Z';
	id128[128] = '\0';
	memset(id129, 'b', 129);
	id129[129] = '\0';
	const char *bad[] = {"-bad", ".bad", "_bad", "a@b", "a%20b", "%C3%A9t%C3%A9", id129};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *path = it_mode_path(bad[i]);
		struct it_resp r;
		it_request(&srv, "GET", path, admin, NULL, NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "thread id: %s\n", bad[i]);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_FIELD(&r, "thread_id");
		it_resp_free(&r);
		it_request(&srv, "PUT", path, admin,
			   "{\"expected_revision\":0,\"mode\":\"disabled\"}", NULL, &r);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_FIELD(&r, "thread_id");
		it_resp_free(&r);
		free(path);
	}

	/* 128 characters, and every allowed punctuation, pass */
	char *uniq = it_unique("x");
	char good2[200];
	snprintf(good2, sizeof good2, "A.b:c_d-%s", uniq);
	memcpy(id128 + 1, uniq, strlen(uniq)); /* unique per run, still 128 chars */
	const char *good[] = {id128, good2};
	for (size_t i = 0; i < 2; i++) {
		char *path = it_mode_path(good[i]);
		struct it_resp r;
		it_request(&srv, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_str_is(r.json, "thread_id", good[i]), "thread_id not echoed");
		it_resp_free(&r);
		it_request(&srv, "PUT", path, admin,
			   "{\"expected_revision\":0,\"mode\":\"disabled\"}", NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_json_str_is(r.json, "thread_id", good[i]),
			 "thread_id not echoed by PUT");
		it_resp_free(&r);
		free(path);
	}
	free(uniq);
}

static void test_query_limits(void **state)
{
	(void)state;
	static const char *const ok[] = {"/v1/audit?limit=200", "/v1/audit?limit=1", "/v1/audit",
					 "/v1/tokens?limit=200", "/v1/tokens?limit=1"};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct it_resp r;
		it_request(&srv, "GET", ok[i], admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(json_is_array(json_object_get(r.json, "items")), "%s: no items[]", ok[i]);
		it_resp_free(&r);
	}
	static const struct {
		const char *path;
		const char *field;
	} bad[] = {
	    {"/v1/audit?limit=201", "limit"},
	    {"/v1/audit?limit=0", "limit"},
	    {"/v1/audit?limit=-1", "limit"},
	    {"/v1/audit?limit=abc", "limit"},
	    {"/v1/audit?limit=1.5", "limit"},
	    {"/v1/audit?limit=99999999999999999999", "limit"},
	    {"/v1/tokens?limit=201", "limit"},
	    {"/v1/tokens?limit=0", "limit"},
	    {"/v1/audit?resource_type=bogus", "resource_type"},
	    {"/v1/audit?after=not-a-cursor", "after"},
	    {"/v1/audit/verify?resource_type=bogus", "resource_type"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct it_resp r;
		it_request(&srv, "GET", bad[i].path, admin, NULL, NULL, &r);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_FIELD(&r, bad[i].field);
		it_resp_free(&r);
	}
}

static void test_unknown_route_404(void **state)
{
	(void)state;
	static const char *const paths[] = {
	    "/v1/nope", "/nope", "/v1/threads/t1/memory-mode/extra", "/v1/threads/t1", "/v1", "/"};
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		/* with and without a token: the route is matched first */
		for (int with_token = 0; with_token <= 1; with_token++) {
			struct it_resp r;
			it_request(&srv, "GET", paths[i], with_token ? admin : NULL, NULL, NULL,
				   &r);
			IT_PROBLEM(&r, 404, "not_found");
			it_resp_free(&r);
		}
	}
}

static void test_wrong_method_405(void **state)
{
	(void)state;
	static const struct {
		const char *method;
		const char *path;
		const char *allow;
	} cases[] = {
	    {"DELETE", "/v1/threads/t1/memory-mode", "GET, HEAD, PUT"},
	    {"POST", "/v1/threads/t1/memory-mode", "GET, HEAD, PUT"},
	    {"PATCH", "/v1/threads/t1/memory-mode", "GET, HEAD, PUT"},
	    {"PUT", "/v1/tokens", "GET, HEAD, POST"},
	    {"GET", "/v1/tokens/tok_00000000000000000000000000000000", "DELETE"},
	    {"POST", "/v1/audit", "GET, HEAD"},
	    {"POST", "/healthz", "GET, HEAD"},
	    {"DELETE", "/metrics", "GET, HEAD"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		for (int with_token = 0; with_token <= 1; with_token++) {
			struct it_resp r;
			it_request(&srv, cases[i].method, cases[i].path, with_token ? admin : NULL,
				   NULL, NULL, &r);
			IT_PROBLEM(&r, 405, "method_not_allowed");
			const char *allow = it_resp_header(&r, "Allow");
			IT_CHECK(allow && strcmp(allow, cases[i].allow) == 0,
				 "%s %s: Allow is \"%s\", expected \"%s\"", cases[i].method,
				 cases[i].path, allow ? allow : "(none)", cases[i].allow);
			it_resp_free(&r);
		}
	}
}

static bool is_generated_request_id(const char *s)
{
	if (!s || strlen(s) != 36 || strncmp(s, "req_", 4) != 0)
		return false;
	for (size_t i = 4; i < 36; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

static void test_request_id(void **state)
{
	(void)state;
	char long_ok[160], long_bad[160];
	memset(long_ok, 'r', 128);
	long_ok[128] = '\0';
	memset(long_bad, 'r', 129);
	long_bad[129] = '\0';
	/* the pattern ^[A-Za-z0-9._:-]{1,128}$ at its edges: one character, 128, punctuation */
	const char *valid_all[] = {"it.req:A_b-1", "x", long_ok};
	for (size_t i = 0; i < sizeof valid_all / sizeof *valid_all; i++) {
		char h[200];
		snprintf(h, sizeof h, "X-Request-Id: %s", valid_all[i]);
		const char *hdrs[] = {h, NULL};
		struct it_resp r;
		it_request(&srv, "GET", "/healthz", NULL, NULL, hdrs, &r);
		IT_STATUS(&r, 200);
		const char *got = it_resp_header(&r, "X-Request-Id");
		IT_CHECK(got && strcmp(got, valid_all[i]) == 0,
			 "X-Request-Id %s not echoed (got %s)", valid_all[i], got ? got : "none");
		it_resp_free(&r);
		/* and in a problem */
		it_request(&srv, "GET", "/v1/nope", NULL, NULL, hdrs, &r);
		IT_PROBLEM(&r, 404, "not_found");
		IT_CHECK(it_json_str_is(r.json, "request_id", valid_all[i]),
			 "request_id is not the caller's");
		it_resp_free(&r);
	}
	char hl[200];
	snprintf(hl, sizeof hl, "X-Request-Id: %s", long_bad);
	const char *invalid[] = {"X-Request-Id: bad id", "X-Request-Id: a@b", "X-Request-Id: a/b",
				 "X-Request-Id: \xc3\xa9", hl};
	for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
		const char *h = invalid[i];
		const char *hdrs[] = {h, NULL};
		struct it_resp r;
		it_request(&srv, "GET", "/healthz", NULL, NULL, hdrs, &r);
		IT_STATUS(&r, 200);
		const char *got = it_resp_header(&r, "X-Request-Id");
		IT_CHECK(is_generated_request_id(got),
			 "%s: answered X-Request-Id %s, expected a new "
			 "req_<32 hex>",
			 h, got ? got : "none");
		it_resp_free(&r);
	}
	/* none sent: a new one, different each time */
	struct it_resp a, b;
	it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &a);
	it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &b);
	IT_CHECK(
	    is_generated_request_id(it_resp_header(&a, "X-Request-Id")) &&
		is_generated_request_id(it_resp_header(&b, "X-Request-Id")) &&
		strcmp(it_resp_header(&a, "X-Request-Id"), it_resp_header(&b, "X-Request-Id")) != 0,
	    "generated request ids are missing, malformed or repeated");
	it_resp_free(&a);
	it_resp_free(&b);
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
	    cmocka_unit_test(test_thread_id_pattern),
	    cmocka_unit_test(test_query_limits),
	    cmocka_unit_test(test_unknown_route_404),
	    cmocka_unit_test(test_wrong_method_405),
	    cmocka_unit_test(test_request_id),
	    cmocka_unit_test(test_sigterm_exit_zero),
	};
	int rc = cmocka_run_group_tests_name("it_limits_routes", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
