/* Bearer token verification with a short-lived cache: a warm token costs no database round
 * trip; a deletion drops the entry here at once and expires everywhere within 1 s. */
#ifndef RG_SERVER_AUTH_H
#define RG_SERVER_AUTH_H

#include "db/db.h"

#define AUTH_CACHE_TTL_MS 1000

struct auth_principal {
	char tenant_id[129];
	char token_id[41];
	char name[129];
	unsigned scopes;
};

void auth_init(void);
void auth_shutdown(void);

/* Verifies an Authorization header value without the database or the network, for the I/O
 * threads. RG_OK fills *out (a cached token, or an OAuth JWT whose key is cached);
 * RG_NOT_FOUND for a missing or malformed header or a refused JWT (→ 401); RG_NEEDS_DATABASE
 * when only the database, or a fetch of the OAuth issuer's keys, can say (call auth_verify
 * from a lane). */
enum rg_status auth_verify_cached(const char *authorization,
				  struct auth_principal *out) RG_MUSTCHECK;
/* Verifies an Authorization header value: recallgate's own token, or an OAuth JWT
 * (server/oauth.h; it may fetch the issuer's keys). RG_OK fills *out; RG_NOT_FOUND for a
 * missing, malformed, unknown or deleted token (→ 401); RG_UNAVAILABLE when the database
 * cannot say.
 * When it had to ask the database, *conn is the connection it borrowed, still held for the
 * request's handler (the caller releases it); else NULL. */
enum rg_status auth_verify(struct db_pool *pool, const char *authorization,
			   struct auth_principal *out, struct db_conn **conn,
			   struct db_error *err) RG_MUSTCHECK;

/* Turns the verification cache on, or off and empty (while token deletions by other
 * instances cannot be heard). Off until the event hub listens. */
void auth_cache_enable(bool on);

/* Drops a token (by hex SHA-256) from this instance's cache. */
void auth_forget(const char *sha256_hex);

#endif
