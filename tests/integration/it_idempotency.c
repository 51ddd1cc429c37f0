/*
 * it_idempotency — Idempotency-Key on writes (openapi/openapi.yaml "IdempotencyKey"): the first
 * keyed write runs and its answer is kept with it; the same request again gets that answer
 * (Idempotent-Replayed: true) and changes nothing; another request with the key is 409
 * operation_conflict, and so is one that comes while the first is in flight (with Retry-After:
 * 1); a refused write keeps nothing; keys are per token; the key's shape at its edge (128 bytes
 * pass, 129 are 422); POST, PATCH and DELETE replay too, and so does POST /mcp; a new token's
 * POST and a provider-waiting request refuse the key; a kept answer survives a kill -9 of the
 * server.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

static struct it_server srv;
static char *tenant, *admin, *admin2;

static int group_setup(void **state)
{
	(void)state;
	tenant = it_unique("idem");
	admin = it_token(tenant, "admin", "idem-1");
	admin2 = it_token(tenant, "admin", "idem-2");
	if (admin == NULL || admin2 == NULL)
		return -1;
	return it_server_start(&srv, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = it_server_stop(&srv) == 0 ? 0 : -1;
	free(tenant);
	free(admin);
	free(admin2);
	return rc;
}

/* A request with "Idempotency-Key: key" (NULL: none) on s. */
static void keyed(const struct it_server *s, const char *method, const char *path,
		  const char *token, const char *body, const char *key, struct it_resp *r)
{
	char h[300];
	snprintf(h, sizeof h, "Idempotency-Key: %s", key ? key : "");
	const char *headers[] = {h, NULL};
	it_request(s, method, path, token, body, key ? headers : NULL, r);
}

static bool replayed(const struct it_resp *r)
{
	const char *v = it_resp_header(r, "Idempotent-Replayed");
	return v != NULL && strcmp(v, "true") == 0;
}

/* the memory mode's revision at path */
static long long revision_of(const char *path)
{
	struct it_resp r;
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	long long rev = it_json_int(r.json, "revision", -1);
	it_resp_free(&r);
	return rev;
}

static const char first_write[] = "{\"expected_revision\":0,\"mode\":\"disabled\"}";

static void test_replay(void **state)
{
	(void)state;
	char *thread = it_unique("t");
	char *path = it_mode_path(thread);
	char *key = it_unique("key");
	struct it_resp a, b;
	keyed(&srv, "PUT", path, admin, first_write, key, &a);
	IT_STATUS(&a, 200);
	IT_CHECK(!replayed(&a), "a first write says it was replayed");
	for (int i = 0; i < 2; i++) {
		keyed(&srv, "PUT", path, admin, first_write, key, &b);
		IT_STATUS(&b, 200);
		IT_CHECK(replayed(&b), "the same keyed PUT again: no Idempotent-Replayed");
		IT_CHECK(strcmp(a.body, b.body) == 0, "replayed body differs:\n%s\n%s", a.body,
			 b.body);
		const char *ea = it_resp_header(&a, "ETag"), *eb = it_resp_header(&b, "ETag");
		IT_CHECK(ea && eb && strcmp(ea, eb) == 0, "replayed ETag differs");
		it_resp_free(&b);
	}
	IT_CHECK(revision_of(path) == 1, "a replay wrote again: revision %lld", revision_of(path));
	/* without the key the same body runs, and loses its compare-and-swap */
	it_request(&srv, "PUT", path, admin, first_write, NULL, &b);
	IT_PROBLEM(&b, 409, "stale_revision");
	it_resp_free(&b);
	it_resp_free(&a);
	free(key);
	free(path);
	free(thread);
}

