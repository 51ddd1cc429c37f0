/*
 * it_limits — every request limit at its edge (API.md §0; foundation-contract HTTP):
 * body size (exactly RECALLGATE_MAX_BODY passes, one byte more → 413, with Content-Length
 * and chunked), JSON depth (32 parsed, 33 → 400), unparseable JSON → 400, non-object → 422,
 * unknown fields / wrong types → 422 naming the field, Content-Type → 415, caller-chosen ids
 * in the path, pagination limits, 404/405, X-Request-Id, the problem+json shape.
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

#define MAX_BODY 1048576u

static struct it_server srv;
static char *tenant;
static char *admin;
static char *reader;

static char *mode_path(const char *thread)
{
	char buf[512];
	snprintf(buf, sizeof buf, "/v1/threads/%s/memory-mode", thread);
	return strdup(buf);
}

/* new: a fresh thread's memory-mode path */
static char *fresh_path(void)
{
	char *t = it_unique("lim");
	char *p = mode_path(t);
	free(t);
	return p;
}

/* new: a valid PUT memory-mode body padded with spaces inside the object to exactly n bytes */
static char *padded_body(size_t n, long long expected)
{
	char head[128];
	int h = snprintf(head, sizeof head, "{\"expected_revision\":%lld,\"mode\":\"disabled\"",
			 expected);
	char *b = malloc(n + 1);
	assert_non_null(b);
	assert_true((size_t)h + 1 <= n);
	memcpy(b, head, (size_t)h);
	memset(b + h, ' ', n - (size_t)h - 1);
	b[n - 1] = '}';
	b[n] = '\0';
	return b;
}

/* new: {"expected_revision":0,"mode":"enabled","deep":...} whose nesting depth (top-level
 * object = 1) is exactly `depth`, nested with objects or with arrays */
static char *nested_body(int depth, bool arrays)
{
	const char *head = "{\"expected_revision\":0,\"mode\":\"enabled\",\"deep\":";
	size_t cap = strlen(head) + (size_t)depth * 8 + 16;
	char *b = malloc(cap);
	assert_non_null(b);
	strcpy(b, head);
	int k = depth - 1; /* containers below the top-level object */
	for (int i = 0; i < k - 1; i++)
		strcat(b, arrays ? "[" : "{\"a\":");
	strcat(b, arrays ? "[]" : "{}");
	for (int i = 0; i < k - 1; i++)
		strcat(b, arrays ? "]" : "}");
	strcat(b, "}");
	return b;
}

static void put_raw(const struct it_server *s, const char *path, const char *token,
		    const char *body, size_t len, bool chunked, const char *const *headers,
		    struct it_resp *r)
{
	struct it_req rq = {
	    .method = "PUT",
	    .path = path,
	    .token = token,
	    .body = body,
	    .body_len = len,
	    .headers = headers,
	    .chunked = chunked,
	};
	it_send(s, &rq, r);
}

static void expect_revision(const char *path, long long rev)
{
	struct it_resp r;
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == rev, "%s: revision is %lld, expected %lld",
		 path, it_json_int(r.json, "revision", -1), rev);
	it_resp_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_MAX_BODY=1048576", NULL};
	if (it_server_start(&srv, env) != 0)
		return -1;
	tenant = it_unique("limits");
	admin = it_token(tenant, "admin", "it-admin");
	reader = it_token(tenant, "memory:read", "it-reader");
	return admin && reader ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant);
	free(admin);
	free(reader);
	return rc;
}

/* ---------------------------------------------------------------- body size */

