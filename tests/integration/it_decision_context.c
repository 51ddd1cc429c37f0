/*
 * it_decision_context — decision-context advisory retrieval end to end (API.md §0, §6, §7;
 * docs/providers-contract.md "Decision-context retrieve"; the seed
 * decision-context-advisory-provider-v0), against the fake provider (fake_provider.c):
 *
 *  - every fake mode → the receipt's status and reason_code (fail open: always 200), a
 *    refused connection → provider_unreachable, a slow provider with timeout_seconds 1
 *    answered within the deadline + 1 s;
 *  - resolution: none → provider_missing, two ready → provider_ambiguous, an explicit id that
 *    is disabled / not doctored / of the other protocol / unknown → provider_disabled /
 *    provider_not_ready / provider_missing; only enabled, doctor-ready providers count;
 *  - the request the provider receives, member by member (scope_ref normalised,
 *    timeout_seconds = min(request, provider)), its Content-Type and the traceparent;
 *  - provider_ref = "provider-" + 20 hex of SHA-256(ext \n namespace \n resource_ref);
 *    delivery receipt_only / local_private_transient;
 *  - the stored receipt read back, without query, scope, content or resource refs; the same
 *    for the audit log, /metrics and the server log;
 *  - every request bound at its edge; sync → read_only_provider; scopes;
 *  - while eight slow provider calls are in flight, /healthz and a memory-mode read still
 *    answer within 500 ms.
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
#include <openssl/evp.h>

#include "fake.h"
#include "harness.h"

#define OBSERVED_AT "2026-11-29T21:07:22.123Z"
#define RECEIPT_SCHEMA "context_provider_retrieval_v0"
#define REQUEST_SCHEMA "decision_context_advisory_retrieve_request_v0"
#define TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
/* private values of the requests, looked for where they must never appear */
#define QUERY_MARK "QUERY-MARK-9d1e which cache policy did we pick"
#define SCOPE_ID "SCOPE-MARK-5b2c"
#define SCOPE_REF "codex://threads/" SCOPE_ID
#define SCOPE_NORMALISED "host-session:codex:" SCOPE_ID
#define NO_REV (-1LL)
#define SLOW_CALLS 8

static struct it_server srv;
static struct it_fake fake;
static char *tenant_a;
static char *admin_a; /* admin */
static char *dc_a;    /* decision_context.read */
static char *audit_a; /* audit:read */

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url) */
static const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

static char *token_for(const char *tenant, const char *scopes)
{
	return it_token_for(tenant, scopes, "it-dc");
}

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

/* "provider-" + the first 20 hex of SHA-256(ext "\n" ns "\n" ref) */
static void provider_ref(const char *ext, const char *ns, const char *ref, char out[32])
{
	char buf[2048];
	int n = snprintf(buf, sizeof buf, "%s\n%s\n%s", ext, ns, ref);
	assert_true(n > 0 && (size_t)n < sizeof buf);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(buf, (size_t)n, md, &mdlen, EVP_sha256(), NULL), 1);
	memcpy(out, "provider-", 9);
	for (int i = 0; i < 10; i++)
		snprintf(out + 9 + 2 * i, 3, "%02x", md[i]);
}

/* ================================================================ providers */

static void provider_ready(const char *tenant_token, const char *id, const char *prefix,
			   const char *mode, int timeout)
{
	it_provider_ready(&srv, tenant_token, &fake, id, prefix, mode, timeout);
}

/* registers (not doctored) */
static void provider_raw(const char *token, const char *id, const char *endpoint, int timeout)
{
	it_provider_register(&srv, token, id, IT_PROTO_DC, endpoint, NULL, timeout);
}

static void provider_patch(const char *token, const char *id, const char *json_body)
{
	it_provider_patch(&srv, token, id, json_body);
}

/* ================================================================ requests */

/* new: a valid retrieve body; ext NULL: no extension_id */
static json_t *dc_req(const char *ext)
{
	json_t *b =
	    json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:s}", "namespace", "it-ns", "scope_ref",
		      SCOPE_REF, "query", QUERY_MARK, "query_summary", "cache policy decision",
		      "max_results", 3, "timeout_seconds", 10, "observed_at", OBSERVED_AT);
	if (ext)
		json_object_set_new(b, "extension_id", json_string(ext));
	return b;
}

/* body: steals */
static void retrieve(const char *token, json_t *body, const char *const *headers, struct it_resp *r)
{
	IT_CHECK(body != NULL, "a request body could not be built");
	it_request_json(&srv, "POST", "/v1/decision-context/retrieve", token, body, headers, r);
	json_decref(body);
}

/* the receipt of context_provider_retrieval_v0 as the request (borrowed) asked for it:
 * status, reason (NULL: null), ext and rev (NULL / NO_REV: null), item count */
