/*
 * it_decision_context_requests — what a decision-context retrieve sends and keeps, end to end
 * (openapi/openapi.yaml "Conventions", "Decision context"; docs/providers-contract.md
 * "Decision-context retrieve"), against the fake provider (fake_provider.c):
 *
 *  - the request the provider receives, member by member (scope_ref normalised,
 *    timeout_seconds = min(request, provider)), its Content-Type and the traceparent;
 *  - provider_ref = "provider-" + 20 hex of SHA-256(ext \n namespace \n resource_ref);
 *    delivery receipt_only / local_private_transient;
 *  - the stored receipt read back, without query, scope, content or resource refs, by its
 *    tenant only, also after its provider is deleted.
 *
 * The audit log, /metrics and the server log of this executable's server are checked for the
 * requests' private values after the last test (privacy_teardown), as
 * it_decision_context_outcomes checks its own. Helpers: decision_context_helpers.h.
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
#include <openssl/evp.h>

#include "decision_context_helpers.h"

#define REQUEST_SCHEMA "decision_context_advisory_retrieve_request_v0"
#define TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    /* first: tenant A's providers */
	    cmocka_unit_test_setup(test_request_sent, setup_providers_fixture),
	    cmocka_unit_test(test_provider_ref),
	    cmocka_unit_test(test_delivery),
	    /* last: the privacy of the audit log, /metrics and the server log; stops the server */
	    cmocka_unit_test_teardown(test_receipt_readback, privacy_teardown),
	};
	return DECISION_CONTEXT_MAIN("it_decision_context_requests", tests);
}
