/* core/memory: the identities of openapi/openapi.yaml "Memory governance" — tagged SHA-256
 * references, source URIs, label keys, and the identity of a memory source (owner, uri, content
 * hash), checked against SHA-256 computed here with OpenSSL EVP, not core/hash. */
#include "unit.h"

#include "core/memory.h"
#include "memory_helpers.h"

/* ---- core_sha256_ref_valid ---------------------------------------------------------- */

static void test_sha256_ref(void **state)
{
	(void)state;
	char ok[80], short63[80], long65[128], upper[80], noprefix[80], buf[128];
	snprintf(ok, sizeof ok, "sha256:%s",
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(strlen(ok), 71);
	assert_true(core_sha256_ref_valid(ok));

	char real[RG_SHA256_TAGGED_SIZE];
	ref_sha256_str("hello", real);
	assert_true(core_sha256_ref_valid(real));

	memcpy(short63, ok, 70);
	short63[70] = '\0';
	assert_false(core_sha256_ref_valid(short63));
	snprintf(long65, sizeof long65, "%s0", ok);
	assert_false(core_sha256_ref_valid(long65));
	snprintf(long65, sizeof long65, "%sa", ok);
	assert_false(core_sha256_ref_valid(long65));

	/* one upper-case hex digit anywhere */
	strcpy(upper, ok);
	upper[7 + 10] = 'A';
	assert_false(core_sha256_ref_valid(upper));
	strcpy(upper, ok);
	upper[70] = 'F';
	assert_false(core_sha256_ref_valid(upper));
	/* a non-hex letter */
	strcpy(buf, ok);
	buf[20] = 'g';
	assert_false(core_sha256_ref_valid(buf));

	/* the prefix: missing, upper-case, other algorithm, wrong separator */
	strcpy(noprefix, ok + 7);
	assert_int_equal(strlen(noprefix), 64);
	assert_false(core_sha256_ref_valid(noprefix));
	snprintf(buf, sizeof buf, "SHA256:%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "sha512:%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "sha256-%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, " %s", ok);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "%s ", ok);
	assert_false(core_sha256_ref_valid(buf));

	assert_false(core_sha256_ref_valid("sha256:"));
	assert_false(core_sha256_ref_valid(""));
	assert_false(core_sha256_ref_valid(NULL));
}

/* ---- core_uri_valid ----------------------------------------------------------------- */

static void test_uri_valid(void **state)
{
	(void)state;
	static const char *const good[] = {
		"https://x", "urn:a:b", "mailto:a@b", "a:b", "s3://bucket/key",
		"git+ssh://host/repo", "x-y.z+1:rest", "https://example.org/p?q=1#f",
		"file:///tmp/x", "https://h/\xc3\xa9", /* non-ASCII UTF-8 in the rest */
	};
	static const char *const bad[] = {
		"",                  /* empty */
		"//x",               /* no scheme */
		"example.org/x",     /* no colon at all */
		":x",                /* empty scheme */
		"HTTPS://x",         /* upper-case scheme */
		"Https://x",
		"hTTps://x",
		"1http://x",         /* scheme starts with a digit */
		"+a:b", "-a:b", ".a:b",
		"ht_tp://x",         /* '_' is not a scheme character */
		"ht tp://x",         /* space in the scheme */
		" https://x",        /* leading space */
		"https:",            /* empty rest */
		"urn:",
		"https: //x",        /* spaces */
		"https://x y",
		"https://x ",
		"https://x\t",       /* control characters */
		"https://x\ny",
		"https://x\ry",
		"https://x\x01",
		"https://x\x1f",
		"https://x\x7f",     /* DEL */
		"\thttps://x",
		"ht\ttps://x",
	};
	for (size_t i = 0; i < N_ELEMS(good); i++) {
		if (!core_uri_valid(good[i]))
			print_error("want valid: \"%s\"\n", good[i]);
		assert_true(core_uri_valid(good[i]));
	}
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		if (core_uri_valid(bad[i]))
			print_error("want invalid: case %zu \"%s\"\n", i, bad[i]);
		assert_false(core_uri_valid(bad[i]));
	}
	assert_false(core_uri_valid(NULL));
}

/* ---- core_label_key_valid ----------------------------------------------------------- */

static void test_label_key(void **state)
{
	(void)state;
	char k64[65], k65[66], d64[65];
	memset(k64, 'a', 64);
	k64[64] = '\0';
	memset(k65, 'a', 65);
	k65[65] = '\0';
	/* 64 characters of every allowed class */
	memset(d64, '_', 64);
	d64[0] = 'z';
	d64[1] = '9';
	d64[2] = '.';
	d64[3] = '-';
	d64[64] = '\0';
	assert_true(core_label_key_valid(k64));
	assert_true(core_label_key_valid(d64));
	assert_false(core_label_key_valid(k65));
	assert_true(core_label_key_valid("a"));
	assert_true(core_label_key_valid("team"));
	assert_true(core_label_key_valid("app.kubernetes.io-name_2"));
	assert_true(core_label_key_valid("a0"));

	assert_false(core_label_key_valid("0team")); /* leading digit */
	assert_false(core_label_key_valid("9"));
	assert_false(core_label_key_valid("_a"));
	assert_false(core_label_key_valid(".a"));
	assert_false(core_label_key_valid("-a"));
	assert_false(core_label_key_valid("Team"));
	assert_false(core_label_key_valid("teAm"));
	assert_false(core_label_key_valid("a b"));
	assert_false(core_label_key_valid("a:b"));
	assert_false(core_label_key_valid("a/b"));
	assert_false(core_label_key_valid("caf\xc3\xa9"));
	assert_false(core_label_key_valid(""));
	assert_false(core_label_key_valid(NULL));
}

/* ---- core_memory_identity ----------------------------------------------------------- */

static void check_identity(const char *owner, const char *uri, const char *hash)
{
	size_t n = strlen(owner) + strlen(uri) + strlen(hash) + 3;
	char *pre = malloc(n);
	assert_non_null(pre);
	snprintf(pre, n, "%s\n%s\n%s", owner, uri, hash);
	char want[RG_SHA256_TAGGED_SIZE], got[RG_SHA256_TAGGED_SIZE];
	ref_sha256(pre, strlen(pre), want);
	free(pre);
	memset(got, 'X', sizeof got);
	core_memory_identity(owner, uri, hash, got);
	assert_string_equal(got, want);
	assert_true(core_sha256_ref_valid(got));
}

static void test_identity(void **state)
{
	(void)state;
	char h1[RG_SHA256_TAGGED_SIZE], h2[RG_SHA256_TAGGED_SIZE];
	ref_sha256_str("the remote bytes", h1);
	ref_sha256_str("other bytes", h2);

	check_identity("alice", "https://example.org/doc/1", h1); /* foreign pointer */
	check_identity("", "https://example.org/doc/1", h1);      /* non-foreign pointer */
	check_identity("bob.agent:7", "urn:a:b", h2);

	/* the longest inputs the API admits: owner 128 bytes, uri 2048 bytes */
	char owner[129], *uri = malloc(RG_MEM_URI_MAX + 1);
	assert_non_null(uri);
	memset(owner, 'o', 128);
	owner[128] = '\0';
	memcpy(uri, "https://", 8);
	memset(uri + 8, 'u', RG_MEM_URI_MAX - 8);
	uri[RG_MEM_URI_MAX] = '\0';
	check_identity(owner, uri, h1);
	free(uri);

	/* every part counts, and the separators keep parts apart */
	char a[RG_SHA256_TAGGED_SIZE], b[RG_SHA256_TAGGED_SIZE];
	core_memory_identity("", "https://x", h1, a);
	core_memory_identity("alice", "https://x", h1, b);
	assert_string_not_equal(a, b);
	core_memory_identity("", "https://y", h1, b);
	assert_string_not_equal(a, b);
	core_memory_identity("", "https://x", h2, b);
	assert_string_not_equal(a, b);
	core_memory_identity("ab", "c:d", h1, a);
	core_memory_identity("a", "bc:d", h1, b);
	assert_string_not_equal(a, b);
	/* the identity of a pointer is not its content hash */
	core_memory_identity("", "https://x", h1, a);
	assert_string_not_equal(a, h1);
	/* stable */
	core_memory_identity("", "https://x", h1, b);
	assert_string_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_ref),
		cmocka_unit_test(test_uri_valid),
		cmocka_unit_test(test_label_key),
		cmocka_unit_test(test_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