static void expect_receipt(const json_t *rc, const json_t *req, const char *status,
			   const char *reason, const char *ext, long long rev, size_t nitems,
			   const char *what)
{
	static const char *const keys[] = {
	    "schema_version",    "receipt_id", "status",        "reason_code", "extension_id",
	    "provider_revision", "namespace",  "query_summary", "observed_at", "requested_limit",
	    "item_count",        "latency_ms", "fail_open",     "items",       NULL};
	char *text = json_dumps(rc, JSON_COMPACT);
	IT_CHECK(text != NULL, "%s: no receipt", what);
	IT_CHECK(it_is_exactly(rc, keys), "%s: not exactly the receipt members: %s", what, text);
	IT_CHECK(it_json_str_is(rc, "schema_version", RECEIPT_SCHEMA), "%s: schema_version: %s",
		 what, text);
	const char *id = it_json_str(rc, "receipt_id");
	IT_CHECK(id && strlen(id) == 36 && strncmp(id, "rcp_", 4) == 0 && lower_hex(id + 4, 32),
		 "%s: receipt_id is not rcp_ + 32 hex: %s", what, text);
	IT_CHECK(it_json_str_is(rc, "status", status), "%s: status is not %s: %s", what, status,
		 text);
	if (reason)
		IT_CHECK(it_json_str_is(rc, "reason_code", reason), "%s: reason_code is not %s: %s",
			 what, reason, text);
	else
		IT_CHECK(it_json_has_null(rc, "reason_code"), "%s: reason_code is not null: %s",
			 what, text);
	if (ext)
		IT_CHECK(it_json_str_is(rc, "extension_id", ext), "%s: extension_id is not %s: %s",
			 what, ext, text);
	else
		IT_CHECK(it_json_has_null(rc, "extension_id"),
			 "%s: extension_id is not null (no provider was named): %s", what, text);
	if (rev == NO_REV)
		IT_CHECK(it_json_has_null(rc, "provider_revision"),
			 "%s: provider_revision is not null: %s", what, text);
	else
		IT_CHECK(it_json_int(rc, "provider_revision", -1) == rev,
			 "%s: provider_revision is not %lld: %s", what, rev, text);
	IT_CHECK(json_equal(json_object_get(rc, "namespace"), json_object_get(req, "namespace")) &&
		     json_equal(json_object_get(rc, "query_summary"),
				json_object_get(req, "query_summary")) &&
		     json_equal(json_object_get(rc, "observed_at"),
				json_object_get(req, "observed_at")) &&
		     json_equal(json_object_get(rc, "requested_limit"),
				json_object_get(req, "max_results")),
		 "%s: namespace / query_summary / observed_at / requested_limit are not the "
		 "request's: %s",
		 what, text);
	const json_t *items = json_object_get(rc, "items");
	IT_CHECK(json_is_array(items) && json_array_size(items) == nitems &&
		     it_json_int(rc, "item_count", -1) == (long long)nitems,
		 "%s: expected %zu items and item_count %zu: %s", what, nitems, nitems, text);
	json_t *lat = json_object_get(rc, "latency_ms");
	IT_CHECK(json_is_integer(lat) && json_integer_value(lat) >= 0,
		 "%s: latency_ms is not a non-negative integer: %s", what, text);
	static const char *const not_called[] = {"provider_missing", "provider_ambiguous",
						 "provider_disabled", "provider_not_ready"};
	for (size_t k = 0; reason && k < sizeof not_called / sizeof *not_called; k++) {
		if (strcmp(reason, not_called[k]) == 0)
			IT_CHECK(json_integer_value(lat) == 0,
				 "%s: latency_ms is not 0 when no provider was called: %s", what,
				 text);
	}
	IT_CHECK(json_is_true(json_object_get(rc, "fail_open")), "%s: fail_open is not true: %s",
		 what, text);
	size_t i;
	const json_t *it;
	static const char *const item_keys[] = {"provider_ref", "summary", "score", NULL};
	json_array_foreach (items, i, it) {
		const char *ref = it_json_str(it, "provider_ref");
		const json_t *score = json_object_get(it, "score");
		IT_CHECK(it_is_exactly(it, item_keys) && ref && strlen(ref) == 29 &&
			     strncmp(ref, "provider-", 9) == 0 && lower_hex(ref + 9, 20) &&
			     json_is_string(json_object_get(it, "summary")) &&
			     (json_is_null(score) || json_is_number(score)),
			 "%s: item %zu is not {provider_ref, summary, score}: %s", what, i, text);
	}
	IT_CHECK(!strstr(text, IT_FAKE_CONTENT_MARKER) && !strstr(text, IT_FAKE_REF_PREFIX) &&
		     !strstr(text, "QUERY-MARK") && !strstr(text, SCOPE_ID),
		 "%s: the receipt holds content, a resource ref, the query or the scope: %s", what,
		 text);
	free(text);
}

/* a 200 answer {receipt} (or {receipt, transient} when transient) */
static const json_t *answer_receipt(const struct it_resp *r, bool transient, const char *what)
{
	IT_STATUS(r, 200);
	static const char *const only[] = {"receipt", NULL};
	static const char *const both[] = {"receipt", "transient", NULL};
	IT_CHECK(it_is_exactly(r->json, transient ? both : only), "%s: not exactly %s: %s", what,
		 transient ? "{receipt, transient}" : "{receipt}", r->body);
	return json_object_get(r->json, "receipt");
}

/* one retrieve with ext, expecting status / reason; returns nothing */
static void expect_outcome(const char *token, json_t *req, const char *status, const char *reason,
			   const char *ext, long long rev, size_t nitems, const char *what)
{
	struct it_resp r;
	json_t *keep = json_incref(req);
	retrieve(token, req, NULL, &r);
	expect_receipt(answer_receipt(&r, false, what), keep, status, reason, ext, rev, nitems,
		       what);
	it_resp_free(&r);
	json_decref(keep);
}

/* ================================================================ setup */

struct mode_case {
	const char *mode;
	const char *status;
	const char *reason; /* NULL: null */
	size_t nitems;      /* with max_results 3 */
};

static const struct mode_case mode_cases[] = {
    {"good", "completed", NULL, 2},
    {"full", "completed", NULL, 3},
    {"doctor_slow", "completed", NULL, 2},
    {"unavailable", "unavailable", "index_offline", 0},
    {"unknown_field", "unavailable", "contract_invalid", 0},
    {"missing_field", "unavailable", "contract_invalid", 0},
    {"string_score", "unavailable", "contract_invalid", 0},
    {"nan_score", "unavailable", "contract_invalid", 0},
    {"inf_score", "unavailable", "contract_invalid", 0},
    {"items_on_unavailable", "unavailable", "contract_invalid", 0},
    {"status_mismatch", "unavailable", "contract_invalid", 0},
    {"too_many", "unavailable", "contract_invalid", 0},
    {"ok_false", "unavailable", "contract_invalid", 0},
    {"not_json", "unavailable", "contract_invalid", 0},
    {"http500", "unavailable", "provider_http_error", 0},
    {"redirect", "unavailable", "provider_http_error", 0},
    {"oversize", "unavailable", "provider_oversize", 0},
    {"http500_oversize", "unavailable", "provider_http_error", 0},
    {"big_score", "completed", NULL, 2},
};
#define N_MODE_CASES (sizeof mode_cases / sizeof *mode_cases)

