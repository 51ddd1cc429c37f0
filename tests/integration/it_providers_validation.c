/*
 * it_providers_validation — what the provider registry refuses, and PATCH (openapi/openapi.yaml
 * "Conventions", "Providers"; docs/providers-contract.md "Registry"):
 *
 *  - the permission rule (422 naming permissions) and every bound at its edge: timeout_seconds
 *    1 and 120 pass, 0 and 121 fail; extension_id 128 bytes pass, 129 fail; URLs (ftp://,
 *    userinfo, fragment, no host, over 2048 bytes); bodies that are not objects or not JSON;
 *  - PATCH of every member at its bounds; stale PATCH → 409 with current_revision, If-Match →
 *    412, both changing nothing.
 *
 * Helpers: providers_helpers.h.
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

#define URL_MAX 2048

/* ================================================================ validation */

struct bad_case {
	const char *what;
	const char *member; /* set (value parsed from JSON text) or, with value NULL, delete */
	const char *value;
	const char *code;
	const char *field; /* errors[] names it, or one under it */
};

static void run_bad_cases(const char *proto, const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &cases[i];
		char id[64];
		snprintf(id, sizeof id, "bad-%zu", i);
		json_t *body = it_provider_body(id, proto, furl("/dc/good"), 5);
		if (c->value) {
			json_t *v = json_loads(c->value, JSON_DECODE_ANY, NULL);
			IT_CHECK(v != NULL, "case %s: the value is not JSON", c->what);
			json_object_set_new(body, c->member, v);
		} else {
			json_object_del(body, c->member);
		}
		const char *ext = it_json_str(body, "extension_id");
		char ext_copy[256] = "";
		if (ext)
			snprintf(ext_copy, sizeof ext_copy, "%s", ext);
		struct it_resp r;
		reg(prov_a, body, &r);
		IT_422(&r, c->code, c->field, false, c->what);
		it_resp_free(&r);
		/* nothing registered */
		if (ext_copy[0] && strlen(ext_copy) <= 128 && !strchr(ext_copy, ' ')) {
			get_prov(prov_a, ext_copy, &r);
			IT_CHECK(r.status == 404 || r.status == 422,
				 "case %s: the refused provider %s exists: %ld", c->what, ext_copy,
				 r.status);
			it_resp_free(&r);
		}
	}
}

static void test_permission_rule(void **state)
{
	(void)state;
	char perm65[70], perm64[70];
	memset(perm65, 'p', 65);
	perm65[65] = '\0';
	memset(perm64, 'q', 64);
	perm64[64] = '\0';
	char many[2048] = "[\"decision_context.read\"";
	for (int i = 1; i < 17; i++) {
		char one[32];
		snprintf(one, sizeof one, ",\"extra.%d\"", i);
		strcat(many, one);
	}
	strcat(many, "]");
	char long_perm[128];
	snprintf(long_perm, sizeof long_perm, "[\"decision_context.read\",\"%s\"]", perm65);
	const struct bad_case dc_cases[] = {
	    {"dc without decision_context.read", "permissions", "[\"semantic_preference.read\"]",
	     "validation_failed", "permissions"},
	    {"dc with no permission", "permissions", "[]", "validation_failed", "permissions"},
	    {"duplicate permissions", "permissions",
	     "[\"decision_context.read\",\"decision_context.read\"]", "validation_failed",
	     "permissions"},
	    {"17 permissions", "permissions", many, "validation_failed", "permissions"},
	    {"an empty permission", "permissions", "[\"decision_context.read\",\"\"]",
	     "validation_failed", "permissions"},
	    {"a 65-byte permission", "permissions", long_perm, "validation_failed", "permissions"},
	    {"a permission not a string", "permissions", "[\"decision_context.read\",7]",
	     "validation_failed", "permissions"},
	    {"permissions not an array", "permissions", "\"decision_context.read\"",
	     "validation_failed", "permissions"},
	    {"permissions missing", "permissions", NULL, "validation_failed", "permissions"},
	};
	run_bad_cases(IT_PROTO_DC, dc_cases, sizeof dc_cases / sizeof *dc_cases);
	const struct bad_case sp_cases[] = {
	    {"sp without semantic_preference.read", "permissions", "[\"decision_context.read\"]",
	     "validation_failed", "permissions"},
	};
	run_bad_cases(IT_PROTO_SP, sp_cases, 1);

	/* 16 unique permissions, one of them 64 bytes, pass */
	json_t *body = it_provider_body("perm-16", IT_PROTO_DC, furl("/dc/good"), 5);
	json_t *perms = json_object_get(body, "permissions");
	json_array_append_new(perms, json_string(perm64));
	for (int i = 2; i < 16; i++) {
		char one[32];
		snprintf(one, sizeof one, "extra.%d", i);
		json_array_append_new(perms, json_string(one));
	}
	struct it_resp r;
	reg(prov_a, body, &r);
	IT_STATUS(&r, 201);
	IT_CHECK(json_array_size(json_object_get(r.json, "permissions")) == 16,
		 "16 permissions do not read back: %s", r.body);
	it_resp_free(&r);
}

