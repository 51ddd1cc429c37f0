/*
 * it_providers_doctor — the provider doctor and the registry's audit records end to end
 * (openapi/openapi.yaml "Providers", "Audit"; docs/providers-contract.md "Registry", "Doctor"),
 * against the fake provider (fake_provider.c):
 *
 *  - the doctor: ok, http error, invalid answer, protocol mismatch, timeout, unreachable,
 *    doctor_url honoured, a disabled provider doctored; the doctor bound to a revision (a URL
 *    change clears doctor_ready, other changes re-bind it) and a doctor overtaken by a PATCH
 *    → 409 stale_revision, nothing recorded;
 *  - audit records (actions, revisions, no URL) and their chain.
 *
 * Helpers: providers_helpers.h.
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

#include "providers_helpers.h"

/* ================================================================ doctor */

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
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_doctor_outcomes),
	    cmocka_unit_test(test_doctor_binding),
	    cmocka_unit_test(test_doctor_overtaken),
	    cmocka_unit_test(test_audit),
	};
	return PROVIDERS_MAIN("it_providers_doctor", tests);
}
