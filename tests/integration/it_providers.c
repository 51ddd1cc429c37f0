/*
 * it_providers — the provider registry end to end (API.md §0, §6, §10;
 * docs/providers-contract.md "Registry"), against the fake provider (fake_provider.c):
 *
 *  - register / get / list (order, pagination) / patch / delete, with revisions, ETag and
 *    Location; 409 already_exists changes nothing;
 *  - stale PATCH → 409 with current_revision, If-Match → 412, both changing nothing;
 *  - the permission rule (422 naming permissions) and every bound at its edge: timeout_seconds
 *    1 and 120 pass, 0 and 121 fail; extension_id 128 bytes pass, 129 fail; URLs (ftp://,
 *    userinfo, fragment, no host, over 2048 bytes);
 *  - the doctor: ok, http error, invalid answer, protocol mismatch, timeout, unreachable,
 *    doctor_url honoured, a disabled provider doctored; the doctor bound to a revision (a URL
 *    change clears doctor_ready, other changes re-bind it) and a doctor overtaken by a PATCH
 *    → 409 stale_revision, nothing recorded;
 *  - tenant isolation (404), scopes, and audit records (actions, revisions, no URL).
 *
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
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

#include "fake.h"
#include "harness.h"

#define NO_REV (-1LL) /* doctor_verified_revision: null */
#define URL_MAX 2048

static struct it_server srv;
static struct it_fake fake;
static char *tenant_a;
static char *admin_a; /* admin */
static char *prov_a;  /* providers:admin */
static char *dc_a;    /* decision_context.read only */
static char *audit_a; /* audit:read only */

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url: valid for the next 31 calls) */
static const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

/* borrowed: "/v1/providers/<id><suffix>", valid for the next 7 calls */
static const char *ppath(const char *id, const char *suffix)
{
	static char ring[8][512];
	static unsigned next;
	char *out = ring[next++ % 8];
	snprintf(out, sizeof ring[0], "/v1/providers/%s%s", id, suffix ? suffix : "");
	return out;
}

static char *token_for(const char *tenant, const char *scopes)
{
	return it_token_for(tenant, scopes, "it-providers");
}

/* body: steals */
static void reg(const char *token, json_t *body, struct it_resp *r)
{
	it_send_json(&srv, "POST", "/v1/providers", token, body, NULL, r);
}

/* registers a provider (201, no doctor_url) and returns nothing */
static void reg_ok(const char *token, const char *id, const char *proto, const char *endpoint,
		   int timeout)
{
	it_provider_register(&srv, token, id, proto, endpoint, NULL, timeout);
}

static void get_prov(const char *token, const char *id, struct it_resp *r)
{
	it_request(&srv, "GET", ppath(id, NULL), token, NULL, NULL, r);
}

/* body: steals */
static void patch(const char *token, const char *id, json_t *body, const char *const *headers,
		  struct it_resp *r)
{
	it_send_json(&srv, "PATCH", ppath(id, NULL), token, body, headers, r);
}

static void doctor(const char *token, const char *id, struct it_resp *r)
{
	it_request(&srv, "POST", ppath(id, "/doctor"), token, NULL, NULL, r);
}

static void expect_etag(const struct it_resp *r, long long rev)
{
	char want[40];
	snprintf(want, sizeof want, "\"%lld\"", rev);
	const char *etag = it_resp_header(r, "ETag");
	IT_CHECK(etag && strcmp(etag, want) == 0, "%s: ETag is %s, expected %s", r->desc,
		 etag ? etag : "none", want);
}

/* the provider JSON of docs/providers-contract.md: exactly its members, of their types, and
 * doctor_ready = (doctor_verified_revision == revision) */
