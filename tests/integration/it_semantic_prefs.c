/*
 * it_semantic_prefs — semantic preference recall end to end (API.md §0, §6, §8;
 * docs/providers-contract.md "Semantic preferences"; the seed semantic-preferences), against
 * the fake provider (fake_provider.c):
 *
 *  - the config: GET of a never-configured tenant, PUT from null, stale (409 with
 *    current_revision, null for a never-configured tenant), If-Match (412), stored as sent,
 *    audited without queries; every bound at its edge;
 *  - recall disabled when never configured or enabled: false;
 *  - every fake mode → status and failure_kind (fail open), fail_closed → 502
 *    semantic_preference_unavailable, many → truncated with `limit` items, the maintenance
 *    guidance derived exactly, resolution failures → extension_binding_unavailable;
 *  - the request the provider receives, member by member; recall body bounds;
 *  - the stateless application and maintenance receipts: 16-hex digests sorted and
 *    de-duplicated, corpus_ids sorted and unique, their limits;
 *  - scopes, and a server log without queries, summaries, context or provider URLs.
 *
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
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

#include "fake.h"
#include "harness.h"

#define CONFIG_SCHEMA "semantic_preference_hook_config_v0"
#define REQUEST_SCHEMA "semantic_preference_provider_request_v0"
#define GUIDANCE_SCHEMA "semantic_preference_maintenance_guidance_v0"
#define APP_SCHEMA "semantic_preference_application_receipt_v0"
#define MAINT_SCHEMA "semantic_preference_maintenance_receipt_v0"

/* the surfaces of the standard config */
#define S_DEFAULT "issue_fix.pr_description" /* limit 5 by default, fail_open */
#define S_THREE "content_ops.draft_language" /* limit 3 */
#define S_TWENTY "ops.wide_recall"           /* limit 20 */
#define S_CLOSED "ops.strict_gate"           /* fail_closed */
#define Q_DEFAULT "PR description structure and reviewer language preferences"

#define NO_REV (-1LL)
/* a recall context value, looked for where it must never appear */
#define CTX_MARK "CTX-MARK-31c7"

static struct it_server srv;
static struct it_fake fake;
static char *tenant_a;
static char *admin_a; /* admin */
static char *sp_a;    /* semantic_preferences:use */
static char *audit_a; /* audit:read */

/* ================================================================ small helpers */

/* borrowed: the fake's URL for path (it_fake_path_url) */
static const char *furl(const char *path)
{
	return it_fake_path_url(&fake, path);
}

static char *token_for(const char *tenant, const char *scopes)
{
	return it_token_for(tenant, scopes, "it-sp");
}

/* the first 16 hex digits of SHA-256(ref) */
static void digest16(const char *ref, char out[17])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(ref, strlen(ref), md, &mdlen, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* new: the JSON array of the sorted, unique strings of list[0..n) (digested when digest) */
static json_t *sorted_unique(const char *const *list, size_t n, bool digest)
{
	char(*d)[17] = calloc(n ? n : 1, sizeof *d);
	const char **v = calloc(n ? n : 1, sizeof *v);
	assert_non_null(d);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		if (digest) {
			digest16(list[i], d[i]);
			v[i] = d[i];
		} else {
			v[i] = list[i];
		}
	}
	qsort(v, n, sizeof *v, cmp_str);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			json_array_append_new(a, json_string(v[i]));
	}
	free(v);
	free(d);
	return a;
}

/* ================================================================ config */

/* new: the standard config, naming extension_id (NULL: provider {}) */
static json_t *std_config(const char *ext, bool enabled)
{
	json_t *provider = ext ? json_pack("{s:s}", "extension_id", ext) : json_object();
	return json_pack("{s:s, s:b, s:o, s:{s:{s:s}, s:{s:s, s:i}, s:{s:s, s:i}, "
			 "s:{s:s, s:s}}}",
			 "schema_version", CONFIG_SCHEMA, "enabled", enabled, "provider", provider,
			 "surfaces", S_DEFAULT, "query", Q_DEFAULT, S_THREE, "query",
			 "Draft language and section preferences", "limit", 3, S_TWENTY, "query",
			 "Everything about operations", "limit", 20, S_CLOSED, "query",
			 "Strict gate preferences", "failure_policy", "fail_closed");
}

