/*
 * fake.h — start, ask and stop the fake provider (fake_provider.c; its modes and paths are
 * in docs/providers-contract.md, "Fake provider"), and the helpers the provider test
 * executables (it_providers_*, it_decision_context_*, it_semantic_prefs_*) share: their group
 * setup, provider registration at the fake, and small JSON, timing and privacy checks.
 *
 * Functions that "fail the current test" use IT_CHECK / IT_STATUS: call them only from a
 * cmocka test's own thread.
 *
 * Ownership: functions documented "new" return memory the caller frees (free(), or
 * json_decref for a json_t); "borrowed" results are not freed.
 */
#ifndef RG_IT_FAKE_H
#define RG_IT_FAKE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "harness.h"

#define IT_PROTO_DC "decision_context_advisory_provider_v0"
#define IT_PROTO_SP "semantic_preference_provider_v0"
#define IT_PERM_DC "decision_context.read"
#define IT_PERM_SP "semantic_preference.read"
/* the marker in every decision-context item content the fake answers */
#define IT_FAKE_CONTENT_MARKER "FAKE-CONTENT-7f3a"
/* the prefix of every decision-context resource_ref the fake answers */
#define IT_FAKE_REF_PREFIX "fake-private-ref-"
/* how long the fake's slow modes sleep (FAKE_SLOW_MS), as it_group_setup starts it */
#define IT_FAKE_SLOW_MS 3000

struct it_fake {
	pid_t pid; /* 0 when not running */
	int port;
	char base_url[64]; /* "http://127.0.0.1:<port>" */
};

/* Run RG_FAKE_PROVIDER_PATH (it_spawn) with the current environment plus extra_env
 * (NULL-terminated "NAME=value" entries that override, e.g. "FAKE_SLOW_MS=3000"; may be
 * NULL), read its "PORT <n>" line (at most 10 s). The child's stderr is this process's; it
 * gets SIGTERM when this process dies. Returns 0, or -1 after printing why. */
int it_fake_start(struct it_fake *f, const char *const *extra_env);

/* base_url + path into out[n] (path like "/dc/good"); returns out */
char *it_fake_url(const struct it_fake *f, const char *path, char *out, size_t n);

/* borrowed: base_url + path in one of 32 rotating buffers, valid for the next 31 calls (from
 * any it_fake); not thread-safe. For tables of URLs and arguments built in place. */
const char *it_fake_path_url(const struct it_fake *f, const char *path);

/* new: GET /_last/<prefix>/<mode> as JSON ({body, traceparent, content_type, count}), or
 * NULL when nothing was posted to that mode yet (404) or the fake did not answer. */
json_t *it_fake_last(const struct it_fake *f, const char *prefix, const char *mode);

/* count of /_last/<prefix>/<mode>, 0 before any POST */
long it_fake_count(const struct it_fake *f, const char *prefix, const char *mode);

/* new: the body of the last POST to /<prefix>/<mode>, parsed (duplicate keys rejected), after
 * checking that the fake saw it, that it is exactly one call more than `before` (an earlier
 * it_fake_count) and that its Content-Type is application/json. When last is not NULL, *last
 * gets the whole /_last record (new). Fails the current test otherwise. */
json_t *it_fake_expect_request(const struct it_fake *f, const char *prefix, const char *mode,
			       long before, json_t **last);

/* SIGTERM, then wait up to 10 s (SIGKILL after that). Returns the exit status (0..255),
 * 128+signal, or -1 when it had to be killed; 0 when it was not running. */
int it_fake_stop(struct it_fake *f);

/* ---------------------------------------------------------------- providers at the fake */

/* new: a registration body {extension_id, protocol, endpoint_url, timeout_seconds,
 * permissions: [the protocol's permission], enabled: true} (no doctor_url). */
json_t *it_provider_body(const char *extension_id, const char *protocol, const char *endpoint_url,
			 int timeout_seconds);

/* Registers it_provider_body(...) plus doctor_url (NULL: the member is left out) and expects
 * 201. Fails the current test otherwise. */
void it_provider_register(const struct it_server *s, const char *token, const char *extension_id,
			  const char *protocol, const char *endpoint_url, const char *doctor_url,
			  int timeout_seconds);

/* Runs the doctor of extension_id and expects 200 with doctor_ready true. Fails the current
 * test otherwise. */
void it_provider_doctor_ok(const struct it_server *s, const char *token,
			   const char *extension_id);

/* Registers extension_id (201) for the fake's /<prefix>/<mode> ("dc": the decision-context
 * protocol, "sp": the semantic-preference one) and runs its doctor (200, doctor_ready
 * true). Fails the current cmocka test otherwise. */
void it_provider_ready(const struct it_server *s, const char *token, const struct it_fake *f,
		       const char *extension_id, const char *prefix, const char *mode,
		       int timeout_seconds);

