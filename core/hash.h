/* Hashing, random ids and token material (OpenSSL, no I/O). */
#ifndef RG_CORE_HASH_H
#define RG_CORE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include "core/status.h"

#define RG_SHA256_HEX_LEN 64
/* "sha256:" + 64 hex + NUL */
#define RG_SHA256_TAGGED_SIZE 72
#define RG_ID_RANDOM_HEX 32
/* prefix (≤ 4) + 32 hex + NUL */
#define RG_ID_SIZE 40
#define RG_TOKEN_PREFIX "rg_"
/* "rg_" + 43 base64url chars + NUL */
#define RG_TOKEN_SIZE 47

/* Writes 64 lowercase hex digits + NUL into out[65]. */
void core_sha256_hex(const void *data, size_t len, char out[RG_SHA256_HEX_LEN + 1]);
/* Writes "sha256:<hex>" + NUL into out. */
void core_sha256_tagged(const void *data, size_t len, char out[RG_SHA256_TAGGED_SIZE]);
/* Lowercase hex of n bytes into out (2n+1 bytes). */
void core_hex(const unsigned char *in, size_t n, char *out);
/* 64 hex digits → 32 bytes; false when hex is not exactly that. */
bool core_unhex32(const char *hex, unsigned char out[32]);
/* Raw 32-byte digest. */
void core_sha256(const void *data, size_t len, unsigned char out[32]);

/* Hex of n random bytes → out (2n+1 bytes). false when the RNG fails. */
bool core_random_hex(char *out, size_t nbytes) RG_MUSTCHECK;
/* "<prefix>" + 32 hex of 128 random bits into out[RG_ID_SIZE]. prefix ≤ 4 chars, e.g. "tok_". */
bool core_new_id(const char *prefix, char out[RG_ID_SIZE]) RG_MUSTCHECK;
/* A new bearer token "rg_" + base64url(32 random bytes) into out[RG_TOKEN_SIZE]. */
/* true when s has the shape of a token this service issues ("rg_" + 43 base64url). */
bool core_token_shape_valid(const char *s);
bool core_new_token(char out[RG_TOKEN_SIZE]) RG_MUSTCHECK;
/* Decodes len chars of standard, padded base64 (RFC 4648 section 4) into out (cap bytes) and
 * sets *outlen; false when in is not that or does not fit. */
bool core_base64_decode(const char *in, size_t len, unsigned char *out, size_t cap,
			size_t *outlen) RG_MUSTCHECK;
/* true when a and b (n bytes each) are equal; time does not depend on where they differ. */
bool core_equal_ct(const void *a, const void *b, size_t n);

#endif
