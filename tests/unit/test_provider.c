/* core/provider: every rule of core/provider.h at its edges (API.md §6–8,
 * docs/providers-contract.md). Response cases are rows of tables: a valid response, a few
 * member mutations, and the expected verdict. Hashes are checked against SHA-256 computed
 * here with OpenSSL EVP, not core/hash. */
#include "unit.h"

#include <jansson.h>
#include <openssl/evp.h>

#include "core/ids.h"
#include "core/provider.h"

/* three bytes of the padding ('x') that the over-long test strings are made of */
static const char pad_run[] = {'x', 'x', 'x', '\0'};

/* 'x' repeated: long strings for the byte bounds are prefixes of this. */
static char xs[RG_DC_CONTENT_MAX + 2];

static int fill_xs(void **state)
{
	(void)state;
	memset(xs, 'x', sizeof xs - 1);
	xs[sizeof xs - 1] = '\0';
	return 0;
}

/* A new string of n 'x'. */
static char *xstr(size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
	if (v == NULL)
		fail_msg("test JSON does not parse: %s (%s)", err.text, text);
	return v;
}

/* Lowercase hex of SHA-256(data), computed with EVP. */
static void ref_sha256_hex(const void *data, size_t len, char out[65])
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
static void assert_json_text(json_t *v, const char *want)
{
	assert_non_null(v);
	char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	json_decref(v);
}

static void assert_json_equal_text(const json_t *v, const char *want)
{
	json_t *w = parse(want);
	if (!json_equal(v, w)) {
		char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		fail_msg("got %s, want %s", got ? got : "(null)", want);
	}
	json_decref(w);
}

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

static void apply(json_t *doc, const struct mutation *m, size_t n)
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

/* ---- registry ---------------------------------------------------------------------- */

static void test_permission(void **state)
{
	(void)state;
	assert_string_equal(core_provider_permission(RG_PROTO_DC), "decision_context.read");
	assert_string_equal(core_provider_permission(RG_PROTO_SP), "semantic_preference.read");
	assert_null(core_provider_permission("decision_context_advisory_provider_v1"));
	assert_null(core_provider_permission(""));
	assert_null(core_provider_permission(NULL));
}

static void test_url_valid(void **state)
{
	(void)state;
	static const struct {
		const char *url;
		bool valid;
	} rows[] = {
		{"http://a", true},
		{"https://example.com/x?y=1", true},
		{"HTTP://A", true},
		{"HtTpS://h:8080/p", true},
		{"http://127.0.0.1:9/dc/good", true},
		{"http://[::1]:8080/", true},
		{"http://h/a@b", true},            /* '@' after the first '/' is a path byte */
		{"http://h/%20x", true},
		{"http://h?q=1", true},
		{"", false},
		{"ftp://h/", false},
		{"file:///etc/passwd", false},
		{"http:/h", false},
		{"http//h", false},
		{"httpx://h", false},
		{" http://h", false},
		{"http://", false},                /* empty host */
		{"http:///x", false},
		{"http://:80/", false},
		{"http://?q=1", false},
		{"http://u@h/", false},            /* userinfo */
		{"http://u:p@h:80/x", false},
		{"http://h@/", false},
		{"http://h?x=a@b", false},         /* '@' before the first '/' */
		{"http://h/#frag", false},
		{"http://h#", false},
		{"http://h /", false},
		{"http://h/\t", false},
		{"http://h/\x01", false},
		{"http://h/\x1f", false},
		{"http://h/\x7f", false},
		{"http://h/\xc3\xa9", false},      /* ≥ 0x80 */
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++)
		if (core_provider_url_valid(rows[i].url) != rows[i].valid)
			fail_msg("url %s: want %s", rows[i].url, rows[i].valid ? "valid" : "invalid");
	assert_false(core_provider_url_valid(NULL));

	/* exactly RG_PROVIDER_URL_MAX bytes passes, one more fails */
	char *url = xstr(RG_PROVIDER_URL_MAX + 1);
	memcpy(url, "http://h/", 9);
	assert_false(core_provider_url_valid(url));
	url[RG_PROVIDER_URL_MAX] = '\0';
	assert_int_equal(strlen(url), RG_PROVIDER_URL_MAX);
	assert_true(core_provider_url_valid(url));
	free(url);
}

static void test_doctor_url(void **state)
{
	(void)state;
	char out[64];
	assert_true(core_provider_doctor_url("http://h/dc/good", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/dc/good/doctor");
	assert_true(core_provider_doctor_url("http://h/dc/good/", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/dc/good/doctor");
	assert_true(core_provider_doctor_url("http://h", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/doctor");
	/* only one trailing '/' is dropped */
	assert_true(core_provider_doctor_url("http://h/x//", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/x//doctor");
	/* an explicit doctor_url is used as it is */
	assert_true(core_provider_doctor_url("http://h/dc", "http://h/ready/", out, sizeof out));
	assert_string_equal(out, "http://h/ready/");
	assert_true(core_provider_doctor_url("http://h/dc", "", out, sizeof out));
	assert_string_equal(out, "");

	/* "http://h/dc/doctor" is 18 bytes: 19 with the NUL fits, 18 does not */
	char small[19];
	assert_true(core_provider_doctor_url("http://h/dc/", NULL, small, 19));
	assert_string_equal(small, "http://h/dc/doctor");
	assert_false(core_provider_doctor_url("http://h/dc/", NULL, small, 18));
	assert_string_equal(small, "");
	assert_false(core_provider_doctor_url("http://h/dc", NULL, small, 1));
	assert_string_equal(small, "");
	strcpy(small, "untouched");
	assert_false(core_provider_doctor_url("http://h/dc", NULL, small, 0));
	assert_string_equal(small, "untouched");
	/* an explicit one that does not fit */
	assert_true(core_provider_doctor_url("http://h", "http://h/012345678", small, 19));
	assert_string_equal(small, "http://h/012345678");
	assert_false(core_provider_doctor_url("http://h", "http://h/0123456789", small, 19));
	assert_string_equal(small, "");
}

/* ---- resolution -------------------------------------------------------------------- */

static const struct core_provider_cand cands[] = {
	{"dc-a", RG_PROTO_DC, true, true},    /* 0: the only dispatchable dc provider */
	{"dc-off", RG_PROTO_DC, false, true}, /* 1 */
	{"dc-new", RG_PROTO_DC, true, false}, /* 2 */
	{"sp-a", RG_PROTO_SP, true, true},    /* 3 */
	{"dc-both", RG_PROTO_DC, false, false}, /* 4: disabled and not ready */
};

#define UNTOUCHED ((size_t)999)

static void expect_resolve(const struct core_provider_cand *c, size_t n, const char *protocol,
			   const char *id, enum core_resolve want, size_t want_index)
{
	size_t chosen = UNTOUCHED;
	enum core_resolve got = core_provider_resolve(c, n, protocol, id, &chosen);
	if (got != want)
		fail_msg("resolve %s/%s: got %d, want %d", protocol, id ? id : "(implicit)", got,
			 want);
	assert_int_equal(chosen, want == CORE_RESOLVE_OK ? want_index : UNTOUCHED);
}

static void test_resolve_explicit(void **state)
{
	(void)state;
	size_t n = N_ELEMS(cands);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-a", CORE_RESOLVE_OK, 0);
	expect_resolve(cands, n, RG_PROTO_SP, "sp-a", CORE_RESOLVE_OK, 3);
	expect_resolve(cands, n, RG_PROTO_DC, "nope", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "sp-a", CORE_RESOLVE_MISSING, 0); /* other protocol */
	expect_resolve(cands, n, RG_PROTO_SP, "dc-a", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-off", CORE_RESOLVE_DISABLED, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-new", CORE_RESOLVE_NOT_READY, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-both", CORE_RESOLVE_DISABLED, 0);
	expect_resolve(cands, 0, RG_PROTO_DC, "dc-a", CORE_RESOLVE_MISSING, 0);
	/* an explicit id is chosen even when several others are dispatchable */
	const struct core_provider_cand two[] = {
		{"dc-1", RG_PROTO_DC, true, true},
		{"dc-2", RG_PROTO_DC, true, true},
	};
	expect_resolve(two, 2, RG_PROTO_DC, "dc-2", CORE_RESOLVE_OK, 1);
	/* chosen may be NULL */
	assert_int_equal(core_provider_resolve(cands, n, RG_PROTO_DC, "dc-a", NULL),
			 CORE_RESOLVE_OK);
}

static void test_resolve_implicit(void **state)
{
	(void)state;
	expect_resolve(cands, 0, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(NULL, 0, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, N_ELEMS(cands), RG_PROTO_DC, NULL, CORE_RESOLVE_OK, 0);
	expect_resolve(cands, N_ELEMS(cands), RG_PROTO_SP, NULL, CORE_RESOLVE_OK, 3);
	/* only disabled / not ready / other-protocol candidates */
	expect_resolve(cands + 1, 2, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands + 4, 1, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands + 3, 1, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, 3, RG_PROTO_SP, NULL, CORE_RESOLVE_MISSING, 0);
	const struct core_provider_cand several[] = {
		{"dc-off", RG_PROTO_DC, false, true},
		{"dc-1", RG_PROTO_DC, true, true},
		{"sp-a", RG_PROTO_SP, true, true},
		{"dc-2", RG_PROTO_DC, true, true},
	};
	expect_resolve(several, 4, RG_PROTO_DC, NULL, CORE_RESOLVE_AMBIGUOUS, 0);
	expect_resolve(several, 3, RG_PROTO_DC, NULL, CORE_RESOLVE_OK, 1);
	expect_resolve(several, 4, RG_PROTO_SP, NULL, CORE_RESOLVE_OK, 2);
}

static void test_resolve_reason(void **state)
{
	(void)state;
	assert_null(core_resolve_reason(CORE_RESOLVE_OK));
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_MISSING), "provider_missing");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_AMBIGUOUS), "provider_ambiguous");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_DISABLED), "provider_disabled");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_NOT_READY), "provider_not_ready");
}

/* ---- doctor ------------------------------------------------------------------------ */

static void test_doctor_check(void **state)
{
	(void)state;
	static const struct {
		const char *answer;
		enum core_doctor want;
	} rows[] = {
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_OK},
		{"{\"protocol\": \"" RG_PROTO_DC "\", \"ok\": true, \"version\": \"1\", \"x\": null}",
		 CORE_DOCTOR_OK},
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_SP "\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": true, \"protocol\": \"\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_DC "x\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": false, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": 1, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": \"true\", \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": null, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": null}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": 5}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": [\"" RG_PROTO_DC "\"]}", CORE_DOCTOR_INVALID},
		{"{}", CORE_DOCTOR_INVALID},
		{"[]", CORE_DOCTOR_INVALID},
		{"\"" RG_PROTO_DC "\"", CORE_DOCTOR_INVALID},
		{"true", CORE_DOCTOR_INVALID},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *a = parse(rows[i].answer);
		enum core_doctor got = core_doctor_check(a, RG_PROTO_DC);
		if (got != rows[i].want)
			fail_msg("doctor %s: got %d, want %d", rows[i].answer, got, rows[i].want);
		json_decref(a);
	}
	assert_int_equal(core_doctor_check(NULL, RG_PROTO_DC), CORE_DOCTOR_INVALID);
	json_t *sp = parse("{\"ok\": true, \"protocol\": \"" RG_PROTO_SP "\"}");
	assert_int_equal(core_doctor_check(sp, RG_PROTO_SP), CORE_DOCTOR_OK);
	assert_int_equal(core_doctor_check(sp, RG_PROTO_DC), CORE_DOCTOR_MISMATCH);
	json_decref(sp);
}

