/*
 * it_semantic_prefs_recall — semantic preference recall end to end (openapi/openapi.yaml
 * "Conventions", "Semantic preferences"; docs/providers-contract.md "Semantic preferences"; the
 * seed semantic-preferences), against the fake provider (fake_provider.c):
 *
 *  - recall disabled when enabled: false;
 *  - every fake mode → status and failure_kind (fail open), fail_closed → 502
 *    semantic_preference_unavailable, many → truncated with `limit` items, the maintenance
 *    guidance derived exactly, resolution failures → extension_binding_unavailable;
 *  - the request the provider receives, member by member; recall body bounds;
 *  - a server log without queries, summaries, context or provider URLs.
 *
 * The config is in it_semantic_prefs_config, the receipts and the scopes in
 * it_semantic_prefs_receipts. Helpers: semantic_prefs_helpers.h.
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

#include "semantic_prefs_helpers.h"

#define REQUEST_SCHEMA "semantic_preference_provider_request_v0"
#define GUIDANCE_SCHEMA "semantic_preference_maintenance_guidance_v0"

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url) */
static const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

/* a 200 provider_unavailable answer with failure_kind */
static void expect_unavailable(const struct it_resp *r, const char *kind, const char *what)
{
	static const char *const keys[] = {"status",    "failure_kind",         "items",
					   "truncated", "maintenance_guidance", NULL};
	if (r->status != 200)
		fprintf(stderr, "  case: %s\n", what);
	IT_STATUS(r, 200);
	IT_CHECK(it_is_exactly(r->json, keys) &&
		     it_json_str_is(r->json, "status", "provider_unavailable") &&
		     json_array_size(json_object_get(r->json, "items")) == 0 &&
		     json_is_array(json_object_get(r->json, "items")) &&
		     json_is_false(json_object_get(r->json, "truncated")) &&
		     it_json_has_null(r->json, "maintenance_guidance"),
		 "%s: not {status: provider_unavailable, failure_kind, items: [], truncated: "
		 "false, maintenance_guidance: null}: %s",
		 what, r->body);
	IT_CHECK(it_json_str_is(r->json, "failure_kind", kind), "%s: failure_kind is not %s: %s",
		 what, kind, r->body);
}

/* a 200 completed answer with nitems items fake-pref-ref-1.., truncated as given */
static void expect_completed(const struct it_resp *r, size_t nitems, bool truncated,
			     const char *what)
{
	static const char *const keys[] = {"status", "items", "truncated", "maintenance_guidance",
					   NULL};
	static const char *const ikeys[] = {"preference_ref", "summary", NULL};
	if (r->status != 200)
		fprintf(stderr, "  case: %s\n", what);
	IT_STATUS(r, 200);
	IT_CHECK(it_is_exactly(r->json, keys) && it_json_str_is(r->json, "status", "completed"),
		 "%s: not {status: completed, items, truncated, maintenance_guidance} (no "
		 "failure_kind): %s",
		 what, r->body);
	const json_t *items = json_object_get(r->json, "items");
	IT_CHECK(json_array_size(items) == nitems, "%s: expected %zu items: %s", what, nitems,
		 r->body);
	IT_CHECK(json_is_boolean(json_object_get(r->json, "truncated")) &&
		     json_is_true(json_object_get(r->json, "truncated")) == truncated,
		 "%s: truncated is not %s: %s", what, truncated ? "true" : "false", r->body);
	for (size_t i = 0; i < nitems; i++) {
		const json_t *it = json_array_get(items, i);
		char ref[48], summary[64];
		snprintf(ref, sizeof ref, "fake-pref-ref-%zu", i + 1);
		snprintf(summary, sizeof summary, "Preference summary %zu", i + 1);
		IT_CHECK(it_is_exactly(it, ikeys) && it_json_str_is(it, "preference_ref", ref) &&
			     it_json_str_is(it, "summary", summary),
			 "%s: item %zu is not {%s, %s}: %s", what, i, ref, summary, r->body);
	}
}

/* guidance (borrowed) equals the one built from the JSON arrays given as text */
static void expect_guidance(const struct it_resp *r, const char *corpus_ids, const char *triggers,
			    const char *policies, const char *what)
{
	json_t *want = json_pack("{s:s, s:o, s:o, s:o, s:[s, s]}", "schema_version",
				 GUIDANCE_SCHEMA, "corpus_ids", json_loads(corpus_ids, 0, NULL),
				 "writeback_triggers", json_loads(triggers, 0, NULL),
				 "closure_policies", json_loads(policies, 0, NULL),
				 "closure_outcomes", "verified", "no_write_rationale");
	IT_CHECK(want != NULL, "%s: the expected guidance could not be built", what);
	const json_t *got = json_object_get(r->json, "maintenance_guidance");
	char *wt = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	IT_CHECK(json_equal(got, want), "%s: maintenance_guidance is not %s: %s", what, wt,
		 r->body);
	free(wt);
	json_decref(want);
}

