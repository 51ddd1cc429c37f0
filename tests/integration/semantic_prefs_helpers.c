/* it_semantic_prefs_* shared helpers (semantic_prefs_helpers.h): the server, the fake and
 * tenant A's tokens with their group, the standard config, the recall request and the check
 * of the server log. */
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

struct it_server srv;
struct it_fake fake;
char *tenant_a;
char *admin_a;
char *sp_a;
char *audit_a;

/* ================================================================ small helpers */

char *token_for(const char *tenant, const char *scopes)
{
	return it_token_for(tenant, scopes, "it-sp");
}

/* ================================================================ config */

/* new: the standard config, naming extension_id (NULL: provider {}) */
json_t *std_config(const char *ext, bool enabled)
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
long long config_revision(const char *token)
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
void put_config(const char *token, long long expected, json_t *config, const char *const *headers,
		struct it_resp *r)
{
	json_t *b =
	    json_pack("{s:o, s:o}", "expected_revision",
		      expected == NO_REV ? json_null() : json_integer(expected), "config", config);
	it_send_json(&srv, "PUT", "/v1/semantic-preferences/config", token, b, headers, r);
}

/* PUT at the current revision, expecting 200; returns the new revision */
long long configure(const char *token, json_t *config)
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
void recall(const char *token, const char *surface, json_t *context, struct it_resp *r)
{
	json_t *b = json_pack("{s:s}", "surface", surface);
	if (context)
		json_object_set_new(b, "context", context);
	it_send_json(&srv, "POST", "/v1/semantic-preferences/recall", token, b, NULL, r);
}

void expect_disabled(const struct it_resp *r, const char *what)
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

/* ================================================================ the server log */

void expect_log_private(void)
{
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

int log_privacy_teardown(void **state)
{
	(void)state;
	expect_log_private();
	return 0;
}

/* ================================================================ the group */

int semantic_prefs_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	static const struct it_group group = {&fake, &srv, "sp-a", &tenant_a, {
		{&admin_a, "admin", "it-admin"},
		{&sp_a, "semantic_preferences:use", "it-sp"},
		{&audit_a, "audit:read", "it-audit"},
	}};
	return it_group_main(name, tests, n, &group);
}