/* ---- query_summary ----------------------------------------------------------------- */

static void test_summary_public_safe(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool safe;
	} rows[] = {
		{"", true},
		{"   ", true},
		{"Which retry policy did we pick for the importer?", true},
		{"and/or", true},
		{"n/a", true},
		{"1/2", true},
		{"w/o", true},
		{"input and/or output, n/a (w/o 1/2)", true},
		{"a / b", true},
		{"/", true},                    /* a lone slash is no path */
		{"//comment", true},            /* '/' followed by '/' */
		{"src/", true},
		{"a/b.", true},
		{"a/b.123456789", true},        /* nine letters or digits after the '.' */
		{"a/b.c-d", true},
		{"main.c", true},               /* no '/' */
		{"version 1.2.3", true},
		{"e.g. this", true},
		{"@alice said so", true},       /* nothing before '@' */
		{"x@y", true},                  /* no '.' after '@' */
		{"a@b.", true},                 /* nothing after the '.' */
		{"a@.b", true},                 /* nothing between '@' and '.' */
		{"https and www and mailto and file", true},
		{"wwwx.com", true},
		{"C: drive", true},
		{"C:x", true},
		{"~user", true},
		{".hidden", true},
		{"..", true},
		{"3:00 pm", true},
		{"Read /Users/x/private.jsonl", false},
		{"see https://example.com", false},
		{"HTTP://X", false},
		{"ftp://host", false},
		{"s3://bucket", false},
		{"www.example.com", false},
		{"WWW.Example.com", false},
		{"mailto:a", false},
		{"MailTo:x", false},
		{"file:x", false},
		{"FILE:///etc", false},
		{"mail bob@example.com now", false},
		{"<bob@example.com>", false},
		{"a@b.c", false},
		{"@a@b.c", false},
		{"src/main.c", false},
		{"`src/main.c`", false},
		{"(src/main.c)", false},
		{"src/main.c.", false},
		{"\"src/main.c\",", false},
		{"[src/main.c]:", false},
		{"dir/file.tar.gz", false},
		{"a/b.12345678", false},        /* eight */
		{"a/.bashrc", false},
		{"A/B.C", false},
		{"'/etc/passwd'", false},
		{"/tmp", false},
		{"{/x}", false},
		{"C:\\x", false},
		{"c:/x", false},
		{"C:\\", false},
		{"Z:/", false},
		{"a\\b", false},
		{"\\", false},
		{"~/notes", false},
		{"./run", false},
		{"../up", false},
		{"ok\t/etc", false},
		{"ok\n~/y", false},
		{"ok\r\nwww.x", false},
		{"[www.x]", false},
		{"fine words then user@host.org", false},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++)
		if (core_dc_summary_public_safe(rows[i].s) != rows[i].safe)
			fail_msg("summary \"%s\": want %s", rows[i].s,
				 rows[i].safe ? "public-safe" : "not public-safe");
	assert_false(core_dc_summary_public_safe(NULL));
}

/* ---- scope_ref --------------------------------------------------------------------- */

static void expect_scope(const char *in, const char *want)
{
	char out[512];
	assert_true(core_dc_scope_normalise(in, out, sizeof out));
	assert_string_equal(out, want);
}

static void test_scope_normalise(void **state)
{
	(void)state;
	expect_scope("codex://threads/abc", "host-session:codex:abc");
	expect_scope("codex://threads/A.b_c:d-9", "host-session:codex:A.b_c:d-9");
	expect_scope("codex://threads/-", "host-session:codex:-");
	/* unchanged: empty id, bad bytes, other prefixes */
	static const char *const unchanged[] = {
		"codex://threads/",
		"codex://threads/a/b",
		"codex://threads/a b",
		"codex://threads/a?x=1",
		"codex://threads/\xc3\xa9",
		"CODEX://threads/abc",
		"codex://Threads/abc",
		"codex://thread/abc",
		"codex:/threads/abc",
		"host-session:codex:abc",
		"workspace:recallgate",
		"",
	};
	for (size_t i = 0; i < N_ELEMS(unchanged); i++)
		expect_scope(unchanged[i], unchanged[i]);

	/* an id of 256 bytes is normalised, 257 is not */
	char in[300], want[300];
	snprintf(in, sizeof in, "codex://threads/%.256s", xs);
	snprintf(want, sizeof want, "host-session:codex:%.256s", xs);
	expect_scope(in, want);
	snprintf(in, sizeof in, "codex://threads/%.257s", xs);
	expect_scope(in, in);

	/* buffer sizes: exactly the result + NUL fits, one less does not (out is then "") */
	char out[32];
	size_t need = strlen("host-session:codex:abc") + 1;
	assert_true(core_dc_scope_normalise("codex://threads/abc", out, need));
	assert_string_equal(out, "host-session:codex:abc");
	assert_false(core_dc_scope_normalise("codex://threads/abc", out, need - 1));
	assert_string_equal(out, "");
	/* the normalised form is longer than the input: an input-sized buffer is not enough */
	assert_false(core_dc_scope_normalise("codex://threads/abc", out,
					     strlen("codex://threads/abc") + 1));
	assert_true(core_dc_scope_normalise("scope:x", out, 8));
	assert_string_equal(out, "scope:x");
	assert_false(core_dc_scope_normalise("scope:x", out, 7));
	assert_string_equal(out, "");
	strcpy(out, "untouched");
	assert_false(core_dc_scope_normalise("scope:x", out, 0));
	assert_string_equal(out, "untouched");
}

