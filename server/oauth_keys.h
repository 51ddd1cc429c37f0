/* The OAuth issuer's signing keys (its metadata's jwks_uri), cached in memory and verified
 * with cjose. A fetch happens only on a thread that may block (a lane), at most once per
 * RECALLGATE_OAUTH_JWKS_REFETCH seconds, bounded in time and size; the I/O threads only read
 * the cache. */
#ifndef RG_SERVER_OAUTH_KEYS_H
#define RG_SERVER_OAUTH_KEYS_H

#include <stdbool.h>
#include <cjose/jws.h>

#include "core/status.h"

/* Milliseconds one fetch of the keys may take: the metadata and the key set together. */
#define OAUTH_FETCH_TIMEOUT_MS 5000
/* The largest metadata document or key set read (bytes). */
#define OAUTH_DOC_MAX (256 * 1024)
/* The most keys kept from one key set. */
#define OAUTH_MAX_KEYS 32
/* Keys are fetched again once they are this old, even when every token names a known one: a
 * key the issuer withdrew (compromised, rotated out) stops verifying within this time. */
#define OAUTH_KEYS_MAX_AGE_MS (15 * 60 * 1000)
/* A token without `kid` is tried against at most this many keys of its type (a verify costs
 * CPU on an I/O thread before any rate limit applies). */
#define OAUTH_MAX_TRIES_WITHOUT_KID 3

/* issuer: borrowed for the process's life. */
void oauth_keys_init(const char *issuer, unsigned refetch_s);
void oauth_keys_shutdown(void);

/* Verifies jws (borrowed) signed with alg ("RS256" or "ES256"; the caller refuses any other)
 * by the key kid (NULL: any key of the algorithm's type). RG_OK when a cached key verifies
 * it; RG_NOT_FOUND when none does and no fetch is allowed now; RG_NEEDS_DATABASE when
 * may_fetch is false and a fetch of the keys may find it (call again from a lane). */
enum rg_status oauth_keys_verify(cjose_jws_t *jws, const char *alg, const char *kid,
				 bool may_fetch) RG_MUSTCHECK;

#endif
