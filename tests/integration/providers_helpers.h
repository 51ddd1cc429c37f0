/* What the it_providers_* executables share (providers_helpers.c, linked as
 * it_providers_helpers): the server, the fake provider and tenant A with its tokens, which
 * providers_main's group setup starts and makes, and the registry's requests and checks
 * (openapi/openapi.yaml "Providers"; docs/providers-contract.md "Registry"). Every test
 * registers providers of its own names in tenant A, or works in a tenant of its own
 * (it_unique).
 *
 * The checks fail the running cmocka test (IT_CHECK): call them from a test's own thread.
 * Ownership: "new" results are the caller's (json_decref / free), "borrowed" ones are not. */
#ifndef IT_PROVIDERS_HELPERS_H
#define IT_PROVIDERS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "fake.h"
#include "harness.h"

#define NO_REV (-1LL) /* doctor_verified_revision: null */

extern struct it_server srv;
extern struct it_fake fake;
extern char *tenant_a;
extern char *admin_a; /* admin */
extern char *prov_a;  /* providers:admin */
extern char *dc_a;    /* decision_context.read only */
extern char *audit_a; /* audit:read only */

/* borrowed: the fake's URL for path (it_fake_path_url: valid for the next 31 calls) */
const char *furl(const char *path);

/* borrowed: "/v1/providers/<id><suffix>", valid for the next 7 calls */
const char *ppath(const char *id, const char *suffix);

/* new: a token of tenant with scopes, named it-providers */
char *token_for(const char *tenant, const char *scopes);

/* POST /v1/providers; body: steals */
void reg(const char *token, json_t *body, struct it_resp *r);

/* registers a provider (201, no doctor_url) and returns nothing */
void reg_ok(const char *token, const char *id, const char *proto, const char *endpoint,
	    int timeout);

void get_prov(const char *token, const char *id, struct it_resp *r);

/* PATCH /v1/providers/<id>; body: steals */
void patch(const char *token, const char *id, json_t *body, const char *const *headers,
	   struct it_resp *r);

/* POST /v1/providers/<id>/doctor */
void doctor(const char *token, const char *id, struct it_resp *r);

/* new: {expected_revision} */
json_t *patch_body(long long expected);

/* the ETag is "<rev>" */
void expect_etag(const struct it_resp *r, long long rev);

/* the provider JSON of docs/providers-contract.md: exactly its members, of their types, and
 * doctor_ready = (doctor_verified_revision == revision) */
void expect_provider_shape(const json_t *p, const char *what);

/* GET the provider: 200, its shape, ETag, and the revision / readiness expected
 * (dvr NO_REV: doctor_verified_revision null) */
void expect_state(const char *token, const char *id, long long rev, bool ready, long long dvr);

/* new: every audit record of provider id in token's tenant (limit 200, one page) */
json_t *audit_records(const char *token, const char *id);

size_t audit_count(const char *token, const char *id);

struct CMUnitTest;

/* The whole main() of an it_providers_* executable: it_group_main with the fake, the server,
 * tenant A (prefix prov-a) and its four tokens above. */
int providers_main(const char *name, const struct CMUnitTest *tests, size_t n);
#define PROVIDERS_MAIN(name, tests) \
	providers_main((name), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
