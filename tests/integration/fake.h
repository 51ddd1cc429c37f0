/*
 * fake.h — start, ask and stop the fake provider (fake_provider.c; its modes and paths are
 * in docs/providers-contract.md, "Fake provider").
 *
 * Ownership: it_fake_last returns a new json_t (json_decref it); the rest returns nothing
 * the caller frees.
 */
#ifndef RG_IT_FAKE_H
#define RG_IT_FAKE_H

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

struct it_fake {
	pid_t pid; /* 0 when not running */
	int port;
	char base_url[64]; /* "http://127.0.0.1:<port>" */
};

/* Fork+exec RG_FAKE_PROVIDER_PATH with the current environment plus extra_env
 * (NULL-terminated "NAME=value" entries, e.g. "FAKE_SLOW_MS=3000"; may be NULL), read its
 * "PORT <n>" line (at most 10 s). The child's stderr is this process's; it gets SIGTERM
 * when this process dies. Returns 0, or -1 after printing why. */
int it_fake_start(struct it_fake *f, const char *const *extra_env);

/* base_url + path into out[n] (path like "/dc/good"); returns out */
char *it_fake_url(const struct it_fake *f, const char *path, char *out, size_t n);

/* new: GET /_last/<prefix>/<mode> as JSON ({body, traceparent, content_type, count}), or
 * NULL when nothing was posted to that mode yet (404) or the fake did not answer. */
json_t *it_fake_last(const struct it_fake *f, const char *prefix, const char *mode);

/* count of /_last/<prefix>/<mode>, 0 before any POST */
long it_fake_count(const struct it_fake *f, const char *prefix, const char *mode);

/* SIGTERM, then wait up to 10 s (SIGKILL after that). Returns the exit status (0..255),
 * 128+signal, or -1 when it had to be killed; 0 when it was not running. */
int it_fake_stop(struct it_fake *f);

/* ---------------------------------------------------------------- providers at the fake */

/* new: a registration body {extension_id, protocol, endpoint_url, timeout_seconds,
 * permissions: [the protocol's permission], enabled: true} (no doctor_url). */
json_t *it_provider_body(const char *extension_id, const char *protocol, const char *endpoint_url,
			 int timeout_seconds);

/* Registers extension_id (201) for the fake's /<prefix>/<mode> ("dc": the decision-context
 * protocol, "sp": the semantic-preference one) and runs its doctor (200, doctor_ready
 * true). Fails the current cmocka test otherwise. */
void it_provider_ready(const struct it_server *s, const char *token, const struct it_fake *f,
		       const char *extension_id, const char *prefix, const char *mode,
		       int timeout_seconds);

#endif
