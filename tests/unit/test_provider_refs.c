/* core/provider: what a decision-context call may carry and show (openapi/openapi.yaml
 * "Decision context", "Semantic preferences", docs/providers-contract.md) — a public-safe
 * query_summary, the normalised scope_ref, the provider_ref that stands for a private resource
 * reference, and the digests and sorted sets of the semantic-preference answers. Hashes are
 * checked against SHA-256 computed with OpenSSL EVP, not core/hash. */
#include "unit.h"

#include <jansson.h>

#include "core/ids.h"
#include "core/provider.h"
#include "provider_helpers.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_public_safe),
		cmocka_unit_test(test_scope_normalise),
		cmocka_unit_test(test_provider_ref),
		cmocka_unit_test(test_digest16),
		cmocka_unit_test(test_sp_digests),
		cmocka_unit_test(test_sorted_unique),
	};
	return cmocka_run_group_tests(tests, fill_xs, NULL);
}
