#include "core/hash.h"

#include <pthread.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

static const char hexdigits[] = "0123456789abcdef";

void core_hex(const unsigned char *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hexdigits[in[i] >> 4];
		out[2 * i + 1] = hexdigits[in[i] & 0x0f];
	}
	out[2 * n] = '\0';
}

/* SHA256() looks the algorithm up in OpenSSL 3's provider tables on every call (724 ns for
 * a token, against 245 ns with the algorithm fetched once); the token cache hashes on every
 * request. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void core_sha256(const void *data, size_t len, unsigned char out[32])
{
	pthread_once(&sha256_once, sha256_fetch);
	if (sha256_md == NULL || !EVP_Digest(data, len, out, NULL, sha256_md, NULL))
		SHA256(data, len, out);
}

void core_sha256_hex(const void *data, size_t len, char out[RG_SHA256_HEX_LEN + 1])
{
	unsigned char d[32];
	core_sha256(data, len, d);
	core_hex(d, sizeof d, out);
}

void core_sha256_tagged(const void *data, size_t len, char out[RG_SHA256_TAGGED_SIZE])
{
	memcpy(out, "sha256:", 7);
	core_sha256_hex(data, len, out + 7);
}

bool core_random_hex(char *out, size_t nbytes)
{
	unsigned char buf[64];
	if (nbytes > sizeof buf || RAND_bytes(buf, (int)nbytes) != 1)
		return false;
	core_hex(buf, nbytes, out);
	return true;
}

bool core_new_id(const char *prefix, char out[RG_ID_SIZE])
{
	size_t plen = strlen(prefix);
	if (plen > RG_ID_SIZE - RG_ID_RANDOM_HEX - 1)
		return false;
	memcpy(out, prefix, plen);
	return core_random_hex(out + plen, RG_ID_RANDOM_HEX / 2);
}

bool core_new_token(char out[RG_TOKEN_SIZE])
{
	static const char b64url[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char raw[33]; /* 32 random bytes + 1 zero pad: 33 bytes = 44 sextets */
	if (RAND_bytes(raw, 32) != 1)
		return false;
	raw[32] = 0;
	size_t o = strlen(RG_TOKEN_PREFIX);
	memcpy(out, RG_TOKEN_PREFIX, o);
	for (size_t i = 0; i < 33; i += 3) {
		unsigned v = (unsigned)raw[i] << 16 | (unsigned)raw[i + 1] << 8 | raw[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
		out[o++] = b64url[v & 63];
	}
	/* 256 bits need 43 sextets; the 44th holds only padding. */
	out[RG_TOKEN_SIZE - 1] = '\0';
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool core_unhex32(const char *hex, unsigned char out[32])
{
	for (int i = 0; i < 32; i++) {
		int hi = hexval(hex[2 * i]), lo = hi < 0 ? -1 : hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[64] == '\0';
}

bool core_token_shape_valid(const char *s)
{
	size_t plen = strlen(RG_TOKEN_PREFIX);
	if (s == NULL || strncmp(s, RG_TOKEN_PREFIX, plen) != 0)
		return false;
	size_t n = 0;
	for (const char *p = s + plen; *p; p++, n++) {
		char c = *p;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
	}
	return n == RG_TOKEN_SIZE - 1 - plen;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool core_base64_decode(const char *in, size_t len, unsigned char *out, size_t cap,
			size_t *outlen)
{
	if (len % 4 != 0)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 4) {
		unsigned long bits = 0;
		size_t pad = 0;
		for (size_t j = 0; j < 4; j++) {
			int v = 0;
			if (in[i + j] == '=' && i + 4 == len && j >= 2)
				pad++; /* "xx==" or "xxx=": only at the end */
			else if (pad || (v = base64_value(in[i + j])) < 0)
				return false;
			bits = bits << 6 | (unsigned long)v;
		}
		size_t k = 3 - pad;
		if (cap - n < k)
			return false;
		for (size_t b = 0; b < k; b++)
			out[n++] = (unsigned char)(bits >> (16 - 8 * b) & 0xff);
	}
	*outlen = n;
	return true;
}

bool core_equal_ct(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}