static void test_body_exactly_max_passes(void **state)
{
	(void)state;
	char *path = fresh_path();
	char *body = padded_body(MAX_BODY, 0);
	struct it_resp r;
	put_raw(&srv, path, admin, body, MAX_BODY, false, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1");
	it_resp_free(&r);
	free(body);
	free(path);
}

static void test_body_one_over_max_413(void **state)
{
	(void)state;
	char *path = fresh_path();
	char *body = padded_body(MAX_BODY + 1, 0);
	const char *expect[] = {"Expect: 100-continue", NULL};
	struct it_resp r;
	put_raw(&srv, path, admin, body, MAX_BODY + 1, false, expect, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	expect_revision(path, 0);
	free(body);
	/* the refusal leaves the server answering the next request normally */
	body = padded_body(MAX_BODY, 0);
	put_raw(&srv, path, admin, body, MAX_BODY, false, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(body);
	free(path);
}

static void test_order_of_checks(void **state)
{
	(void)state;
	/* foundation-contract: route (404/405) → 401 → body (415/413/400) → fields (422) →
	 * scope (403) → handler */
	char *path = fresh_path();
	const char *text_plain[] = {"Content-Type: text/plain", NULL};
	struct it_resp r;
	it_request(&srv, "PUT", path, NULL, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
		   text_plain, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, NULL, "{\"expected_revision\":", NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, NULL, "{\"expected_revision\":0,\"colour\":1}", NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	/* a token without the scope: the body is judged first */
	it_request(&srv, "PUT", path, reader, "{\"expected_revision\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, reader, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
		   text_plain, &r);
	IT_PROBLEM(&r, 415, "unsupported_media_type");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, reader, "{\"expected_revision\":0,\"mode\":\"maybe\"}", NULL,
		   &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, reader, "{\"expected_revision\":5,\"mode\":\"disabled\"}",
		   NULL, &r);
	IT_PROBLEM(&r, 403, "forbidden"); /* scope before the handler's 409 */
	it_resp_free(&r);

	/* an oversized body without a token: 401, not 413 */
	char *body = padded_body(MAX_BODY + 1, 0);
	const char *expect[] = {"Expect: 100-continue", NULL};
	put_raw(&srv, path, NULL, body, MAX_BODY + 1, false, expect, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	expect_revision(path, 0);
	free(body);
	free(path);
}

static void test_chunked_bodies(void **state)
{
	(void)state;
	const char *no_expect[] = {"Expect:", NULL};
	struct it_resp r;

	/* a small chunked body is an ordinary request */
	char *path = fresh_path();
	const char *small = "{\"expected_revision\":0,\"mode\":\"disabled\"}";
	put_raw(&srv, path, admin, small, strlen(small), true, no_expect, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(path);

	/* exactly the limit, chunked: passes */
	path = fresh_path();
	char *body = padded_body(MAX_BODY, 0);
	put_raw(&srv, path, admin, body, MAX_BODY, true, no_expect, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(body);
	free(path);

	/* one byte over, chunked (no Content-Length): drained, then 413; nothing written */
	path = fresh_path();
	body = padded_body(MAX_BODY + 1, 0);
	put_raw(&srv, path, admin, body, MAX_BODY + 1, true, no_expect, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	expect_revision(path, 0);
	free(body);

	/* far over (4 MiB), chunked */
	size_t big = 4u * MAX_BODY;
	body = padded_body(big, 0);
	put_raw(&srv, path, admin, body, big, true, no_expect, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	expect_revision(path, 0);
	free(body);
	free(path);
}

static void test_configured_max_body(void **state)
{
	(void)state;
	/* the limit is configurable: a second server with RECALLGATE_MAX_BODY=1024 (its minimum) */
	struct it_server small;
	const char *env[] = {"RECALLGATE_MAX_BODY=1024", NULL};
	IT_CHECK(it_server_start(&small, env) == 0, "server with RECALLGATE_MAX_BODY=1024 failed");
	char *path = fresh_path();
	struct it_resp r;
	char *body = padded_body(1025, 0);
	const char *expect[] = {"Expect: 100-continue", NULL};
	put_raw(&small, path, admin, body, 1025, false, expect, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	const char *no_expect[] = {"Expect:", NULL};
	put_raw(&small, path, admin, body, 1025, true, no_expect, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	free(body);
	body = padded_body(1024, 0);
	put_raw(&small, path, admin, body, 1024, false, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(body);
	free(path);
	int st = it_server_stop(&small);
	IT_CHECK(st == 0, "second server exit status %d", st);
}

/* ---------------------------------------------------------------- JSON */

static void test_depth_edges(void **state)
{
	(void)state;
	char *path = fresh_path();
	for (int arrays = 0; arrays <= 1; arrays++) {
		struct it_resp r;
		char *b32 = nested_body(32, arrays);
		it_request(&srv, "PUT", path, admin, b32, NULL, &r);
		/* depth 32 parses; the extra member is then an unknown field */
		IT_PROBLEM(&r, 422, "unknown_field");
		json_t *e0 = json_array_get(json_object_get(r.json, "errors"), 0);
		IT_CHECK(it_json_str_is(e0, "field", "deep"), "errors[0].field is not \"deep\": %s",
			 r.body);
		it_resp_free(&r);
		free(b32);

		char *b33 = nested_body(33, arrays);
		it_request(&srv, "PUT", path, admin, b33, NULL, &r);
		IT_PROBLEM(&r, 400, "invalid_json");
		it_resp_free(&r);
		free(b33);

		char *b200 = nested_body(200, arrays);
		it_request(&srv, "PUT", path, admin, b200, NULL, &r);
		IT_PROBLEM(&r, 400, "invalid_json");
		it_resp_free(&r);
		free(b200);
	}
	expect_revision(path, 0);
	free(path);
}

static void test_unparseable_bodies(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		const char *body;
	} cases[] = {
	    {"unterminated object", "{\"expected_revision\":0,\"mode\":\"enabled\""},
	    {"missing value", "{\"expected_revision\":,\"mode\":\"enabled\"}"},
	    {"single quotes", "{'expected_revision':0,'mode':'enabled'}"},
	    {"trailing comma", "{\"expected_revision\":0,\"mode\":\"enabled\",}"},
	    {"trailing garbage", "{\"expected_revision\":0,\"mode\":\"enabled\"} x"},
	    {"two documents", "{\"expected_revision\":0,\"mode\":\"enabled\"} {}"},
	    {"leading zero", "{\"expected_revision\":00,\"mode\":\"enabled\"}"},
	    {"NaN", "{\"expected_revision\":NaN,\"mode\":\"enabled\"}"},
	    {"unquoted key", "{expected_revision:0,\"mode\":\"enabled\"}"},
	    {"bad escape", "{\"expected_revision\":0,\"mode\":\"en\\qabled\"}"},
	    {"raw control char", "{\"expected_revision\":0,\"mode\":\"en\tabled\"}"},
	    {"duplicate key",
	     "{\"expected_revision\":0,\"mode\":\"enabled\",\"mode\":\"disabled\"}"},
	    {"duplicate key (same value)",
	     "{\"expected_revision\":0,\"expected_revision\":0,\"mode\":\"enabled\"}"},
	    {"duplicate key nested", "{\"expected_revision\":0,\"mode\":\"enabled\",\"x\":{\"a\":1,"
				     "\"a\":2}}"},
	    {"invalid UTF-8 byte 0xff", "{\"expected_revision\":0,\"mode\":\"en\xff"
					"abled\"}"},
	    {"overlong UTF-8", "{\"expected_revision\":0,\"mode\":\"\xc0\xaf\"}"},
	    {"truncated UTF-8", "{\"expected_revision\":0,\"mode\":\"\xe2\x82\"}"},
	    {"UTF-8 encoded surrogate", "{\"expected_revision\":0,\"mode\":\"\xed\xa0\x80\"}"},
	    {"invalid UTF-8 in a key", "{\"expected_revision\":0,\"mode\":\"enabled\",\"\xfe\":1}"},
	    {"escaped lone surrogate", "{\"expected_revision\":0,\"mode\":\"\\ud800\"}"},
	    {"NUL escape in a value", "{\"expected_revision\":0,\"mode\":\"en\\u0000abled\"}"},
	    {"NUL escape in a key",
	     "{\"expected_revision\":0,\"mode\":\"enabled\",\"a\\u0000\":1}"},
	    {"empty body", ""},
	    {"whitespace only", "  \n "},
	};
	char *path = fresh_path();
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct it_resp r;
		it_request(&srv, "PUT", path, admin, cases[i].body, NULL, &r);
		if (r.status != 400)
			fprintf(stderr, "case: %s\n", cases[i].what);
		IT_PROBLEM(&r, 400, "invalid_json");
		it_resp_free(&r);
	}
	expect_revision(path, 0);
	free(path);
}

static void test_non_object_bodies(void **state)
{
	(void)state;
	static const char *const bodies[] = {
	    "[]",   "[{\"expected_revision\":0,\"mode\":\"enabled\"}]", "42", "\"enabled\"", "null",
	    "true",
	};
	char *path = fresh_path();
	for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
		struct it_resp r;
		it_request(&srv, "PUT", path, admin, bodies[i], NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "body: %s\n", bodies[i]);
		IT_PROBLEM(&r, 422, "validation_failed");
		it_resp_free(&r);
	}
	expect_revision(path, 0);
	free(path);
}

static void test_unknown_fields(void **state)
{
	(void)state;
	char *path = fresh_path();
	struct it_resp r;
	it_request(&srv, "PUT", path, admin,
		   "{\"expected_revision\":0,\"mode\":\"enabled\",\"colour\":\"red\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	json_t *e0 = json_array_get(json_object_get(r.json, "errors"), 0);
	IT_CHECK(it_json_str_is(e0, "field", "colour"), "errors[0].field is not \"colour\": %s",
		 r.body);
	IT_CHECK(it_json_str(e0, "reason") != NULL, "errors[0] has no reason");
	it_resp_free(&r);

	/* each unknown field is named */
	it_request(&srv, "PUT", path, admin,
		   "{\"expected_revision\":0,\"colour\":1,\"mode\":\"enabled\",\"size\":2}", NULL,
		   &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	IT_FIELD(&r, "colour");
	IT_FIELD(&r, "size");
	it_resp_free(&r);

	/* body validation comes before the scope check (memory:read token, no memory:admin) */
	it_request(&srv, "PUT", path, reader,
		   "{\"expected_revision\":0,\"mode\":\"enabled\",\"colour\":\"red\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	expect_revision(path, 0);
	free(path);
}

static void test_field_validation(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		const char *field;
		const char *field2; /* also required when not NULL */
	} cases[] = {
	    {"{\"expected_revision\":0,\"mode\":1}", "mode", NULL},
	    {"{\"expected_revision\":0,\"mode\":\"maybe\"}", "mode", NULL},
	    {"{\"expected_revision\":0,\"mode\":\"ENABLED\"}", "mode", NULL},
	    {"{\"expected_revision\":0,\"mode\":null}", "mode", NULL},
	    {"{\"expected_revision\":0,\"mode\":[\"enabled\"]}", "mode", NULL},
	    {"{\"expected_revision\":0}", "mode", NULL},
	    {"{\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{\"expected_revision\":\"0\",\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{\"expected_revision\":-1,\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{\"expected_revision\":1.5,\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{\"expected_revision\":true,\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{\"expected_revision\":null,\"mode\":\"disabled\"}", "expected_revision", NULL},
	    {"{}", "expected_revision", "mode"},
	    {"{\"expected_revision\":-1,\"mode\":7}", "expected_revision", "mode"},
	};
	char *path = fresh_path();
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct it_resp r;
		it_request(&srv, "PUT", path, admin, cases[i].body, NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "body: %s\n", cases[i].body);
		IT_PROBLEM(&r, 422, "validation_failed");
		IT_CHECK(json_array_size(json_object_get(r.json, "errors")) > 0, "%s: no errors[]",
			 cases[i].body);
		IT_CHECK(it_problem_has_field(&r, cases[i].field),
			 "%s: errors[] does not name %s: %s", cases[i].body, cases[i].field,
			 r.body);
		if (cases[i].field2)
			IT_CHECK(it_problem_has_field(&r, cases[i].field2),
				 "%s: errors[] does not name %s: %s", cases[i].body,
				 cases[i].field2, r.body);
		it_resp_free(&r);
	}
	expect_revision(path, 0);
	free(path);
}

static void test_content_type(void **state)
{
	(void)state;
	char *path = fresh_path();
	const char *body = "{\"expected_revision\":0,\"mode\":\"disabled\"}";
	static const char *const refused[] = {
	    "Content-Type: text/plain", "Content-Type: application/x-www-form-urlencoded",
	    "Content-Type: application/jsonx", "Content-Type:", /* none at all */
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		const char *h[] = {refused[i], NULL};
		struct it_resp r;
		it_request(&srv, "PUT", path, admin, body, h, &r);
		if (r.status != 415)
			fprintf(stderr, "header: %s\n", refused[i]);
		IT_PROBLEM(&r, 415, "unsupported_media_type");
		it_resp_free(&r);
	}
	expect_revision(path, 0);
	const char *ok[] = {"Content-Type: application/json; charset=utf-8", NULL};
	struct it_resp r;
	it_request(&srv, "PUT", path, admin, body, ok, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(path);
}

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
		char *path = mode_path(bad[i]);
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
		char *path = mode_path(good[i]);
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
	    cmocka_unit_test(test_body_exactly_max_passes),
	    cmocka_unit_test(test_body_one_over_max_413),
	    cmocka_unit_test(test_order_of_checks),
	    cmocka_unit_test(test_chunked_bodies),
	    cmocka_unit_test(test_configured_max_body),
	    cmocka_unit_test(test_depth_edges),
	    cmocka_unit_test(test_unparseable_bodies),
	    cmocka_unit_test(test_non_object_bodies),
	    cmocka_unit_test(test_unknown_fields),
	    cmocka_unit_test(test_field_validation),
	    cmocka_unit_test(test_content_type),
	    cmocka_unit_test(test_thread_id_pattern),
	    cmocka_unit_test(test_query_limits),
	    cmocka_unit_test(test_unknown_route_404),
	    cmocka_unit_test(test_wrong_method_405),
	    cmocka_unit_test(test_request_id),
	    cmocka_unit_test(test_sigterm_exit_zero),
	};
	int rc = cmocka_run_group_tests_name("it_limits", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