/* tenant A's providers (first test): one per fake mode plus the resolution cases */
static void test_setup_providers(void **state)
{
	(void)state;
	char id[80];
	for (size_t i = 0; i < N_MODE_CASES; i++) {
		it_mode_id("dc", mode_cases[i].mode, id, sizeof id);
		provider_ready(admin_a, id, "dc", mode_cases[i].mode, 5);
	}
	provider_ready(admin_a, "dc-slow", "dc", "slow", 5);
	provider_ready(admin_a, "dc-t30", "dc", "good", 30);
	provider_ready(admin_a, "sp-good", "sp", "good", 5);
	/* disabled after a passing doctor (revision 2) */
	provider_ready(admin_a, "dc-disabled", "dc", "good", 5);
	provider_patch(admin_a, "dc-disabled", "{\"expected_revision\":1,\"enabled\":false}");
	/* registered, never doctored; and disabled without a doctor */
	provider_raw(admin_a, "dc-undoctored", furl("/dc/good"), 5);
	provider_raw(admin_a, "dc-raw-off", furl("/dc/good"), 5);
	provider_patch(admin_a, "dc-raw-off", "{\"expected_revision\":1,\"enabled\":false}");
	/* doctored, then moved: not ready at its current revision */
	provider_ready(admin_a, "dc-repointed", "dc", "good", 5);
	provider_patch(admin_a, "dc-repointed",
		       "{\"expected_revision\":1,\"endpoint_url\":\"http://127.0.0.1:9/dc/good\"}");
	/* an endpoint that refuses connections, with a doctor that passes */
	it_provider_unreachable(&srv, admin_a, &fake, "dc-unreachable", "dc");
}

/* ================================================================ modes */

static void test_modes(void **state)
{
	(void)state;
	char id[80];
	for (size_t i = 0; i < N_MODE_CASES; i++) {
		const struct mode_case *c = &mode_cases[i];
		it_mode_id("dc", c->mode, id, sizeof id);
		long before = it_fake_count(&fake, "dc", c->mode);
		expect_outcome(dc_a, dc_req(id), c->status, c->reason, id, 1, c->nitems, c->mode);
		IT_CHECK(it_fake_count(&fake, "dc", c->mode) == before + 1,
			 "%s: the provider was not called exactly once", c->mode);
	}
	/* full and too_many at the cap: 8 items pass, 9 are contract_invalid */
	json_t *req = dc_req("dc-full");
	json_object_set_new(req, "max_results", json_integer(8));
	expect_outcome(dc_a, req, "completed", NULL, "dc-full", 1, 8, "full, max_results 8");
	req = dc_req("dc-full");
	json_object_set_new(req, "max_results", json_integer(1));
	expect_outcome(dc_a, req, "completed", NULL, "dc-full", 1, 1, "full, max_results 1");
	req = dc_req("dc-too-many");
	json_object_set_new(req, "max_results", json_integer(8));
	expect_outcome(dc_a, req, "unavailable", "contract_invalid", "dc-too-many", 1, 0,
		       "too_many, max_results 8");
	/* good with max_results 1: two items are one too many */
	req = dc_req("dc-good");
	json_object_set_new(req, "max_results", json_integer(1));
	expect_outcome(dc_a, req, "unavailable", "contract_invalid", "dc-good", 1, 0,
		       "good, max_results 1");
}

static void test_unreachable(void **state)
{
	(void)state;
	expect_outcome(dc_a, dc_req("dc-unreachable"), "unavailable", "provider_unreachable",
		       "dc-unreachable", 1, 0, "a port that refuses connections");
}

static void test_timeout(void **state)
{
	(void)state;
	json_t *req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_integer(1));
	json_t *keep = json_incref(req);
	struct it_resp r;
	double t0 = it_now_s();
	retrieve(dc_a, req, NULL, &r);
	double took = it_now_s() - t0;
	const json_t *rc = answer_receipt(&r, false, "slow, timeout 1");
	expect_receipt(rc, keep, "unavailable", "provider_timeout", "dc-slow", 1, 0,
		       "slow, timeout 1");
	IT_CHECK(took < 2.0, "a provider call with timeout_seconds 1 answered after %.2f s", took);
	long long lat = it_json_int(rc, "latency_ms", -1);
	IT_CHECK(lat >= 900 && lat < 2000, "latency_ms %lld is not about the 1 s deadline", lat);
	it_resp_free(&r);
	json_decref(keep);
	/* the provider got timeout_seconds 1 */
	json_t *last = it_fake_last(&fake, "dc", "slow");
	json_t *sent = json_loads(it_json_str(last, "body"), 0, NULL);
	IT_CHECK(it_json_int(sent, "timeout_seconds", -1) == 1,
		 "the slow provider was not sent timeout_seconds 1: %s", it_json_str(last, "body"));
	json_decref(sent);
	json_decref(last);

	/* a fractional deadline: 1.5 s */
	req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_real(1.5));
	t0 = it_now_s();
	retrieve(dc_a, req, NULL, &r);
	took = it_now_s() - t0;
	IT_STATUS(&r, 200);
	IT_CHECK(
	    it_json_str_is(json_object_get(r.json, "receipt"), "reason_code", "provider_timeout"),
	    "slow with timeout 1.5: %s", r.body);
	IT_CHECK(took >= 1.4 && took < 2.5,
		 "a provider call with timeout_seconds 1.5 answered after %.2f s", took);
	it_resp_free(&r);
}

/* ================================================================ resolution */