static void test_conflicts(void **state)
{
	(void)state;
	char *t1 = it_unique("t"), *t2 = it_unique("t");
	char *p1 = it_mode_path(t1), *p2 = it_mode_path(t2);
	char *key = it_unique("key");
	struct it_resp r;
	keyed(&srv, "PUT", p1, admin, first_write, key, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	/* another body, another path: 409, and nothing written */
	keyed(&srv, "PUT", p1, admin, "{\"expected_revision\":1,\"mode\":\"enabled\"}", key, &r);
	IT_PROBLEM(&r, 409, "operation_conflict");
	IT_CHECK(it_resp_header(&r, "Retry-After") == NULL, "a conflict says Retry-After");
	it_resp_free(&r);
	keyed(&srv, "PUT", p2, admin, first_write, key, &r);
	IT_PROBLEM(&r, 409, "operation_conflict");
	it_resp_free(&r);
	IT_CHECK(revision_of(p1) == 1 && revision_of(p2) == 0, "a conflicting key wrote");
	/* keys are per token: the tenant's other token has its own */
	keyed(&srv, "PUT", p2, admin2, first_write, key, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!replayed(&r), "another token's key was replayed");
	it_resp_free(&r);
	free(key);
	free(p1);
	free(p2);
	free(t1);
	free(t2);
}

/* a refused write wrote nothing and keeps nothing: sent again (fixed), it runs */
static void test_refusal_not_kept(void **state)
{
	(void)state;
	char *t = it_unique("t");
	char *path = it_mode_path(t);
	char *key = it_unique("key");
	struct it_resp r;
	keyed(&srv, "PUT", path, admin, "{\"expected_revision\":5,\"mode\":\"disabled\"}", key, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	keyed(&srv, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\",\"x\":1}", key,
	      &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	keyed(&srv, "PUT", path, admin, first_write, key, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!replayed(&r), "a refused write's key was kept");
	it_resp_free(&r);
	keyed(&srv, "PUT", path, admin, first_write, key, &r);
	IT_CHECK(r.status == 200 && replayed(&r), "the successful write is kept: %ld", r.status);
	it_resp_free(&r);
	free(key);
	free(path);
	free(t);
}

/* 1..128 visible ASCII characters: 128 pass, 129 and a space are 422 naming the header, and
 * change nothing */
static void test_key_shape(void **state)
{
	(void)state;
	char key[131];
	memset(key, 'k', sizeof key);
	static const struct {
		size_t len;
		char bad;
		long status;
	} cases[] = {{128, 0, 200}, {129, 0, 422}, {8, ' ', 422}, {8, '\x7f', 422}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *t = it_unique("t");
		char *path = it_mode_path(t);
		char *unique = it_unique("s");
		memcpy(key, unique, strlen(unique));
		key[cases[i].len] = '\0';
		if (cases[i].bad)
			key[3] = cases[i].bad;
		struct it_resp r;
		keyed(&srv, "PUT", path, admin, first_write, key, &r);
		if (cases[i].status == 422) {
			IT_PROBLEM(&r, 422, "validation_failed");
			IT_FIELD(&r, "Idempotency-Key");
		} else {
			IT_STATUS(&r, 200);
		}
		it_resp_free(&r);
		IT_CHECK(revision_of(path) == (cases[i].status == 200 ? 1 : 0),
			 "a %zu-byte key: wrong revision", cases[i].len);
		memset(key, 'k', sizeof key);
		free(unique);
		free(path);
		free(t);
	}
}

/* POST creates once; DELETE answers its 204 again where it would now be 404 */
static void test_post_and_delete(void **state)
{
	(void)state;
	char *key = it_unique("key");
	char *content = it_unique("idempotent note");
	char body[256];
	snprintf(body, sizeof body, "{\"source_kind\":\"note\",\"content\":\"%s\"}", content);
	struct it_resp a, b;
	keyed(&srv, "POST", "/v1/memory/sources", admin, body, key, &a);
	IT_STATUS(&a, 201);
	keyed(&srv, "POST", "/v1/memory/sources", admin, body, key, &b);
	IT_CHECK(b.status == 201 && replayed(&b), "keyed POST again: %ld", b.status);
	IT_CHECK(it_json_str_is(b.json, "source_id", it_json_str(a.json, "source_id")),
		 "the replay names another source: %s / %s", a.body, b.body);
	const char *la = it_resp_header(&a, "Location"), *lb = it_resp_header(&b, "Location");
	IT_CHECK(la && lb && strcmp(la, lb) == 0, "replayed Location differs");
	it_resp_free(&b);
	it_resp_free(&a);

	char *victim = it_token(tenant, "audit:read", "idem-victim");
	struct it_resp list;
	it_request(&srv, "GET", "/v1/tokens", admin, NULL, NULL, &list);
	const char *victim_id = NULL;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(list.json, "items"), i, t)
		if (it_json_str_is(t, "name", "idem-victim"))
			victim_id = it_json_str(t, "token_id");
	IT_CHECK(victim_id != NULL, "no token to delete");
	char path[128];
	snprintf(path, sizeof path, "/v1/tokens/%s", victim_id);
	free(key);
	key = it_unique("key");
	keyed(&srv, "DELETE", path, admin, NULL, key, &a);
	IT_STATUS(&a, 204);
	keyed(&srv, "DELETE", path, admin, NULL, key, &b);
	IT_CHECK(b.status == 204 && replayed(&b), "keyed DELETE again: %ld", b.status);
	it_resp_free(&b);
	it_request(&srv, "DELETE", path, admin, NULL, NULL, &b);
	IT_PROBLEM(&b, 404, "not_found");
	it_resp_free(&b);
	it_resp_free(&a);
	it_resp_free(&list);
	free(victim);
	free(key);
	free(content);
}

/* PATCH replays like the others; a route that cannot keep its answer refuses the key (422
 * naming Idempotency-Key) and does nothing: one whose answer holds a secret (a new token would
 * sit in the database in clear), one that waits on a provider */
static void test_patch_and_refusals(void **state)
{
	(void)state;
	char *ext = it_unique("idem-ext");
	char body[512];
	snprintf(body, sizeof body,
		 "{\"extension_id\":\"%s\",\"protocol\":\"decision_context_advisory_provider_v0\","
		 "\"endpoint_url\":\"http://127.0.0.1:9/dc\",\"timeout_seconds\":5,"
		 "\"permissions\":[\"decision_context.read\"],\"enabled\":true}",
		 ext);
	struct it_resp a, b;
	it_request(&srv, "POST", "/v1/providers", admin, body, NULL, &a);
	IT_STATUS(&a, 201);
	it_resp_free(&a);
	char path[200];
	snprintf(path, sizeof path, "/v1/providers/%s", ext);
	char *key = it_unique("key");
	const char patch[] = "{\"expected_revision\":1,\"enabled\":false}";
	keyed(&srv, "PATCH", path, admin, patch, key, &a);
	IT_STATUS(&a, 200);
	keyed(&srv, "PATCH", path, admin, patch, key, &b);
	IT_CHECK(b.status == 200 && replayed(&b) && strcmp(a.body, b.body) == 0,
		 "keyed PATCH again: %ld %s", b.status, b.body);
	it_resp_free(&a);
	it_resp_free(&b);

	keyed(&srv, "POST", "/v1/tokens", admin, "{\"name\":\"idem-secret\",\"scopes\":[\"admin\"]}",
	      key, &a);
	IT_PROBLEM(&a, 422, "validation_failed");
	IT_FIELD(&a, "Idempotency-Key");
	it_resp_free(&a);
	it_request(&srv, "GET", "/v1/tokens", admin, NULL, NULL, &a);
	IT_CHECK(a.body && !strstr(a.body, "idem-secret"), "a refused keyed POST made a token");
	it_resp_free(&a);

	snprintf(body, sizeof body,
		 "{\"extension_id\":\"%s\",\"namespace\":\"n\",\"scope_ref\":\"s\",\"query\":\"q\","
		 "\"query_summary\":\"idem\",\"max_results\":1,\"timeout_seconds\":1,"
		 "\"observed_at\":\"2026-11-29T21:07:22.123Z\"}",
		 ext);
	keyed(&srv, "POST", "/v1/decision-context/retrieve", admin, body, key, &a);
	IT_PROBLEM(&a, 422, "validation_failed");
	IT_FIELD(&a, "Idempotency-Key");
	it_resp_free(&a);
	free(key);
	free(ext);
}

/* a tool call's write joins the POST /mcp's key: the call again is the kept answer */
static void test_mcp(void **state)
{
	(void)state;
	char *key = it_unique("key");
	char *content = it_unique("mcp note");
	char body[512];
	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"source_create\",\"arguments\":{\"source_kind\":\"note\",\"content\":\"%s\"}}}",
		 content);
	char h[300];
	snprintf(h, sizeof h, "Idempotency-Key: %s", key);
	const char *headers[] = {h, "MCP-Protocol-Version: 2025-11-25",
				 "Accept: application/json, text/event-stream", NULL};
	struct it_resp a, b;
	it_request(&srv, "POST", "/mcp", admin, body, headers, &a);
	IT_STATUS(&a, 200);
	json_t *res = json_object_get(a.json, "result");
	IT_CHECK(res && !json_is_true(json_object_get(res, "isError")), "source_create: %s",
		 a.body);
	it_request(&srv, "POST", "/mcp", admin, body, headers, &b);
	IT_CHECK(b.status == 200 && replayed(&b) && strcmp(a.body, b.body) == 0,
		 "the keyed tool call again: %ld %s", b.status, b.body);
	it_resp_free(&a);
	it_resp_free(&b);
	free(key);
	free(content);
}

/* while the first request with a key runs (its write waits on a lock), the same key is 409
 * with Retry-After: 1; once it is done, the key replays its answer */
static void test_in_flight(void **state)
{
	(void)state;
	char *t = it_unique("t");
	char *path = it_mode_path(t);
	char *key = it_unique("key");
	PGconn *locker = it_db_lock("audit_log", "EXCLUSIVE");
	pid_t first = fork();
	IT_CHECK(first >= 0, "fork");
	if (first == 0) {
		struct it_resp w;
		keyed(&srv, "PUT", path, admin, first_write, key, &w);
		_exit(w.status == 200 ? 0 : 1);
	}
	it_sleep_ms(500);
	struct it_resp r;
	keyed(&srv, "PUT", path, admin, first_write, key, &r);
	long status = r.status;
	const char *code = it_json_str(r.json, "code");
	bool conflict = status == 409 && code && strcmp(code, "operation_conflict") == 0;
	const char *ra = it_resp_header(&r, "Retry-After");
	bool retry_after = ra && strcmp(ra, "1") == 0;
	it_resp_free(&r);
	it_db_unlock(locker);
	int wst = it_wait_pid(first, 10000);
	IT_CHECK(conflict && retry_after, "the key in flight: %ld, Retry-After %s", status,
		 retry_after ? "1" : "not 1");
	IT_CHECK(wst == 0, "the first request did not succeed once the lock went (%d)", wst);
	keyed(&srv, "PUT", path, admin, first_write, key, &r);
	IT_CHECK(r.status == 200 && replayed(&r), "after it finished: %ld", r.status);
	it_resp_free(&r);
	free(key);
	free(path);
	free(t);
}

/* the answer is kept in the write's transaction: a server killed right after answering
 * replays it when it comes back */
static void test_survives_kill(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start");
	char *t = it_unique("t");
	char *path = it_mode_path(t);
	char *key = it_unique("key");
	struct it_resp a, b;
	keyed(&s, "PUT", path, admin, first_write, key, &a);
	IT_STATUS(&a, 200);
	IT_CHECK(it_server_signal(&s, SIGKILL) == 0, "kill -9");
	it_server_wait(&s, 10);
	IT_CHECK(it_server_start(&s, NULL) == 0, "the server did not start again");
	keyed(&s, "PUT", path, admin, first_write, key, &b);
	IT_CHECK(b.status == 200 && replayed(&b) && strcmp(a.body, b.body) == 0,
		 "after kill -9: %ld %s", b.status, b.body);
	it_resp_free(&a);
	it_resp_free(&b);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
	free(key);
	free(path);
	free(t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_replay),
	    cmocka_unit_test(test_conflicts),
	    cmocka_unit_test(test_refusal_not_kept),
	    cmocka_unit_test(test_key_shape),
	    cmocka_unit_test(test_post_and_delete),
	    cmocka_unit_test(test_patch_and_refusals),
	    cmocka_unit_test(test_mcp),
	    cmocka_unit_test(test_in_flight),
	    cmocka_unit_test(test_survives_kill),
	};
	int rc = cmocka_run_group_tests_name("it_idempotency", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
