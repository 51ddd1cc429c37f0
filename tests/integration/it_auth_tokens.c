/*
 * it_auth_tokens — the token API (openapi/openapi.yaml "Tokens", "Audit"; foundation-contract
 * Tokens): create, list without secrets, delete → 401 at once (on another instance within 1 s),
 * 404 for a second delete or another tenant's id, scope validation, list pagination, token
 * audit records without the secret. Who gets in with a token is it_auth_access'. Helpers:
 * auth_helpers.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "auth_helpers.h"

/* new: token_id of the token named `name` in the caller's tenant (via GET /v1/tokens) */
static char *token_id_by_name(const char *token, const char *name)
{
	struct it_resp r;
	it_request(&srv, "GET", "/v1/tokens?limit=200", token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	char *id = NULL;
	json_t *items = json_object_get(r.json, "items");
	size_t i;
	json_t *it;
	json_array_foreach (items, i, it) {
		const char *n = it_json_str(it, "name");
		if (n && strcmp(n, name) == 0 && it_json_str(it, "token_id"))
			id = strdup(it_json_str(it, "token_id"));
	}
	it_resp_free(&r);
	return id;
}

/* POST /v1/tokens {name, scopes}; returns the 201 answer in *r (caller frees) */
static void create_token(const char *token, const char *name, const char *scopes_json,
			 struct it_resp *r)
{
	char body[1024];
	snprintf(body, sizeof body, "{\"name\":\"%s\",\"scopes\":%s}", name, scopes_json);
	it_request(&srv, "POST", "/v1/tokens", token, body, NULL, r);
}

static void test_token_lifecycle(void **state)
{
	(void)state;
	struct it_resp r;
	char *name = it_unique("tok");
	char *thread = it_unique("thr");
	char *path = it_mode_path(thread);

	create_token(admin_a, name, "[\"memory:read\",\"memory:admin\"]", &r);
	IT_STATUS(&r, 201);
	const char *tok_s = it_json_str(r.json, "token");
	const char *id_s = it_json_str(r.json, "token_id");
	IT_CHECK(tok_s && strncmp(tok_s, "rg_", 3) == 0 && strlen(tok_s) == 46,
		 "token is not rg_ + 43 base64url characters");
	IT_CHECK(id_s && strncmp(id_s, "tok_", 4) == 0 && strlen(id_s) == 36,
		 "token_id is not tok_ + 32 hex");
	IT_CHECK(it_json_str_is(r.json, "name", name), "name not echoed");
	json_t *scopes = json_object_get(r.json, "scopes");
	IT_CHECK(json_is_array(scopes) && json_array_size(scopes) == 2, "scopes not echoed");
	IT_CHECK(it_is_timestamp_ms(it_json_str(r.json, "created_at")),
		 "created_at is not RFC 3339 UTC with milliseconds");
	char loc[128];
	snprintf(loc, sizeof loc, "/v1/tokens/%s", id_s);
	const char *location = it_resp_header(&r, "Location");
	IT_CHECK(location && strcmp(location, loc) == 0, "Location is %s, expected %s",
		 location ? location : "missing", loc);
	char *tok = strdup(tok_s);
	char *id = strdup(id_s);
	it_resp_free(&r);

	/* the new token works, with its scopes */
	it_request(&srv, "GET", path, tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, tok, "{\"expected_revision\":0,\"mode\":\"disabled\"}", NULL,
		   &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/tokens", tok, NULL, NULL, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);

	/* listed, without any secret */
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(strstr(r.body, tok) == NULL, "GET /v1/tokens shows the new token's secret");
	IT_CHECK(strstr(r.body, admin_a) == NULL, "GET /v1/tokens shows the caller's secret");
	IT_CHECK(strstr(r.body, reader_a) == NULL, "GET /v1/tokens shows a CLI token's secret");
	IT_CHECK(json_object_get(r.json, "next_cursor") != NULL, "no next_cursor member");
	bool listed = false;
	size_t i;
	json_t *item;
	json_array_foreach (json_object_get(r.json, "items"), i, item) {
		IT_CHECK(json_object_get(item, "token") == NULL,
			 "a listed token has a `token` member");
		const char *tid = it_json_str(item, "token_id");
		if (tid && strcmp(tid, id) == 0) {
			listed = true;
			IT_CHECK(it_json_str_is(item, "name", name), "listed name differs");
			IT_CHECK(json_is_array(json_object_get(item, "scopes")),
				 "listed without scopes");
			IT_CHECK(it_is_timestamp_ms(it_json_str(item, "created_at")),
				 "listed created_at malformed");
		}
	}
	IT_CHECK(listed, "the new token %s is not listed", id);
	it_resp_free(&r);

	/* warm any verification cache, then delete: the token stops working at once */
	it_request(&srv, "GET", path, tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	char del[128];
	snprintf(del, sizeof del, "/v1/tokens/%s", id);
	it_request(&srv, "DELETE", del, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	IT_CHECK(r.body_len == 0, "204 with a body");
	it_resp_free(&r);
	it_request(&srv, "GET", path, tok, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, tok, "{\"expected_revision\":1,\"mode\":\"enabled\"}", NULL,
		   &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);

	/* deleting again → 404; no longer listed */
	it_request(&srv, "DELETE", del, admin_a, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(strstr(r.body, id) == NULL, "a deleted token is still listed");
	it_resp_free(&r);
	/* an id that never existed → 404 */
	it_request(&srv, "DELETE", "/v1/tokens/tok_00000000000000000000000000000000", admin_a, NULL,
		   NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	free(tok);
	free(id);
	free(name);
	free(path);
	free(thread);
}

static void test_other_tenant_token_id(void **state)
{
	(void)state;
	struct it_resp r;
	char *name = it_unique("tok");
	create_token(admin_a, name, "[\"memory:read\"]", &r);
	IT_STATUS(&r, 201);
	char *tok = strdup(it_json_str(r.json, "token"));
	char *id = strdup(it_json_str(r.json, "token_id"));
	it_resp_free(&r);

	char del[128];
	snprintf(del, sizeof del, "/v1/tokens/%s", id);
	it_request(&srv, "DELETE", del, admin_b, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	/* B does not see A's tokens either */
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_b, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(strstr(r.body, id) == NULL, "tenant B lists tenant A's token");
	it_resp_free(&r);
	/* and A's token still works */
	it_request(&srv, "GET", "/v1/threads/t1/memory-mode", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	/* its own tenant's admin can delete it */
	it_request(&srv, "DELETE", del, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);
	free(tok);
	free(id);
	free(name);
}

static void test_scope_validation(void **state)
{
	(void)state;
	struct {
		const char *body;
		const char *code;
		const char *field; /* one of these must be named */
		const char *field2;
	} cases[] = {
	    {"{\"name\":\"v1\",\"scopes\":[\"memory:read\",\"telepathy\"]}", "validation_failed",
	     "scopes[1]", "scopes"},
	    {"{\"name\":\"v2\",\"scopes\":[]}", "validation_failed", "scopes", NULL},
	    {"{\"name\":\"v3\",\"scopes\":[\"memory:read\",\"memory:read\"]}", "validation_failed",
	     "scopes[1]", "scopes"},
	    {"{\"name\":\"v4\",\"scopes\":\"admin\"}", "validation_failed", "scopes", NULL},
	    {"{\"name\":\"v5\",\"scopes\":[1]}", "validation_failed", "scopes[0]", "scopes"},
	    {"{\"name\":\"v6\"}", "validation_failed", "scopes", NULL},
	    {"{\"name\":\"bad name!\",\"scopes\":[\"memory:read\"]}", "validation_failed", "name",
	     NULL},
	    {"{\"name\":\"v8\",\"scopes\":[\"memory:read\"],\"ttl\":5}", "unknown_field", "ttl",
	     NULL},
	    {"{\"name\":\"v9\",\"scopes\":[\"Memory:Read\"]}", "validation_failed", "scopes[0]",
	     "scopes"},
	};
	struct it_resp before;
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_a, NULL, NULL, &before);
	IT_STATUS(&before, 200);
	size_t count_before = json_array_size(json_object_get(before.json, "items"));
	it_resp_free(&before);

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct it_resp r;
		it_request(&srv, "POST", "/v1/tokens", admin_a, cases[i].body, NULL, &r);
		if (r.status != 422)
			fprintf(stderr, "case %zu: %s\n", i, cases[i].body);
		IT_PROBLEM(&r, 422, cases[i].code);
		IT_CHECK(it_problem_has_field(&r, cases[i].field) ||
			     (cases[i].field2 && it_problem_has_field(&r, cases[i].field2)),
			 "case %zu (%s): errors[] does not name %s: %s", i, cases[i].body,
			 cases[i].field, r.body);
		it_resp_free(&r);
	}
	struct it_resp after;
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_a, NULL, NULL, &after);
	IT_STATUS(&after, 200);
	IT_CHECK(json_array_size(json_object_get(after.json, "items")) == count_before,
		 "a rejected POST /v1/tokens created a token");
	it_resp_free(&after);

	/* every scope of the list is accepted, admin included */
	struct it_resp r;
	char *name = it_unique("allscopes");
	create_token(
	    admin_a, name,
	    "[\"admin\",\"memory:read\",\"memory:write\",\"memory:admin\",\"assent:grant\","
	    "\"preferences:read\",\"preferences:write\",\"providers:admin\","
	    "\"decision_context.read\",\"semantic_preferences:use\",\"envelopes:read\","
	    "\"envelopes:write\",\"audit:read\",\"events:read\"]",
	    &r);
	IT_STATUS(&r, 201);
	IT_CHECK(json_array_size(json_object_get(r.json, "scopes")) == 14, "scopes not echoed");
	it_resp_free(&r);
	free(name);
}

static void test_token_audit(void **state)
{
	(void)state;
	struct it_resp r;
	char *admin_id = token_id_by_name(admin_a, "it-admin");
	IT_CHECK(admin_id != NULL, "the CLI admin token (name it-admin) is not listed");
	char *name = it_unique("audited");
	create_token(admin_a, name, "[\"memory:read\"]", &r);
	IT_STATUS(&r, 201);
	char *tok = strdup(it_json_str(r.json, "token"));
	char *id = strdup(it_json_str(r.json, "token_id"));
	it_resp_free(&r);
	char del[128];
	snprintf(del, sizeof del, "/v1/tokens/%s", id);
	it_request(&srv, "DELETE", del, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);

	char q[512];
	snprintf(q, sizeof q, "/v1/audit?resource_type=token&resource_id=%s", id);
	it_request(&srv, "GET", q, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(strstr(r.body, tok) == NULL, "the audit log contains the token secret");
	json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 2, "expected 2 audit records for the token, got %zu",
		 json_array_size(items));
	json_t *created = json_array_get(items, 0), *deleted = json_array_get(items, 1);
	IT_CHECK(it_json_str_is(created, "action", "token.created"),
		 "first record is not token.created");
	IT_CHECK(it_json_str_is(deleted, "action", "token.deleted"),
		 "second record is not token.deleted");
	for (size_t i = 0; i < 2; i++) {
		json_t *rec = json_array_get(items, i);
		IT_CHECK(it_json_str_is(rec, "resource_type", "token"),
			 "resource_type is not token");
		IT_CHECK(it_json_str_is(rec, "resource_id", id), "resource_id is not the token id");
		IT_CHECK(it_json_str_is(rec, "actor_token_id", admin_id),
			 "actor_token_id is not the caller's token id %s", admin_id);
		IT_CHECK(it_is_sha256_ref(it_json_str(rec, "hash")), "hash is not sha256:<hex>");
		IT_CHECK(it_is_timestamp_ms(it_json_str(rec, "at")), "at is malformed");
		IT_CHECK(json_is_integer(json_object_get(rec, "seq")), "seq is not an integer");
	}
	IT_CHECK(it_json_has_null(created, "prev_hash"), "first record's prev_hash is not null");
	IT_CHECK(it_json_str_is(deleted, "prev_hash", it_json_str(created, "hash")),
		 "second record's prev_hash is not the first record's hash");
	IT_CHECK(it_json_has_null(created, "revision_before") &&
		     it_json_int(created, "revision_after", -1) == 1,
		 "token.created is not null → 1");
	IT_CHECK(it_json_int(deleted, "revision_before", -1) == 1 &&
		     it_json_has_null(deleted, "revision_after"),
		 "token.deleted is not 1 → null");
	it_resp_free(&r);

	snprintf(q, sizeof q, "/v1/audit/verify?resource_type=token&resource_id=%s", id);
	it_request(&srv, "GET", q, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == 2 &&
		     it_json_has_null(r.json, "first_bad_seq"),
		 "verify of the token chain is not {ok: true, checked: 2, first_bad_seq: null}: %s",
		 r.body);
	it_resp_free(&r);

	/* nor does the whole tenant's audit log hold any of our secrets */
	it_request(&srv, "GET", "/v1/audit?limit=200", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(strstr(r.body, tok) == NULL && strstr(r.body, admin_a) == NULL &&
		     strstr(r.body, reader_a) == NULL,
		 "the audit log contains a token secret");
	it_resp_free(&r);
	free(tok);
	free(id);
	free(name);
	free(admin_id);
}

static void test_token_list_pagination(void **state)
{
	(void)state;
	/* three more tokens, then walk the list one per page: every token exactly once, oldest
	 * first, ending with next_cursor null */
	for (int i = 0; i < 3; i++) {
		struct it_resp r;
		char *name = it_unique("page");
		create_token(admin_a, name, "[\"memory:read\"]", &r);
		IT_STATUS(&r, 201);
		it_resp_free(&r);
		free(name);
	}
	struct it_resp all;
	it_request(&srv, "GET", "/v1/tokens?limit=200", admin_a, NULL, NULL, &all);
	IT_STATUS(&all, 200);
	json_t *items = json_object_get(all.json, "items");
	size_t total = json_array_size(items);
	IT_CHECK(total >= 7, "expected at least 7 tokens, got %zu", total);
	char *cursor = NULL;
	size_t walked = 0;
	for (size_t page = 0; page <= total + 1; page++) {
		char path[512];
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(path, sizeof path, "/v1/tokens?limit=1&after=%s", esc);
			free(esc);
		} else {
			snprintf(path, sizeof path, "/v1/tokens?limit=1");
		}
		struct it_resp r;
		it_request(&srv, "GET", path, admin_a, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		json_t *page_items = json_object_get(r.json, "items");
		json_t *next = json_object_get(r.json, "next_cursor");
		IT_CHECK(json_array_size(page_items) <= 1, "page larger than limit=1");
		if (json_array_size(page_items) == 1) {
			IT_CHECK(walked < total, "more tokens paged than listed");
			IT_CHECK(
			    it_json_str_is(json_array_get(page_items, 0), "token_id",
					   it_json_str(json_array_get(items, walked), "token_id")),
			    "page %zu is not the token at position %zu", page, walked);
			walked++;
		} else {
			IT_CHECK(json_is_null(next), "an empty page with a next_cursor");
		}
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
	}
	IT_CHECK(cursor == NULL, "pagination did not end");
	IT_CHECK(walked == total, "paged %zu tokens of %zu", walked, total);
	it_resp_free(&all);
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_revocation_reaches_other_instances(void **state)
{
	(void)state;
	/* a second instance on the same database: a token deleted through the first stops
	 * working on the second within 1 s (its verification cache lives at most that long) */
	struct it_server other;
	IT_CHECK(it_server_start(&other, NULL) == 0, "second instance did not start");
	struct it_resp r;
	char *name = it_unique("tok");
	create_token(admin_a, name, "[\"memory:read\"]", &r);
	IT_STATUS(&r, 201);
	char *tok = strdup(it_json_str(r.json, "token"));
	char *id = strdup(it_json_str(r.json, "token_id"));
	it_resp_free(&r);
	/* warm both instances' caches */
	for (int i = 0; i < 3; i++) {
		it_request(&other, "GET", "/v1/threads/t1/memory-mode", tok, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		it_request(&srv, "GET", "/v1/threads/t1/memory-mode", tok, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	char del[128];
	snprintf(del, sizeof del, "/v1/tokens/%s", id);
	it_request(&srv, "DELETE", del, admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);
	double t0 = mono_s();
	long status = 200;
	double waited = 0;
	while (status != 401 && waited < 3.0) {
		it_request(&other, "GET", "/v1/threads/t1/memory-mode", tok, NULL, NULL, &r);
		status = r.status;
		it_resp_free(&r);
		waited = mono_s() - t0;
		if (status != 401) {
			struct timespec ts = {0, 20 * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	IT_CHECK(status == 401,
		 "the deleted token still works on another instance after %.2f s "
		 "(last status %ld)",
		 waited, status);
	IT_CHECK(waited <= 1.25, "the deleted token worked on another instance for %.2f s (> 1 s)",
		 waited);
	int st = it_server_stop(&other);
	IT_CHECK(st == 0, "second instance exit status %d", st);
	free(tok);
	free(id);
	free(name);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_token_lifecycle),
	    cmocka_unit_test(test_other_tenant_token_id),
	    cmocka_unit_test(test_scope_validation),
	    cmocka_unit_test(test_token_audit),
	    cmocka_unit_test(test_token_list_pagination),
	    cmocka_unit_test(test_revocation_reaches_other_instances),
	};
	int rc = cmocka_run_group_tests_name("it_auth_tokens", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
