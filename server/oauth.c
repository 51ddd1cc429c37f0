#include "server/oauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjose/header.h>
#include <cjose/jws.h>
#include <jansson.h>

#include "core/jwt.h"
#include "server/log.h"
#include "server/oauth_keys.h"

/* The largest JWT accepted (bytes); an access token is a few KiB. */
#define OAUTH_TOKEN_MAX 16384

static const struct rg_config *config;
static char www_authenticate[CFG_URL_MAX + 64] = "Bearer";

/* RFC 9728 §3: the metadata of resource https://h/p lives at
 * https://h/.well-known/oauth-protected-resource (the root document this service serves,
 * which names the resource; its path form is served too, handlers/ops.c). */
void oauth_init(const struct rg_config *cfg)
{
	config = cfg;
	if (!cfg->oauth_issuer[0])
		return;
	const char *host = strstr(cfg->oauth_resource, "://") + 3;
	const char *path = strchr(host, '/');
	int origin_len = path ? (int)(path - cfg->oauth_resource) : (int)strlen(cfg->oauth_resource);
	snprintf(www_authenticate, sizeof www_authenticate,
		 "Bearer resource_metadata=\"%.*s/.well-known/oauth-protected-resource\"", origin_len,
		 cfg->oauth_resource);
	oauth_keys_init(cfg->oauth_issuer, cfg->oauth_jwks_refetch);
}

void oauth_shutdown(void)
{
	oauth_keys_shutdown();
}

bool oauth_enabled(void)
{
	return config && config->oauth_issuer[0];
}

const char *oauth_www_authenticate(void)
{
	return www_authenticate;
}

bool oauth_token_is_jwt(const char *token)
{
	size_t dots = 0, n = 0;
	for (const char *c = token; *c; c++, n++) {
		if (*c == '.')
			dots++;
		else if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			   (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return false;
	}
	return dots == 2 && n <= OAUTH_TOKEN_MAX;
}

/* RFC 9068 §4: an access token's typ is at+jwt; issuers that leave it out or say JWT are
 * accepted too (the audience check keeps an ID token, whose audience is a client, out). */
static bool typ_acceptable(const char *typ)
{
	return typ == NULL || strcmp(typ, "at+jwt") == 0 || strcmp(typ, "application/at+jwt") == 0 ||
	       strcmp(typ, "JWT") == 0;
}

enum rg_status oauth_verify(const char *token, bool may_fetch, struct auth_principal *out)
{
	enum rg_status st = RG_NOT_FOUND;
	const char *why = "malformed";
	cjose_err err;
	cjose_jws_t *jws = NULL;
	json_t *claims = NULL;
	if (!oauth_enabled() || !oauth_token_is_jwt(token))
		goto out;
	jws = cjose_jws_import(token, strlen(token), &err);
	cjose_header_t *hdr = jws ? cjose_jws_get_protected(jws) : NULL;
	const char *alg = hdr ? cjose_header_get(hdr, CJOSE_HDR_ALG, &err) : NULL;
	const char *kid = hdr ? cjose_header_get(hdr, CJOSE_HDR_KID, &err) : NULL;
	const char *typ = hdr ? cjose_header_get(hdr, "typ", &err) : NULL;
	/* The algorithms cjose verifies; EdDSA it cannot (docs/mcp.md, "OAuth 2.1"). */
	if (alg == NULL || (strcmp(alg, "RS256") != 0 && strcmp(alg, "ES256") != 0)) {
		why = "algorithm";
		goto out;
	}
	if (!typ_acceptable(typ))
		goto out;
	st = oauth_keys_verify(jws, alg, kid, may_fetch);
	if (st != RG_OK) {
		why = "signature";
		goto out;
	}
	st = RG_NOT_FOUND;
	uint8_t *payload = NULL;
	size_t payload_len = 0;
	if (!cjose_jws_get_plaintext(jws, &payload, &payload_len, &err))
		goto out;
	claims = json_loadb((const char *)payload, payload_len, JSON_REJECT_DUPLICATES, NULL);
	struct jwt_policy policy = {.issuer = config->oauth_issuer,
				    .resource = config->oauth_resource,
				    .tenant_claim = config->oauth_tenant_claim};
	struct jwt_subject who;
	enum jwt_verdict v = core_jwt_check(claims, &policy, (int64_t)time(NULL), &who);
	why = core_jwt_verdict_name(v);
	if (v != JWT_OK)
		goto out;
	memset(out, 0, sizeof *out);
	snprintf(out->tenant_id, sizeof out->tenant_id, "%s", who.tenant_id);
	snprintf(out->token_id, sizeof out->token_id, "%s", who.actor_id);
	/* The name is what a token speaks for (an assent's owner): each caller its own, never
	 * one name shared by every OAuth caller, and never the subject itself. */
	snprintf(out->name, sizeof out->name, "%s", who.actor_id);
	out->scopes = who.scopes;
	st = RG_OK;
out:
	if (st == RG_NOT_FOUND)
		log_info(NULL, "oauth token refused reason=%s", why);
	json_decref(claims);
	cjose_jws_release(jws);
	return st;
}
