/*
 * it_limits_bodies — every limit on a request body at its edge (openapi/openapi.yaml "Limits";
 * foundation-contract HTTP): body size (exactly RECALLGATE_MAX_BODY passes, one byte more →
 * 413, with Content-Length and chunked, and a server configured smaller), the order of the
 * checks, JSON depth (32 parsed, 33 → 400), unparseable JSON → 400, non-object → 422, unknown
 * fields / wrong types → 422 naming the field, Content-Type → 415. The path, the query and the
 * headers are it_limits_routes'. Helpers: limits_helpers.h.
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

/* the RECALLGATE_MAX_BODY of the server that group_setup starts (limits_helpers.c) */
#define MAX_BODY 1048576u

/* new: a fresh thread's memory-mode path */
static char *fresh_path(void)
{
	char *t = it_unique("lim");
	char *p = it_mode_path(t);
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

/* new: a PUT memory-mode body with n unknown fields ("u0" ... "u<n-1>") after the valid ones */
static char *unknown_fields_body(size_t n)
{
	size_t cap = 64 + n * 16;
	char *b = malloc(cap);
	assert_non_null(b);
	int k = snprintf(b, cap, "{\"expected_revision\":0,\"mode\":\"enabled\"");
	for (size_t i = 0; i < n; i++)
		k += snprintf(b + k, cap - (size_t)k, ",\"u%zu\":0", i);
	snprintf(b + k, cap - (size_t)k, "}");
	return b;
}

/* errors[] holds at most 20 entries in body order; the 21st makes errors_truncated true
 * (openapi/openapi.yaml "Problem"), so 90,000 unknown fields in ~1 MB get an answer under 64
 * KiB, also for a token without the route's scope (the body is checked first) */
static void test_errors_capped(void **state)
{
	(void)state;
	char *path = fresh_path();
	static const size_t counts[] = {20, 21, 90000};
	for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
		char *body = unknown_fields_body(counts[c]);
		for (int who = 0; who < 2; who++) {
			struct it_resp r;
			it_request(&srv, "PUT", path, who ? reader : admin, body, NULL, &r);
			IT_PROBLEM(&r, 422, "unknown_field");
			json_t *errors = json_object_get(r.json, "errors");
			IT_CHECK(json_array_size(errors) == 20, "%zu unknown fields: %zu errors[]",
				 counts[c], json_array_size(errors));
			IT_CHECK(it_json_str_is(json_array_get(errors, 0), "field", "u0") &&
					 it_json_str_is(json_array_get(errors, 19), "field", "u19"),
				 "errors[] is not in body order: %s", r.body);
			json_t *cut = json_object_get(r.json, "errors_truncated");
			if (counts[c] == 20)
				IT_CHECK(cut == NULL, "20 errors say errors_truncated: %s", r.body);
			else
				IT_CHECK(json_is_true(cut), "%zu errors without errors_truncated",
					 counts[c]);
			IT_CHECK(r.body_len < 65536, "%zu unknown fields (%zu bytes): a %zu-byte answer",
				 counts[c], strlen(body), r.body_len);
			it_resp_free(&r);
		}
		free(body);
	}
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
	    cmocka_unit_test(test_errors_capped),
	    cmocka_unit_test(test_field_validation),
	    cmocka_unit_test(test_content_type),
	};
	int rc = cmocka_run_group_tests_name("it_limits_bodies", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
