/* What the it_semantic_prefs_* executables share (semantic_prefs_helpers.c, linked as
 * it_semantic_prefs_helpers): the server, the fake provider and tenant A with its tokens,
 * which semantic_prefs_main's group setup starts and makes; the standard config and its PUT;
 * the recall request; and the check of the server log (openapi/openapi.yaml
 * "Semantic preferences"; docs/providers-contract.md "Semantic preferences").
 *
 * The checks fail the running cmocka test (IT_CHECK): call them from a test's own thread.
 * Ownership: "new" results are the caller's (json_decref / free), "borrowed" ones are not. */
#ifndef IT_SEMANTIC_PREFS_HELPERS_H
#define IT_SEMANTIC_PREFS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "fake.h"
#include "harness.h"

#define CONFIG_SCHEMA "semantic_preference_hook_config_v0"

/* the surfaces of the standard config */
#define S_DEFAULT "issue_fix.pr_description" /* limit 5 by default, fail_open */
#define S_THREE "content_ops.draft_language" /* limit 3 */
#define S_TWENTY "ops.wide_recall"           /* limit 20 */
#define S_CLOSED "ops.strict_gate"           /* fail_closed */
#define Q_DEFAULT "PR description structure and reviewer language preferences"

#define NO_REV (-1LL)
/* a recall context value, looked for where it must never appear */
#define CTX_MARK "CTX-MARK-31c7"

#define APP_PATH "/v1/semantic-preferences/receipts/application"
#define MAINT_PATH "/v1/semantic-preferences/receipts/maintenance"

extern struct it_server srv;
extern struct it_fake fake;
extern char *tenant_a;
extern char *admin_a; /* admin */
extern char *sp_a;    /* semantic_preferences:use */
extern char *audit_a; /* audit:read */

/* new: a token of tenant with scopes, named it-sp */
char *token_for(const char *tenant, const char *scopes);

/* ================================================================ config */

/* new: the standard config, naming extension_id (NULL: provider {}) */
json_t *std_config(const char *ext, bool enabled);

/* the tenant's config revision (NO_REV: never configured) */
long long config_revision(const char *token);

/* PUT {expected_revision (NO_REV: null), config (steals)} */
void put_config(const char *token, long long expected, json_t *config,
		const char *const *headers, struct it_resp *r);

/* PUT at the current revision (config: steals), expecting 200; returns the new revision */
long long configure(const char *token, json_t *config);

/* ================================================================ recall */

/* POST /v1/semantic-preferences/recall {surface, context}; context: steals (NULL: none) */
void recall(const char *token, const char *surface, json_t *context, struct it_resp *r);

/* a 200 answer {status: disabled, items: [], truncated: false, maintenance_guidance: null} */
void expect_disabled(const struct it_resp *r, const char *what);

/* ================================================================ the server log */

/* stops the server and checks its whole log: no query, summary, preference ref, context,
 * scope or provider URL */
void expect_log_private(void);

/* cmocka teardown for the last test of an executable without test_log_privacy
 * (it_semantic_prefs_recall): expect_log_private over what its own server saw. */
int log_privacy_teardown(void **state);

struct CMUnitTest;

/* The whole main() of an it_semantic_prefs_* executable: it_group_main with the fake, the
 * server, tenant A (prefix sp-a) and its three tokens above. */
int semantic_prefs_main(const char *name, const struct CMUnitTest *tests, size_t n);
#define SEMANTIC_PREFS_MAIN(name, tests) \
	semantic_prefs_main((name), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
