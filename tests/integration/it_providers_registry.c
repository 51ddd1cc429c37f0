/*
 * it_providers_registry — the provider registry's lifecycle end to end (openapi/openapi.yaml
 * "Conventions", "Providers", "Audit"; docs/providers-contract.md "Registry"), against the fake
 * provider (fake_provider.c): register / get / list (order, pagination) / delete, with
 * revisions, ETag and Location; 409 already_exists changes nothing; tenant isolation (404) and
 * scopes.
 *
 * Validation and PATCH are in it_providers_validation, the doctor and the audit records in
 * it_providers_doctor. Helpers: providers_helpers.h.
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

#include "providers_helpers.h"

/* ================================================================ register, get, list */

static void test_register_and_get(void **state)
{
	(void)state;
	struct it_resp r;
	json_t *body = it_provider_body("reg-basic", IT_PROTO_DC, furl("/dc/good"), 30);
	json_object_set_new(body, "doctor_url", json_null());
	reg(prov_a, body, &r);
	IT_STATUS(&r, 201);
	expect_provider_shape(r.json, "POST /v1/providers");
	expect_etag(&r, 1);
	const char *loc = it_resp_header(&r, "Location");
	const char *want_loc = "/v1/providers/reg-basic";
	IT_CHECK(loc && strlen(loc) >= strlen(want_loc) &&
		     strcmp(loc + strlen(loc) - strlen(want_loc), want_loc) == 0,
		 "Location is %s, expected .../v1/providers/reg-basic", loc ? loc : "none");
	IT_CHECK(it_json_str_is(r.json, "extension_id", "reg-basic") &&
		     it_json_str_is(r.json, "protocol", IT_PROTO_DC) &&
		     it_json_str_is(r.json, "endpoint_url", furl("/dc/good")) &&
		     it_json_has_null(r.json, "doctor_url") &&
		     it_json_int(r.json, "timeout_seconds", -1) == 30 &&
		     json_is_true(json_object_get(r.json, "enabled")) &&
		     it_json_int(r.json, "revision", -1) == 1 &&
		     json_is_false(json_object_get(r.json, "doctor_ready")) &&
		     it_json_has_null(r.json, "doctor_verified_revision"),
		 "the registered provider does not echo what was sent: %s", r.body);
	json_t *perms = json_object_get(r.json, "permissions");
	IT_CHECK(json_array_size(perms) == 1 &&
		     strcmp(json_string_value(json_array_get(perms, 0)), IT_PERM_DC) == 0,
		 "permissions: %s", r.body);
	json_t *posted = json_incref(r.json);
	it_resp_free(&r);

	get_prov(prov_a, "reg-basic", &r);
	IT_STATUS(&r, 200);
	expect_etag(&r, 1);
	IT_CHECK(json_equal(r.json, posted), "GET differs from the POST answer: %s", r.body);
	it_resp_free(&r);
	json_decref(posted);

	/* a semantic-preference provider with its own doctor_url and an extra permission;
	 * doctor_url omitted reads null (above), given reads back as sent */
	body = it_provider_body("reg-sp", IT_PROTO_SP, furl("/sp/good"), 1);
	json_object_set_new(body, "doctor_url", json_string(furl("/sp/good/doctor")));
	json_array_append_new(json_object_get(body, "permissions"), json_string("extra.read"));
	json_object_set_new(body, "enabled", json_false());
	reg(prov_a, body, &r);
	IT_STATUS(&r, 201);
	expect_provider_shape(r.json, "POST sp");
	IT_CHECK(it_json_str_is(r.json, "doctor_url", furl("/sp/good/doctor")) &&
		     json_is_false(json_object_get(r.json, "enabled")) &&
		     json_array_size(json_object_get(r.json, "permissions")) == 2 &&
		     it_json_int(r.json, "timeout_seconds", -1) == 1,
		 "the sp provider does not echo what was sent: %s", r.body);
	it_resp_free(&r);

	/* doctor_url omitted → null */
	reg_ok(prov_a, "reg-nodoc", IT_PROTO_DC, furl("/dc/good"), 5);
	get_prov(prov_a, "reg-nodoc", &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_has_null(r.json, "doctor_url"), "an omitted doctor_url is not null: %s",
		 r.body);
	it_resp_free(&r);

	/* admin implies providers:admin */
	reg_ok(admin_a, "reg-admin", IT_PROTO_DC, furl("/dc/good"), 5);
	get_prov(admin_a, "reg-admin", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
}

static void test_list_and_pagination(void **state)
{
	(void)state;
	char *tenant = it_unique("prov-list");
	char *tok = token_for(tenant, "providers:admin");
	struct it_resp r;
	it_request(&srv, "GET", "/v1/providers", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "items")) == 0 &&
		     it_json_has_null(r.json, "next_cursor") && json_object_size(r.json) == 2,
		 "a tenant without providers does not list {items: [], next_cursor: null}: %s",
		 r.body);
	it_resp_free(&r);

	/* registration order, not name order */
	const char *ids[] = {"list-c", "list-a", "list-b"};
	for (size_t i = 0; i < 3; i++)
		reg_ok(tok, ids[i], i == 1 ? IT_PROTO_SP : IT_PROTO_DC,
		       furl(i == 1 ? "/sp/good" : "/dc/good"), 5);

	it_request(&srv, "GET", "/v1/providers", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 3 && it_json_has_null(r.json, "next_cursor"),
		 "expected 3 items and no cursor: %s", r.body);
	for (size_t i = 0; i < 3; i++) {
		const json_t *p = json_array_get(items, i);
		expect_provider_shape(p, "a listed provider");
		IT_CHECK(it_json_str_is(p, "extension_id", ids[i]),
			 "item %zu is not %s (registration order): %s", i, ids[i], r.body);
	}
	it_resp_free(&r);

	/* limit bounds, before paging (they do not depend on a cursor) */
	const char *bad[] = {"/v1/providers?limit=0", "/v1/providers?limit=201",
			     "/v1/providers?limit=x"};
	for (size_t i = 0; i < 3; i++) {
		it_request(&srv, "GET", bad[i], tok, NULL, NULL, &r);
		IT_422(&r, "validation_failed", "limit", true, bad[i]);
		it_resp_free(&r);
	}
	it_request(&srv, "GET", "/v1/providers?limit=200", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	it_request(&srv, "GET", "/v1/providers?limit=2", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	items = json_object_get(r.json, "items");
	const char *cursor = it_json_str(r.json, "next_cursor");
	IT_CHECK(json_array_size(items) == 2 && cursor && *cursor,
		 "limit=2 of 3: expected 2 items and a cursor: %s", r.body);
	IT_CHECK(it_json_str_is(json_array_get(items, 0), "extension_id", "list-c") &&
		     it_json_str_is(json_array_get(items, 1), "extension_id", "list-a"),
		 "first page: %s", r.body);
	char *esc = it_url_escape(cursor);
	char path[512];
	snprintf(path, sizeof path, "/v1/providers?limit=2&after=%s", esc);
	free(esc);
	it_resp_free(&r);
	it_request(&srv, "GET", path, tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 1 &&
		     it_json_str_is(json_array_get(items, 0), "extension_id", "list-b") &&
		     it_json_has_null(r.json, "next_cursor"),
		 "second page: %s", r.body);
	it_resp_free(&r);

	free(tok);
	free(tenant);
}

static void test_already_exists(void **state)
{
	(void)state;
	struct it_resp r;
	reg_ok(prov_a, "dup", IT_PROTO_DC, furl("/dc/good"), 5);
	/* the same id, whatever else differs */
	reg(prov_a, it_provider_body("dup", IT_PROTO_SP, furl("/sp/good"), 9), &r);
	IT_PROBLEM(&r, 409, "already_exists");
	IT_CHECK(!strstr(r.body, furl("/sp/good")), "the 409 repeats the URL: %s", r.body);
	it_resp_free(&r);
	get_prov(prov_a, "dup", &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "protocol", IT_PROTO_DC) &&
		     it_json_str_is(r.json, "endpoint_url", furl("/dc/good")) &&
		     it_json_int(r.json, "timeout_seconds", -1) == 5 &&
		     it_json_int(r.json, "revision", -1) == 1,
		 "the refused registration changed the provider: %s", r.body);
	it_resp_free(&r);
	IT_CHECK(audit_count(audit_a, "dup") == 1,
		 "the refused registration wrote an audit record");
}

