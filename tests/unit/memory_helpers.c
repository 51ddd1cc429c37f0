/* The helpers of the unit_memory_* executables (memory_helpers.h). */
#include "unit.h"

#include <openssl/evp.h>

#include "memory_helpers.h"

/* "sha256:" + lowercase hex of SHA-256(data), computed here with OpenSSL, not core/hash. */
void ref_sha256(const void *data, size_t len, char out[RG_SHA256_TAGGED_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	memcpy(out, "sha256:", 7);
	for (unsigned int i = 0; i < mdlen; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[7 + 2 * i + 1] = hex[md[i] & 0x0f];
	}
	out[7 + 64] = '\0';
}

void ref_sha256_str(const char *s, char out[RG_SHA256_TAGGED_SIZE])
{
	ref_sha256(s, strlen(s), out);
}