/* the tenant's config revision (NO_REV: never configured) */
static long long config_revision(const char *token)
{
	struct it_resp r;
	it_request(&srv, "GET", "/v1/semantic-preferences/config", token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	long long rev =
	    it_json_has_null(r.json, "revision") ? NO_REV : it_json_int(r.json, "revision", -2);
	IT_CHECK(rev != -2, "GET config: revision is neither null nor an integer: %s", r.body);
	it_resp_free(&r);
	return rev;
}

/* PUT {expected_revision (NO_REV: null), config (steals)} */
static void put_config(const char *token, long long expected, json_t *config,
		       const char *const *headers, struct it_resp *r)
{
	json_t *b =
	    json_pack("{s:o, s:o}", "expected_revision",
		      expected == NO_REV ? json_null() : json_integer(expected), "config", config);
	it_send_json(&srv, "PUT", "/v1/semantic-preferences/config", token, b, headers, r);
}

/* PUT at the current revision, expecting 200; returns the new revision */
static long long configure(const char *token, json_t *config)
{
	struct it_resp r;
	long long cur = config_revision(token);
	put_config(token, cur, config, NULL, &r);
	IT_STATUS(&r, 200);
	long long rev = it_json_int(r.json, "revision", -1);
	IT_CHECK(rev == (cur == NO_REV ? 1 : cur + 1), "PUT config: revision %lld after %lld: %s",
		 rev, cur, r.body);
	it_resp_free(&r);
	return rev;
}

/* ================================================================ recall */

/* context: steals (NULL: none) */
static void recall(const char *token, const char *surface, json_t *context, struct it_resp *r)
{
	json_t *b = json_pack("{s:s}", "surface", surface);
	if (context)
		json_object_set_new(b, "context", context);
	it_send_json(&srv, "POST", "/v1/semantic-preferences/recall", token, b, NULL, r);
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

static void expect_disabled(const struct it_resp *r, const char *what)
{
	static const char *const keys[] = {"status", "items", "truncated", "maintenance_guidance",
					   NULL};
	IT_STATUS(r, 200);
	IT_CHECK(it_is_exactly(r->json, keys) && it_json_str_is(r->json, "status", "disabled") &&
		     json_is_array(json_object_get(r->json, "items")) &&
		     json_array_size(json_object_get(r->json, "items")) == 0 &&
		     json_is_false(json_object_get(r->json, "truncated")) &&
		     it_json_has_null(r->json, "maintenance_guidance"),
		 "%s: not {status: disabled, items: [], truncated: false, maintenance_guidance: "
		 "null}: %s",
		 what, r->body);
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

/* ================================================================ receipts */

#define APP_PATH "/v1/semantic-preferences/receipts/application"
#define MAINT_PATH "/v1/semantic-preferences/receipts/maintenance"

/* new: ["<prefix>0", "<prefix>1", ...] (n strings, the number zero-padded to width) */
static json_t *numbered(const char *prefix, int n, int width)
{
	json_t *list = json_array();
	for (int i = 0; i < n; i++) {
		char one[64];
		snprintf(one, sizeof one, "%s%0*d", prefix, width, i);
		json_array_append_new(list, json_string(one));
	}
	return list;
}

/* a receipt body with one member changed */
struct member_case {
	const char *what, *member;
	json_t *value; /* stolen; NULL: delete the member */
	bool ok;       /* 200; else 422 `code` naming a field under `field` */
	const char *field;
	const char *code; /* NULL: validation_failed */
};

/* each case: a copy of base with the case's member changed, POSTed to path as sp_a */
static void run_member_cases(const char *path, const json_t *base,
			     const struct member_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct member_case *c = &cases[i];
		json_t *b = json_deep_copy(base);
		if (c->value)
			json_object_set_new(b, c->member, c->value);
		else
			json_object_del(b, c->member);
		struct it_resp r;
		it_send_json(&srv, "POST", path, sp_a, b, NULL, &r);
		if (c->ok) {
			if (r.status != 200)
				fprintf(stderr, "  case: %s\n", c->what);
			IT_STATUS(&r, 200);
		} else {
			IT_422(&r, c->code ? c->code : "validation_failed", c->field, false,
			       c->what);
		}
		it_resp_free(&r);
	}
}

static void test_application_receipt(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "schema_version", "surface", "application_id", "outcome", "preference_ref_digests",
	    "artifact_ref",   NULL};
	const char *refs[] = {"fake-pref-ref-b", "fake-pref-ref-a", "fake-pref-ref-b",
			      "provider://private/ref"};
	struct it_resp r;
	json_t *b = json_pack("{s:s, s:s, s:s, s:[s, s, s, s], s:s}", "surface", S_DEFAULT,
			      "application_id", "app-1", "outcome", "applied", "preference_refs",
			      refs[0], refs[1], refs[2], refs[3], "artifact_ref", "pr:42");
	it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *want = sorted_unique(refs, 4, true);
	IT_CHECK(it_is_exactly(r.json, keys) &&
		     it_json_str_is(r.json, "schema_version", APP_SCHEMA) &&
		     it_json_str_is(r.json, "surface", S_DEFAULT) &&
		     it_json_str_is(r.json, "application_id", "app-1") &&
		     it_json_str_is(r.json, "outcome", "applied") &&
		     it_json_str_is(r.json, "artifact_ref", "pr:42"),
		 "the application receipt: %s", r.body);
	IT_CHECK(json_array_size(want) == 3 &&
		     json_equal(json_object_get(r.json, "preference_ref_digests"), want),
		 "preference_ref_digests are not the sorted unique 16-hex digests: %s", r.body);
	IT_CHECK(!strstr(r.body, "fake-pref-ref") && !strstr(r.body, "provider://"),
		 "the receipt holds a provider reference: %s", r.body);
	json_decref(want);
	it_resp_free(&r);

	/* artifact_ref absent / null → null; no refs → [] */
	const char *outcomes[] = {"ignored", "failed"};
	for (size_t i = 0; i < 2; i++) {
		b = json_pack("{s:s, s:s, s:s, s:[]}", "surface", "a.b", "application_id", "app-2",
			      "outcome", outcomes[i], "preference_refs");
		if (i == 1)
			json_object_set_new(b, "artifact_ref", json_null());
		it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_is_exactly(r.json, keys) && it_json_has_null(r.json, "artifact_ref") &&
			     json_is_array(json_object_get(r.json, "preference_ref_digests")) &&
			     json_array_size(json_object_get(r.json, "preference_ref_digests")) ==
				 0,
			 "an application receipt without refs and artifact: %s", r.body);
		it_resp_free(&r);
	}

	/* limits: 20 refs, a 512-byte ref pass; 21, 513, "" fail */
	b = json_pack("{s:s, s:s, s:s, s:o}", "surface", "a.b", "application_id", "app-3",
		      "outcome", "applied", "preference_refs", numbered("ref-", 20, 1));
	it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "preference_ref_digests")) == 20,
		 "20 refs: %s", r.body);
	it_resp_free(&r);
	char *r512 = it_filled("ref-", 512, 'r'), *r513 = it_filled("ref-", 513, 'r');
	char *a512 = it_filled("art-", 512, 'a'), *a513 = it_filled("art-", 513, 'a');
	const struct member_case cases[] = {
	    {"21 refs", "preference_refs", numbered("ref-", 21, 1), false, "preference_refs", NULL},
	    {"a 512-byte ref", "preference_refs", json_pack("[s]", r512), true, NULL, NULL},
	    {"a 513-byte ref", "preference_refs", json_pack("[s]", r513), false, "preference_refs",
	     NULL},
	    {"an empty ref", "preference_refs", json_pack("[s]", ""), false, "preference_refs",
	     NULL},
	    {"a ref not a string", "preference_refs", json_pack("[i]", 5), false, "preference_refs",
	     NULL},
	    {"preference_refs missing", "preference_refs", NULL, false, "preference_refs", NULL},
	    {"a 512-byte artifact_ref", "artifact_ref", json_string(a512), true, NULL, NULL},
	    {"a 513-byte artifact_ref", "artifact_ref", json_string(a513), false, "artifact_ref",
	     NULL},
	    {"an empty artifact_ref", "artifact_ref", json_string(""), false, "artifact_ref", NULL},
	    {"outcome unknown", "outcome", json_string("verified"), false, "outcome", NULL},
	    {"application_id bad", "application_id", json_string("bad id"), false, "application_id",
	     NULL},
	    {"application_id missing", "application_id", NULL, false, "application_id", NULL},
	    {"surface bad", "surface", json_string("NoDot"), false, "surface", NULL},
	    {"surface missing", "surface", NULL, false, "surface", NULL},
	    {"an unknown member", "colour", json_string("red"), false, "colour", "unknown_field"},
	};
	json_t *base = json_pack("{s:s, s:s, s:s, s:[s]}", "surface", "a.b", "application_id",
				 "app-4", "outcome", "applied", "preference_refs", "ref-1");
	run_member_cases(APP_PATH, base, cases, sizeof cases / sizeof *cases);
	json_decref(base);
	free(r512);
	free(r513);
	free(a512);
	free(a513);
}

