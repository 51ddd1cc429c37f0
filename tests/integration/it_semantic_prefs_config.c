/*
 * it_semantic_prefs_config — the semantic-preference config end to end (openapi/openapi.yaml
 * "Conventions", "Semantic preferences"; docs/providers-contract.md "Semantic preferences"; the
 * seed semantic-preferences): GET of a never-configured tenant (recall disabled), PUT from
 * null, stale (409 with current_revision, null for a never-configured tenant), If-Match (412),
 * stored as sent, audited without queries, unseen by other tenants; every bound of the config
 * at its edge.
 *
 * The server log is checked for queries after the last test (log_privacy_teardown), as
 * it_semantic_prefs_recall checks its own. Helpers: semantic_prefs_helpers.h.
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

/* ================================================================ config */

static void test_config_never_configured(void **state)
{
	(void)state;
	char *t = it_unique("sp-never");
	char *tok = token_for(t, "semantic_preferences:use");
	struct it_resp r;
	it_request(&srv, "GET", "/v1/semantic-preferences/config", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	static const char *const keys[] = {"revision", "config", NULL};
	IT_CHECK(it_is_exactly(r.json, keys) && it_json_has_null(r.json, "revision") &&
		     it_json_has_null(r.json, "config"),
		 "a never-configured tenant does not read {revision: null, config: null}: %s",
		 r.body);
	it_resp_free(&r);
	recall(tok, S_DEFAULT, NULL, &r);
	expect_disabled(&r, "recall of a never-configured tenant");
	it_resp_free(&r);
	recall(tok, S_CLOSED, NULL, &r);
	expect_disabled(&r, "recall (any surface) of a never-configured tenant");
	it_resp_free(&r);

	/* expected_revision must be null for the first write */
	put_config(tok, 1, std_config(NULL, true), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(json_is_object(r.json) && json_object_get(r.json, "current_revision") &&
		     it_json_has_null(r.json, "current_revision"),
		 "the 409 of a never-configured tenant does not carry current_revision: null: %s",
		 r.body);
	it_resp_free(&r);
	IT_CHECK(config_revision(tok) == NO_REV, "a refused PUT configured the tenant");
	free(tok);
	free(t);
}

static void test_config_put_get(void **state)
{
	(void)state;
	char *t = it_unique("sp-cfg");
	char *tok = token_for(t, "semantic_preferences:use");
	char *aud = token_for(t, "audit:read");
	struct it_resp r;

	json_t *cfg = std_config("sp-good", true);
	json_t *sent = json_deep_copy(cfg);
	put_config(tok, NO_REV, cfg, NULL, &r);
	IT_STATUS(&r, 200);
	static const char *const keys[] = {"revision", "config", NULL};
	IT_CHECK(it_is_exactly(r.json, keys) && it_json_int(r.json, "revision", -1) == 1 &&
		     json_equal(json_object_get(r.json, "config"), sent),
		 "PUT from null does not answer {revision: 1, config as sent}: %s", r.body);
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/semantic-preferences/config", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1 &&
		     json_equal(json_object_get(r.json, "config"), sent),
		 "GET does not read the config as sent: %s", r.body);
	const char *etag = it_resp_header(&r, "ETag");
	IT_CHECK(etag && strcmp(etag, "\"1\"") == 0, "GET config: ETag is %s, expected \"1\"",
		 etag ? etag : "none");
	it_resp_free(&r);

	/* stale: null again, or a wrong number */
	put_config(tok, NO_REV, std_config("sp-many", true), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
		 "stale PUT (null): current_revision is not 1: %s", r.body);
	it_resp_free(&r);
	put_config(tok, 5, std_config("sp-many", true), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
		 "stale PUT (5): current_revision is not 1: %s", r.body);
	it_resp_free(&r);
	/* If-Match that disagrees: 412 */
	const char *im_bad[] = {"If-Match: \"3\"", NULL};
	put_config(tok, 1, std_config("sp-many", true), im_bad, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/semantic-preferences/config", tok, NULL, NULL, &r);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1 &&
		     json_equal(json_object_get(r.json, "config"), sent),
		 "a refused PUT changed the config: %s", r.body);
	it_resp_free(&r);
	json_decref(sent);

	/* If-Match that agrees; a config without schema_version is stored without it */
	const char *im_ok[] = {"If-Match: \"1\"", NULL};
	cfg = std_config("sp-many", false);
	json_object_del(cfg, "schema_version");
	sent = json_deep_copy(cfg);
	put_config(tok, 1, cfg, im_ok, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2 &&
		     json_equal(json_object_get(r.json, "config"), sent),
		 "PUT with If-Match: %s", r.body);
	it_resp_free(&r);
	json_decref(sent);

	const struct {
		const char *what, *body, *field;
	} bad[] = {
	    {"expected_revision missing",
	     "{\"config\":{\"enabled\":false,\"provider\":{},"
	     "\"surfaces\":{}}}",
	     "expected_revision"},
	    {"expected_revision a string",
	     "{\"expected_revision\":\"2\",\"config\":{\"enabled\":false,\"provider\":{},"
	     "\"surfaces\":{}}}",
	     "expected_revision"},
	    {"config missing", "{\"expected_revision\":2}", "config"},
	    {"config null", "{\"expected_revision\":2,\"config\":null}", "config"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		it_request(&srv, "PUT", "/v1/semantic-preferences/config", tok, bad[i].body, NULL,
			   &r);
		IT_422(&r, "validation_failed", bad[i].field, false, bad[i].what);
		it_resp_free(&r);
	}

	/* audit: one record per accepted PUT, no query text */
	it_request(
	    &srv, "GET",
	    "/v1/audit?resource_type=semantic_preference_config&resource_id=config&limit=200", aud,
	    NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 2, "expected 2 config audit records: %s", r.body);
	for (size_t i = 0; i < 2; i++) {
		const json_t *rec = json_array_get(items, i);
		const json_t *d = json_object_get(rec, "details");
		IT_CHECK(it_json_str_is(rec, "action", "semantic_preference_config.updated") &&
			     it_json_str_is(rec, "resource_type", "semantic_preference_config") &&
			     it_json_str_is(rec, "resource_id", "config") &&
			     it_json_int(rec, "revision_after", -1) == (long long)i + 1,
			 "record %zu: %s", i, r.body);
		IT_CHECK(json_is_string(json_object_get(d, "config_sha256")) &&
			     it_json_int(d, "surface_count", -1) == 4,
			 "record %zu: details are not {config_sha256, surface_count: 4}: %s", i,
			 r.body);
	}
	IT_CHECK(!strstr(r.body, "PR description") && !strstr(r.body, "Strict gate") &&
		     !strstr(r.body, "sp-good"),
		 "the config audit records hold queries or the config: %s", r.body);
	it_resp_free(&r);

	/* tenants do not see each other's config */
	char *t2 = it_unique("sp-cfg2");
	char *tok2 = token_for(t2, "semantic_preferences:use");
	IT_CHECK(config_revision(tok2) == NO_REV, "another tenant reads this tenant's config");
	free(tok2);
	free(t2);
	free(aud);
	free(tok);
	free(t);
}

/* one config case: cfg steals; ok: 200 expected, else 422 `code` (NULL: validation_failed)
 * naming a field under `field` (NULL: `config`) */
static void config_case_code(const char *tok, json_t *cfg, bool ok, const char *field,
			     const char *code, const char *what)
{
	struct it_resp r;
	long long cur = config_revision(tok);
	put_config(tok, cur, cfg, NULL, &r);
	if (ok) {
		if (r.status != 200)
			fprintf(stderr, "  case: %s\n", what);
		IT_STATUS(&r, 200);
	} else {
		IT_422(&r, code ? code : "validation_failed", field ? field : "config", false,
		       what);
		IT_CHECK(config_revision(tok) == cur, "%s: the refused config was stored", what);
	}
	it_resp_free(&r);
}

static void config_case(const char *tok, json_t *cfg, bool ok, const char *field, const char *what)
{
	config_case_code(tok, cfg, ok, field, NULL, what);
}

static json_t *surf(json_t *cfg, const char *id)
{
	return json_object_get(json_object_get(cfg, "surfaces"), id);
}

static void test_config_bounds(void **state)
{
	(void)state;
	char *t = it_unique("sp-bounds");
	char *tok = token_for(t, "semantic_preferences:use");
	char *q500 = it_filled("q ", 500, 'q'), *q501 = it_filled("q ", 501, 'q');
	json_t *c;

	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "query", json_string(q500));
	config_case(tok, c, true, NULL, "query 500");
	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "query", json_string(q501));
	config_case(tok, c, false, NULL, "query 501");
	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "query", json_string(""));
	config_case(tok, c, false, NULL, "query empty");
	c = std_config(NULL, true);
	json_object_del(surf(c, S_DEFAULT), "query");
	config_case(tok, c, false, NULL, "query missing");

	const struct {
		const char *value;
		bool ok;
	} limits[] = {{"1", true},  {"20", true},   {"21", false},
		      {"0", false}, {"1.5", false}, {"\"5\"", false}};
	for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
		c = std_config(NULL, true);
		json_object_set_new(surf(c, S_DEFAULT), "limit",
				    json_loads(limits[i].value, JSON_DECODE_ANY, NULL));
		char what[64];
		snprintf(what, sizeof what, "limit %s", limits[i].value);
		config_case(tok, c, limits[i].ok, NULL, what);
	}
	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "failure_policy", json_string("maybe"));
	config_case(tok, c, false, NULL, "failure_policy unknown");
	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "failure_policy", json_string("fail_open"));
	config_case(tok, c, true, NULL, "failure_policy fail_open");
	c = std_config(NULL, true);
	json_object_set_new(surf(c, S_DEFAULT), "colour", json_string("red"));
	config_case_code(tok, c, false, NULL, "unknown_field", "an unknown surface member");

	const struct {
		const char *id;
		bool ok;
	} ids[] = {{"a.b", true},    {"a-b_c.d9", true},   {"mod.sub.leaf", true},
		   {"nodot", false}, {"Issue.fix", false}, {"a..b", false},
		   {"a.b.", false},  {"1a.b", false},      {"a.9b", false},
		   {"a b.c", false}};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		c = std_config(NULL, true);
		json_object_set_new(json_object_get(c, "surfaces"), ids[i].id,
				    json_pack("{s:s}", "query", "a query"));
		char what[64];
		snprintf(what, sizeof what, "surface id \"%s\"", ids[i].id);
		config_case(tok, c, ids[i].ok, NULL, what);
	}

	/* 64 surfaces pass, 65 fail */
	for (size_t n = 64; n <= 65; n++) {
		c = std_config(NULL, true);
		json_t *s = json_object();
		for (size_t i = 0; i < n; i++) {
			char id[32];
			snprintf(id, sizeof id, "mod.surface%zu", i);
			json_object_set_new(s, id, json_pack("{s:s}", "query", "a query"));
		}
		json_object_set_new(c, "surfaces", s);
		config_case(tok, c, n == 64, NULL, n == 64 ? "64 surfaces" : "65 surfaces");
	}
	c = std_config(NULL, true);
	json_object_set_new(c, "surfaces", json_object());
	config_case(tok, c, true, NULL, "no surfaces");

	c = std_config(NULL, true);
	json_object_set_new(c, "schema_version", json_string("semantic_preference_hook_config_v1"));
	config_case(tok, c, false, NULL, "schema_version wrong");
	c = std_config(NULL, true);
	json_object_del(c, "schema_version");
	config_case(tok, c, true, NULL, "schema_version absent");
	c = std_config(NULL, true);
	json_object_set_new(c, "enabled", json_string("yes"));
	config_case(tok, c, false, NULL, "enabled a string");
	c = std_config(NULL, true);
	json_object_set_new(c, "provider", json_pack("{s:s}", "extension_id", "bad id"));
	config_case(tok, c, false, NULL, "provider.extension_id bad");
	c = std_config(NULL, true);
	json_object_set_new(c, "provider", json_pack("{s:[s]}", "argv", "provider-cli"));
	config_case_code(tok, c, false, NULL, "unknown_field", "provider with argv");
	c = std_config(NULL, true);
	json_object_set_new(c, "provider", json_string("sp-good"));
	config_case(tok, c, false, NULL, "provider a string");
	c = std_config(NULL, true);
	json_object_set_new(c, "surfaces", json_array());
	config_case(tok, c, false, NULL, "surfaces an array");
	c = std_config(NULL, true);
	json_object_set_new(c, "colour", json_string("red"));
	config_case_code(tok, c, false, NULL, "unknown_field", "an unknown config member");
	free(q500);
	free(q501);
	free(tok);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_never_configured),
	    cmocka_unit_test(test_config_put_get),
	    /* last: the privacy of the server log; stops the server */
	    cmocka_unit_test_teardown(test_config_bounds, log_privacy_teardown),
	};
	return SEMANTIC_PREFS_MAIN("it_semantic_prefs_config", tests);
}