static void expect_provider_shape(const json_t *p, const char *what)
{
	static const char *const keys[] = {"extension_id",
					   "protocol",
					   "endpoint_url",
					   "doctor_url",
					   "timeout_seconds",
					   "permissions",
					   "enabled",
					   "revision",
					   "doctor_ready",
					   "doctor_verified_revision",
					   "created_at",
					   "updated_at",
					   NULL};
	char *text = json_dumps(p, JSON_COMPACT);
	IT_CHECK(it_is_exactly(p, keys), "%s: not exactly the provider members: %s", what, text);
	const json_t *dvr = json_object_get(p, "doctor_verified_revision");
	const json_t *rev = json_object_get(p, "revision");
	const json_t *doc = json_object_get(p, "doctor_url");
	IT_CHECK(json_is_string(json_object_get(p, "extension_id")) &&
		     json_is_string(json_object_get(p, "protocol")) &&
		     json_is_string(json_object_get(p, "endpoint_url")) &&
		     (json_is_null(doc) || json_is_string(doc)) &&
		     json_is_integer(json_object_get(p, "timeout_seconds")) &&
		     json_is_array(json_object_get(p, "permissions")) &&
		     json_is_boolean(json_object_get(p, "enabled")) && json_is_integer(rev) &&
		     json_is_boolean(json_object_get(p, "doctor_ready")) &&
		     (json_is_null(dvr) || json_is_integer(dvr)),
		 "%s: a member has the wrong type: %s", what, text);
	IT_CHECK(it_is_timestamp_ms(it_json_str(p, "created_at")) &&
		     it_is_timestamp_ms(it_json_str(p, "updated_at")),
		 "%s: created_at / updated_at are not RFC 3339 UTC with milliseconds: %s", what,
		 text);
	IT_CHECK(strcmp(it_json_str(p, "updated_at"), it_json_str(p, "created_at")) >= 0,
		 "%s: updated_at before created_at: %s", what, text);
	bool ready = json_is_true(json_object_get(p, "doctor_ready"));
	bool bound = json_is_integer(dvr) && json_integer_value(dvr) == json_integer_value(rev);
	IT_CHECK(ready == bound, "%s: doctor_ready is not doctor_verified_revision == revision: %s",
		 what, text);
	free(text);
}

/* GET the provider: 200, its shape, ETag, and the revision / readiness expected
 * (dvr NO_REV: doctor_verified_revision null) */
static void expect_state(const char *token, const char *id, long long rev, bool ready,
			 long long dvr)
{
	struct it_resp r;
	get_prov(token, id, &r);
	IT_STATUS(&r, 200);
	expect_provider_shape(r.json, r.desc);
	expect_etag(&r, rev);
	IT_CHECK(it_json_int(r.json, "revision", -1) == rev, "%s: revision is not %lld: %s", id,
		 rev, r.body);
	IT_CHECK(json_is_true(json_object_get(r.json, "doctor_ready")) == ready,
		 "%s: doctor_ready is not %s: %s", id, ready ? "true" : "false", r.body);
	if (dvr == NO_REV)
		IT_CHECK(it_json_has_null(r.json, "doctor_verified_revision"),
			 "%s: doctor_verified_revision is not null: %s", id, r.body);
	else
		IT_CHECK(it_json_int(r.json, "doctor_verified_revision", -1) == dvr,
			 "%s: doctor_verified_revision is not %lld: %s", id, dvr, r.body);
	it_resp_free(&r);
}

/* the doctor answer: exactly {extension_id, revision, doctor_ready, reason_code} */
static void expect_doctor(const struct it_resp *r, const char *id, long long rev, bool ready,
			  const char *reason)
{
	static const char *const keys[] = {"extension_id", "revision", "doctor_ready",
					   "reason_code", NULL};
	IT_STATUS(r, 200);
	IT_CHECK(it_is_exactly(r->json, keys),
		 "%s: not exactly {extension_id, revision, doctor_ready, reason_code}: %s", id,
		 r->body);
	IT_CHECK(it_json_str_is(r->json, "extension_id", id), "%s: extension_id: %s", id, r->body);
	IT_CHECK(it_json_int(r->json, "revision", -1) == rev, "%s: revision is not %lld: %s", id,
		 rev, r->body);
	IT_CHECK(json_is_true(json_object_get(r->json, "doctor_ready")) == ready,
		 "%s: doctor_ready is not %s: %s", id, ready ? "true" : "false", r->body);
	if (reason)
		IT_CHECK(it_json_str_is(r->json, "reason_code", reason),
			 "%s: reason_code is not %s: %s", id, reason, r->body);
	else
		IT_CHECK(it_json_has_null(r->json, "reason_code"),
			 "%s: reason_code is not null: %s", id, r->body);
}