static void test_maintenance_receipt(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "schema_version",    "trigger",      "outcome", "corpus_ids",
	    "scope_ref_digests", "evidence_ref", NULL};
	const char *corpora[] = {"zeta_corpus", "alpha_corpus", "zeta_corpus", "Mid.corpus"};
	const char *scopes[] = {"scope://b", "scope://a", "scope://b"};
	struct it_resp r;
	json_t *b = json_pack("{s:s, s:s, s:[s, s, s, s], s:[s, s, s], s:s}", "trigger",
			      "explicit_feedback", "outcome", "verified", "corpus_ids", corpora[0],
			      corpora[1], corpora[2], corpora[3], "scope_refs", scopes[0],
			      scopes[1], scopes[2], "evidence_ref", "evidence:run-7");
	it_send_json(&srv, "POST", MAINT_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *want_ids = sorted_unique(corpora, 4, false);
	json_t *want_scopes = sorted_unique(scopes, 3, true);
	IT_CHECK(it_is_exactly(r.json, keys) &&
		     it_json_str_is(r.json, "schema_version", MAINT_SCHEMA) &&
		     it_json_str_is(r.json, "trigger", "explicit_feedback") &&
		     it_json_str_is(r.json, "outcome", "verified") &&
		     it_json_str_is(r.json, "evidence_ref", "evidence:run-7"),
		 "the maintenance receipt: %s", r.body);
	IT_CHECK(json_equal(json_object_get(r.json, "corpus_ids"), want_ids),
		 "corpus_ids are not sorted (bytewise) and unique: %s", r.body);
	IT_CHECK(json_array_size(want_scopes) == 2 &&
		     json_equal(json_object_get(r.json, "scope_ref_digests"), want_scopes),
		 "scope_ref_digests are not the sorted unique 16-hex digests: %s", r.body);
	IT_CHECK(!strstr(r.body, "scope://"), "the receipt holds a scope reference: %s", r.body);
	json_decref(want_ids);
	json_decref(want_scopes);
	it_resp_free(&r);

	/* no scope refs, no evidence; the other trigger and outcomes */
	const char *outcomes[] = {"no_write_rationale", "failed"};
	for (size_t i = 0; i < 2; i++) {
		b = json_pack("{s:s, s:s, s:[s], s:[]}", "trigger", "source_truth_changed",
			      "outcome", outcomes[i], "corpus_ids", "c1", "scope_refs");
		it_send_json(&srv, "POST", MAINT_PATH, sp_a, b, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_is_exactly(r.json, keys) && it_json_has_null(r.json, "evidence_ref") &&
			     json_array_size(json_object_get(r.json, "scope_ref_digests")) == 0,
			 "a maintenance receipt without scopes and evidence: %s", r.body);
		it_resp_free(&r);
	}

	/* corpus_ids 1..20, scope_refs 0..20, evidence_ref up to 512 bytes */
	char *e512 = it_filled("ev-", 512, 'e'), *e513 = it_filled("ev-", 513, 'e');
	char *s513 = it_filled("scope-", 513, 's');
	const struct member_case cases[] = {
	    {"20 corpus_ids", "corpus_ids", numbered("corpus-", 20, 2), true, NULL, NULL},
	    {"21 corpus_ids", "corpus_ids", numbered("corpus-", 21, 2), false, "corpus_ids", NULL},
	    {"corpus_ids empty", "corpus_ids", json_array(), false, "corpus_ids", NULL},
	    {"corpus_ids missing", "corpus_ids", NULL, false, "corpus_ids", NULL},
	    {"a corpus id not an id", "corpus_ids", json_pack("[s]", "bad id"), false, "corpus_ids",
	     NULL},
	    {"20 scope_refs", "scope_refs", numbered("scope-", 20, 1), true, NULL, NULL},
	    {"21 scope_refs", "scope_refs", numbered("scope-", 21, 1), false, "scope_refs", NULL},
	    {"a 513-byte scope_ref", "scope_refs", json_pack("[s]", s513), false, "scope_refs",
	     NULL},
	    {"an empty scope_ref", "scope_refs", json_pack("[s]", ""), false, "scope_refs", NULL},
	    {"a 512-byte evidence_ref", "evidence_ref", json_string(e512), true, NULL, NULL},
	    {"a 513-byte evidence_ref", "evidence_ref", json_string(e513), false, "evidence_ref",
	     NULL},
	    {"trigger unknown", "trigger", json_string("whim"), false, "trigger", NULL},
	    {"trigger missing", "trigger", NULL, false, "trigger", NULL},
	    {"outcome applied", "outcome", json_string("applied"), false, "outcome", NULL},
	    {"an unknown member", "colour", json_string("red"), false, "colour", "unknown_field"},
	};
	json_t *base = json_pack("{s:s, s:s, s:[s], s:[]}", "trigger", "explicit_feedback",
				 "outcome", "verified", "corpus_ids", "c1", "scope_refs");
	run_member_cases(MAINT_PATH, base, cases, sizeof cases / sizeof *cases);
	json_decref(base);
	free(e512);
	free(e513);
	free(s513);
}