static void test_bounds(void **state)
{
	(void)state;
	struct it_resp r;
	/* timeout_seconds 1 and 120 pass */
	reg_ok(prov_a, "tmo-1", IT_PROTO_DC, furl("/dc/good"), 1);
	reg_ok(prov_a, "tmo-120", IT_PROTO_DC, furl("/dc/good"), 120);
	/* extension_id of 128 bytes passes */
	char *id128 = it_filled("x128-", 128, 'k');
	reg_ok(prov_a, id128, IT_PROTO_DC, furl("/dc/good"), 5);
	get_prov(prov_a, id128, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	/* a URL of exactly 2048 bytes passes; uppercase scheme and https pass */
	char *url2048 = it_filled(furl("/dc/good?pad="), URL_MAX, 'u');
	reg_ok(prov_a, "url-2048", IT_PROTO_DC, url2048, 5);
	reg_ok(prov_a, "url-upper", IT_PROTO_DC, "HTTP://127.0.0.1:9/dc/good", 5);
	reg_ok(prov_a, "url-https", IT_PROTO_DC, "https://provider.example/dc", 5);

	char *id129 = it_filled("x129-", 129, 'k');
	char *url2049 = it_filled(furl("/dc/good?pad="), URL_MAX + 1, 'u');
	char id129_json[160], url2049_json[2100];
	snprintf(id129_json, sizeof id129_json, "\"%s\"", id129);
	snprintf(url2049_json, sizeof url2049_json, "\"%s\"", url2049);
	const struct bad_case cases[] = {
	    {"timeout_seconds 0", "timeout_seconds", "0", "validation_failed", "timeout_seconds"},
	    {"timeout_seconds 121", "timeout_seconds", "121", "validation_failed",
	     "timeout_seconds"},
	    {"timeout_seconds 1.5", "timeout_seconds", "1.5", "validation_failed",
	     "timeout_seconds"},
	    {"timeout_seconds \"5\"", "timeout_seconds", "\"5\"", "validation_failed",
	     "timeout_seconds"},
	    {"timeout_seconds missing", "timeout_seconds", NULL, "validation_failed",
	     "timeout_seconds"},
	    {"extension_id 129 bytes", "extension_id", id129_json, "validation_failed",
	     "extension_id"},
	    {"extension_id with a space", "extension_id", "\"bad id\"", "validation_failed",
	     "extension_id"},
	    {"extension_id starting with -", "extension_id", "\"-bad\"", "validation_failed",
	     "extension_id"},
	    {"extension_id empty", "extension_id", "\"\"", "validation_failed", "extension_id"},
	    {"extension_id missing", "extension_id", NULL, "validation_failed", "extension_id"},
	    {"ftp endpoint", "endpoint_url", "\"ftp://127.0.0.1/dc\"", "validation_failed",
	     "endpoint_url"},
	    {"file endpoint", "endpoint_url", "\"file:///etc/passwd\"", "validation_failed",
	     "endpoint_url"},
	    {"userinfo", "endpoint_url", "\"http://user:secret@127.0.0.1/dc\"", "validation_failed",
	     "endpoint_url"},
	    {"fragment", "endpoint_url", "\"http://127.0.0.1/dc#frag\"", "validation_failed",
	     "endpoint_url"},
	    {"no host", "endpoint_url", "\"http:///dc\"", "validation_failed", "endpoint_url"},
	    {"a space", "endpoint_url", "\"http://127.0.0.1/d c\"", "validation_failed",
	     "endpoint_url"},
	    {"no scheme", "endpoint_url", "\"127.0.0.1/dc\"", "validation_failed", "endpoint_url"},
	    {"2049-byte URL", "endpoint_url", url2049_json, "validation_failed", "endpoint_url"},
	    {"endpoint missing", "endpoint_url", NULL, "validation_failed", "endpoint_url"},
	    {"ftp doctor_url", "doctor_url", "\"ftp://127.0.0.1/doctor\"", "validation_failed",
	     "doctor_url"},
	    {"doctor_url a number", "doctor_url", "5", "validation_failed", "doctor_url"},
	    {"unknown protocol", "protocol", "\"bogus_v0\"", "validation_failed", "protocol"},
	    {"protocol missing", "protocol", NULL, "validation_failed", "protocol"},
	    {"enabled a string", "enabled", "\"yes\"", "validation_failed", "enabled"},
	    {"enabled missing", "enabled", NULL, "validation_failed", "enabled"},
	    {"an unknown member", "colour", "\"red\"", "unknown_field", "colour"},
	    {"revision is not writable", "revision", "1", "unknown_field", "revision"},
	};
	run_bad_cases(IT_PROTO_DC, cases, sizeof cases / sizeof *cases);
	free(id128);
	free(id129);
	free(url2048);
	free(url2049);

	/* a body that is not an object, and one that is not JSON */
	it_request(&srv, "POST", "/v1/providers", prov_a, "[]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/providers", prov_a, "{\"extension_id\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* a path id that does not match the pattern */
	char *long_id = it_filled("p", 129, 'z');
	const char *bad_ids[] = {"bad%20id", "-lead", long_id};
	for (size_t i = 0; i < 3; i++) {
		get_prov(prov_a, bad_ids[i], &r);
		IT_422(&r, "validation_failed", "extension_id", true, "a bad path id");
		it_resp_free(&r);
	}
	free(long_id);
}

/* ================================================================ patch */

static void test_patch(void **state)
{
	(void)state;
	struct it_resp r;
	reg_ok(prov_a, "pt", IT_PROTO_DC, furl("/dc/good"), 5);

	/* stale: 409 with current_revision, nothing changes */
	json_t *b = patch_body(5);
	json_object_set_new(b, "enabled", json_false());
	patch(prov_a, "pt", b, NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
		 "the 409 does not carry current_revision 1: %s", r.body);
	it_resp_free(&r);
	/* If-Match that disagrees: 412 (even with a right expected_revision) */
	const char *im_bad[] = {"If-Match: \"7\"", NULL};
	b = patch_body(1);
	json_object_set_new(b, "enabled", json_false());
	patch(prov_a, "pt", b, im_bad, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	expect_state(prov_a, "pt", 1, false, NO_REV);
	get_prov(prov_a, "pt", &r);
	IT_CHECK(json_is_true(json_object_get(r.json, "enabled")), "a refused PATCH disabled it");
	char *created = strdup(it_json_str(r.json, "created_at"));
	it_resp_free(&r);
	IT_CHECK(audit_count(audit_a, "pt") == 1, "a refused PATCH wrote an audit record");

	/* If-Match that agrees */
	const char *im_ok[] = {"If-Match: \"1\"", NULL};
	b = patch_body(1);
	json_object_set_new(b, "enabled", json_false());
	patch(prov_a, "pt", b, im_ok, &r);
	IT_STATUS(&r, 200);
	expect_provider_shape(r.json, "PATCH enabled");
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2 &&
		     json_is_false(json_object_get(r.json, "enabled")) &&
		     it_json_str_is(r.json, "created_at", created),
		 "PATCH enabled: %s", r.body);
	it_resp_free(&r);
	free(created);

	/* a PATCH with no change still bumps the revision */
	patch(prov_a, "pt", patch_body(2), NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3, "an empty PATCH: %s", r.body);
	it_resp_free(&r);

	/* each patchable member, at its bounds */
	b = patch_body(3);
	json_object_set_new(b, "timeout_seconds", json_integer(120));
	json_object_set_new(b, "endpoint_url", json_string(furl("/dc/full")));
	json_object_set_new(b, "doctor_url", json_string(furl("/dc/good/doctor")));
	json_object_set_new(b, "enabled", json_true());
	patch(prov_a, "pt", b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 4 &&
		     it_json_int(r.json, "timeout_seconds", -1) == 120 &&
		     it_json_str_is(r.json, "endpoint_url", furl("/dc/full")) &&
		     it_json_str_is(r.json, "doctor_url", furl("/dc/good/doctor")) &&
		     json_is_true(json_object_get(r.json, "enabled")),
		 "PATCH of every member: %s", r.body);
	it_resp_free(&r);
	b = patch_body(4);
	json_object_set_new(b, "timeout_seconds", json_integer(1));
	json_object_set_new(b, "doctor_url", json_null());
	patch(prov_a, "pt", b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 5 &&
		     it_json_int(r.json, "timeout_seconds", -1) == 1 &&
		     it_json_has_null(r.json, "doctor_url"),
		 "PATCH timeout 1, doctor_url null: %s", r.body);
	it_resp_free(&r);

	const struct {
		const char *what, *member, *value, *code, *field;
	} bad[] = {
	    {"timeout_seconds 0", "timeout_seconds", "0", "validation_failed", "timeout_seconds"},
	    {"timeout_seconds 121", "timeout_seconds", "121", "validation_failed",
	     "timeout_seconds"},
	    {"ftp endpoint", "endpoint_url", "\"ftp://127.0.0.1/x\"", "validation_failed",
	     "endpoint_url"},
	    {"endpoint null", "endpoint_url", "null", "validation_failed", "endpoint_url"},
	    {"doctor_url with userinfo", "doctor_url", "\"http://u:p@127.0.0.1/d\"",
	     "validation_failed", "doctor_url"},
	    {"enabled null", "enabled", "null", "validation_failed", "enabled"},
	    {"protocol is not patchable", "protocol", "\"semantic_preference_provider_v0\"",
	     "unknown_field", "protocol"},
	    {"permissions are not patchable", "permissions", "[\"decision_context.read\"]",
	     "unknown_field", "permissions"},
	    {"an unknown member", "colour", "\"red\"", "unknown_field", "colour"},
	    {"expected_revision 0", "expected_revision", "0", "validation_failed",
	     "expected_revision"},
	    {"expected_revision a string", "expected_revision", "\"5\"", "validation_failed",
	     "expected_revision"},
	    {"expected_revision missing", "expected_revision", NULL, "validation_failed",
	     "expected_revision"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		b = patch_body(5);
		if (bad[i].value)
			json_object_set_new(b, bad[i].member,
					    json_loads(bad[i].value, JSON_DECODE_ANY, NULL));
		else
			json_object_del(b, bad[i].member);
		patch(prov_a, "pt", b, NULL, &r);
		IT_422(&r, bad[i].code, bad[i].field, false, bad[i].what);
		it_resp_free(&r);
	}
	expect_state(prov_a, "pt", 5, false, NO_REV);

	/* a provider that does not exist */
	patch(prov_a, "pt-none", patch_body(1), NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_permission_rule),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_patch),
	};
	return PROVIDERS_MAIN("it_providers_validation", tests);
}
