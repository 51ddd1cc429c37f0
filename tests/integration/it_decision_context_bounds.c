/*
 * it_decision_context_bounds — the decision-context requests refused and accepted at their
 * edges (openapi/openapi.yaml "Conventions", "Decision context"; docs/providers-contract.md
 * "Decision-context retrieve"): every retrieve member at its bound (a 422 that repeats no
 * private value), sync → read_only_provider, and the scopes of both endpoints.
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

#include "decision_context_helpers.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    /* first: tenant A's providers */
	    cmocka_unit_test_setup(test_bounds, setup_providers_fixture),
	    cmocka_unit_test(test_sync),
	    /* last: the privacy of the audit log, /metrics and the server log; stops the server */
	    cmocka_unit_test_teardown(test_scopes, privacy_teardown),
	};
	return DECISION_CONTEXT_MAIN("it_decision_context_bounds", tests);
}