static void test_resolution(void **state)
{
	(void)state;
	/* tenant A holds many ready providers: without an id, ambiguous */
	expect_outcome(dc_a, dc_req(NULL), "unavailable", "provider_ambiguous", NULL, NO_REV, 0,
		       "many ready, no extension_id");
	/* an explicit provider that is disabled or not ready is named with its revision; an
	 * explicit id naming no provider of the protocol is echoed without one */
	expect_outcome(dc_a, dc_req("dc-disabled"), "unavailable", "provider_disabled",
		       "dc-disabled", 2, 0, "explicit disabled");
	expect_outcome(dc_a, dc_req("dc-raw-off"), "unavailable", "provider_disabled", "dc-raw-off",
		       2, 0, "explicit disabled and never doctored");
	expect_outcome(dc_a, dc_req("dc-undoctored"), "unavailable", "provider_not_ready",
		       "dc-undoctored", 1, 0, "explicit never doctored");
	expect_outcome(dc_a, dc_req("dc-repointed"), "unavailable", "provider_not_ready",
		       "dc-repointed", 2, 0, "explicit, endpoint changed after the doctor");
	expect_outcome(dc_a, dc_req("sp-good"), "unavailable", "provider_missing", "sp-good",
		       NO_REV, 0, "explicit of the other protocol");
	expect_outcome(dc_a, dc_req("no-such-provider"), "unavailable", "provider_missing",
		       "no-such-provider", NO_REV, 0, "explicit unknown");

	/* a tenant without providers, and one with only a semantic-preference provider */
	char *t_none = it_unique("dc-none");
	char *tok_none = token_for(t_none, "admin");
	expect_outcome(tok_none, dc_req(NULL), "unavailable", "provider_missing", NULL, NO_REV, 0,
		       "no provider at all");
	provider_ready(tok_none, "only-sp", "sp", "good", 5);
	expect_outcome(tok_none, dc_req(NULL), "unavailable", "provider_missing", NULL, NO_REV, 0,
		       "only a provider of the other protocol");

	/* one ready beside a disabled one and an undoctored one: resolved */
	char *t_one = it_unique("dc-one");
	char *tok_one = token_for(t_one, "admin");
	provider_ready(tok_one, "only", "dc", "good", 5);
	provider_ready(tok_one, "off", "dc", "good", 5);
	provider_patch(tok_one, "off", "{\"expected_revision\":1,\"enabled\":false}");
	provider_raw(tok_one, "raw", furl("/dc/good"), 5);
	expect_outcome(tok_one, dc_req(NULL), "completed", NULL, "only", 1, 2,
		       "one enabled and ready among others");

	/* two ready: ambiguous, unless one is named */
	char *t_two = it_unique("dc-two");
	char *tok_two = token_for(t_two, "admin");
	provider_ready(tok_two, "first", "dc", "good", 5);
	provider_ready(tok_two, "second", "dc", "full", 5);
	expect_outcome(tok_two, dc_req(NULL), "unavailable", "provider_ambiguous", NULL, NO_REV, 0,
		       "two ready");
	expect_outcome(tok_two, dc_req("second"), "completed", NULL, "second", 1, 3,
		       "two ready, one named");
	/* disabling one resolves the other */
	provider_patch(tok_two, "first", "{\"expected_revision\":1,\"enabled\":false}");
	expect_outcome(tok_two, dc_req(NULL), "completed", NULL, "second", 1, 3,
		       "two, one disabled");

	free(t_none);
	free(tok_none);
	free(t_one);
	free(tok_one);
	free(t_two);
	free(tok_two);
}

/* ================================================================ the request sent */

/* the last body the fake received for mode, parsed (new), after checking that exactly one
 * more call arrived than `before` and its Content-Type and traceparent (NULL: absent) */
static json_t *last_request(const char *mode, long before, const char *traceparent)
{
	json_t *last = NULL;
	json_t *body = it_fake_expect_request(&fake, "dc", mode, before, &last);
	if (traceparent)
		IT_CHECK(it_json_str_is(last, "traceparent", traceparent),
			 "traceparent was not passed on: %s",
			 it_json_str(last, "traceparent") ? it_json_str(last, "traceparent")
							  : "(none)");
	else
		IT_CHECK(it_json_has_null(last, "traceparent"),
			 "a traceparent reached the provider that the caller did not send (well "
			 "formed): %s",
			 it_json_str(last, "traceparent"));
	json_decref(last);
	return body;
}

/* new: the request the fake's /dc/good received for req (steals), sent with headers and
 * answered 200; checked as last_request (traceparent: what must arrive, NULL: none) */
static json_t *sent_to_good(json_t *req, const char *const *headers, const char *traceparent)
{
	struct it_resp r;
	long before = it_fake_count(&fake, "dc", "good");
	retrieve(dc_a, req, headers, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	return last_request("good", before, traceparent);
}

static void test_request_sent(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "schema_version", "operation",   "namespace",       "scope_ref",   "query",
	    "query_summary",  "max_results", "timeout_seconds", "observed_at", NULL};
	const char *tp[] = {"traceparent: " TRACEPARENT, NULL};

	/* request 2.5 s, provider 30 s → 2.5 */
	json_t *req = dc_req("dc-t30");
	json_object_set_new(req, "namespace", json_string("ns-exact"));
	json_object_set_new(req, "scope_ref", json_string("codex://threads/abc"));
	json_object_set_new(req, "query", json_string("Which cache policy did we pick?"));
	json_object_set_new(req, "query_summary", json_string("cache policy decision"));
	json_object_set_new(req, "max_results", json_integer(4));
	json_object_set_new(req, "timeout_seconds", json_real(2.5));
	json_object_set_new(req, "observed_at", json_string("2026-11-29T21:07:22.123Z"));
	json_t *sent = sent_to_good(req, tp, TRACEPARENT);
	char *text = json_dumps(sent, JSON_COMPACT);
	IT_CHECK(it_is_exactly(sent, keys), "the provider request is not exactly the 9 members: %s",
		 text);
	IT_CHECK(it_json_str_is(sent, "schema_version", REQUEST_SCHEMA), "schema_version: %s",
		 text);
	IT_CHECK(it_json_str_is(sent, "operation", "retrieve"), "operation: %s", text);
	IT_CHECK(it_json_str_is(sent, "namespace", "ns-exact"), "namespace: %s", text);
	IT_CHECK(it_json_str_is(sent, "scope_ref", "host-session:codex:abc"),
		 "scope_ref is not normalised to host-session:codex:abc: %s", text);
	IT_CHECK(it_json_str_is(sent, "query", "Which cache policy did we pick?"), "query: %s",
		 text);
	IT_CHECK(it_json_str_is(sent, "query_summary", "cache policy decision"),
		 "query_summary: %s", text);
	IT_CHECK(json_is_integer(json_object_get(sent, "max_results")) &&
		     it_json_int(sent, "max_results", -1) == 4,
		 "max_results: %s", text);
	const json_t *t = json_object_get(sent, "timeout_seconds");
	IT_CHECK(json_is_number(t) && json_number_value(t) == 2.5,
		 "timeout_seconds is not min(2.5, 30) = 2.5: %s", text);
	IT_CHECK(it_json_str_is(sent, "observed_at", "2026-11-29T21:07:22.123Z"), "observed_at: %s",
		 text);
	free(text);
	json_decref(sent);

	/* request 60 s, provider 5 s → 5, an integer; no traceparent sent → none passed */
	req = dc_req("dc-good");
	json_object_set_new(req, "timeout_seconds", json_integer(60));
	sent = sent_to_good(req, NULL, NULL);
	t = json_object_get(sent, "timeout_seconds");
	IT_CHECK(json_is_integer(t) && json_integer_value(t) == 5,
		 "timeout_seconds is not min(60, 5) = 5 (an integer): %g",
		 json_is_number(t) ? json_number_value(t) : -1.0);
	IT_CHECK(it_json_str_is(sent, "scope_ref", SCOPE_NORMALISED), "scope_ref: %s",
		 it_json_str(sent, "scope_ref"));
	json_decref(sent);

	/* 120.0 s with provider 30 → 30; a malformed traceparent is not passed on */
	const char *bad_tp[] = {"traceparent: not-a-traceparent", NULL};
	req = dc_req("dc-t30");
	json_object_set_new(req, "timeout_seconds", json_real(120.0));
	sent = sent_to_good(req, bad_tp, NULL);
	t = json_object_get(sent, "timeout_seconds");
	IT_CHECK(json_is_number(t) && json_number_value(t) == 30.0,
		 "timeout_seconds is not min(120.0, 30) = 30: %g",
		 json_is_number(t) ? json_number_value(t) : -1.0);
	json_decref(sent);

	/* scope_refs that are not codex://threads/<id> pass unchanged */
	const char *unchanged[] = {"workspace:alpha/beta", "codex://threads/",
				   "codex://threads/a/b", "codex://thread/abc",
				   "host-session:codex:abc"};
	for (size_t i = 0; i < sizeof unchanged / sizeof *unchanged; i++) {
		req = dc_req("dc-good");
		json_object_set_new(req, "scope_ref", json_string(unchanged[i]));
		sent = sent_to_good(req, NULL, NULL);
		IT_CHECK(it_json_str_is(sent, "scope_ref", unchanged[i]),
			 "scope_ref %s was changed to %s", unchanged[i],
			 it_json_str(sent, "scope_ref"));
		json_decref(sent);
	}
	/* the id characters [A-Za-z0-9._:-] normalise */
	req = dc_req("dc-good");
	json_object_set_new(req, "scope_ref", json_string("codex://threads/Ab9._:-z"));
	sent = sent_to_good(req, NULL, NULL);
	IT_CHECK(it_json_str_is(sent, "scope_ref", "host-session:codex:Ab9._:-z"),
		 "codex://threads/Ab9._:-z normalised to %s", it_json_str(sent, "scope_ref"));
	json_decref(sent);
}

