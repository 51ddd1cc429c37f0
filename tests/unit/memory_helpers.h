/* What the unit_memory_* executables share (memory_helpers.c, linked as unit_memory_helpers):
 * content hashes computed here with OpenSSL EVP, not core/hash, to check core/memory against. */
#ifndef RG_TESTS_UNIT_MEMORY_HELPERS_H
#define RG_TESTS_UNIT_MEMORY_HELPERS_H

#include <stddef.h>

#include "core/memory.h"

/* "sha256:" + lowercase hex of SHA-256(data). */
void ref_sha256(const void *data, size_t len, char out[RG_SHA256_TAGGED_SIZE]);

/* ref_sha256 of the bytes of s. */
void ref_sha256_str(const char *s, char out[RG_SHA256_TAGGED_SIZE]);

#endif
