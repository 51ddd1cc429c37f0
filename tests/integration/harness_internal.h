/*
 * harness_internal.h — what the it_harness sources (harness_server.c, harness_http.c,
 * harness_values.c) share and the tests do not see: allocation that aborts on failure and a
 * growing byte buffer. Static inline: one definition, and no symbol the tests could collide
 * with.
 */
#ifndef RG_IT_HARNESS_INTERNAL_H
#define RG_IT_HARNESS_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RG_BIN_PATH
#error "RG_BIN_PATH (the recallgate binary) must be defined by the build"
#endif

static inline void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "it: out of memory\n");
		abort();
	}
	return p;
}

static inline char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static inline void buf_append(struct buf *b, const void *src, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p) {
			fprintf(stderr, "it: out of memory\n");
			abort();
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* new: the buffer's data, never NULL */
static inline char *buf_take(struct buf *b, size_t *len)
{
	if (!b->data)
		buf_append(b, "", 0);
	if (len)
		*len = b->len;
	char *d = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

#endif
