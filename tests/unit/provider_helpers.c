/* The helpers of the unit_provider_* executables (provider_helpers.h). */
#include "unit.h"

#include <jansson.h>
#include <openssl/evp.h>

#include "provider_helpers.h"

/* three bytes of the padding ('x') that the over-long test strings are made of */
const char pad_run[] = {'x', 'x', 'x', '\0'};

/* 'x' repeated: long strings for the byte bounds are prefixes of this. */
char xs[RG_DC_CONTENT_MAX + 2];

int fill_xs(void **state)
{
	(void)state;
	memset(xs, 'x', sizeof xs - 1);
	xs[sizeof xs - 1] = '\0';
	return 0;
}

/* A new string of n 'x'. */
char *xstr(size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

json_t *parse(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
	if (v == NULL)
		fail_msg("test JSON does not parse: %s (%s)", err.text, text);
	return v;
}

/* Lowercase hex of SHA-256(data), computed with EVP. */
void ref_sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	for (unsigned int i = 0; i < mdlen; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0x0f];
	}
	out[64] = '\0';
}

/* Compact, key-sorted text of v (freed here) compared with want. */
void assert_json_text(json_t *v, const char *want)
{
	assert_non_null(v);
	char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	json_decref(v);
}

void assert_json_equal_text(const json_t *v, const char *want)
{
	json_t *w = parse(want);
	if (!json_equal(v, w)) {
		char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		fail_msg("got %s, want %s", got ? got : "(null)", want);
	}
	json_decref(w);
}

/* ---- member mutations -------------------------------------------------------------- */

static json_t *target(json_t *doc, enum where w)
{
	switch (w) {
	case TOP:
		return doc;
	case ITEM0:
		return json_array_get(json_object_get(doc, "items"), 0);
	case INV0:
		return json_array_get(json_object_get(doc, "corpus_inventory"), 0);
	}
	return NULL;
}

void apply(json_t *doc, const struct mutation *m, size_t n)
{
	for (size_t i = 0; i < n && m[i].member; i++) {
		json_t *t = target(doc, m[i].where);
		if (!json_is_object(t))
			fail_msg("mutation of %s: no object there", m[i].member);
		if (m[i].long_n > 0)
			assert_int_equal(json_object_set_new(t, m[i].member,
							     json_stringn(xs, m[i].long_n)), 0);
		else if (m[i].value)
			assert_int_equal(json_object_set_new(t, m[i].member, parse(m[i].value)), 0);
		else if (json_object_del(t, m[i].member) != 0)
			fail_msg("mutation: nothing to delete at %s", m[i].member);
	}
}
