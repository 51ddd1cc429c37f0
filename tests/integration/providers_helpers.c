/* it_providers_* shared helpers (providers_helpers.h): the server, the fake and tenant A's
 * tokens with their group, and the registry's requests and checks. */
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

struct it_server srv;
struct it_fake fake;
char *tenant_a;
char *admin_a;
char *prov_a;
char *dc_a;
char *audit_a;

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url: valid for the next 31 calls) */
const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

/* borrowed: "/v1/providers/<id><suffix>", valid for the next 7 calls */
const char *ppath(const char *id, const char *suffix)
{
	static char ring[8][512];
	static unsigned next;
	char *out = ring[next++ % 8];
	snprintf(out, sizeof ring[0], "/v1/providers/%s%s", id, suffix ? suffix : "");
	return out;
}

char *token_for(const char *tenant, const char *scopes)
{
	return it_token_for(tenant, scopes, "it-providers");
}

/* body: steals */
void reg(const char *token, json_t *body, struct it_resp *r)
{
	it_send_json(&srv, "POST", "/v1/providers", token, body, NULL, r);
}

/* registers a provider (201, no doctor_url) and returns nothing */
void reg_ok(const char *token, const char *id, const char *proto, const char *endpoint, int timeout)
{
	it_provider_register(&srv, token, id, proto, endpoint, NULL, timeout);
}

void get_prov(const char *token, const char *id, struct it_resp *r)
{
	it_request(&srv, "GET", ppath(id, NULL), token, NULL, NULL, r);
}

/* body: steals */
void patch(const char *token, const char *id, json_t *body, const char *const *headers,
	   struct it_resp *r)
{
	it_send_json(&srv, "PATCH", ppath(id, NULL), token, body, headers, r);
}

void doctor(const char *token, const char *id, struct it_resp *r)
{
	it_request(&srv, "POST", ppath(id, "/doctor"), token, NULL, NULL, r);
}

json_t *patch_body(long long expected)
{
	return json_pack("{s:I}", "expected_revision", (json_int_t)expected);
}

void expect_etag(const struct it_resp *r, long long rev)
{
	char want[40];
	snprintf(want, sizeof want, "\"%lld\"", rev);
	const char *etag = it_resp_header(r, "ETag");
	IT_CHECK(etag && strcmp(etag, want) == 0, "%s: ETag is %s, expected %s", r->desc,
		 etag ? etag : "none", want);
}

/* the provider JSON of docs/providers-contract.md: exactly its members, of their types, and
 * doctor_ready = (doctor_verified_revision == revision) */
void expect_provider_shape(const json_t *p, const char *what)
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
void expect_state(const char *token, const char *id, long long rev, bool ready, long long dvr)
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

/* new: every audit record of provider id in token's tenant (limit 200, one page) */
json_t *audit_records(const char *token, const char *id)
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

size_t audit_count(const char *token, const char *id)
{
	json_t *items = audit_records(token, id);
	size_t n = json_array_size(items);
	json_decref(items);
	return n;
}

/* ================================================================ the group */

int providers_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	static const struct it_group group = {&fake, &srv, "prov-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&prov_a, "providers:admin", "it-prov"},
		{&dc_a, "decision_context.read", "it-dc"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	return it_group_main(name, tests, n, &group);
}