/* ================================================================ delete */

static void test_delete(void **state)
{
	(void)state;
	struct it_resp r;
	reg_ok(prov_a, "del", IT_PROTO_DC, furl("/dc/good"), 5);
	const char *im_bad[] = {"If-Match: \"9\"", NULL};
	it_request(&srv, "DELETE", ppath("del", NULL), prov_a, NULL, im_bad, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	expect_state(prov_a, "del", 1, false, NO_REV);

	const char *im_ok[] = {"If-Match: \"1\"", NULL};
	it_request(&srv, "DELETE", ppath("del", NULL), prov_a, NULL, im_ok, &r);
	IT_STATUS(&r, 204);
	IT_CHECK(r.body_len == 0, "a 204 with a body: %s", r.body);
	it_resp_free(&r);
	get_prov(prov_a, "del", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	it_request(&srv, "DELETE", ppath("del", NULL), prov_a, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	patch(prov_a, "del", patch_body(1), NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	doctor(prov_a, "del", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* without If-Match */
	reg_ok(prov_a, "del2", IT_PROTO_SP, furl("/sp/good"), 5);
	it_request(&srv, "DELETE", ppath("del2", NULL), prov_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);

	/* the id is free again */
	reg_ok(prov_a, "del", IT_PROTO_SP, furl("/sp/good"), 7);
	expect_state(prov_a, "del", 1, false, NO_REV);
}

/* ================================================================ isolation, scopes */

static void test_isolation(void **state)
{
	(void)state;
	char *tenant_b = it_unique("prov-b");
	char *prov_b = token_for(tenant_b, "providers:admin");
	struct it_resp r;
	reg_ok(prov_a, "iso", IT_PROTO_DC, furl("/dc/good"), 5);

	get_prov(prov_b, "iso", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	json_t *b = patch_body(1);
	json_object_set_new(b, "enabled", json_false());
	patch(prov_b, "iso", b, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	doctor(prov_b, "iso", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	it_request(&srv, "DELETE", ppath("iso", NULL), prov_b, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/providers", prov_b, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "items")) == 0,
		 "tenant B lists tenant A's providers: %s", r.body);
	it_resp_free(&r);
	expect_state(prov_a, "iso", 1, false, NO_REV);

	/* B may use the same id: a provider of its own */
	reg_ok(prov_b, "iso", IT_PROTO_SP, furl("/sp/good"), 9);
	get_prov(prov_a, "iso", &r);
	IT_CHECK(it_json_str_is(r.json, "protocol", IT_PROTO_DC),
		 "B's registration changed A's provider: %s", r.body);
	it_resp_free(&r);
	free(prov_b);
	free(tenant_b);
}

static void test_scopes(void **state)
{
	(void)state;
	struct it_resp r;
	reg_ok(prov_a, "scoped", IT_PROTO_DC, furl("/dc/good"), 5);
	const char *no_admin[] = {dc_a, audit_a};
	for (size_t i = 0; i < 2; i++) {
		reg(no_admin[i], it_provider_body("scoped-x", IT_PROTO_DC, furl("/dc/good"), 5),
		    &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, "GET", "/v1/providers", no_admin[i], NULL, NULL, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		get_prov(no_admin[i], "scoped", &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		patch(no_admin[i], "scoped", patch_body(1), NULL, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		doctor(no_admin[i], "scoped", &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, "DELETE", ppath("scoped", NULL), no_admin[i], NULL, NULL, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
	}
	it_request(&srv, "GET", "/v1/providers", NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	doctor(NULL, "scoped", &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	expect_state(prov_a, "scoped", 1, false, NO_REV);
	IT_CHECK(audit_count(audit_a, "scoped") == 1, "a forbidden call wrote an audit record");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register_and_get),
	    cmocka_unit_test(test_list_and_pagination),
	    cmocka_unit_test(test_already_exists),
	    cmocka_unit_test(test_delete),
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_scopes),
	};
	return PROVIDERS_MAIN("it_providers_registry", tests);
}