/* ---- provider_ref, digests ----------------------------------------------------------- */

static void ref_provider_ref(const char *ext, const char *ns, const char *ref, char out[30])
{
	char hex[65];
	size_t len = strlen(ext) + strlen(ns) + strlen(ref) + 3;
	char *buf = malloc(len);
	assert_non_null(buf);
	snprintf(buf, len, "%s\n%s\n%s", ext, ns, ref);
	ref_sha256_hex(buf, len - 1, hex);
	free(buf);
	snprintf(out, 30, "provider-%.20s", hex);
}

static void test_provider_ref(void **state)
{
	(void)state;
	char got[RG_PROVIDER_REF_SIZE], want[30];

	/* sha256sum of "ext-a\nns-1\nfake-private-ref-1" */
	core_dc_provider_ref("ext-a", "ns-1", "fake-private-ref-1", got);
	assert_string_equal(got, "provider-4129deb1f982f646ab1d");
	assert_int_equal(strlen(got), RG_PROVIDER_REF_SIZE - 1);
	ref_provider_ref("ext-a", "ns-1", "fake-private-ref-1", want);
	assert_string_equal(got, want);

	/* the same reference does not correlate across namespaces */
	core_dc_provider_ref("ext-a", "ns-2", "fake-private-ref-1", got);
	assert_string_equal(got, "provider-befc729530fc49d3599b");

	/* "\n" separates the parts: moving a byte across a boundary changes the ref */
	char a[30], b[30];
	core_dc_provider_ref("e", "xn", "r", a);
	core_dc_provider_ref("ex", "n", "r", b);
	assert_string_not_equal(a, b);

	/* every input at its bound */
	char ext[RG_MAX_ID_BYTES + 2], ns[RG_DC_NAMESPACE_MAX + 2], ref[RG_DC_RESOURCE_REF_MAX + 2];
	snprintf(ext, sizeof ext, "%.*s", RG_MAX_ID_BYTES, xs);
	snprintf(ns, sizeof ns, "%.*s", RG_DC_NAMESPACE_MAX, xs);
	snprintf(ref, sizeof ref, "%.*s", RG_DC_RESOURCE_REF_MAX, xs);
	core_dc_provider_ref(ext, ns, ref, got);
	ref_provider_ref(ext, ns, ref, want);
	assert_string_equal(got, want);

	/* one byte past a bound: "", never a hash of a cut input */
	snprintf(ext, sizeof ext, "%.*s", RG_MAX_ID_BYTES + 1, xs);
	core_dc_provider_ref(ext, "n", "r", got);
	assert_string_equal(got, "");
	snprintf(ns, sizeof ns, "%.*s", RG_DC_NAMESPACE_MAX + 1, xs);
	core_dc_provider_ref("e", ns, "r", got);
	assert_string_equal(got, "");
	snprintf(ref, sizeof ref, "%.*s", RG_DC_RESOURCE_REF_MAX + 1, xs);
	core_dc_provider_ref("e", "n", ref, got);
	assert_string_equal(got, "");
}