/* ================================================================ setup */

static const char *const sp_modes[] = {
    "good",          "no_inventory",    "read_only", "many",     "unknown_field", "item_too_large",
    "bad_inventory", "http500",         "oversize",  "not_json", "redirect",      "doctor_fail",
    "doctor_bad",    "doctor_mismatch", NULL,
};

/* tenant A's providers (first test): one per fake mode and the resolution cases. The
 * doctor_* modes register with the doctor of /sp/good: their POST answers like good. */
static void test_setup_providers(void **state)
{
	(void)state;
	char id[80], path[128];
	for (size_t i = 0; sp_modes[i]; i++) {
		it_mode_id("sp", sp_modes[i], id, sizeof id);
		if (strncmp(sp_modes[i], "doctor_", 7) != 0) {
			it_provider_ready(&srv, admin_a, &fake, id, "sp", sp_modes[i], 5);
			continue;
		}
		snprintf(path, sizeof path, "/sp/%s", sp_modes[i]);
		it_provider_register(&srv, admin_a, id, IT_PROTO_SP, furl(path),
				     furl("/sp/good/doctor"), 5);
		it_provider_doctor_ok(&srv, admin_a, id);
	}
	/* slow: a 1 s deadline against the fake's 3 s */
	it_provider_ready(&srv, admin_a, &fake, "sp-slow", "sp", "slow", 1);
	it_provider_ready(&srv, admin_a, &fake, "dc-good", "dc", "good", 5);
	it_provider_ready(&srv, admin_a, &fake, "sp-disabled", "sp", "good", 5);
	it_provider_patch(&srv, admin_a, "sp-disabled",
			  "{\"expected_revision\":1,\"enabled\":false}");
	it_provider_register(&srv, admin_a, "sp-undoctored", IT_PROTO_SP, furl("/sp/good"), NULL,
			     5);
	/* refuses connections; its doctor passes */
	it_provider_unreachable(&srv, admin_a, &fake, "sp-unreachable", "sp");
}

/* ================================================================ recall */

static void test_recall_disabled(void **state)
{
	(void)state;
	char *t = it_unique("sp-off");
	char *tok = token_for(t, "admin");
	it_provider_ready(&srv, tok, &fake, "only", "sp", "good", 5);
	configure(tok, std_config("only", false));
	struct it_resp r;
	long before = it_fake_count(&fake, "sp", "good");
	recall(tok, S_DEFAULT, NULL, &r);
	expect_disabled(&r, "enabled: false");
	it_resp_free(&r);
	recall(tok, S_CLOSED, NULL, &r);
	expect_disabled(&r, "enabled: false, a fail_closed surface");
	it_resp_free(&r);
	IT_CHECK(it_fake_count(&fake, "sp", "good") == before,
		 "a disabled config still called the provider");
	/* on again: completed, by the only provider without naming it */
	configure(tok, std_config(NULL, true));
	recall(tok, S_DEFAULT, NULL, &r);
	expect_completed(&r, 2, false, "the only ready provider, not named");
	it_resp_free(&r);
	free(tok);
	free(t);
}

struct sp_case {
	const char *ext;
	const char *kind; /* NULL: completed */
};

