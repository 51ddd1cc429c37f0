/*
 * it_memory_as_of — explain and GET /v1/memory/sources/{id} as of a past instant
 * (openapi/openapi.yaml "as_of"; docs/memory-contract.md): after each kind of change —
 * creation, classification, thread mode, revocation, assent revocation, assent expiry — the
 * answer for an instant before it is the state before, and for an instant after it the state
 * after. Helpers: memory_helpers.h; each test has its own tenant.
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

#include "memory_helpers.h"

/* An instant strictly between what came before and what comes after. */
static long long instant(void)
{
	it_sleep_ms(15);
	long long t = it_now_ms();
	it_sleep_ms(15);
	return t;
}

/* new: explain of query (thread may be NULL) as of t (0: now) */
static json_t *explain_at(const char *token, const char *query, const char *thread, long long t)
{
	json_t *b = qbody(query, thread);
	if (t) {
		char when[IT_TIME_LEN];
		it_rfc3339_ms(t, when);
		json_object_set_new(b, "as_of", json_string(when));
	}
	json_t *ex = retrieve_ok(EXPLAIN, token, b);
	if (t) {
		char when[IT_TIME_LEN];
		it_rfc3339_ms(t, when);
		IT_CHECK(it_json_str_is(ex, "as_of", when), "the answer names its as_of");
	}
	return ex;
}

/* The explain item of id as of t has this reason and revision (reason NULL: no item). */
static void expect_at(const char *token, const char *query, const char *thread, long long t,
		      const char *id, const char *reason, long long revision, const char *what)
{
	json_t *ex = explain_at(token, query, thread, t);
	const json_t *it = item_by(items_of(ex), "record_id", id);
	char *raw = json_dumps(ex, JSON_COMPACT);
	if (reason == NULL)
		IT_CHECK(it == NULL, "%s: %s is listed: %s", what, id, raw);
	else
		IT_CHECK(it && it_json_str_is(it, "reason", reason) &&
			     it_json_int(it, "revision", -1) == revision,
			 "%s: want %s at revision %lld: %s", what, reason, revision, raw);
	free(raw);
	json_decref(ex);
}

/* GET /v1/memory/sources/{id}?as_of=t: status, and on 200 the state and revision. */
static void expect_get_at(const char *token, const char *id, long long t, long status,
			  const char *state, long long revision)
{
	char when[IT_TIME_LEN], path[200];
	it_rfc3339_ms(t, when);
	snprintf(path, sizeof path, "/v1/memory/sources/%s?as_of=%s", id, when);
	struct it_resp r;
	get(path, token, &r);
	IT_STATUS(&r, status);
	if (status == 200) {
		IT_CHECK(it_json_str_is(r.json, "effective_retrieval_state", state) &&
			     it_json_int(r.json, "revision", -1) == revision &&
			     it_json_str_is(r.json, "as_of", when) &&
			     it_resp_header(&r, "ETag") == NULL,
			 "GET as of: want %s at revision %lld, as_of, no ETag: %s", state, revision,
			 r.body);
	}
	it_resp_free(&r);
}

static void put_mode(const char *token, const char *thread, long long expected, const char *mode)
{
	char path[200], body[120];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	snprintf(body, sizeof body, "{\"expected_revision\":%lld,\"mode\":\"%s\"}", expected,
		 mode);
	struct it_resp r;
	send_json("PUT", path, token, json_loads(body, 0, NULL), NULL, &r);
	IT_CHECK(r.status == 200 || r.status == 201, "memory-mode %s: %s", mode, r.body);
	it_resp_free(&r);
}

static void test_creation_classification_thread_and_revocation(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "asof-src");
	const char *q = "qzasofone";
	long long before = instant();
	char a[ID_MAX];
	note(t.admin, "qzasofone the first note", "active", NULL, a, NULL);
	long long created = instant();
	classify_ok(t.admin, a, 1, "cold", "active");
	long long cold = instant();
	classify_ok(t.admin, a, 2, "active", "cold");
	long long active = instant();
	put_mode(t.admin, "thr-asof", 0, "disabled");
	long long disabled = instant();
	struct it_resp r;
	revoke_source(t.admin, a, 3, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	long long revoked = instant();

	expect_at(t.admin, q, NULL, before, a, NULL, 0, "before its creation");
	expect_at(t.admin, q, NULL, created, a, "selected", 1, "once created");
	expect_at(t.admin, q, NULL, cold, a, "classification_cold", 2, "made cold");
	expect_at(t.admin, q, NULL, active, a, "selected", 3, "active again");
	expect_at(t.admin, q, "thr-asof", active, a, "selected", 3, "before the thread's disable");
	expect_at(t.admin, q, "thr-asof", disabled, a, "thread_memory_disabled", 3,
		  "the thread disabled");
	expect_at(t.admin, q, NULL, disabled, a, "selected", 3, "before the revocation");
	expect_at(t.admin, q, NULL, revoked, a, "revoked", 4, "after the revocation");
	expect_at(t.admin, q, NULL, 0, a, "revoked", 4, "now");

	expect_get_at(t.admin, a, before, 404, NULL, 0);
	expect_get_at(t.admin, a, created, 200, "eligible", 1);
	expect_get_at(t.admin, a, cold, 200, "ineligible", 2);
	expect_get_at(t.admin, a, disabled, 200, "eligible", 3);
	expect_get_at(t.admin, a, revoked, 200, "ineligible", 4);
	tenant_free(&t);
}