static bool is_hex16(const char *s)
{
	if (strlen(s) != 16)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static void test_digest16(void **state)
{
	(void)state;
	char got[RG_DIGEST16_SIZE], hex[65];
	core_digest16("ref-1", got);
	assert_string_equal(got, "9ebcefdf73b3c490"); /* sha256sum of "ref-1" */
	ref_sha256_hex("", 0, hex);
	core_digest16("", got);
	assert_int_equal(strncmp(got, hex, 16), 0);
	assert_true(is_hex16(got));
}

static void test_sp_digests(void **state)
{
	(void)state;
	json_t *refs = parse("[\"ref-b\", \"ref-a\", 7, \"ref-b\", null, \"ref-c\", \"ref-a\"]");
	json_t *d = core_sp_digests(refs);
	assert_int_equal(json_array_size(d), 3);
	for (size_t i = 0; i < json_array_size(d); i++) {
		const char *s = json_string_value(json_array_get(d, i));
		assert_true(is_hex16(s));
		if (i > 0)
			assert_true(strcmp(json_string_value(json_array_get(d, i - 1)), s) < 0);
	}
	/* each digest is one of the three refs' */
	static const char *const names[] = {"ref-a", "ref-b", "ref-c"};
	for (size_t k = 0; k < N_ELEMS(names); k++) {
		char hex[65];
		bool found = false;
		ref_sha256_hex(names[k], strlen(names[k]), hex);
		for (size_t i = 0; i < json_array_size(d); i++)
			found |= strncmp(json_string_value(json_array_get(d, i)), hex, 16) == 0;
		assert_true(found);
	}
	json_decref(d);
	json_decref(refs);

	assert_json_text(core_sp_digests(NULL), "[]");
	json_t *empty = json_array(), *obj = json_object();
	assert_json_text(core_sp_digests(empty), "[]");
	assert_json_text(core_sp_digests(obj), "[]");
	json_decref(empty);
	json_decref(obj);
}

static void test_sorted_unique(void **state)
{
	(void)state;
	json_t *in = parse("[\"b\", \"a\", \"b\", \"A\", \"ab\", \"\", 3, \"\\u00e9\", \"z\", "
			   "\"a\", {\"x\": 1}, \"\"]");
	json_t *out = core_sorted_unique(in);
	assert_json_equal_text(out, "[\"\", \"A\", \"a\", \"ab\", \"b\", \"z\", \"\\u00e9\"]");
	json_decref(out);
	json_decref(in);
	assert_json_text(core_sorted_unique(NULL), "[]");
	json_t *one = parse("[\"only\"]");
	assert_json_text(core_sorted_unique(one), "[\"only\"]");
	json_decref(one);
}

/* ---- decision-context request ------------------------------------------------------- */

static void test_deadline(void **state)
{
	(void)state;
	assert_true(core_dc_deadline_seconds(30, 10) == 10.0);
	assert_true(core_dc_deadline_seconds(2.5, 10) == 2.5);
	assert_true(core_dc_deadline_seconds(10, 10) == 10.0);
	assert_true(core_dc_deadline_seconds(120, 1) == 1.0);
	assert_true(core_dc_deadline_seconds(1, 120) == 1.0);
	assert_true(core_dc_deadline_seconds(9.75, 10) == 9.75);
}

#define DC_REQ_HEAD                                                                              \
	"{\"max_results\":3,\"namespace\":\"ns\",\"observed_at\":\"2026-01-02T03:04:05Z\","      \
	"\"operation\":\"retrieve\",\"query\":\"the query\",\"query_summary\":\"a summary\","    \
	"\"schema_version\":\"decision_context_advisory_retrieve_request_v0\","                  \
	"\"scope_ref\":\"host-session:codex:abc\",\"timeout_seconds\":"

static json_t *dc_request(double timeout)
{
	return core_dc_request("ns", "host-session:codex:abc", "the query", "a summary", 3, timeout,
			       "2026-01-02T03:04:05Z");
}

static void test_dc_request(void **state)
{
	(void)state;
	json_t *r = dc_request(10);
	assert_int_equal(json_object_size(r), 9);
	assert_true(json_is_integer(json_object_get(r, "timeout_seconds")));
	assert_true(json_is_integer(json_object_get(r, "max_results")));
	assert_json_text(r, DC_REQ_HEAD "10}");
	assert_json_text(dc_request(1.0), DC_REQ_HEAD "1}");
	assert_json_text(dc_request(120), DC_REQ_HEAD "120}");

	r = dc_request(2.5);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_json_text(r, DC_REQ_HEAD "2.5}");
	r = dc_request(0.25);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_true(json_real_value(json_object_get(r, "timeout_seconds")) == 0.25);
	json_decref(r);
	r = dc_request(119.999);
	assert_true(json_is_real(json_object_get(r, "timeout_seconds")));
	assert_true(json_real_value(json_object_get(r, "timeout_seconds")) == 119.999);
	json_decref(r);
}

/* ---- decision-context response ------------------------------------------------------- */

#define DC_GOOD                                                                                  \
	"{\"schema_version\": \"decision_context_advisory_retrieve_response_v0\", \"ok\": true, " \
	"\"status\": \"completed\", \"reason_code\": null, \"items\": ["                         \
	"{\"resource_ref\": \"fake-private-ref-1\", \"summary\": \"first\", "                    \
	"\"content\": \"FAKE-CONTENT-7f3a one\", \"score\": 0.5}, "                              \
	"{\"resource_ref\": \"fake-private-ref-2\", \"summary\": \"second\", "                   \
	"\"content\": \"FAKE-CONTENT-7f3a two\", \"score\": null}]}"

/* status unavailable with its reason and no items */
#define UNAVAILABLE(reason)                                                                       \
	SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", reason),                   \
		SET(TOP, "items", "[]")

struct dc_row {
	const char *name;
	struct mutation m[MUTATIONS_MAX];
	int max_results;
	enum core_dc_verdict want;
	const char *reason; /* the reason_code handed back for UNAVAILABLE */
};

#define OK_ CORE_DC_COMPLETED
#define BAD CORE_DC_INVALID

static const struct dc_row dc_rows[] = {
	{"good: two items, scores 0.5 and null", {{0}}, 8, OK_, NULL},
	{"good at max_results = 2", {{0}}, 2, OK_, NULL},
	{"too many: max_results + 1", {{0}}, 1, BAD, NULL},
	{"no items", {SET(TOP, "items", "[]")}, 8, OK_, NULL},
	{"no items, max_results 0", {SET(TOP, "items", "[]")}, 0, OK_, NULL},
	{"integer score", {SET(ITEM0, "score", "1")}, 8, OK_, NULL},
	{"negative integer score", {SET(ITEM0, "score", "-3")}, 8, OK_, NULL},
	{"zero score", {SET(ITEM0, "score", "0")}, 8, OK_, NULL},
	{"large real score", {SET(ITEM0, "score", "1.5e300")}, 8, OK_, NULL},
	{"null score", {SET(ITEM0, "score", "null")}, 8, OK_, NULL},
	{"string score", {SET(ITEM0, "score", "\"0.5\"")}, 8, BAD, NULL},
	{"bool score", {SET(ITEM0, "score", "true")}, 8, BAD, NULL},
	{"false score", {SET(ITEM0, "score", "false")}, 8, BAD, NULL},
	{"array score", {SET(ITEM0, "score", "[0.5]")}, 8, BAD, NULL},
	{"object score", {SET(ITEM0, "score", "{}")}, 8, BAD, NULL},
	{"item without score", {DEL(ITEM0, "score")}, 8, BAD, NULL},
	{"item without resource_ref", {DEL(ITEM0, "resource_ref")}, 8, BAD, NULL},
	{"item without summary", {DEL(ITEM0, "summary")}, 8, BAD, NULL},
	{"item without content", {DEL(ITEM0, "content")}, 8, BAD, NULL},
	{"item unknown member", {SET(ITEM0, "FAKE-CONTENT-7f3a", "1")}, 8, BAD, NULL},
	{"item unknown null member", {SET(ITEM0, "extra", "null")}, 8, BAD, NULL},
	{"item renamed member", {DEL(ITEM0, "score"), SET(ITEM0, "scores", "1")}, 8, BAD, NULL},
	{"item not an object", {SET(TOP, "items", "[\"fake-private-ref-1\"]")}, 8, BAD, NULL},
	{"item null", {SET(TOP, "items", "[null]")}, 8, BAD, NULL},
	{"empty resource_ref", {SET(ITEM0, "resource_ref", "\"\"")}, 8, BAD, NULL},
	{"empty summary", {SET(ITEM0, "summary", "\"\"")}, 8, BAD, NULL},
	{"empty content", {SET(ITEM0, "content", "\"\"")}, 8, BAD, NULL},
	{"numeric resource_ref", {SET(ITEM0, "resource_ref", "1")}, 8, BAD, NULL},
	{"null summary", {SET(ITEM0, "summary", "null")}, 8, BAD, NULL},
	{"array content", {SET(ITEM0, "content", "[\"c\"]")}, 8, BAD, NULL},
	{"resource_ref 512", {LONG(ITEM0, "resource_ref", 512)}, 8, OK_, NULL},
	{"resource_ref 513", {LONG(ITEM0, "resource_ref", 513)}, 8, BAD, NULL},
	{"summary 220", {LONG(ITEM0, "summary", 220)}, 8, OK_, NULL},
	{"summary 221", {LONG(ITEM0, "summary", 221)}, 8, BAD, NULL},
	{"content 16000", {LONG(ITEM0, "content", 16000)}, 8, OK_, NULL},
	{"content 16001", {LONG(ITEM0, "content", 16001)}, 8, BAD, NULL},
	/* top level */
	{"unknown member", {SET(TOP, "FAKE-CONTENT-7f3a", "1")}, 8, BAD, NULL},
	{"unknown null member", {SET(TOP, "next_cursor", "null")}, 8, BAD, NULL},
	{"missing reason_code", {DEL(TOP, "reason_code")}, 8, BAD, NULL},
	{"missing items", {DEL(TOP, "items")}, 8, BAD, NULL},
	{"missing ok", {DEL(TOP, "ok")}, 8, BAD, NULL},
	{"missing status", {DEL(TOP, "status")}, 8, BAD, NULL},
	{"missing schema_version", {DEL(TOP, "schema_version")}, 8, BAD, NULL},
	{"other schema_version",
	 {SET(TOP, "schema_version", "\"decision_context_advisory_retrieve_response_v1\"")}, 8,
	 BAD, NULL},
	{"request schema_version",
	 {SET(TOP, "schema_version", "\"decision_context_advisory_retrieve_request_v0\"")}, 8,
	 BAD, NULL},
	{"ok false", {SET(TOP, "ok", "false")}, 8, BAD, NULL},
	{"ok 1", {SET(TOP, "ok", "1")}, 8, BAD, NULL},
	{"ok \"true\"", {SET(TOP, "ok", "\"true\"")}, 8, BAD, NULL},
	{"ok null", {SET(TOP, "ok", "null")}, 8, BAD, NULL},
	{"status done", {SET(TOP, "status", "\"done\"")}, 8, BAD, NULL},
	{"status Completed", {SET(TOP, "status", "\"Completed\"")}, 8, BAD, NULL},
	{"status null", {SET(TOP, "status", "null")}, 8, BAD, NULL},
	{"items null", {SET(TOP, "items", "null")}, 8, BAD, NULL},
	{"items object", {SET(TOP, "items", "{}")}, 8, BAD, NULL},
	/* status / reason_code mismatch */
	{"completed with a reason_code", {SET(TOP, "reason_code", "\"index_offline\"")}, 8, BAD,
	 NULL},
	{"completed with an empty reason_code", {SET(TOP, "reason_code", "\"\"")}, 8, BAD, NULL},
	{"unavailable with reason_code null", {UNAVAILABLE("null")}, 8, BAD, NULL},
	/* unavailable */
	{"unavailable", {UNAVAILABLE("\"index_offline\"")}, 8, CORE_DC_UNAVAILABLE,
	 "index_offline"},
	{"unavailable at max_results 0", {UNAVAILABLE("\"x\"")}, 0, CORE_DC_UNAVAILABLE, "x"},
	{"unavailable with punctuation",
	 {UNAVAILABLE("\"provider.index:offline/2\"")}, 8, CORE_DC_UNAVAILABLE,
	 "provider.index:offline/2"},
	{"unavailable with items",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\"")}, 8,
	 BAD, NULL},
	{"unavailable with items null",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\""),
	  SET(TOP, "items", "null")},
	 8, BAD, NULL},
	{"unavailable without items",
	 {SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"index_offline\""),
	  DEL(TOP, "items")},
	 8, BAD, NULL},
	{"reason_code empty", {UNAVAILABLE("\"\"")}, 8, BAD, NULL},
	{"reason_code number", {UNAVAILABLE("5")}, 8, BAD, NULL},
	{"reason_code false", {UNAVAILABLE("false")}, 8, BAD, NULL},
	{"reason_code with a space", {UNAVAILABLE("\"index offline\"")}, 8, BAD, NULL},
	{"reason_code with a leading space", {UNAVAILABLE("\" index_offline\"")}, 8, BAD, NULL},
	{"reason_code with a trailing newline", {UNAVAILABLE("\"index_offline\\n\"")}, 8, BAD, NULL},
	{"reason_code with a tab", {UNAVAILABLE("\"index\\toffline\"")}, 8, BAD, NULL},
	{"reason_code with a CR", {UNAVAILABLE("\"index\\roffline\"")}, 8, BAD, NULL},
	{"reason_code with a VT", {UNAVAILABLE("\"index\\u000boffline\"")}, 8, BAD, NULL},
	{"reason_code with a FF", {UNAVAILABLE("\"index\\foffline\"")}, 8, BAD, NULL},
	{"reason_code 120", {SET(TOP, "status", "\"unavailable\""), LONG(TOP, "reason_code", 120),
			     SET(TOP, "items", "[]")},
	 8, CORE_DC_UNAVAILABLE, NULL /* checked by length below */},
	{"reason_code 121", {SET(TOP, "status", "\"unavailable\""), LONG(TOP, "reason_code", 121),
			     SET(TOP, "items", "[]")},
	 8, BAD, NULL},
};