/* ================================================================ receipts, delivery */

static void test_provider_ref(void **state)
{
	(void)state;
	struct it_resp r;
	char want1[32], want2[32];
	/* the example of the OpenAPI document checks this test's own computation */
	provider_ref("obelisk-history", "codex-history", "codex-session-4711/turn-12", want1);
	IT_CHECK(strcmp(want1, "provider-c9bab364aabceba8ec87") == 0,
		 "the test computes provider_ref %s for the documented example", want1);
	const char *namespaces[] = {"it-ns", "other-ns"};
	char first_ns_ref[32] = "";
	for (size_t n = 0; n < 2; n++) {
		json_t *req = dc_req("dc-good");
		json_object_set_new(req, "namespace", json_string(namespaces[n]));
		retrieve(dc_a, req, NULL, &r);
		const json_t *rc = answer_receipt(&r, false, "good");
		const json_t *items = json_object_get(rc, "items");
		provider_ref("dc-good", namespaces[n], IT_FAKE_REF_PREFIX "1", want1);
		provider_ref("dc-good", namespaces[n], IT_FAKE_REF_PREFIX "2", want2);
		const json_t *i0 = json_array_get(items, 0), *i1 = json_array_get(items, 1);
		IT_CHECK(it_json_str_is(i0, "provider_ref", want1) &&
			     it_json_str_is(i1, "provider_ref", want2),
			 "provider_ref is not provider- + 20 hex of SHA-256(ext\\nns\\nref): "
			 "expected %s, %s: %s",
			 want1, want2, r.body);
		IT_CHECK(it_json_str_is(i0, "summary", "Generic advisory summary 1") &&
			     json_number_value(json_object_get(i0, "score")) == 0.5 &&
			     it_json_str_is(i1, "summary", "Generic advisory summary 2") &&
			     it_json_has_null(i1, "score"),
			 "summaries and scores are not the provider's: %s", r.body);
		if (n == 0)
			snprintf(first_ns_ref, sizeof first_ns_ref, "%s", want1);
		else
			IT_CHECK(strcmp(first_ns_ref, want1) != 0,
				 "the same reference correlates across namespaces");
		it_resp_free(&r);
	}
	/* another extension, same namespace and reference: another ref */
	json_t *req = dc_req("dc-t30");
	retrieve(dc_a, req, NULL, &r);
	const json_t *rc = answer_receipt(&r, false, "t30");
	provider_ref("dc-t30", "it-ns", IT_FAKE_REF_PREFIX "1", want1);
	IT_CHECK(
	    it_json_str_is(json_array_get(json_object_get(rc, "items"), 0), "provider_ref", want1),
	    "provider_ref of dc-t30: expected %s: %s", want1, r.body);
	it_resp_free(&r);
}

