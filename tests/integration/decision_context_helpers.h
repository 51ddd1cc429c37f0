/* What the it_decision_context_* executables share (decision_context_helpers.c, linked as
 * it_decision_context_helpers): the server, the fake provider and tenant A with its tokens,
 * which decision_context_main's group setup starts and makes; tenant A's providers (one per
 * fake mode plus the resolution cases); the retrieve request and the receipt checks; and the
 * privacy checks of the audit log, /metrics and the server log (openapi/openapi.yaml
 * "Decision context"; docs/providers-contract.md "Decision-context retrieve").
 *
 * The checks fail the running cmocka test (IT_CHECK): call them from a test's own thread.
 * Ownership: "new" results are the caller's (json_decref / free), "borrowed" ones are not. */
#ifndef IT_DECISION_CONTEXT_HELPERS_H
#define IT_DECISION_CONTEXT_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "fake.h"
#include "harness.h"

#define OBSERVED_AT "2026-11-29T21:07:22.123Z"
#define RECEIPT_SCHEMA "context_provider_retrieval_v0"
/* private values of the requests, looked for where they must never appear */
#define QUERY_MARK "QUERY-MARK-9d1e which cache policy did we pick"
#define SCOPE_ID "SCOPE-MARK-5b2c"
#define SCOPE_REF "codex://threads/" SCOPE_ID
#define SCOPE_NORMALISED "host-session:codex:" SCOPE_ID
#define NO_REV (-1LL)

extern struct it_server srv;
extern struct it_fake fake;
extern char *tenant_a;
extern char *admin_a; /* admin */
extern char *dc_a;    /* decision_context.read */
extern char *audit_a; /* audit:read */

/* borrowed: the fake's URL for path (it_fake_path_url) */
const char *furl(const char *path);

/* new: a token of tenant with scopes, named it-dc */
char *token_for(const char *tenant, const char *scopes);

/* ================================================================ providers */

/* registers id for the fake's /<prefix>/<mode> and doctors it (it_provider_ready) */
void provider_ready(const char *tenant_token, const char *id, const char *prefix,
		    const char *mode, int timeout);

/* registers (not doctored) */
void provider_raw(const char *token, const char *id, const char *endpoint, int timeout);

void provider_patch(const char *token, const char *id, const char *json_body);

/* a fake mode, and what a retrieve with max_results 3 answers from it */
struct mode_case {
	const char *mode;
	const char *status;
	const char *reason; /* NULL: null */
	size_t nitems;      /* with max_results 3 */
};

/* every mode of tenant A's providers dc-<mode> (it_mode_id), n_mode_cases of them */
extern const struct mode_case mode_cases[];
extern const size_t n_mode_cases;

/* tenant A's providers: one per fake mode plus the resolution cases. Every executable
 * registers them before its first test: test_setup_providers, or setup_providers_fixture. */
void setup_providers(void);

/* cmocka setup: setup_providers() (for the first test of an executable) */
int setup_providers_fixture(void **state);

/* ================================================================ requests */

/* new: a valid retrieve body; ext NULL: no extension_id */
json_t *dc_req(const char *ext);

/* POST /v1/decision-context/retrieve; body: steals */
void retrieve(const char *token, json_t *body, const char *const *headers, struct it_resp *r);

/* the receipt of context_provider_retrieval_v0 as the request (borrowed) asked for it:
 * status, reason (NULL: null), ext and rev (NULL / NO_REV: null), item count */
void expect_receipt(const json_t *rc, const json_t *req, const char *status, const char *reason,
		    const char *ext, long long rev, size_t nitems, const char *what);

/* borrowed: the receipt of a 200 answer {receipt} (or {receipt, transient} when transient) */
const json_t *answer_receipt(const struct it_resp *r, bool transient, const char *what);

/* one retrieve of req (steals) as token, expecting that receipt (expect_receipt) */
void expect_outcome(const char *token, json_t *req, const char *status, const char *reason,
		    const char *ext, long long rev, size_t nitems, const char *what);

/* ================================================================ privacy */

/* none of the requests' private values (query, scope, content, resource refs) is in
 * text[0..len) */
void expect_private_free(const char *text, size_t len, const char *where);

/* every audit record of tenant A (all pages) is private-free, and no retrieval was audited */
void expect_audit_private(void);

/* GET /metrics into r (200; the caller frees it), private-free and without the fake's port */
void get_metrics_private(struct it_resp *r);

/* stops the server and checks its whole log: private-free, no provider URL */
void expect_log_private(void);

/* cmocka teardown for the last test of an executable that holds neither
 * test_audit_and_metrics_privacy nor test_log_privacy (it_decision_context_outcomes): the
 * three checks above over what its own server saw. Stops the server. */
int privacy_teardown(void **state);

struct CMUnitTest;

/* The whole main() of an it_decision_context_* executable: it_group_main with the fake, the
 * server, tenant A (prefix dc-a) and its three tokens above. */
int decision_context_main(const char *name, const struct CMUnitTest *tests, size_t n);
#define DECISION_CONTEXT_MAIN(name, tests) \
	decision_context_main((name), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