static void expect_dc(const char *name, const json_t *resp, int max_results,
		      enum core_dc_verdict want, const char *want_reason)
{
	const char *reason = "sentinel", *why = "sentinel";
	enum core_dc_verdict got = core_dc_validate_response(resp, max_results, &reason, &why);
	if (got != want)
		fail_msg("%s: got verdict %d, want %d (why: %s)", name, got, want,
			 why ? why : "(none)");
	if (want == CORE_DC_INVALID) {
		assert_non_null(why);
		assert_true(strlen(why) > 0);
		/* the operator's text never quotes the response */
		assert_null(strstr(why, "FAKE-CONTENT"));
		assert_null(strstr(why, "fake-private"));
		assert_null(strstr(why, pad_run));
		assert_null(reason);
	} else {
		assert_null(why);
	}
	if (want == CORE_DC_COMPLETED)
		assert_null(reason);
	if (want == CORE_DC_UNAVAILABLE) {
		assert_non_null(reason);
		if (want_reason)
			assert_string_equal(reason, want_reason);
		/* borrowed from the response */
		assert_ptr_equal(reason, json_string_value(json_object_get(resp, "reason_code")));
	}
	/* out pointers are optional */
	assert_int_equal(core_dc_validate_response(resp, max_results, NULL, NULL), want);
}

static void test_dc_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(dc_rows); i++) {
		json_t *doc = parse(DC_GOOD);
		apply(doc, dc_rows[i].m, MUTATIONS_MAX);
		expect_dc(dc_rows[i].name, doc, dc_rows[i].max_results, dc_rows[i].want,
			  dc_rows[i].reason);
		json_decref(doc);
	}
}

/* *why names the broken rule (and only that: it is static text). */
struct why_row {
	struct mutation m[MUTATIONS_MAX];
	const char *why_has;
};

static void test_dc_whys(void **state)
{
	(void)state;
	static const struct why_row rows[] = {
		{{DEL(TOP, "reason_code")}, "the response lacks a member"},
		{{SET(TOP, "extra", "1")}, "the response has an unknown member"},
		{{DEL(TOP, "reason_code"), SET(TOP, "extra", "1")}, "unknown member"},
		{{DEL(ITEM0, "score")}, "an item lacks a member"},
		{{SET(ITEM0, "extra", "1")}, "an item has an unknown member"},
		{{SET(TOP, "reason_code", "\"x\"")}, "completed with a reason_code"},
		{{UNAVAILABLE("null")}, "unavailable with a null reason_code"},
		{{UNAVAILABLE("\"a b\"")}, "whitespace"},
		{{SET(TOP, "status", "\"unavailable\""), SET(TOP, "reason_code", "\"x\"")},
		 "unavailable with items"},
		{{SET(ITEM0, "score", "\"1\"")}, "score"},
		{{LONG(ITEM0, "content", 16001)}, "content"},
	};
	const char *why = NULL;
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *doc = parse(DC_GOOD);
		apply(doc, rows[i].m, MUTATIONS_MAX);
		assert_int_equal(core_dc_validate_response(doc, 8, NULL, &why), CORE_DC_INVALID);
		if (strstr(why, rows[i].why_has) == NULL)
			fail_msg("why \"%s\" does not say \"%s\"", why, rows[i].why_has);
		json_decref(doc);
	}
	assert_int_equal(core_dc_validate_response(NULL, 8, NULL, &why), CORE_DC_INVALID);
	assert_non_null(strstr(why, "not JSON"));
}

/* A completed response with n items. */
static json_t *dc_with_items(size_t n)
{
	json_t *doc = parse(DC_GOOD), *items = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(items, json_pack("{s:s, s:s, s:s, s:f}", "resource_ref", "r",
						       "summary", "s", "content", "c", "score", 0.1));
	json_object_set_new(doc, "items", items);
	return doc;
}

static void test_dc_max_results(void **state)
{
	(void)state;
	for (int max = 0; max <= RG_DC_MAX_RESULTS; max++) {
		json_t *exact = dc_with_items((size_t)max), *over = dc_with_items((size_t)max + 1);
		expect_dc("exactly max_results items", exact, max, CORE_DC_COMPLETED, NULL);
		expect_dc("max_results + 1 items", over, max, CORE_DC_INVALID, NULL);
		json_decref(exact);
		json_decref(over);
	}
	json_t *one = dc_with_items(1), *none = dc_with_items(0);
	expect_dc("negative max_results, an item", one, -1, CORE_DC_INVALID, NULL);
	expect_dc("negative max_results, no item", none, -1, CORE_DC_COMPLETED, NULL);
	json_decref(one);
	json_decref(none);
}

static void test_dc_not_objects(void **state)
{
	(void)state;
	expect_dc("NULL (not JSON)", NULL, 8, CORE_DC_INVALID, NULL);
	static const char *const texts[] = {"[]", "\"completed\"", "5", "null", "true", "{}"};
	for (size_t i = 0; i < N_ELEMS(texts); i++) {
		json_t *v = parse(texts[i]);
		expect_dc(texts[i], v, 8, CORE_DC_INVALID, NULL);
		json_decref(v);
	}
}

/* Byte bounds count bytes, not characters: 110 "é" are 220 bytes. */
static void test_dc_bytes_not_chars(void **state)
{
	(void)state;
	char summary[2 * 111 + 1] = "";
	for (int i = 0; i < 110; i++)
		strcat(summary, "\xc3\xa9");
	json_t *doc = parse(DC_GOOD);
	json_object_set_new(json_array_get(json_object_get(doc, "items"), 0), "summary",
			    json_string(summary));
	expect_dc("summary of 220 bytes (110 chars)", doc, 8, CORE_DC_COMPLETED, NULL);
	strcat(summary, "a");
	json_object_set_new(json_array_get(json_object_get(doc, "items"), 0), "summary",
			    json_string(summary));
	expect_dc("summary of 221 bytes (111 chars)", doc, 8, CORE_DC_INVALID, NULL);
	json_decref(doc);

	/* a reason_code of 120 bytes is handed back whole */
	doc = parse(DC_GOOD);
	json_object_set_new(doc, "status", json_string("unavailable"));
	json_object_set_new(doc, "reason_code", json_stringn(xs, RG_DC_REASON_MAX));
	json_object_set_new(doc, "items", json_array());
	const char *reason = NULL;
	assert_int_equal(core_dc_validate_response(doc, 8, &reason, NULL), CORE_DC_UNAVAILABLE);
	assert_int_equal(strlen(reason), RG_DC_REASON_MAX);
	json_decref(doc);
}

/* ---- semantic preferences: ids and request --------------------------------------------- */