static void test_delivery(void **state)
{
	(void)state;
	static const char *const tkeys[] = {"packet_kind", "content_trust", "content_may_instruct",
					    "items", NULL};
	static const char *const ikeys[] = {"provider_ref", "summary", "content", "score", NULL};
	struct it_resp r;

	json_t *req = dc_req("dc-good");
	json_object_set_new(req, "delivery", json_string("local_private_transient"));
	json_t *keep = json_incref(req);
	retrieve(dc_a, req, NULL, &r);
	const json_t *rc = answer_receipt(&r, true, "local_private_transient");
	expect_receipt(rc, keep, "completed", NULL, "dc-good", 1, 2, "local_private_transient");
	json_decref(keep);
	const json_t *tr = json_object_get(r.json, "transient");
	IT_CHECK(it_is_exactly(tr, tkeys) &&
		     it_json_str_is(tr, "packet_kind", "local_private_transient") &&
		     it_json_str_is(tr, "content_trust", "untrusted_advisory") &&
		     json_is_false(json_object_get(tr, "content_may_instruct")),
		 "transient is not {packet_kind, content_trust, content_may_instruct, items}: %s",
		 r.body);
	const json_t *titems = json_object_get(tr, "items");
	const json_t *ritems = json_object_get(rc, "items");
	IT_CHECK(json_array_size(titems) == 2, "transient items: %s", r.body);
	for (size_t i = 0; i < 2; i++) {
		const json_t *ti = json_array_get(titems, i), *ri = json_array_get(ritems, i);
		char want[96];
		snprintf(want, sizeof want, "%s transient exact content %zu",
			 IT_FAKE_CONTENT_MARKER, i + 1);
		IT_CHECK(it_is_exactly(ti, ikeys) && it_json_str_is(ti, "content", want) &&
			     json_equal(json_object_get(ti, "provider_ref"),
					json_object_get(ri, "provider_ref")) &&
			     json_equal(json_object_get(ti, "summary"),
					json_object_get(ri, "summary")) &&
			     json_equal(json_object_get(ti, "score"), json_object_get(ri, "score")),
			 "transient item %zu is not the receipt item plus its content: %s", i,
			 r.body);
		IT_CHECK(!strstr(r.body, IT_FAKE_REF_PREFIX),
			 "the answer carries a raw resource_ref: %s", r.body);
	}
	it_resp_free(&r);

	/* receipt_only, and the default, carry no transient and no content */
	const char *deliveries[] = {"receipt_only", NULL};
	for (size_t i = 0; i < 2; i++) {
		req = dc_req("dc-good");
		if (deliveries[i])
			json_object_set_new(req, "delivery", json_string(deliveries[i]));
		retrieve(dc_a, req, NULL, &r);
		(void)answer_receipt(&r, false, deliveries[i] ? "receipt_only" : "default");
		IT_CHECK(!strstr(r.body, IT_FAKE_CONTENT_MARKER), "content without transient: %s",
			 r.body);
		it_resp_free(&r);
	}

	/* transient with an unavailable answer, and with nothing resolved: items [] */
	const char *exts[] = {"dc-unavailable", "dc-undoctored"};
	for (size_t i = 0; i < 2; i++) {
		req = dc_req(exts[i]);
		json_object_set_new(req, "delivery", json_string("local_private_transient"));
		retrieve(dc_a, req, NULL, &r);
		(void)answer_receipt(&r, true, exts[i]);
		tr = json_object_get(r.json, "transient");
		IT_CHECK(it_is_exactly(tr, tkeys) && json_is_array(json_object_get(tr, "items")) &&
			     json_array_size(json_object_get(tr, "items")) == 0,
			 "%s: transient is not there with items []: %s", exts[i], r.body);
		it_resp_free(&r);
	}
}

static void get_receipt(const char *token, const char *id, struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/decision-context/receipts/%s", id);
	it_request(&srv, "GET", path, token, NULL, NULL, r);
}

static void expect_private_free(const char *text, size_t len, const char *where)
{
	static const char *const needles[] = {"QUERY-MARK",
					      SCOPE_ID,
					      IT_FAKE_CONTENT_MARKER,
					      IT_FAKE_REF_PREFIX,
					      "codex://threads/",
					      "Which cache policy did we pick?"};
	it_expect_absent(text, len, needles, sizeof needles / sizeof *needles, where);
}

static void test_receipt_readback(void **state)
{
	(void)state;
	struct it_resp r, g;
	/* dc-big-score: a score of 1e20 must read back as the number it was */
	const char *exts[] = {"dc-good", "dc-http500", "no-such-provider", "dc-big-score"};
	char first[64] = "";
	for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
		json_t *req = dc_req(exts[i]);
		json_object_set_new(req, "delivery", json_string("local_private_transient"));
		retrieve(dc_a, req, NULL, &r);
		const json_t *rc = answer_receipt(&r, true, exts[i]);
		const char *id = it_json_str(rc, "receipt_id");
		IT_CHECK(id != NULL, "no receipt_id: %s", r.body);
		IT_CHECK(strcmp(id, first) != 0, "two retrievals share receipt_id %s", id);
		snprintf(first, sizeof first, "%s", id);
		get_receipt(dc_a, id, &g);
		IT_STATUS(&g, 200);
		IT_CHECK(
		    json_equal(g.json, rc),
		    "the stored receipt differs from the answer's:\n  stored: %s\n  answer: %s",
		    g.body, r.body);
		expect_private_free(g.body, g.body_len, "a stored receipt");
		it_resp_free(&g);

		/* another tenant cannot read it; a token without the scope cannot either */
		char *t_b = it_unique("dc-b");
		char *tok_b = token_for(t_b, "decision_context.read");
		get_receipt(tok_b, id, &g);
		IT_PROBLEM(&g, 404, "not_found");
		it_resp_free(&g);
		get_receipt(audit_a, id, &g);
		IT_PROBLEM(&g, 403, "forbidden");
		it_resp_free(&g);
		free(tok_b);
		free(t_b);
		it_resp_free(&r);
	}
	get_receipt(dc_a, "rcp_00000000000000000000000000000000", &g);
	IT_PROBLEM(&g, 404, "not_found");
	it_resp_free(&g);

	/* receipts stay readable after their provider is deleted */
	char *t_d = it_unique("dc-del");
	char *tok_d = token_for(t_d, "admin");
	provider_ready(tok_d, "gone", "dc", "good", 5);
	retrieve(tok_d, dc_req("gone"), NULL, &r);
	const json_t *rc = answer_receipt(&r, false, "before delete");
	char id[64];
	snprintf(id, sizeof id, "%s", it_json_str(rc, "receipt_id"));
	json_t *keep = json_incref((json_t *)rc);
	it_resp_free(&r);
	it_request(&srv, "DELETE", "/v1/providers/gone", tok_d, NULL, NULL, &r);
	IT_STATUS(&r, 204);
	it_resp_free(&r);
	get_receipt(tok_d, id, &g);
	IT_STATUS(&g, 200);
	IT_CHECK(json_equal(g.json, keep), "the receipt changed after its provider was deleted");
	it_resp_free(&g);
	json_decref(keep);
	free(tok_d);
	free(t_d);
}

/* ================================================================ bounds */

struct bound_case {
	const char *what;
	const char *member; /* set from JSON text, or delete when value is NULL */
	const char *value;
	bool ok;
	const char *field; /* for a 422: errors[] names it */
	const char *code;  /* for a 422; NULL: validation_failed */
};

static char *json_str_text(const char *s)
{
	json_t *j = json_string(s);
	char *t = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	return t;
}