static void test_recall_modes(void **state)
{
	(void)state;
	const struct sp_case cases[] = {
	    {"sp-unknown-field", "invalid_response"},
	    {"sp-item-too-large", "item_too_large"},
	    {"sp-bad-inventory", "invalid_corpus_inventory"},
	    {"sp-http500", "http_error"},
	    {"sp-redirect", "http_error"},
	    {"sp-oversize", "response_too_large"},
	    {"sp-not-json", "invalid_json"},
	    {"sp-unreachable", "execution_failed"},
	    {"no-such-provider", "extension_binding_unavailable"},
	    {"sp-disabled", "extension_binding_unavailable"},
	    {"sp-undoctored", "extension_binding_unavailable"},
	    {"dc-good", "extension_binding_unavailable"},
	    {NULL, "extension_binding_unavailable"}, /* tenant A holds many ready */
	    {"sp-doctor-fail", NULL},
	    {"sp-doctor-bad", NULL},
	    {"sp-doctor-mismatch", NULL},
	};
	struct it_resp r;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *what = cases[i].ext ? cases[i].ext : "no extension_id";
		configure(sp_a, std_config(cases[i].ext, true));
		recall(sp_a, S_DEFAULT, NULL, &r);
		if (cases[i].kind)
			expect_unavailable(&r, cases[i].kind, what);
		else
			expect_completed(&r, 2, false, what);
		it_resp_free(&r);
		/* fail_closed: 502 with failure_kind in the problem */
		recall(sp_a, S_CLOSED, NULL, &r);
		if (cases[i].kind) {
			IT_PROBLEM(&r, 502, "semantic_preference_unavailable");
			IT_CHECK(it_json_str_is(r.json, "failure_kind", cases[i].kind),
				 "%s, fail_closed: the problem does not carry failure_kind %s: %s",
				 what, cases[i].kind, r.body);
			IT_CHECK(!strstr(r.body, "fake provider failure") &&
				     !strstr(r.body, "127.0.0.1"),
				 "%s: the problem repeats provider output or a URL: %s", what,
				 r.body);
		} else {
			expect_completed(&r, 2, false, what);
		}
		it_resp_free(&r);
	}

	/* timeout: the provider's 1 s deadline */
	configure(sp_a, std_config("sp-slow", true));
	double t0 = it_now_s();
	recall(sp_a, S_DEFAULT, NULL, &r);
	double took = it_now_s() - t0;
	expect_unavailable(&r, "timeout", "sp-slow");
	it_resp_free(&r);
	IT_CHECK(took < 2.0, "a recall against a 1 s provider took %.2f s", took);
	recall(sp_a, S_CLOSED, NULL, &r);
	IT_PROBLEM(&r, 502, "semantic_preference_unavailable");
	IT_CHECK(it_json_str_is(r.json, "failure_kind", "timeout"), "fail_closed timeout: %s",
		 r.body);
	it_resp_free(&r);
}

static void test_recall_guidance(void **state)
{
	(void)state;
	struct it_resp r;
	configure(sp_a, std_config("sp-good", true));
	recall(sp_a, S_DEFAULT, NULL, &r);
	expect_completed(&r, 2, false, "good");
	expect_guidance(&r, "[\"project_prefs\"]",
			"[\"explicit_feedback\", \"source_truth_changed\"]",
			"[\"write_wait_l2_read_scoped_recall\"]", "good");
	it_resp_free(&r);
	recall(sp_a, S_THREE, NULL, &r);
	expect_completed(&r, 2, false, "good, limit 3");
	it_resp_free(&r);

	configure(sp_a, std_config("sp-no-inventory", true));
	recall(sp_a, S_DEFAULT, NULL, &r);
	expect_completed(&r, 2, false, "no_inventory");
	IT_CHECK(it_json_has_null(r.json, "maintenance_guidance"),
		 "no inventory: maintenance_guidance is not null: %s", r.body);
	it_resp_free(&r);

	configure(sp_a, std_config("sp-read-only", true));
	recall(sp_a, S_DEFAULT, NULL, &r);
	expect_completed(&r, 2, false, "read_only");
	IT_CHECK(it_json_has_null(r.json, "maintenance_guidance"),
		 "all read_only: maintenance_guidance is not null: %s", r.body);
	it_resp_free(&r);

	/* 25 items: truncated to the surface's limit (5 by default, 3, 20) */
	configure(sp_a, std_config("sp-many", true));
	const struct {
		const char *surface;
		size_t limit;
	} lims[] = {{S_DEFAULT, 5}, {S_THREE, 3}, {S_TWENTY, 20}};
	for (size_t i = 0; i < 3; i++) {
		recall(sp_a, lims[i].surface, NULL, &r);
		expect_completed(&r, lims[i].limit, true, lims[i].surface);
		expect_guidance(&r, "[\"alpha_corpus\", \"zeta_corpus\"]",
				"[\"explicit_feedback\", \"source_truth_changed\"]",
				"[\"none\", \"write_wait_l2_read_scoped_recall\"]", "many");
		it_resp_free(&r);
	}
}

