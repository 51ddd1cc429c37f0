/* A small JSON text writer for large answers: appending to one growing buffer costs a
 * fraction of building a jansson tree and dumping it (measured: 64-entry preference view). */
#ifndef RG_CORE_JSONW_H
#define RG_CORE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct jsonw {
	char *buf;  /* NUL-terminated while ok */
	size_t len, cap;
	bool failed; /* an allocation failed: the text is incomplete */
};

void jsonw_init(struct jsonw *w);
/* Raw text (punctuation, a member name with its quotes and colon, a pre-rendered value). */
void jsonw_raw(struct jsonw *w, const char *s);
/* A JSON string (escaped) or null when s is NULL. s must be valid UTF-8. */
void jsonw_str(struct jsonw *w, const char *s);
void jsonw_int(struct jsonw *w, int64_t v);
/* An RFC 3339 timestamp string for epoch ms, or null when ms is RG_TIME_NONE. */
void jsonw_time(struct jsonw *w, int64_t ms);
/* A jansson value, compact (for small parts such as receipts); v is borrowed. */
void jsonw_json(struct jsonw *w, const json_t *v);
/* Hands the text over: new (free()), *len set; NULL when something failed (the writer is
 * freed either way). */
char *jsonw_finish(struct jsonw *w, size_t *len);

#endif