static void test_bounds(void **state)
{
	(void)state;
	char *ns120 = it_filled("ns", 120, 'n'), *ns121 = it_filled("ns", 121, 'n');
	char *q1000 = it_filled("q ", 1000, 'q'), *q1001 = it_filled("q ", 1001, 'q');
	char *s220 = it_filled("summary ", 220, 's'), *s221 = it_filled("summary ", 221, 's');
	char *sc2048 = it_filled("scope:", 2048, 'c'), *sc2049 = it_filled("scope:", 2049, 'c');
	char *t[8] = {json_str_text(ns120),  json_str_text(ns121), json_str_text(q1000),
		      json_str_text(q1001),  json_str_text(s220),  json_str_text(s221),
		      json_str_text(sc2048), json_str_text(sc2049)};
	const struct bound_case cases[] = {
	    {"namespace 120", "namespace", t[0], true, NULL, NULL},
	    {"namespace 121", "namespace", t[1], false, "namespace", NULL},
	    {"namespace empty", "namespace", "\"\"", false, "namespace", NULL},
	    {"namespace missing", "namespace", NULL, false, "namespace", NULL},
	    {"query 1000", "query", t[2], true, NULL, NULL},
	    {"query 1001", "query", t[3], false, "query", NULL},
	    {"query empty", "query", "\"\"", false, "query", NULL},
	    {"query missing", "query", NULL, false, "query", NULL},
	    {"query_summary 220", "query_summary", t[4], true, NULL, NULL},
	    {"query_summary 221", "query_summary", t[5], false, "query_summary", NULL},
	    {"query_summary empty", "query_summary", "\"\"", false, "query_summary", NULL},
	    {"query_summary with a path", "query_summary", "\"Read /Users/x/private.jsonl\"", false,
	     "query_summary", NULL},
	    {"query_summary with a URL", "query_summary", "\"see https://example.com/x\"", false,
	     "query_summary", NULL},
	    {"query_summary with an e-mail", "query_summary", "\"ask bob@example.com\"", false,
	     "query_summary", NULL},
	    {"query_summary with a file name", "query_summary", "\"look at src/main.c\"", false,
	     "query_summary", NULL},
	    {"query_summary and/or n/a", "query_summary", "\"cache and/or queue, n/a\"", true, NULL,
	     NULL},
	    {"scope_ref 2048", "scope_ref", t[6], true, NULL, NULL},
	    {"scope_ref 2049", "scope_ref", t[7], false, "scope_ref", NULL},
	    {"scope_ref empty", "scope_ref", "\"\"", false, "scope_ref", NULL},
	    {"max_results 1", "max_results", "1", true, NULL, NULL},
	    {"max_results 8", "max_results", "8", true, NULL, NULL},
	    {"max_results 0", "max_results", "0", false, "max_results", NULL},
	    {"max_results 9", "max_results", "9", false, "max_results", NULL},
	    {"max_results 1.5", "max_results", "1.5", false, "max_results", NULL},
	    {"max_results true", "max_results", "true", false, "max_results", NULL},
	    {"max_results \"3\"", "max_results", "\"3\"", false, "max_results", NULL},
	    {"max_results missing", "max_results", NULL, false, "max_results", NULL},
	    {"timeout_seconds 1", "timeout_seconds", "1", true, NULL, NULL},
	    {"timeout_seconds 1.0", "timeout_seconds", "1.0", true, NULL, NULL},
	    {"timeout_seconds 120", "timeout_seconds", "120", true, NULL, NULL},
	    {"timeout_seconds 120.0", "timeout_seconds", "120.0", true, NULL, NULL},
	    {"timeout_seconds 0.5", "timeout_seconds", "0.5", false, "timeout_seconds", NULL},
	    {"timeout_seconds 0", "timeout_seconds", "0", false, "timeout_seconds", NULL},
	    {"timeout_seconds 120.5", "timeout_seconds", "120.5", false, "timeout_seconds", NULL},
	    {"timeout_seconds 121", "timeout_seconds", "121", false, "timeout_seconds", NULL},
	    {"timeout_seconds \"5\"", "timeout_seconds", "\"5\"", false, "timeout_seconds", NULL},
	    {"timeout_seconds missing", "timeout_seconds", NULL, false, "timeout_seconds", NULL},
	    {"observed_at not a time", "observed_at", "\"yesterday\"", false, "observed_at", NULL},
	    {"observed_at missing", "observed_at", NULL, false, "observed_at", NULL},
	    {"extension_id with a space", "extension_id", "\"bad id\"", false, "extension_id",
	     NULL},
	    {"extension_id a number", "extension_id", "7", false, "extension_id", NULL},
	    {"delivery unknown", "delivery", "\"everything\"", false, "delivery", NULL},
	    {"delivery receipt_only", "delivery", "\"receipt_only\"", true, NULL, NULL},
	    {"an unknown member", "colour", "\"red\"", false, "colour", "unknown_field"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct bound_case *c = &cases[i];
		json_t *req = dc_req("dc-full");
		if (c->value) {
			json_t *v = json_loads(c->value, JSON_DECODE_ANY, NULL);
			IT_CHECK(v != NULL, "%s: the value is not JSON", c->what);
			json_object_set_new(req, c->member, v);
		} else {
			json_object_del(req, c->member);
		}
		struct it_resp r;
		retrieve(dc_a, req, NULL, &r);
		if (c->ok) {
			if (r.status != 200)
				fprintf(stderr, "  case: %s\n", c->what);
			const json_t *rc = answer_receipt(&r, false, c->what);
			IT_CHECK(it_json_str_is(rc, "status", "completed"), "%s: %s", c->what,
				 r.body);
		} else {
			IT_422(&r, c->code ? c->code : "validation_failed", c->field, true,
			       c->what);
			expect_private_free(r.body, r.body_len, c->what);
		}
		it_resp_free(&r);
	}
	for (size_t i = 0; i < 8; i++)
		free(t[i]);
	free(ns120);
	free(ns121);
	free(q1000);
	free(q1001);
	free(s220);
	free(s221);
	free(sc2048);
	free(sc2049);

	struct it_resp r;
	it_request(&srv, "POST", "/v1/decision-context/retrieve", dc_a, "[1]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/decision-context/retrieve", dc_a, "{\"namespace\":", NULL,
		   &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);
}

/* ================================================================ sync, scopes */

static void test_sync(void **state)
{
	(void)state;
	static const char *const keys[] = {"status", "reason_code", "external_writes_performed",
					   NULL};
	const char *bodies[] = {"{\"anything\":[1,2]}", "{}", NULL};
	for (size_t i = 0; i < 3; i++) {
		struct it_resp r;
		it_request(&srv, "POST", "/v1/decision-context/sync", dc_a, bodies[i], NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_is_exactly(r.json, keys) &&
			     it_json_str_is(r.json, "status", "unavailable") &&
			     it_json_str_is(r.json, "reason_code", "read_only_provider") &&
			     json_is_false(json_object_get(r.json, "external_writes_performed")),
			 "sync is not {unavailable, read_only_provider, false}: %s", r.body);
		it_resp_free(&r);
	}
}

static void test_scopes(void **state)
{
	(void)state;
	char *prov_only = token_for(tenant_a, "providers:admin");
	struct it_resp r;
	retrieve(prov_only, dc_req("dc-good"), NULL, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	retrieve(NULL, dc_req("dc-good"), NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/decision-context/sync", prov_only, "{}", NULL, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	/* admin implies decision_context.read */
	retrieve(admin_a, dc_req("dc-good"), NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(prov_only);
}

/* ================================================================ concurrency */

struct slow_call {
	struct it_resp resp;
};

static void *slow_thread(void *arg)
{
	struct slow_call *c = arg;
	json_t *req = dc_req("dc-slow");
	json_object_set_new(req, "timeout_seconds", json_integer(10));
	it_request_json(&srv, "POST", "/v1/decision-context/retrieve", dc_a, req, NULL, &c->resp);
	json_decref(req);
	return NULL;
}

static void test_slow_calls_do_not_block(void **state)
{
	(void)state;
	struct slow_call calls[SLOW_CALLS];
	pthread_t th[SLOW_CALLS];
	memset(calls, 0, sizeof calls);
	long before = it_fake_count(&fake, "dc", "slow");
	for (int i = 0; i < SLOW_CALLS; i++)
		IT_CHECK(pthread_create(&th[i], NULL, slow_thread, &calls[i]) == 0,
			 "pthread_create");
	/* wait until all eight are at the provider */
	double until = it_now_s() + 2.0;
	while (it_fake_count(&fake, "dc", "slow") < before + SLOW_CALLS && it_now_s() < until)
		it_sleep_ms(20);
	long in_flight = it_fake_count(&fake, "dc", "slow") - before;

	double worst_health = 0, worst_mode = 0;
	for (int round = 0; round < 3; round++) {
		struct it_resp r;
		double t0 = it_now_s();
		it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &r);
		double took = it_now_s() - t0;
		if (r.status != 200)
			took = 99;
		worst_health = took > worst_health ? took : worst_health;
		it_resp_free(&r);
		t0 = it_now_s();
		it_request(&srv, "GET", "/v1/threads/t/memory-mode", admin_a, NULL, NULL, &r);
		took = it_now_s() - t0;
		if (r.status != 200)
			took = 99;
		worst_mode = took > worst_mode ? took : worst_mode;
		it_resp_free(&r);
		it_sleep_ms(100);
	}
	for (int i = 0; i < SLOW_CALLS; i++)
		pthread_join(th[i], NULL);

	IT_CHECK(in_flight == SLOW_CALLS,
		 "only %ld of %d slow calls reached the provider within 2 s (calls queued?)",
		 in_flight, SLOW_CALLS);
	IT_CHECK(worst_health < 0.5, "/healthz took %.3f s while %d provider calls were in flight",
		 worst_health, SLOW_CALLS);
	IT_CHECK(worst_mode < 0.5,
		 "GET /v1/threads/t/memory-mode took %.3f s while %d provider calls were in flight",
		 worst_mode, SLOW_CALLS);
	for (int i = 0; i < SLOW_CALLS; i++) {
		IT_STATUS(&calls[i].resp, 200);
		const json_t *rc = json_object_get(calls[i].resp.json, "receipt");
		IT_CHECK(it_json_str_is(rc, "status", "completed") &&
			     it_json_int(rc, "item_count", -1) == 2,
			 "slow call %d: %s", i, calls[i].resp.body);
		it_resp_free(&calls[i].resp);
	}
}

/* ================================================================ privacy */

static void test_audit_and_metrics_privacy(void **state)
{
	(void)state;
	/* every audit record of the tenant (all pages) */
	char path[512] = "/v1/audit?limit=200";
	for (int page = 0; page < 50; page++) {
		struct it_resp r;
		it_request(&srv, "GET", path, audit_a, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		expect_private_free(r.body, r.body_len, "the audit log");
		IT_CHECK(!strstr(r.body, "decision_context_receipt") && !strstr(r.body, "rcp_"),
			 "a retrieval was audited: %.500s", r.body);
		const char *cursor = it_json_str(r.json, "next_cursor");
		if (!cursor) {
			it_resp_free(&r);
			break;
		}
		char *esc = it_url_escape(cursor);
		snprintf(path, sizeof path, "/v1/audit?limit=200&after=%s", esc);
		free(esc);
		it_resp_free(&r);
	}

	struct it_resp r;
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	expect_private_free(r.body, r.body_len, "/metrics");
	char port[32];
	snprintf(port, sizeof port, ":%d", fake.port);
	IT_CHECK(!strstr(r.body, port), "/metrics names the provider's URL");
	const char *series[] = {
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"ok\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"unavailable\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"invalid\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"http_error\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"timeout\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"unreachable\"}",
	    "recallgate_provider_calls_total{call=\"retrieve\",outcome=\"oversize\"}",
	    "recallgate_provider_calls_total{call=\"doctor\",outcome=\"ok\"}",
	};
	for (size_t i = 0; i < sizeof series / sizeof *series; i++)
		IT_CHECK(strstr(r.body, series[i]) != NULL, "/metrics has no series %s", series[i]);
	it_resp_free(&r);
}

/* last: stops the server and reads its log */
static void test_log_privacy(void **state)
{
	(void)state;
	size_t len = 0;
	char *log = it_server_stop_log(&srv, &len);
	expect_private_free(log, len, "the server log");
	char url[64];
	snprintf(url, sizeof url, "127.0.0.1:%d", fake.port);
	IT_CHECK(memmem(log, len, url, strlen(url)) == NULL, "the server log names a provider URL");
	free(log);
}

int main(void)
{
	static const struct it_group group = {&fake, &srv, "dc-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&dc_a, "decision_context.read", "it-dc"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_providers), /* first: tenant A's providers */
	    cmocka_unit_test(test_modes),
	    cmocka_unit_test(test_unreachable),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_resolution),
	    cmocka_unit_test(test_request_sent),
	    cmocka_unit_test(test_provider_ref),
	    cmocka_unit_test(test_delivery),
	    cmocka_unit_test(test_receipt_readback),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_sync),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_slow_calls_do_not_block),
	    cmocka_unit_test(test_audit_and_metrics_privacy),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server */
	};
	return IT_GROUP_MAIN("it_decision_context", tests, &group);
}