static void test_recall_request(void **state)
{
	(void)state;
	static const char *const keys[] = {"schema_version", "surface", "query",
					   "limit",          "context", NULL};
	struct it_resp r;
	configure(sp_a, std_config("sp-good", true));

	const struct {
		const char *surface, *query;
		int limit;
		bool context;
	} cases[] = {
	    {S_DEFAULT, Q_DEFAULT, 5, true},
	    {S_THREE, "Draft language and section preferences", 3, false},
	};
	for (size_t i = 0; i < 2; i++) {
		long before = it_fake_count(&fake, "sp", "good");
		json_t *ctx = cases[i].context
				  ? json_pack("{s:s, s:s}", "repo", CTX_MARK, "lang", "c")
				  : NULL;
		json_t *ctx_copy = ctx ? json_deep_copy(ctx) : json_object();
		recall(sp_a, cases[i].surface, ctx, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		json_t *last = NULL;
		json_t *sent = it_fake_expect_request(&fake, "sp", "good", before, &last);
		IT_CHECK(
		    it_is_exactly(sent, keys) &&
			it_json_str_is(sent, "schema_version", REQUEST_SCHEMA) &&
			it_json_str_is(sent, "surface", cases[i].surface) &&
			it_json_str_is(sent, "query", cases[i].query) &&
			json_is_integer(json_object_get(sent, "limit")) &&
			it_json_int(sent, "limit", -1) == cases[i].limit &&
			json_equal(json_object_get(sent, "context"), ctx_copy),
		    "the provider request is not {schema_version, surface %s, query, limit %d, "
		    "context}: %s",
		    cases[i].surface, cases[i].limit, it_json_str(last, "body"));
		json_decref(sent);
		json_decref(ctx_copy);
		json_decref(last);
	}

	/* the recall body's bounds */
	char *v500 = it_filled("v", 500, 'v'), *v501 = it_filled("v", 501, 'v');
	json_t *ctx33 = json_object(), *ctx32 = json_object();
	for (int i = 0; i < 33; i++) {
		char k[16];
		snprintf(k, sizeof k, "k%d", i);
		json_object_set_new(ctx33, k, json_string("v"));
		if (i < 32)
			json_object_set_new(ctx32, k, json_string("v"));
	}
	char k64[70], k65[70];
	memset(k64, 'k', 64);
	k64[64] = '\0';
	memset(k65, 'k', 65);
	k65[65] = '\0';
	const struct {
		const char *what, *surface;
		json_t *context; /* stolen */
		bool ok;
		const char *field;
	} bad[] = {
	    {"context value 500", S_DEFAULT, json_pack("{s:s}", "repo", v500), true, NULL},
	    {"context value 501", S_DEFAULT, json_pack("{s:s}", "repo", v501), false, "context"},
	    {"context 32 keys", S_DEFAULT, ctx32, true, NULL},
	    {"context 33 keys", S_DEFAULT, ctx33, false, "context"},
	    {"context key of 64", S_DEFAULT, json_pack("{s:s}", k64, "v"), true, NULL},
	    {"context key of 65", S_DEFAULT, json_pack("{s:s}", k65, "v"), false, "context"},
	    {"context key uppercase", S_DEFAULT, json_pack("{s:s}", "Repo", "v"), false, "context"},
	    {"context key starting with a digit", S_DEFAULT, json_pack("{s:s}", "9x", "v"), false,
	     "context"},
	    {"context value a number", S_DEFAULT, json_pack("{s:i}", "repo", 7), false, "context"},
	    {"context an array", S_DEFAULT, json_array(), false, "context"},
	    {"a surface the config does not name", "other.surface", NULL, false, "surface"},
	    {"a surface id that is no surface id", "NoDot", NULL, false, "surface"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		recall(sp_a, bad[i].surface, bad[i].context, &r);
		if (bad[i].ok)
			expect_completed(&r, 2, false, bad[i].what);
		else
			IT_422(&r, "validation_failed", bad[i].field, false, bad[i].what);
		it_resp_free(&r);
	}
	free(v500);
	free(v501);
	/* a context key is private: errors name it by position as sent, never by its text */
	recall(sp_a, S_DEFAULT,
	       json_pack("{s:s, s:s, s:i}", "repo", "v", "QzSecretCtxKey", "v", "qzsecretctx", 7), &r);
	IT_422(&r, "validation_failed", "context[1]", true, "a bad context key");
	IT_CHECK(it_problem_has_field(&r, "context[2]"), "bad context value not by position: %s",
		 r.body);
	IT_CHECK(strstr(r.body, "ecretCtx") == NULL && strstr(r.body, "qzsecretctx") == NULL,
		 "a context key in the 422: %s", r.body);
	it_resp_free(&r);
	IT_CHECK(!it_log_contains(&srv, "ecretCtx") && !it_log_contains(&srv, "qzsecretctx"),
		 "a context key in the log");
	it_request(&srv, "POST", "/v1/semantic-preferences/recall", sp_a, "{}", NULL, &r);
	IT_422(&r, "validation_failed", "surface", true, "surface missing");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/semantic-preferences/recall", sp_a,
		   "{\"surface\":\"" S_DEFAULT "\",\"colour\":\"red\"}", NULL, &r);
	IT_422(&r, "unknown_field", "colour", true, "an unknown member");
	it_resp_free(&r);
}

/* last: stops the server and reads its log */
static void test_log_privacy(void **state)
{
	(void)state;
	expect_log_private();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_providers), /* first: tenant A's providers */
	    cmocka_unit_test(test_recall_disabled),
	    cmocka_unit_test(test_recall_modes),
	    cmocka_unit_test(test_recall_guidance),
	    cmocka_unit_test(test_recall_request),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server */
	};
	return SEMANTIC_PREFS_MAIN("it_semantic_prefs_recall", tests);
}
