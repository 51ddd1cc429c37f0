/* recallgate as an OAuth 2.1 resource server (docs/mcp.md, "OAuth 2.1"): JWT access tokens
 * from RECALLGATE_OAUTH_ISSUER, verified with the issuer's keys (server/oauth_keys.c), their
 * claims checked by core/jwt.c. Off while the issuer is unset. */
#ifndef RG_SERVER_OAUTH_H
#define RG_SERVER_OAUTH_H

#include <stdbool.h>

#include "server/auth.h"
#include "server/config.h"

/* cfg: borrowed for the process's life. */
void oauth_init(const struct rg_config *cfg);
void oauth_shutdown(void);

bool oauth_enabled(void);

/* The WWW-Authenticate value of a 401: `Bearer resource_metadata="<metadata URL>"`, or
 * `Bearer` while OAuth is off (static). */
const char *oauth_www_authenticate(void);

/* true when token (a bearer token's text) has a JWT's shape: three base64url parts. */
bool oauth_token_is_jwt(const char *token);

/* Verifies a JWT access token. RG_OK fills *out (token_id and name: the jwt_ actor id);
 * RG_NOT_FOUND for any token that is not valid now (→ 401); RG_NEEDS_DATABASE when may_fetch
 * is false and only a fetch of the issuer's keys can say (call again from a lane). Nothing of
 * the token or its subject is logged. */
enum rg_status oauth_verify(const char *token, bool may_fetch,
			    struct auth_principal *out) RG_MUSTCHECK;

#endif
