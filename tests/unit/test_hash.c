/* core/hash: SHA-256 (FIPS 180-2 vectors), random ids, bearer tokens, constant-time compare. */
#include "unit.h"

#include "core/hash.h"

static const struct {
	const char *msg;
	size_t repeat; /* msg is hashed repeated this many times */
	const char *hex;
} vectors[] = {
	{"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
	 "nopqrsmnopqrstnopqrstu", 1,
	 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	{"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

static char *repeated(const char *msg, size_t times, size_t *len)
{
	size_t n = strlen(msg);
	char *buf = malloc(n * times + 1);
	assert_non_null(buf);
	for (size_t i = 0; i < times; i++)
		memcpy(buf + i * n, msg, n);
	buf[n * times] = '\0';
	*len = n * times;
	return buf;
}

static void test_sha256_hex_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(vectors); i++) {
		size_t len;
		char *msg = repeated(vectors[i].msg, vectors[i].repeat, &len);
		char hex[RG_SHA256_HEX_LEN + 1];
		core_sha256_hex(msg, len, hex);
		assert_string_equal(hex, vectors[i].hex);
		assert_int_equal(strlen(hex), RG_SHA256_HEX_LEN);
		free(msg);
	}
}

static void test_sha256_raw(void **state)
{
	(void)state;
	unsigned char d[32];
	core_sha256("abc", 3, d);
	static const unsigned char want[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	assert_memory_equal(d, want, 32);
}

static void test_sha256_tagged(void **state)
{
	(void)state;
	char tagged[RG_SHA256_TAGGED_SIZE];
	memset(tagged, 'X', sizeof tagged);
	core_sha256_tagged("abc", 3, tagged);
	assert_string_equal(tagged,
			    "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(strlen(tagged), RG_SHA256_TAGGED_SIZE - 1);

	core_sha256_tagged("", 0, tagged);
	assert_string_equal(tagged,
			    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_sha256_binary_input(void **state)
{
	(void)state;
	/* embedded NUL bytes are hashed, not treated as the end */
	char a[65], b[65];
	core_sha256_hex("a\0b", 3, a);
	core_sha256_hex("a", 1, b);
	assert_string_not_equal(a, b);
	assert_string_equal(b, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");
}

static bool all_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void test_random_hex(void **state)
{
	(void)state;
	char out[129];
	assert_true(core_random_hex(out, 16));
	assert_int_equal(strlen(out), 32);
	assert_true(all_lower_hex(out, 32));
	assert_true(core_random_hex(out, 64));
	assert_int_equal(strlen(out), 128);
	assert_true(all_lower_hex(out, 128));
	assert_true(core_random_hex(out, 0));
	assert_string_equal(out, "");
	/* more than the internal buffer holds is refused, not overflowed */
	char big[200];
	assert_false(core_random_hex(big, 65));
}

static void test_new_id(void **state)
{
	(void)state;
	static const char *const prefixes[] = {"tok_", "src_", "drv_", "asn_", "env_", "rcp_",
					       "lrc_", "req_"};
	for (size_t i = 0; i < N_ELEMS(prefixes); i++) {
		char a[RG_ID_SIZE], b[RG_ID_SIZE];
		assert_true(core_new_id(prefixes[i], a));
		assert_true(core_new_id(prefixes[i], b));
		assert_int_equal(strlen(a), 4 + RG_ID_RANDOM_HEX);
		assert_memory_equal(a, prefixes[i], 4);
		assert_true(all_lower_hex(a + 4, RG_ID_RANDOM_HEX));
		assert_string_not_equal(a, b);
	}
	char id[RG_ID_SIZE];
	assert_true(core_new_id("", id));
	assert_int_equal(strlen(id), 32);
	assert_false(core_new_id("toolongprefix_", id));
}

static void test_ids_do_not_repeat(void **state)
{
	(void)state;
	enum { N = 500 };
	static char ids[N][RG_ID_SIZE];
	for (size_t i = 0; i < N; i++) {
		assert_true(core_new_id("tok_", ids[i]));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(ids[i], ids[j]);
	}
}

static bool b64url_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static int b64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '-' ? 62 : 63;
}

static void test_token_format(void **state)
{
	(void)state;
	char a[RG_TOKEN_SIZE], b[RG_TOKEN_SIZE];
	assert_true(core_new_token(a));
	assert_true(core_new_token(b));
	assert_int_equal(strlen(a), 3 + 43);
	assert_memory_equal(a, "rg_", 3);
	for (size_t i = 3; i < strlen(a); i++)
		assert_true(b64url_char(a[i]));
	assert_null(strchr(a, '='));
	assert_string_not_equal(a, b);
}

static void test_tokens_are_canonical_and_distinct(void **state)
{
	(void)state;
	enum { N = 300 };
	static char tokens[N][RG_TOKEN_SIZE];
	int seen[64] = {0};
	for (size_t i = 0; i < N; i++) {
		assert_true(core_new_token(tokens[i]));
		assert_int_equal(strlen(tokens[i]), 46);
		/* 256 bits in 43 sextets: the last one carries 4 bits and 2 zero bits */
		assert_int_equal(b64url_value(tokens[i][45]) & 3, 0);
		for (size_t k = 3; k < 46; k++) {
			assert_true(b64url_char(tokens[i][k]));
			seen[b64url_value(tokens[i][k])] = 1;
		}
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(tokens[i], tokens[j]);
	}
	/* 300 × 42 random sextets: every one of the 64 characters shows up */
	int distinct = 0;
	for (int k = 0; k < 64; k++)
		distinct += seen[k];
	assert_int_equal(distinct, 64);
}

static void test_equal_ct(void **state)
{
	(void)state;
	assert_true(core_equal_ct("abcdef", "abcdef", 6));
	assert_false(core_equal_ct("abcdef", "Xbcdef", 6));
	assert_false(core_equal_ct("abcdef", "abcdeX", 6));
	assert_false(core_equal_ct("abcdef", "abcXef", 6));
	assert_true(core_equal_ct("abcdef", "abcXef", 3));
	assert_true(core_equal_ct("a", "b", 0));
	unsigned char x[32], y[32];
	memset(x, 0xff, sizeof x);
	memset(y, 0xff, sizeof y);
	assert_true(core_equal_ct(x, y, 32));
	y[31] = 0x7f;
	assert_false(core_equal_ct(x, y, 32));

	char h1[65], h2[65];
	core_sha256_hex("token-one", 9, h1);
	core_sha256_hex("token-one", 9, h2);
	assert_true(core_equal_ct(h1, h2, 64));
	core_sha256_hex("token-two", 9, h2);
	assert_false(core_equal_ct(h1, h2, 64));
}

/* RFC 4648 section 10's vectors, then what must be refused: a length off 4, a character off
 * the alphabet (base64url's included), padding before the end, and a buffer too small. */
static void test_base64_decode(void **state)
{
	(void)state;
	static const char *const ok[][2] = {
		{"", ""},	  {"Zg==", "f"},	{"Zm8=", "fo"},	  {"Zm9v", "foo"},
		{"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"},
	};
	unsigned char out[16];
	size_t n;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_true(core_base64_decode(ok[i][0], strlen(ok[i][0]), out, sizeof out, &n));
		assert_int_equal(n, strlen(ok[i][1]));
		assert_memory_equal(out, ok[i][1], n);
	}
	assert_true(core_base64_decode("/+8=", 4, out, sizeof out, &n));
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 0xff);
	assert_int_equal(out[1], 0xef);
	static const char *const bad[] = {"Zg", "Zg=", "Zm9vY", "Zm9v_-8=", "Zm9v-w==",
					  "Z===", "Zg==Zm9v", "Zm=v", "Zm 9"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(core_base64_decode(bad[i], strlen(bad[i]), out, sizeof out, &n));
	assert_false(core_base64_decode("Zm9vYmFy", 8, out, 5, &n));
	assert_true(core_base64_decode("Zm9vYmFy", 8, out, 6, &n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_hex_vectors),
		cmocka_unit_test(test_sha256_raw),
		cmocka_unit_test(test_sha256_tagged),
		cmocka_unit_test(test_sha256_binary_input),
		cmocka_unit_test(test_random_hex),
		cmocka_unit_test(test_new_id),
		cmocka_unit_test(test_ids_do_not_repeat),
		cmocka_unit_test(test_token_format),
		cmocka_unit_test(test_tokens_are_canonical_and_distinct),
		cmocka_unit_test(test_equal_ct),
		cmocka_unit_test(test_base64_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