/* receipts and recalls are not stored or audited */
static void test_stateless(void **state)
{
	(void)state;
	char *t = it_unique("sp-stateless");
	char *tok = token_for(t, "semantic_preferences:use,audit:read");
	struct it_resp r;
	it_request(&srv, "POST", APP_PATH, tok,
		   "{\"surface\":\"a.b\",\"application_id\":\"x\",\"outcome\":\"applied\","
		   "\"preference_refs\":[\"r\"]}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "POST", MAINT_PATH, tok,
		   "{\"trigger\":\"explicit_feedback\",\"outcome\":\"verified\","
		   "\"corpus_ids\":[\"c\"],\"scope_refs\":[]}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	recall(tok, S_DEFAULT, NULL, &r);
	expect_disabled(&r, "stateless tenant");
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/audit?limit=200", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	size_t i;
	const json_t *rec;
	json_array_foreach (json_object_get(r.json, "items"), i, rec) {
		/* the tenant's only records are its tokens' creation */
		IT_CHECK(it_json_str_is(rec, "action", "token.created"),
			 "receipts or recalls were audited: %s", r.body);
	}
	it_resp_free(&r);
	free(tok);
	free(t);
}

static void test_scopes(void **state)
{
	(void)state;
	char *prov_only = token_for(tenant_a, "providers:admin");
	struct it_resp r;
	const struct {
		const char *method, *path, *body;
	} calls[] = {
	    {"GET", "/v1/semantic-preferences/config", NULL},
	    {"PUT", "/v1/semantic-preferences/config",
	     "{\"expected_revision\":null,\"config\":{\"enabled\":false,\"provider\":{},"
	     "\"surfaces\":{}}}"},
	    {"POST", "/v1/semantic-preferences/recall", "{\"surface\":\"" S_DEFAULT "\"}"},
	    {"POST", APP_PATH,
	     "{\"surface\":\"a.b\",\"application_id\":\"x\",\"outcome\":\"applied\","
	     "\"preference_refs\":[]}"},
	    {"POST", MAINT_PATH,
	     "{\"trigger\":\"explicit_feedback\",\"outcome\":\"verified\",\"corpus_ids\":[\"c\"],"
	     "\"scope_refs\":[]}"},
	};
	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		it_request(&srv, calls[i].method, calls[i].path, prov_only, calls[i].body, NULL,
			   &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, calls[i].method, calls[i].path, NULL, calls[i].body, NULL, &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
	}
	/* admin implies semantic_preferences:use */
	it_request(&srv, "GET", "/v1/semantic-preferences/config", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(prov_only);
}

/* last: stops the server and reads its log */
static void test_log_privacy(void **state)
{
	(void)state;
	size_t len = 0;
	char *log = it_server_stop_log(&srv, &len);
	char url[64];
	snprintf(url, sizeof url, "127.0.0.1:%d", fake.port);
	const char *needles[] = {Q_DEFAULT,
				 "Strict gate preferences",
				 "Preference summary",
				 "fake-pref-ref",
				 CTX_MARK,
				 "fake-private-scope",
				 url};
	it_expect_absent(log, len, needles, sizeof needles / sizeof *needles, "the server log");
	free(log);
}

int main(void)
{
	static const struct it_group group = {&fake, &srv, "sp-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&sp_a, "semantic_preferences:use", "it-sp"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_providers), /* first: tenant A's providers */
	    cmocka_unit_test(test_config_never_configured),
	    cmocka_unit_test(test_config_put_get),
	    cmocka_unit_test(test_config_bounds),
	    cmocka_unit_test(test_recall_disabled),
	    cmocka_unit_test(test_recall_modes),
	    cmocka_unit_test(test_recall_guidance),
	    cmocka_unit_test(test_recall_request),
	    cmocka_unit_test(test_application_receipt),
	    cmocka_unit_test(test_maintenance_receipt),
	    cmocka_unit_test(test_stateless),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server */
	};
	return IT_GROUP_MAIN("it_semantic_prefs", tests, &group);
}