static void test_sp_surface(void **state)
{
	(void)state;
	static const char *const good[] = {"a.b", "editor.compose", "mod-1.surf_2", "a.b.c",
					   "a1.b-_", "a-.b_", "x.y.z.w"};
	static const char *const bad[] = {"", "a", "editor", "A.b", "a.B", "1a.b", "a.1b",
					  "_a.b", "a._b", "a.-b", "a..b", ".a.b", "a.b.",
					  "a b.c", "a.b c", "a.b\xc3\xa9", "a.b/c", "a:b.c"};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		if (!core_sp_surface_valid(good[i]))
			fail_msg("surface %s should be valid", good[i]);
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		if (core_sp_surface_valid(bad[i]))
			fail_msg("surface %s should be invalid", bad[i]);
	assert_false(core_sp_surface_valid(NULL));

	char s[140];
	snprintf(s, sizeof s, "a.%.126s", xs); /* 128 bytes */
	assert_true(core_sp_surface_valid(s));
	snprintf(s, sizeof s, "a.%.127s", xs); /* 129 */
	assert_false(core_sp_surface_valid(s));
}

static void test_sp_context_key(void **state)
{
	(void)state;
	static const char *const good[] = {"a", "z", "a_b-1", "repo", "a9", "a-", "a_"};
	static const char *const bad[] = {"", "A", "1a", "_a", "-a", "a.b", "a b", "aB",
					  "\xc3\xa9", "a:b"};
	for (size_t i = 0; i < N_ELEMS(good); i++)
		if (!core_sp_context_key_valid(good[i]))
			fail_msg("context key %s should be valid", good[i]);
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		if (core_sp_context_key_valid(bad[i]))
			fail_msg("context key %s should be invalid", bad[i]);
	assert_false(core_sp_context_key_valid(NULL));
	char k[70];
	snprintf(k, sizeof k, "%.64s", xs);
	assert_true(core_sp_context_key_valid(k));
	snprintf(k, sizeof k, "%.65s", xs);
	assert_false(core_sp_context_key_valid(k));
}

static void test_sp_request(void **state)
{
	(void)state;
	assert_json_text(core_sp_request("editor.compose", "tone", 5, NULL),
			 "{\"context\":{},\"limit\":5,\"query\":\"tone\","
			 "\"schema_version\":\"semantic_preference_provider_request_v0\","
			 "\"surface\":\"editor.compose\"}");
	json_t *ctx = parse("{\"repo\": \"recallgate\", \"lang\": \"c\"}");
	json_t *r = core_sp_request("a.b", "q", 20, ctx);
	assert_int_equal(json_object_size(r), 5);
	assert_true(json_is_integer(json_object_get(r, "limit")));
	/* the context is a copy: the caller's object is neither shared nor changed */
	assert_ptr_not_equal(json_object_get(r, "context"), ctx);
	assert_int_equal(ctx->refcount, 1);
	json_object_set_new(ctx, "later", json_string("x"));
	assert_json_text(r, "{\"context\":{\"lang\":\"c\",\"repo\":\"recallgate\"},\"limit\":20,"
			    "\"query\":\"q\","
			    "\"schema_version\":\"semantic_preference_provider_request_v0\","
			    "\"surface\":\"a.b\"}");
	json_decref(ctx);
}

static void test_sp_failure_name(void **state)
{
	(void)state;
	assert_null(core_sp_failure_name(CORE_SP_OK));
	assert_string_equal(core_sp_failure_name(CORE_SP_INVALID_RESPONSE), "invalid_response");
	assert_string_equal(core_sp_failure_name(CORE_SP_ITEM_TOO_LARGE), "item_too_large");
	assert_string_equal(core_sp_failure_name(CORE_SP_INVALID_CORPUS_INVENTORY),
			    "invalid_corpus_inventory");
}

/* ---- semantic preferences: response ---------------------------------------------------- */

#define SP_ENTRY_MANAGED                                                                          \
	"{\"corpus_id\": \"corp-a\", \"scope_ref\": \"scope-a\", \"read_role\": \"primary\", "   \
	"\"write_mode\": \"provider_managed\", \"write_actor_ref\": \"actor-1\", "                \
	"\"source_of_truth\": \"notes\", \"writeback_triggers\": [\"explicit_feedback\"], "       \
	"\"closure_policy\": \"write_wait_l2_read_scoped_recall\"}"
#define SP_ENTRY_READ_ONLY                                                                        \
	"{\"corpus_id\": \"corp-b\", \"scope_ref\": \"scope-b\", \"read_role\": \"fallback\", "  \
	"\"write_mode\": \"read_only\", \"source_of_truth\": \"wiki\", "                          \
	"\"writeback_triggers\": [], \"closure_policy\": \"none\"}"
#define SP_GOOD                                                                                   \
	"{\"schema_version\": \"semantic_preference_provider_response_v0\", \"items\": ["          \
	"{\"preference_ref\": \"pref-1\", \"summary\": \"Prefer tabs\"}, "                        \
	"{\"preference_ref\": \"pref-2\", \"summary\": \"Short answers\"}], "                     \
	"\"corpus_inventory\": [" SP_ENTRY_MANAGED ", " SP_ENTRY_READ_ONLY "]}"

struct sp_row {
	const char *name;
	struct mutation m[MUTATIONS_MAX];
	enum core_sp_failure want;
};

#define SP_OK CORE_SP_OK
#define INV_R CORE_SP_INVALID_RESPONSE
#define TOO_L CORE_SP_ITEM_TOO_LARGE
#define INV_C CORE_SP_INVALID_CORPUS_INVENTORY