/* Registers extension_id (prefix "dc" or "sp", as it_provider_ready) at a 127.0.0.1 port that
 * refuses connections, with doctor_url the fake's /<prefix>/good/doctor, and expects its
 * doctor to pass: a provider that is ready but unreachable. Fails the current test
 * otherwise. */
void it_provider_unreachable(const struct it_server *s, const char *token,
			     const struct it_fake *f, const char *extension_id,
			     const char *prefix);

/* PATCH /v1/providers/<id> with json_body (text), expecting 200. Fails the current test
 * otherwise. */
void it_provider_patch(const struct it_server *s, const char *token, const char *extension_id,
		       const char *json_body);

/* The extension id of a fake mode: "<prefix>-<mode>" with every '_' of mode as '-'
 * ("dc", "nan_score" → "dc-nan-score"), into out[n]; returns out. */
char *it_mode_id(const char *prefix, const char *mode, char *out, size_t n);

/* ---------------------------------------------------------------- group setup */

struct it_group_token {
	char **token;	    /* where it_group_setup stores the new token */
	const char *scopes; /* it_token's scopes and name */
	const char *name;
};

#define IT_GROUP_MAX_TOKENS 4

/* what a provider test file's group setup starts and makes (all borrowed: the file's
 * statics) */
struct it_group {
	struct it_fake *fake;
	struct it_server *srv;
	const char *tenant_prefix; /* *tenant = it_unique(tenant_prefix) */
	char **tenant;
	struct it_group_token tokens[IT_GROUP_MAX_TOKENS]; /* unused entries: token NULL */
};

struct CMUnitTest;

/* The whole main() of a provider test file: it_init, then the cmocka group `name` of
 * tests[0..n), then it_cleanup. The group setup starts the fake (FAKE_SLOW_MS =
 * IT_FAKE_SLOW_MS) and the server and makes g's tenant and tokens (any failure fails the
 * group); the group teardown stops the server and the fake when they still run (either not
 * exiting with status 0 fails it) and frees the tenant and the tokens. Returns main's exit
 * status: 1 without DATABASE_URL, else cmocka's (the number of failed tests). */
int it_group_main(const char *name, const struct CMUnitTest *tests, size_t n,
		  const struct it_group *g);
#define IT_GROUP_MAIN(name, tests, g) \
	it_group_main((name), (tests), sizeof(tests) / sizeof((tests)[0]), (g))

/* ---------------------------------------------------------------- hung provider calls */

/* n requests that each wait on a slow provider, sent at once from threads of their own: the
 * lane tests (it_edge, it_mcp) start them, check what the server still answers meanwhile,
 * then join them. */
struct it_hung_call {
	const struct it_server *s;
	const char *path, *token, *body; /* POST path with body (text, borrowed) */
	const char *const *headers;      /* borrowed, may be NULL */
	struct it_resp resp;             /* the answer, once joined (it_resp_free it) */
};
struct it_hung {
	struct it_hung_call *calls; /* n of them, filled by the caller but for resp */
	size_t n;
	pthread_t *threads;
	atomic_int done; /* answers received so far */
};
/* Starts the calls; then waits until the fake saw all n POSTs to /<prefix>/<mode> (at most
 * IT_FAKE_SLOW_MS) and returns how many reached it. Fails the current test when a thread
 * cannot start. */
long it_hung_start(struct it_hung *h, const struct it_fake *f, const char *prefix,
		   const char *mode);
/* Joins the calls' threads (their answers are in calls[i].resp) and frees the threads. */
void it_hung_join(struct it_hung *h);

/* ---------------------------------------------------------------- small helpers */

/* CLOCK_MONOTONIC in seconds */
double it_now_s(void);

/* new: n bytes, prefix (cut at n) then fill */
char *it_filled(const char *prefix, size_t n, char fill);

/* obj is an object with exactly the members keys (NULL-terminated) */
bool it_is_exactly(const json_t *obj, const char *const *keys);

/* new: it_token(tenant, scopes, name); fails the current test when it cannot be made */
char *it_token_for(const char *tenant, const char *scopes, const char *name);

/* it_request_json with body (steals; fails the current test when NULL, i.e. json_pack failed) */
void it_send_json(const struct it_server *s, const char *method, const char *path,
		  const char *token, json_t *body, const char *const *headers, struct it_resp *r);

/* None of needles[0..n) occurs in text[0..len); a hit prints an excerpt and fails the
 * current test with "<where> contains "<needle>"". */
void it_expect_absent(const char *text, size_t len, const char *const *needles, size_t n,
		      const char *where);

/* new: stops the server, expecting exit status 0, and returns its whole log (non-empty,
 * length in *len). Fails the current test otherwise. */
char *it_server_stop_log(struct it_server *s, size_t *len);

#endif
