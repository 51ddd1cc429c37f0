/* it_decision_context_* shared helpers (decision_context_helpers.h): the server, the fake
 * and tenant A's tokens with their group, tenant A's providers, the retrieve request and the
 * receipt checks, and the privacy checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decision_context_helpers.h"

struct it_server srv;
struct it_fake fake;
char *tenant_a;
char *admin_a;
char *dc_a;
char *audit_a;

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url) */
const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

char *token_for(const char *tenant, const char *scopes)
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

/* ================================================================ providers */

void provider_ready(const char *tenant_token, const char *id, const char *prefix, const char *mode,
		    int timeout)
{
	it_provider_ready(&srv, tenant_token, &fake, id, prefix, mode, timeout);
}

/* registers (not doctored) */
void provider_raw(const char *token, const char *id, const char *endpoint, int timeout)
{
	it_provider_register(&srv, token, id, IT_PROTO_DC, endpoint, NULL, timeout);
}

void provider_patch(const char *token, const char *id, const char *json_body)
{
	it_provider_patch(&srv, token, id, json_body);
}

/* ================================================================ requests */

/* new: a valid retrieve body; ext NULL: no extension_id */
json_t *dc_req(const char *ext)
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
void retrieve(const char *token, json_t *body, const char *const *headers, struct it_resp *r)
{
	IT_CHECK(body != NULL, "a request body could not be built");
	it_request_json(&srv, "POST", "/v1/decision-context/retrieve", token, body, headers, r);
	json_decref(body);
}

/* the receipt of context_provider_retrieval_v0 as the request (borrowed) asked for it:
 * status, reason (NULL: null), ext and rev (NULL / NO_REV: null), item count */
void expect_receipt(const json_t *rc, const json_t *req, const char *status, const char *reason,
		    const char *ext, long long rev, size_t nitems, const char *what)
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
const json_t *answer_receipt(const struct it_resp *r, bool transient, const char *what)
{
	IT_STATUS(r, 200);
	static const char *const only[] = {"receipt", NULL};
	static const char *const both[] = {"receipt", "transient", NULL};
	IT_CHECK(it_is_exactly(r->json, transient ? both : only), "%s: not exactly %s: %s", what,
		 transient ? "{receipt, transient}" : "{receipt}", r->body);
	return json_object_get(r->json, "receipt");
}

/* one retrieve with ext, expecting status / reason; returns nothing */
void expect_outcome(const char *token, json_t *req, const char *status, const char *reason,
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

const struct mode_case mode_cases[] = {
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
const size_t n_mode_cases = sizeof mode_cases / sizeof *mode_cases;

void setup_providers(void)
{
	char id[80];
	for (size_t i = 0; i < n_mode_cases; i++) {
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

int setup_providers_fixture(void **state)
{
	(void)state;
	setup_providers();
	return 0;
}

/* ================================================================ privacy */

void expect_private_free(const char *text, size_t len, const char *where)
{
	static const char *const needles[] = {"QUERY-MARK",
					      SCOPE_ID,
					      IT_FAKE_CONTENT_MARKER,
					      IT_FAKE_REF_PREFIX,
					      "codex://threads/",
					      "Which cache policy did we pick?"};
	it_expect_absent(text, len, needles, sizeof needles / sizeof *needles, where);
}

void expect_audit_private(void)
{
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
}

void get_metrics_private(struct it_resp *r)
{
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, r);
	IT_STATUS(r, 200);
	expect_private_free(r->body, r->body_len, "/metrics");
	char port[32];
	snprintf(port, sizeof port, ":%d", fake.port);
	IT_CHECK(!strstr(r->body, port), "/metrics names the provider's URL");
}

void expect_log_private(void)
{
	size_t len = 0;
	char *log = it_server_stop_log(&srv, &len);
	expect_private_free(log, len, "the server log");
	char url[64];
	snprintf(url, sizeof url, "127.0.0.1:%d", fake.port);
	IT_CHECK(memmem(log, len, url, strlen(url)) == NULL, "the server log names a provider URL");
	free(log);
}

int privacy_teardown(void **state)
{
	(void)state;
	expect_audit_private();
	struct it_resp r;
	get_metrics_private(&r);
	it_resp_free(&r);
	expect_log_private();
	return 0;
}

/* ================================================================ the group */

int decision_context_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	static const struct it_group group = {&fake, &srv, "dc-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&dc_a, "decision_context.read", "it-dc"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	return it_group_main(name, tests, n, &group);
}