static const struct sp_row sp_rows[] = {
	{"good", {{0}}, SP_OK},
	{"no inventory", {DEL(TOP, "corpus_inventory")}, SP_OK},
	{"no items", {SET(TOP, "items", "[]")}, SP_OK},
	/* the response's shape */
	{"unknown member", {SET(TOP, "truncated", "false")}, INV_R},
	{"missing items", {DEL(TOP, "items")}, INV_R},
	{"missing schema_version", {DEL(TOP, "schema_version")}, INV_R},
	{"other schema_version",
	 {SET(TOP, "schema_version", "\"semantic_preference_provider_response_v1\"")}, INV_R},
	{"request schema_version",
	 {SET(TOP, "schema_version", "\"semantic_preference_provider_request_v0\"")}, INV_R},
	{"schema_version null", {SET(TOP, "schema_version", "null")}, INV_R},
	{"items null", {SET(TOP, "items", "null")}, INV_R},
	{"items object", {SET(TOP, "items", "{}")}, INV_R},
	{"item not an object", {SET(TOP, "items", "[\"pref-1\"]")}, INV_R},
	{"item unknown member", {SET(ITEM0, "score", "1")}, INV_R},
	{"item without summary", {DEL(ITEM0, "summary")}, INV_R},
	{"item without preference_ref", {DEL(ITEM0, "preference_ref")}, INV_R},
	{"empty preference_ref", {SET(ITEM0, "preference_ref", "\"\"")}, INV_R},
	{"empty summary", {SET(ITEM0, "summary", "\"\"")}, INV_R},
	{"numeric preference_ref", {SET(ITEM0, "preference_ref", "1")}, INV_R},
	{"null summary", {SET(ITEM0, "summary", "null")}, INV_R},
	/* item sizes */
	{"preference_ref 512", {LONG(ITEM0, "preference_ref", 512)}, SP_OK},
	{"preference_ref 513", {LONG(ITEM0, "preference_ref", 513)}, TOO_L},
	{"summary 2000", {LONG(ITEM0, "summary", 2000)}, SP_OK},
	{"summary 2001", {LONG(ITEM0, "summary", 2001)}, TOO_L},
	/* precedence: invalid_response > item_too_large > invalid_corpus_inventory */
	{"too large, then a malformed item",
	 {SET(TOP, "items", "[{\"preference_ref\": \"p\", \"summary\": \"s\"}, "
			    "{\"preference_ref\": \"p\", \"summary\": \"s\", \"x\": 1}]"),
	  LONG(ITEM0, "summary", 2001)},
	 INV_R},
	{"too large and a bad inventory",
	 {LONG(ITEM0, "summary", 2001), SET(TOP, "corpus_inventory", "{}")}, TOO_L},
	{"a bad inventory and a malformed item",
	 {SET(TOP, "corpus_inventory", "{}"), SET(ITEM0, "summary", "\"\"")}, INV_R},
	{"a bad inventory and an unknown member",
	 {SET(TOP, "corpus_inventory", "{}"), SET(TOP, "extra", "1")}, INV_R},
	/* the inventory */
	{"inventory empty", {SET(TOP, "corpus_inventory", "[]")}, SP_OK},
	{"inventory null", {SET(TOP, "corpus_inventory", "null")}, INV_C},
	{"inventory object", {SET(TOP, "corpus_inventory", "{}")}, INV_C},
	{"inventory entry not an object", {SET(TOP, "corpus_inventory", "[\"corp-a\"]")}, INV_C},
	{"entry unknown member", {SET(INV0, "owner", "\"x\"")}, INV_C},
	{"entry without corpus_id", {DEL(INV0, "corpus_id")}, INV_C},
	{"entry without scope_ref", {DEL(INV0, "scope_ref")}, INV_C},
	{"entry without read_role", {DEL(INV0, "read_role")}, INV_C},
	{"entry without write_mode", {DEL(INV0, "write_mode")}, INV_C},
	{"entry without source_of_truth", {DEL(INV0, "source_of_truth")}, INV_C},
	{"entry without writeback_triggers", {DEL(INV0, "writeback_triggers")}, INV_C},
	{"entry without closure_policy", {DEL(INV0, "closure_policy")}, INV_C},
	{"entry without write_actor_ref", {DEL(INV0, "write_actor_ref")}, SP_OK},
	{"write_actor_ref null", {SET(INV0, "write_actor_ref", "null")}, SP_OK},
	{"write_actor_ref empty", {SET(INV0, "write_actor_ref", "\"\"")}, INV_C},
	{"write_actor_ref number", {SET(INV0, "write_actor_ref", "1")}, INV_C},
	{"write_actor_ref 512", {LONG(INV0, "write_actor_ref", 512)}, SP_OK},
	{"write_actor_ref 513", {LONG(INV0, "write_actor_ref", 513)}, INV_C},
	{"corpus_id with a space", {SET(INV0, "corpus_id", "\"corp a\"")}, INV_C},
	{"corpus_id starting with _", {SET(INV0, "corpus_id", "\"_corp\"")}, INV_C},
	{"corpus_id empty", {SET(INV0, "corpus_id", "\"\"")}, INV_C},
	{"corpus_id number", {SET(INV0, "corpus_id", "7")}, INV_C},
	{"corpus_id null", {SET(INV0, "corpus_id", "null")}, INV_C},
	{"corpus_id with id punctuation", {SET(INV0, "corpus_id", "\"Corp.1:a_b-c\"")}, SP_OK},
	{"corpus_id 128", {LONG(INV0, "corpus_id", 128)}, SP_OK},
	{"corpus_id 129", {LONG(INV0, "corpus_id", 129)}, INV_C},
	{"scope_ref empty", {SET(INV0, "scope_ref", "\"\"")}, INV_C},
	{"scope_ref null", {SET(INV0, "scope_ref", "null")}, INV_C},
	{"scope_ref 512", {LONG(INV0, "scope_ref", 512)}, SP_OK},
	{"scope_ref 513", {LONG(INV0, "scope_ref", 513)}, INV_C},
	{"source_of_truth empty", {SET(INV0, "source_of_truth", "\"\"")}, INV_C},
	{"source_of_truth number", {SET(INV0, "source_of_truth", "1")}, INV_C},
	{"source_of_truth 512", {LONG(INV0, "source_of_truth", 512)}, SP_OK},
	{"source_of_truth 513", {LONG(INV0, "source_of_truth", 513)}, INV_C},
	{"read_role fallback", {SET(INV0, "read_role", "\"fallback\"")}, SP_OK},
	{"read_role reference", {SET(INV0, "read_role", "\"reference\"")}, SP_OK},
	{"read_role secondary", {SET(INV0, "read_role", "\"secondary\"")}, INV_C},
	{"read_role Primary", {SET(INV0, "read_role", "\"Primary\"")}, INV_C},
	{"read_role null", {SET(INV0, "read_role", "null")}, INV_C},
	{"write_mode read_only", {SET(INV0, "write_mode", "\"read_only\"")}, SP_OK},
	{"write_mode read_write", {SET(INV0, "write_mode", "\"read_write\"")}, INV_C},
	{"write_mode array", {SET(INV0, "write_mode", "[\"read_only\"]")}, INV_C},
	{"closure_policy none", {SET(INV0, "closure_policy", "\"none\"")}, SP_OK},
	{"closure_policy always", {SET(INV0, "closure_policy", "\"always\"")}, INV_C},
	{"closure_policy empty", {SET(INV0, "closure_policy", "\"\"")}, INV_C},
	{"triggers empty", {SET(INV0, "writeback_triggers", "[]")}, SP_OK},
	{"triggers both",
	 {SET(INV0, "writeback_triggers", "[\"source_truth_changed\", \"explicit_feedback\"]")},
	 SP_OK},
	{"triggers repeated",
	 {SET(INV0, "writeback_triggers", "[\"explicit_feedback\", \"explicit_feedback\"]")},
	 INV_C},
	{"triggers unknown", {SET(INV0, "writeback_triggers", "[\"on_commit\"]")}, INV_C},
	{"triggers non-string", {SET(INV0, "writeback_triggers", "[1]")}, INV_C},
	{"triggers null item", {SET(INV0, "writeback_triggers", "[null]")}, INV_C},
	{"triggers a string", {SET(INV0, "writeback_triggers", "\"explicit_feedback\"")}, INV_C},
	{"triggers null", {SET(INV0, "writeback_triggers", "null")}, INV_C},
};

static void expect_sp(const char *name, const json_t *resp, enum core_sp_failure want)
{
	json_t *items = (json_t *)1;
	bool truncated = true;
	const char *why = "sentinel";
	enum core_sp_failure got = core_sp_validate_response(resp, 5, &items, &truncated, &why);
	if (got != want)
		fail_msg("%s: got %d, want %d (why: %s)", name, got, want, why ? why : "(none)");
	if (want == CORE_SP_OK) {
		assert_null(why);
		assert_true(json_is_array(items));
		json_decref(items);
	} else {
		assert_non_null(why);
		assert_null(strstr(why, pad_run));
		assert_null(strstr(why, "pref-1"));
		assert_null(items);
		assert_false(truncated);
	}
	assert_int_equal(core_sp_validate_response(resp, 5, NULL, NULL, NULL), want);
}

static void test_sp_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(sp_rows); i++) {
		json_t *doc = parse(SP_GOOD);
		apply(doc, sp_rows[i].m, MUTATIONS_MAX);
		expect_sp(sp_rows[i].name, doc, sp_rows[i].want);
		json_decref(doc);
	}
	static const char *const not_objects[] = {"[]", "null", "\"x\"", "{}"};
	for (size_t i = 0; i < N_ELEMS(not_objects); i++) {
		json_t *v = parse(not_objects[i]);
		expect_sp(not_objects[i], v, CORE_SP_INVALID_RESPONSE);
		json_decref(v);
	}
}

static void test_sp_whys(void **state)
{
	(void)state;
	static const struct why_row rows[] = {
		{{DEL(TOP, "items")}, "the response lacks a member"},
		{{SET(TOP, "extra", "1")}, "the response has an unknown member"},
		{{DEL(ITEM0, "summary")}, "an item lacks a member"},
		{{LONG(ITEM0, "summary", 2001)}, "summary is over 2000 bytes"},
		{{LONG(ITEM0, "preference_ref", 513)}, "preference_ref is over 512 bytes"},
		{{DEL(INV0, "scope_ref")}, "an inventory entry lacks a member"},
		{{SET(INV0, "extra", "1")}, "an inventory entry has an unknown member"},
		{{SET(INV0, "writeback_triggers", "[\"explicit_feedback\", \"explicit_feedback\"]")},
		 "repeats"},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		const char *why = NULL;
		json_t *doc = parse(SP_GOOD);
		apply(doc, rows[i].m, MUTATIONS_MAX);
		assert_int_not_equal(core_sp_validate_response(doc, 5, NULL, NULL, &why), CORE_SP_OK);
		if (strstr(why, rows[i].why_has) == NULL)
			fail_msg("why \"%s\" does not say \"%s\"", why, rows[i].why_has);
		json_decref(doc);
	}
}

/* SP_GOOD with n items "pref-<i>" and m copies of the managed inventory entry (m < 0: no
 * inventory). */
