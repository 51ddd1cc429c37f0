#include "core/jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timefmt.h"

void jsonw_init(struct jsonw *w)
{
	w->cap = 4096;
	w->len = 0;
	w->buf = malloc(w->cap);
	w->failed = w->buf == NULL;
	if (w->buf)
		w->buf[0] = '\0';
}

static bool reserve(struct jsonw *w, size_t extra)
{
	if (w->failed)
		return false;
	if (w->len + extra + 1 <= w->cap)
		return true;
	size_t cap = w->cap;
	while (w->len + extra + 1 > cap)
		cap *= 2;
	char *nb = realloc(w->buf, cap);
	if (nb == NULL) {
		w->failed = true;
		return false;
	}
	w->buf = nb;
	w->cap = cap;
	return true;
}

static void append(struct jsonw *w, const char *s, size_t n)
{
	if (!reserve(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

void jsonw_raw(struct jsonw *w, const char *s)
{
	append(w, s, strlen(s));
}

/* A byte a JSON string writes as it is: not '"', '\\' or a control character. */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c != '"' && c != '\\';
}

void jsonw_str(struct jsonw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	if (s == NULL) {
		append(w, "null", 4);
		return;
	}
	size_t n = strlen(s);
	/* Worst case every byte becomes \u00XX. */
	if (!reserve(w, n * 6 + 2))
		return;
	char *o = w->buf + w->len;
	*o++ = '"';
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	for (;;) {
		const unsigned char *run = p; /* the plain bytes go in one copy */
		while (p < end && plain(*p))
			p++;
		memcpy(o, run, (size_t)(p - run));
		o += p - run;
		if (p == end)
			break;
		unsigned char c = *p++;
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			memcpy(o, "u00", 3);
			o += 3;
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '"';
	w->len = (size_t)(o - w->buf);
	w->buf[w->len] = '\0';
}

void jsonw_int(struct jsonw *w, int64_t v)
{
	char buf[24], *p = buf + sizeof buf;
	/* digits from the right, without snprintf: every integer of every answer passes here */
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	append(w, p, (size_t)(buf + sizeof buf - p));
}

void jsonw_time(struct jsonw *w, int64_t ms)
{
	char buf[RG_TIME_SIZE + 2];
	if (ms == RG_TIME_NONE) {
		append(w, "null", 4);
		return;
	}
	buf[0] = '"';
	core_time_format(ms, buf + 1);
	buf[RG_TIME_SIZE] = '"';
	buf[RG_TIME_SIZE + 1] = '\0';
	append(w, buf, RG_TIME_SIZE + 1);
}

void jsonw_json(struct jsonw *w, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (text == NULL) {
		w->failed = true;
		return;
	}
	jsonw_raw(w, text);
	free(text);
}

char *jsonw_finish(struct jsonw *w, size_t *len)
{
	if (w->failed) {
		free(w->buf);
		w->buf = NULL;
		return NULL;
	}
	*len = w->len;
	char *out = w->buf;
	w->buf = NULL;
	return out;
}