static void test_assent_revocation_and_expiry(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "asof-asn");
	const char *owner = "owner-asof";
	char phash[REF_LEN], ident1[REF_LEN], ident2[REF_LEN];
	const char *uri1 = "https://asof.example/facts/1", *uri2 = "https://asof.example/facts/2";
	sha256_str("foreign bytes for as-of", phash);
	identity_of(owner, uri1, phash, ident1);
	identity_of(owner, uri2, phash, ident2);
	char lasting[ID_MAX], brief[ID_MAX], when[IT_TIME_LEN];
	assent_grant(t.admin, owner, ident1, FAR_FUTURE, lasting);
	long long expires = it_now_ms() + 1500;
	it_rfc3339_ms(expires, when);
	assent_grant(t.admin, owner, ident2, when, brief);
	char p1[ID_MAX], p2[ID_MAX], d1[ID_MAX], d2[ID_MAX];
	json_decref(create_source(t.admin, pointer_body(uri1, phash, owner, lasting), p1));
	json_decref(create_source(t.admin, pointer_body(uri2, phash, owner, brief), p2));
	derive(t.admin, "summary", df(p1, 1), "qzasoftwo summary of the first fact", d1);
	derive(t.admin, "summary", df(p2, 1), "qzasofthree summary of the second fact", d2);
	long long granted = instant();
	struct it_resp r;
	assent_revoke(t.admin, lasting, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	long long withdrawn = instant();
	it_sleep_until_ms(expires + 300);
	long long expired = it_now_ms();

	expect_at(t.admin, "qzasoftwo", NULL, granted, d1, "selected", 1, "under a live assent");
	expect_at(t.admin, "qzasoftwo", NULL, withdrawn, d1, "upstream_ineligible", 1,
		  "its upstream's assent revoked");
	expect_get_at(t.admin, p1, granted, 200, "eligible", 1);
	expect_get_at(t.admin, p1, withdrawn, 200, "ineligible", 1);
	expect_at(t.admin, "qzasofthree", NULL, granted, d2, "selected", 1, "before the expiry");
	/* a derivative reads its upstream's expiry as upstream_ineligible, as explain does now */
	expect_at(t.admin, "qzasofthree", NULL, expired, d2, "upstream_ineligible", 1,
		  "after the expiry");
	expect_get_at(t.admin, p2, granted, 200, "eligible", 1);
	expect_get_at(t.admin, p2, expired, 200, "ineligible", 1);
	tenant_free(&t);
}

static void test_as_of_must_be_a_past_instant(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "asof-bad");
	char a[ID_MAX];
	note(t.admin, "qzasoffour note", "active", NULL, a, NULL);
	char future[IT_TIME_LEN];
	it_rfc3339_ms(it_now_ms() + 60000, future);
	static const char *const bad[] = {"yesterday", "2026-13-01T00:00:00Z", NULL};
	for (int i = 0; i < 3; i++) {
		const char *v = i < 2 ? bad[i] : future;
		json_t *b = qbody("qzasoffour", NULL);
		json_object_set_new(b, "as_of", json_string(v));
		struct it_resp r;
		retrieve(EXPLAIN, t.admin, b, &r);
		expect_422(&r, "validation_failed", "as_of", true, v);
		it_resp_free(&r);
		char path[200];
		char *esc = it_url_escape(v);
		snprintf(path, sizeof path, "/v1/memory/sources/%s?as_of=%s", a, esc);
		free(esc);
		get(path, t.admin, &r);
		expect_422(&r, "validation_failed", "as_of", true, v);
		it_resp_free(&r);
	}
	/* search takes no as_of */
	json_t *b = qbody("qzasoffour", NULL);
	json_object_set_new(b, "as_of", json_string(future));
	struct it_resp r;
	retrieve(SEARCH, t.admin, b, &r);
	expect_422(&r, "unknown_field", "as_of", true, "as_of on search");
	it_resp_free(&r);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creation_classification_thread_and_revocation),
		cmocka_unit_test(test_assent_revocation_and_expiry),
		cmocka_unit_test(test_as_of_must_be_a_past_instant),
	};
	int rc = cmocka_run_group_tests_name("it_memory_as_of", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
