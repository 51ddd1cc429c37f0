/* The claim checks of a JWT access token (docs/mcp.md, "OAuth 2.1"): pure
 * rules over the token's decoded claims, with no I/O and no signature work (the signature is
 * verified before, by server/oauth.c with a JOSE library). */
#ifndef RG_CORE_JWT_H
#define RG_CORE_JWT_H

#include <stdint.h>
#include <jansson.h>

#include "core/status.h"

/* Seconds of clock skew allowed on exp and nbf. */
#define RG_JWT_LEEWAY_S 60
/* "jwt_" + 32 hex + NUL */
#define RG_JWT_ACTOR_SIZE 37
/* A tenant id is a caller-chosen id (core_id_valid): at most 128 bytes + NUL. */
#define RG_JWT_TENANT_SIZE 129

/* What the claims must say (all borrowed). */
struct jwt_policy {
	const char *issuer;       /* iss must equal it */
	const char *resource;     /* aud (a string or an array) must contain it */
	const char *tenant_claim; /* the claim that names the tenant */
};

/* Who the token speaks for. */
struct jwt_subject {
	char tenant_id[RG_JWT_TENANT_SIZE];
	char actor_id[RG_JWT_ACTOR_SIZE];
	unsigned scopes; /* enum rg_scope bits; names this binary does not know grant nothing */
};

enum jwt_verdict {
	JWT_OK = 0,
	JWT_MALFORMED,      /* not an object, or a claim of the wrong type; no sub */
	JWT_WRONG_ISSUER,
	JWT_WRONG_AUDIENCE,
	JWT_EXPIRED,        /* no exp, or now > exp + leeway */
	JWT_NOT_YET_VALID,  /* now < nbf - leeway */
	JWT_NO_TENANT,      /* the tenant claim is absent or not a valid id */
};

/* Checks claims (borrowed) against p at now_s (Unix seconds): exp is required and holds up to
 * and including exp + RG_JWT_LEEWAY_S; nbf, when present, from nbf - RG_JWT_LEEWAY_S on.
 * JWT_OK fills *out. */
enum jwt_verdict core_jwt_check(const json_t *claims, const struct jwt_policy *p, int64_t now_s,
				struct jwt_subject *out) RG_MUSTCHECK;

/* The scope bits of a space-separated `scope` claim (RFC 8693 §4.2); unknown names and
 * repeated spaces are ignored. NULL → 0. */
unsigned core_jwt_scopes(const char *scope);

/* The audit actor of a JWT caller: "jwt_" + the first 32 hex of SHA-256(iss "\n" sub), so
 * that the subject itself is never stored. */
void core_jwt_actor_id(const char *iss, const char *sub, char out[RG_JWT_ACTOR_SIZE]);

/* A short static name for a verdict, for the log line ("expired", "wrong_audience"...). */
const char *core_jwt_verdict_name(enum jwt_verdict v);

#endif