static json_t *sp_with(size_t n, int m)
{
	json_t *doc = parse(SP_GOOD), *items = json_array(), *inv = json_array();
	json_t *entry = parse(SP_ENTRY_MANAGED);
	for (size_t i = 0; i < n; i++) {
		char ref[32];
		snprintf(ref, sizeof ref, "pref-%zu", i);
		json_array_append_new(items, json_pack("{s:s, s:s}", "preference_ref", ref,
						       "summary", "s"));
	}
	for (int i = 0; i < m; i++)
		json_array_append(inv, entry);
	json_decref(entry);
	json_object_set_new(doc, "items", items);
	if (m >= 0)
		json_object_set_new(doc, "corpus_inventory", inv);
	else {
		json_decref(inv);
		json_object_del(doc, "corpus_inventory");
	}
	return doc;
}

static void test_sp_counts(void **state)
{
	(void)state;
	json_t *doc = sp_with(RG_SP_ITEMS_MAX, -1);
	expect_sp("exactly ITEMS_MAX items", doc, CORE_SP_OK);
	json_decref(doc);
	doc = sp_with(RG_SP_ITEMS_MAX + 1, -1);
	expect_sp("ITEMS_MAX + 1 items", doc, CORE_SP_INVALID_RESPONSE);
	json_decref(doc);
	doc = sp_with(2, RG_SP_INVENTORY_MAX);
	expect_sp("20 inventory entries", doc, CORE_SP_OK);
	json_decref(doc);
	doc = sp_with(2, RG_SP_INVENTORY_MAX + 1);
	expect_sp("21 inventory entries", doc, CORE_SP_INVALID_CORPUS_INVENTORY);
	json_decref(doc);
}

static void expect_kept(const json_t *resp, int limit, size_t want_n, bool want_truncated)
{
	json_t *items = NULL;
	bool truncated = !want_truncated;
	assert_int_equal(core_sp_validate_response(resp, limit, &items, &truncated, NULL),
			 CORE_SP_OK);
	assert_int_equal(json_array_size(items), want_n);
	assert_int_equal(truncated, want_truncated);
	const json_t *all = json_object_get(resp, "items");
	for (size_t i = 0; i < want_n; i++) {
		/* copies, in order, equal to the provider's */
		assert_ptr_not_equal(json_array_get(items, i), json_array_get(all, i));
		assert_true(json_equal(json_array_get(items, i), json_array_get(all, i)));
		assert_int_equal(json_object_size(json_array_get(items, i)), 2);
	}
	json_decref(items);
}

static void test_sp_truncation(void **state)
{
	(void)state;
	json_t *doc = sp_with(RG_SP_LIMIT_MAX + 1, 1);
	expect_kept(doc, RG_SP_LIMIT_MAX, RG_SP_LIMIT_MAX, true);
	expect_kept(doc, RG_SP_LIMIT_MAX + 1, RG_SP_LIMIT_MAX + 1, false);
	expect_kept(doc, 1, 1, true);
	expect_kept(doc, 0, 0, true);
	expect_kept(doc, -1, 0, true);
	json_decref(doc);
	doc = sp_with(RG_SP_LIMIT_MAX, 1);
	expect_kept(doc, RG_SP_LIMIT_MAX, RG_SP_LIMIT_MAX, false);
	expect_kept(doc, 5, 5, true);
	json_decref(doc);
	doc = sp_with(0, 0);
	expect_kept(doc, 5, 0, false);
	expect_kept(doc, 0, 0, false);
	json_decref(doc);
	/* *truncated alone, without the items */
	doc = sp_with(3, -1);
	bool truncated = false;
	assert_int_equal(core_sp_validate_response(doc, 2, NULL, &truncated, NULL), CORE_SP_OK);
	assert_true(truncated);
	json_decref(doc);
}

/* ---- maintenance guidance -------------------------------------------------------------- */

#define ENTRY(id, mode, triggers, policy)                                                        \
	"{\"corpus_id\": \"" id "\", \"scope_ref\": \"s\", \"read_role\": \"primary\", "          \
	"\"write_mode\": \"" mode "\", \"source_of_truth\": \"t\", \"writeback_triggers\": "      \
	triggers ", \"closure_policy\": \"" policy "\"}"
#define PM "provider_managed"
#define RO "read_only"
#define WW "write_wait_l2_read_scoped_recall"
#define EF "\"explicit_feedback\""
#define STC "\"source_truth_changed\""
#define GUIDANCE(ids, triggers, policies)                                                         \
	"{\"schema_version\": \"semantic_preference_maintenance_guidance_v0\", \"corpus_ids\": "  \
	ids ", \"writeback_triggers\": " triggers ", \"closure_policies\": " policies            \
	", \"closure_outcomes\": [\"verified\", \"no_write_rationale\"]}"

static void test_guidance(void **state)
{
	(void)state;
	static const struct {
		const char *name, *inventory, *want;
	} rows[] = {
		{"empty", "[]", "null"},
		{"all read_only",
		 "[" ENTRY("a", RO, "[" EF "]", WW) ", " ENTRY("b", RO, "[]", "none") "]", "null"},
		{"one managed",
		 "[" ENTRY("a", PM, "[" EF "]", WW) "]",
		 GUIDANCE("[\"a\"]", "[" EF "]", "[\"" WW "\"]")},
		{"sorted, read_only left out",
		 "[" ENTRY("corp-b", PM, "[" STC ", " EF "]", WW) ", "
		     ENTRY("corp-c", RO, "[" STC "]", "none") ", "
		     ENTRY("corp-a", PM, "[" EF "]", "none") "]",
		 GUIDANCE("[\"corp-a\", \"corp-b\"]", "[" EF ", " STC "]",
			  "[\"none\", \"" WW "\"]")},
		{"read_only policies and triggers are not theirs",
		 "[" ENTRY("m", PM, "[]", "none") ", " ENTRY("r", RO, "[" STC "]", WW) "]",
		 GUIDANCE("[\"m\"]", "[]", "[\"none\"]")},
		{"unique",
		 "[" ENTRY("a", PM, "[" EF "]", "none") ", " ENTRY("a", PM, "[" EF ", " STC "]",
								"none") ", "
		     ENTRY("B", PM, "[" STC "]", "none") "]",
		 GUIDANCE("[\"B\", \"a\"]", "[" EF ", " STC "]", "[\"none\"]")},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *inv = parse(rows[i].inventory);
		/* every row's inventory is valid */
		json_t *resp = json_pack("{s:s, s:[], s:O}", "schema_version",
					 "semantic_preference_provider_response_v0", "items",
					 "corpus_inventory", inv);
		assert_int_equal(core_sp_validate_response(resp, 5, NULL, NULL, NULL), CORE_SP_OK);
		json_decref(resp);
		json_t *g = core_sp_guidance(inv);
		assert_non_null(g);
		assert_json_equal_text(g, rows[i].want);
		if (json_is_object(g))
			assert_int_equal(json_object_size(g), 5);
		json_decref(g);
		json_decref(inv);
	}
	json_t *g = core_sp_guidance(NULL);
	assert_true(json_is_null(g));
	json_decref(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permission),
		cmocka_unit_test(test_url_valid),
		cmocka_unit_test(test_doctor_url),
		cmocka_unit_test(test_resolve_explicit),
		cmocka_unit_test(test_resolve_implicit),
		cmocka_unit_test(test_resolve_reason),
		cmocka_unit_test(test_doctor_check),
		cmocka_unit_test(test_summary_public_safe),
		cmocka_unit_test(test_scope_normalise),
		cmocka_unit_test(test_provider_ref),
		cmocka_unit_test(test_digest16),
		cmocka_unit_test(test_sp_digests),
		cmocka_unit_test(test_sorted_unique),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_dc_request),
		cmocka_unit_test(test_dc_rows),
		cmocka_unit_test(test_dc_whys),
		cmocka_unit_test(test_dc_max_results),
		cmocka_unit_test(test_dc_not_objects),
		cmocka_unit_test(test_dc_bytes_not_chars),
		cmocka_unit_test(test_sp_surface),
		cmocka_unit_test(test_sp_context_key),
		cmocka_unit_test(test_sp_request),
		cmocka_unit_test(test_sp_failure_name),
		cmocka_unit_test(test_sp_rows),
		cmocka_unit_test(test_sp_whys),
		cmocka_unit_test(test_sp_counts),
		cmocka_unit_test(test_sp_truncation),
		cmocka_unit_test(test_guidance),
	};
	return cmocka_run_group_tests(tests, fill_xs, NULL);
}