/* new: every audit record of provider id in token's tenant (limit 200, one page) */
static json_t *audit_records(const char *token, const char *id)
{
	char path[512];
	snprintf(path, sizeof path, "/v1/audit?resource_type=provider&resource_id=%s&limit=200",
		 id);
	struct it_resp r;
	it_request(&srv, "GET", path, token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_has_null(r.json, "next_cursor"), "more than 200 records for %s?", id);
	json_t *items = json_incref(json_object_get(r.json, "items"));
	it_resp_free(&r);
	IT_CHECK(json_is_array(items), "audit items is not an array");
	return items;
}

static size_t audit_count(const char *token, const char *id)
{
	json_t *items = audit_records(token, id);
	size_t n = json_array_size(items);
	json_decref(items);
	return n;
}

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

/* ================================================================ patch, delete */

static json_t *patch_body(long long expected)
{
	return json_pack("{s:I}", "expected_revision", (json_int_t)expected);
}

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

/* ================================================================ doctor */

/* as prov_a: PATCH id with body (steals) expecting 200, then GET it (expect_state) */
static void patch_then_state(const char *id, json_t *body, long long rev, bool ready,
			     long long dvr)
{
	struct it_resp r;
	patch(prov_a, id, body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	expect_state(prov_a, id, rev, ready, dvr);
}

/* as prov_a: run id's doctor, expecting that answer (expect_doctor) */
static void doctor_expect(const char *id, long long rev, bool ready, const char *reason)
{
	struct it_resp r;
	doctor(prov_a, id, &r);
	expect_doctor(&r, id, rev, ready, reason);
	it_resp_free(&r);
}

/* new: patch_body(expected) with member set to value (steals; a JSON string for a URL) */
static json_t *patch_member(long long expected, const char *member, json_t *value)
{
	json_t *b = patch_body(expected);
	json_object_set_new(b, member, value);
	return b;
}

static void test_doctor_outcomes(void **state)
{
	(void)state;
	int dead = it_free_port();
	IT_CHECK(dead > 0, "no free port");
	char dead_url[128];
	snprintf(dead_url, sizeof dead_url, "http://127.0.0.1:%d/dc/good", dead);
	const struct {
		const char *id, *proto, *endpoint, *doctor_url;
		int timeout;
		bool ready;
		const char *reason;
	} cases[] = {
	    {"doc-ok", IT_PROTO_DC, furl("/dc/good"), NULL, 5, true, NULL},
	    {"doc-fail", IT_PROTO_DC, furl("/dc/doctor_fail"), NULL, 5, false, "doctor_http_error"},
	    {"doc-bad", IT_PROTO_DC, furl("/dc/doctor_bad"), NULL, 5, false,
	     "doctor_invalid_response"},
	    {"doc-mismatch", IT_PROTO_DC, furl("/dc/doctor_mismatch"), NULL, 5, false,
	     "doctor_protocol_mismatch"},
	    {"doc-unreachable", IT_PROTO_DC, dead_url, NULL, 5, false, "doctor_unreachable"},
	    {"doc-sp-ok", IT_PROTO_SP, furl("/sp/good"), NULL, 5, true, NULL},
	    {"doc-sp-fail", IT_PROTO_SP, furl("/sp/doctor_fail"), NULL, 5, false,
	     "doctor_http_error"},
	    {"doc-sp-bad", IT_PROTO_SP, furl("/sp/doctor_bad"), NULL, 5, false,
	     "doctor_invalid_response"},
	    {"doc-sp-mismatch", IT_PROTO_SP, furl("/sp/doctor_mismatch"), NULL, 5, false,
	     "doctor_protocol_mismatch"},
	    /* doctor_url wins over endpoint_url + /doctor */
	    {"doc-url-ok", IT_PROTO_DC, furl("/dc/doctor_fail"), furl("/dc/good/doctor"), 5, true,
	     NULL},
	    {"doc-url-sp", IT_PROTO_DC, furl("/dc/good"), furl("/sp/good/doctor"), 5, false,
	     "doctor_protocol_mismatch"},
	    /* a doctor URL that is not the doctor: the POST path answers 405 to a GET */
	    {"doc-url-405", IT_PROTO_DC, furl("/dc/good"), furl("/dc/good"), 5, false,
	     "doctor_http_error"},
	    /* an endpoint with a trailing '/' still finds <endpoint>/doctor */
	    {"doc-slash", IT_PROTO_DC, furl("/dc/good/"), NULL, 5, true, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		it_provider_register(&srv, prov_a, cases[i].id, cases[i].proto, cases[i].endpoint,
				     cases[i].doctor_url, cases[i].timeout);
		struct it_resp r;
		doctor(prov_a, cases[i].id, &r);
		expect_doctor(&r, cases[i].id, 1, cases[i].ready, cases[i].reason);
		IT_CHECK(!strstr(r.body, "127.0.0.1"), "the doctor answer carries a URL: %s",
			 r.body);
		it_resp_free(&r);
		/* the doctor does not change the revision */
		expect_state(prov_a, cases[i].id, 1, cases[i].ready, cases[i].ready ? 1 : NO_REV);
	}

	/* timeout: deadline = timeout_seconds (1 s) while the fake sleeps 3 s */
	struct it_resp r;
	reg_ok(prov_a, "doc-slow", IT_PROTO_DC, furl("/dc/doctor_slow"), 1);
	double t0 = it_now_s();
	doctor(prov_a, "doc-slow", &r);
	double took = it_now_s() - t0;
	expect_doctor(&r, "doc-slow", 1, false, "doctor_timeout");
	it_resp_free(&r);
	IT_CHECK(took < 2.0, "the doctor with timeout_seconds 1 took %.2f s", took);
	expect_state(prov_a, "doc-slow", 1, false, NO_REV);
	/* with a deadline longer than the sleep it passes */
	reg_ok(prov_a, "doc-slow-ok", IT_PROTO_DC, furl("/dc/doctor_slow"), 10);
	doctor_expect("doc-slow-ok", 1, true, NULL);

	/* a disabled provider may be doctored */
	json_t *b = it_provider_body("doc-disabled", IT_PROTO_DC, furl("/dc/good"), 5);
	json_object_set_new(b, "enabled", json_false());
	reg(prov_a, b, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);
	doctor_expect("doc-disabled", 1, true, NULL);
	expect_state(prov_a, "doc-disabled", 1, true, 1);

	/* doctoring again is idempotent; the doctor takes no body */
	doctor_expect("doc-ok", 1, true, NULL);
	expect_state(prov_a, "doc-ok", 1, true, 1);
}

static void test_doctor_binding(void **state)
{
	(void)state;
	struct it_resp r;
	json_t *b;
	reg_ok(prov_a, "bind", IT_PROTO_DC, furl("/dc/good"), 5);
	doctor_expect("bind", 1, true, NULL);
	expect_state(prov_a, "bind", 1, true, 1);

	/* enabled and timeout_seconds changes re-bind the passing doctor */
	patch(prov_a, "bind", patch_member(1, "enabled", json_false()), NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2 &&
		     json_is_true(json_object_get(r.json, "doctor_ready")) &&
		     it_json_int(r.json, "doctor_verified_revision", -1) == 2,
		 "PATCH enabled does not keep doctor_ready re-bound to revision 2: %s", r.body);
	it_resp_free(&r);
	expect_state(prov_a, "bind", 2, true, 2);
	b = patch_member(2, "timeout_seconds", json_integer(7));
	json_object_set_new(b, "enabled", json_true());
	patch_then_state("bind", b, 3, true, 3);
	/* the same endpoint_url again is no change of it */
	patch_then_state("bind", patch_member(3, "endpoint_url", json_string(furl("/dc/good"))), 4,
			 true, 4);
	/* an empty PATCH re-binds too */
	patch_then_state("bind", patch_body(4), 5, true, 5);

	/* a different endpoint_url clears it */
	patch(prov_a, "bind", patch_member(5, "endpoint_url", json_string(furl("/dc/full"))), NULL,
	      &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_false(json_object_get(r.json, "doctor_ready")) &&
		     it_json_has_null(r.json, "doctor_verified_revision"),
		 "PATCH endpoint_url does not clear doctor_ready: %s", r.body);
	it_resp_free(&r);
	expect_state(prov_a, "bind", 6, false, NO_REV);
	/* a later PATCH does not revive it */
	patch_then_state("bind", patch_member(6, "enabled", json_true()), 7, false, NO_REV);
	doctor_expect("bind", 7, true, NULL);
	expect_state(prov_a, "bind", 7, true, 7);

	/* doctor_url: null → a URL clears, the same URL keeps, back to null clears */
	patch_then_state("bind",
			 patch_member(7, "doctor_url", json_string(furl("/dc/good/doctor"))), 8,
			 false, NO_REV);
	doctor_expect("bind", 8, true, NULL);
	patch_then_state("bind",
			 patch_member(8, "doctor_url", json_string(furl("/dc/good/doctor"))), 9,
			 true, 9);
	patch_then_state("bind", patch_member(9, "doctor_url", json_null()), 10, false, NO_REV);

	/* a failing doctor after a passing one clears it */
	doctor_expect("bind", 10, true, NULL);
	patch(prov_a, "bind",
	      patch_member(10, "doctor_url", json_string(furl("/dc/doctor_fail/doctor"))), NULL,
	      &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	doctor_expect("bind", 11, false, "doctor_http_error");
	expect_state(prov_a, "bind", 11, false, NO_REV);
	/* and a PATCH then has nothing to re-bind */
	patch_then_state("bind", patch_body(11), 12, false, NO_REV);
}

struct doctor_call {
	const char *token;
	const char *id;
	struct it_resp resp;
};

static void *doctor_thread(void *arg)
{
	struct doctor_call *c = arg;
	doctor(c->token, c->id, &c->resp);
	return NULL;
}

/* the doctor reads revision 1, a PATCH lands while it waits for the (slow) provider: it
 * must not bind its verdict to revision 2 */
static void test_doctor_overtaken(void **state)
{
	(void)state;
	reg_ok(prov_a, "race", IT_PROTO_DC, furl("/dc/doctor_slow"), 10);
	struct doctor_call call = {prov_a, "race", {0}};
	pthread_t th;
	IT_CHECK(pthread_create(&th, NULL, doctor_thread, &call) == 0, "pthread_create");
	it_sleep_ms(IT_FAKE_SLOW_MS / 4);
	struct it_resp r;
	json_t *b = patch_body(1);
	json_object_set_new(b, "timeout_seconds", json_integer(11));
	double t0 = it_now_s();
	patch(prov_a, "race", b, NULL, &r);
	double took = it_now_s() - t0;
	pthread_join(th, NULL);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	IT_CHECK(took < 1.0,
		 "the PATCH waited %.2f s for the doctor's provider call (a lock or a connection "
		 "held across it?)",
		 took);
	IT_PROBLEM(&call.resp, 409, "stale_revision");
	IT_CHECK(it_json_int(call.resp.json, "current_revision", -1) == 2,
		 "the overtaken doctor's 409 does not carry current_revision 2: %s",
		 call.resp.body);
	it_resp_free(&call.resp);
	expect_state(prov_a, "race", 2, false, NO_REV);
	json_t *recs = audit_records(audit_a, "race");
	size_t i;
	const json_t *rec;
	json_array_foreach (recs, i, rec) {
		IT_CHECK(!it_json_str_is(rec, "action", "provider.doctor_checked"),
			 "the overtaken doctor was audited");
	}
	json_decref(recs);
}

/* ================================================================ audit */

static void expect_record(const json_t *rec, const char *action, long long before, long long after)
{
	char *text = json_dumps(rec, JSON_COMPACT);
	IT_CHECK(it_json_str_is(rec, "action", action), "expected action %s: %s", action, text);
	IT_CHECK(it_json_str_is(rec, "resource_type", "provider"), "resource_type: %s", text);
	if (before >= 0)
		IT_CHECK(it_json_int(rec, "revision_before", -1) == before,
			 "%s: revision_before is not %lld: %s", action, before, text);
	if (after >= 0)
		IT_CHECK(it_json_int(rec, "revision_after", -1) == after,
			 "%s: revision_after is not %lld: %s", action, after, text);
	IT_CHECK(json_is_object(json_object_get(rec, "details")), "%s: no details object: %s",
		 action, text);
	free(text);
}

static void test_audit(void **state)
{
	(void)state;
	struct it_resp r;
	it_provider_register(&srv, prov_a, "aud", IT_PROTO_DC, furl("/dc/good"),
			     furl("/dc/good/doctor"), 5);
	doctor(prov_a, "aud", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	patch(prov_a, "aud", patch_member(1, "enabled", json_false()), NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	patch(prov_a, "aud", patch_member(2, "endpoint_url", json_string(furl("/dc/full"))), NULL,
	      &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	doctor(prov_a, "aud", &r); /* the explicit doctor_url still answers ok */
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	/* refused: nothing written */
	patch(prov_a, "aud", patch_body(1), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	it_request(&srv, "DELETE", ppath("aud", NULL), prov_a, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);

	char path[256];
	snprintf(path, sizeof path, "/v1/audit?resource_type=provider&resource_id=aud&limit=200");
	it_request(&srv, "GET", path, audit_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	/* no URL in any record, in any form */
	char port[32];
	snprintf(port, sizeof port, ":%d", fake.port);
	IT_CHECK(!strstr(r.body, "http://") && !strstr(r.body, "127.0.0.1") &&
		     !strstr(r.body, port) && !strstr(r.body, "/dc/"),
		 "an audit record carries a URL: %s", r.body);
	json_t *recs = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(recs) == 6,
		 "expected 6 records (registered, doctor_checked, updated, updated, "
		 "doctor_checked, deleted), got %zu: %s",
		 json_array_size(recs), r.body);
	expect_record(json_array_get(recs, 0), "provider.registered", -1, 1);
	expect_record(json_array_get(recs, 1), "provider.doctor_checked", 1, 1);
	expect_record(json_array_get(recs, 2), "provider.updated", 1, 2);
	expect_record(json_array_get(recs, 3), "provider.updated", 2, 3);
	expect_record(json_array_get(recs, 4), "provider.doctor_checked", 3, 3);
	expect_record(json_array_get(recs, 5), "provider.deleted", 3, -1);
	IT_CHECK(it_json_has_null(json_array_get(recs, 0), "prev_hash"),
		 "the first record of the provider has a prev_hash");
	const json_t *reg_details = json_object_get(json_array_get(recs, 0), "details");
	IT_CHECK(json_is_string(json_object_get(reg_details, "endpoint_sha256")),
		 "provider.registered details carry no endpoint_sha256: %s", r.body);
	const json_t *doc = json_object_get(json_array_get(recs, 1), "details");
	IT_CHECK(json_is_true(json_object_get(doc, "doctor_ready")) &&
		     it_json_has_null(doc, "reason_code"),
		 "provider.doctor_checked details are not {doctor_ready: true, reason_code: null}: "
		 "%s",
		 r.body);
	const json_t *u1 = json_object_get(json_array_get(recs, 2), "details");
	const json_t *u2 = json_object_get(json_array_get(recs, 3), "details");
	IT_CHECK(json_is_false(json_object_get(u1, "endpoint_changed")) &&
		     json_is_true(json_object_get(u1, "doctor_ready")),
		 "PATCH enabled: details should say endpoint_changed false, doctor_ready true: %s",
		 r.body);
	IT_CHECK(json_is_false(json_object_get(u1, "doctor_url_changed")) &&
		     json_is_false(json_object_get(u2, "doctor_url_changed")),
		 "neither PATCH changed doctor_url, the details say otherwise: %s", r.body);
	IT_CHECK(json_is_true(json_object_get(u2, "endpoint_changed")) &&
		     json_is_false(json_object_get(u2, "doctor_ready")),
		 "PATCH endpoint_url: details should say endpoint_changed true, doctor_ready "
		 "false: %s",
		 r.body);
	it_resp_free(&r);

	it_request(&srv, "GET", "/v1/audit/verify?resource_type=provider&resource_id=aud", audit_a,
		   NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == 6,
		 "the provider's audit chain does not verify: %s", r.body);
	it_resp_free(&r);
}

int main(void)
{
	static const struct it_group group = {&fake, &srv, "prov-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&prov_a, "providers:admin", "it-prov"},
		{&dc_a, "decision_context.read", "it-dc"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register_and_get),
	    cmocka_unit_test(test_list_and_pagination),
	    cmocka_unit_test(test_already_exists),
	    cmocka_unit_test(test_permission_rule),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_patch),
	    cmocka_unit_test(test_delete),
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_doctor_outcomes),
	    cmocka_unit_test(test_doctor_binding),
	    cmocka_unit_test(test_doctor_overtaken),
	    cmocka_unit_test(test_audit),
	};
	return IT_GROUP_MAIN("it_providers", tests, &group);
}
