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

#endif
