/* What the unit_provider_* executables share (provider_helpers.c, linked as
 * unit_provider_helpers): the 'x' padding for the byte bounds, JSON parsing and comparison,
 * SHA-256 computed here with OpenSSL EVP (not core/hash), and the member mutations that turn a
 * table row's valid response into the case under test. The helpers fail the running cmocka
 * test on any surprise. */
#ifndef RG_TESTS_UNIT_PROVIDER_HELPERS_H
#define RG_TESTS_UNIT_PROVIDER_HELPERS_H

#include <stddef.h>

#include <jansson.h>

#include "core/provider.h"

/* three bytes of the padding ('x') that the over-long test strings are made of */
extern const char pad_run[];

/* 'x' repeated: long strings for the byte bounds are prefixes of this. */
extern char xs[RG_DC_CONTENT_MAX + 2];

/* cmocka group setup: fills xs. */
int fill_xs(void **state);

/* new: a string of n 'x'. */
char *xstr(size_t n);

/* new: the value of text (any JSON value, duplicate keys rejected). */
json_t *parse(const char *text);

/* Lowercase hex of SHA-256(data), computed with EVP. */
void ref_sha256_hex(const void *data, size_t len, char out[65]);

/* Compact, key-sorted text of v (steals v) compared with want. */
void assert_json_text(json_t *v, const char *want);

/* v (borrowed) equals the JSON value of want. */
void assert_json_equal_text(const json_t *v, const char *want);

/* ---- member mutations -------------------------------------------------------------- */

enum where { TOP, ITEM0, INV0 };

struct mutation {
	enum where where;
	const char *member; /* NULL ends a row's list */
	const char *value;  /* JSON text; NULL (with long_n 0) deletes the member */
	size_t long_n;      /* > 0: the value is a string of long_n 'x' */
};

#define SET(w, m, v) {w, m, v, 0}
#define DEL(w, m) {w, m, NULL, 0}
#define LONG(w, m, n) {w, m, NULL, n}
#define MUTATIONS_MAX 3

/* Applies the first n mutations of m (fewer when one has no member) to doc. */
void apply(json_t *doc, const struct mutation *m, size_t n);

/* *why names the broken rule (and only that: it is static text). */
struct why_row {
	struct mutation m[MUTATIONS_MAX];
	const char *why_has;
};

#endif
