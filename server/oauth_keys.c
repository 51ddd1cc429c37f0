/* glibc's writer-preferring rwlock (below) */
#define _GNU_SOURCE
#include "server/oauth_keys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cjose/jwk.h>
#include <jansson.h>

#include "server/clock.h"
#include "server/log.h"
#include "server/outbound.h"

struct key {
	char kid[128];
	char alg[16]; /* the key's own "alg", "" when it names none */
	cjose_jwk_t *jwk;
	bool rsa; /* else EC P-256 */
};

struct keyset {
	size_t n;
	struct key keys[OAUTH_MAX_KEYS];
};

static const char *issuer_url;
static long long refetch_ms;
/* Readers (every JWT request) hold it shared while verifying; a fetch swaps the set under it
 * exclusively, after the network work is done. Writer-preferring: under steady JWT traffic
 * glibc's default would keep that swap waiting (no reader takes it twice, so no deadlock). */
static pthread_rwlock_t keys_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static struct keyset *current;
/* One fetch at a time; last_fetch_ms (the last attempt, -1: never) is read under keys_lock
 * and written under both. */
static pthread_mutex_t fetch_lock = PTHREAD_MUTEX_INITIALIZER;
static long long last_fetch_ms = -1;

static void keyset_free(struct keyset *ks)
{
	for (size_t i = 0; ks && i < ks->n; i++)
		cjose_jwk_release(ks->keys[i].jwk);
	free(ks);
}

void oauth_keys_init(const char *issuer, unsigned refetch_s)
{
	issuer_url = issuer;
	refetch_ms = (long long)refetch_s * 1000;
}

void oauth_keys_shutdown(void)
{
	pthread_rwlock_wrlock(&keys_lock);
	keyset_free(current);
	current = NULL;
	last_fetch_ms = -1;
	pthread_rwlock_unlock(&keys_lock);
}

/* GET url as JSON (new, or NULL): by deadline_ms (CLOCK_MONOTONIC), at most OAUTH_DOC_MAX
 * bytes, no redirects (server/outbound.c). */
static json_t *fetch_json(const char *url, long long deadline_ms)
{
	long long left = deadline_ms - mono_ms();
	if (left < 1)
		return NULL;
	struct h_call call = {.method = "GET", .url = url, .deadline_ms = (unsigned)left};
	struct h_call_result res;
	outbound_call(&call, NULL, &res);
	json_t *doc = NULL;
	if (res.outcome == H_CALL_OK && res.body_len <= OAUTH_DOC_MAX)
		doc = json_loadb(res.body, res.body_len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(doc)) {
		log_warn(NULL, "oauth fetch failed outcome=%d http_status=%ld bytes=%zu",
			 (int)res.outcome, res.http_status, res.body_len);
		json_decref(doc);
		doc = NULL;
	}
	free(res.body);
	return doc;
}

/* The issuer's metadata: OpenID Connect Discovery's location first, then RFC 8414's (the
 * well-known segment before the issuer's path). Its issuer must be ours (RFC 8414 §3.3). */
static json_t *fetch_metadata(long long deadline_ms)
{
	char url[1200];
	snprintf(url, sizeof url, "%s/.well-known/openid-configuration", issuer_url);
	json_t *meta = fetch_json(url, deadline_ms);
	if (meta == NULL) {
		const char *host = strstr(issuer_url, "://") + 3;
		const char *path = strchr(host, '/');
		int host_len = path ? (int)(path - issuer_url) : (int)strlen(issuer_url);
		snprintf(url, sizeof url, "%.*s/.well-known/oauth-authorization-server%s", host_len,
			 issuer_url, path ? path : "");
		meta = fetch_json(url, deadline_ms);
	}
	const json_t *iss = json_object_get(meta, "issuer");
	if (meta && (!json_is_string(iss) || strcmp(json_string_value(iss), issuer_url) != 0)) {
		log_warn(NULL, "oauth metadata refused: its issuer is not RECALLGATE_OAUTH_ISSUER");
		json_decref(meta);
		meta = NULL;
	}
	return meta;
}

/* One JWK of a set into k; false for a key this service does not verify with (not a
 * signing key, not RSA ≥ 2048 bits or EC P-256: EdDSA's OKP keys cjose cannot import). */
static bool key_take(const json_t *jwk, struct key *k)
{
	const char *kty = json_string_value(json_object_get(jwk, "kty"));
	const char *use = json_string_value(json_object_get(jwk, "use"));
	const char *kid = json_string_value(json_object_get(jwk, "kid"));
	const char *alg = json_string_value(json_object_get(jwk, "alg"));
	if (kty == NULL || (use && strcmp(use, "sig") != 0) ||
	    (strcmp(kty, "RSA") != 0 && strcmp(kty, "EC") != 0))
		return false;
	if ((kid && strlen(kid) >= sizeof k->kid) || (alg && strlen(alg) >= sizeof k->alg))
		return false;
	char *text = json_dumps(jwk, JSON_COMPACT);
	cjose_err err;
	cjose_jwk_t *key = text ? cjose_jwk_import(text, strlen(text), &err) : NULL;
	free(text);
	if (key == NULL)
		return false;
	bool rsa = cjose_jwk_get_kty(key, &err) == CJOSE_JWK_KTY_RSA;
	bool usable = rsa ? cjose_jwk_get_keysize(key, &err) >= 2048
			  : cjose_jwk_get_kty(key, &err) == CJOSE_JWK_KTY_EC &&
				    cjose_jwk_EC_get_curve(key, &err) == CJOSE_JWK_EC_P_256;
	if (!usable) {
		cjose_jwk_release(key);
		return false;
	}
	snprintf(k->kid, sizeof k->kid, "%s", kid ? kid : "");
	snprintf(k->alg, sizeof k->alg, "%s", alg ? alg : "");
	k->jwk = key;
	k->rsa = rsa;
	return true;
}

/* The issuer's current key set (new), or NULL when it cannot be had. Every request of it
 * shares one deadline: a hung issuer holds the fetching lane thread (and those waiting for the
 * same keys) for OAUTH_FETCH_TIMEOUT_MS at most, once per refetch interval. */
static struct keyset *fetch_keyset(void)
{
	struct keyset *ks = NULL;
	long long deadline = mono_ms() + OAUTH_FETCH_TIMEOUT_MS;
	json_t *jwks = NULL, *meta = fetch_metadata(deadline);
	const char *jwks_uri = json_string_value(json_object_get(meta, "jwks_uri"));
	/* https, unless the issuer itself is a loopback http one (config.c allows no other):
	 * keys fetched in clear text would let anyone on the path mint tokens */
	bool clear_ok = strncmp(issuer_url, "http://", 7) == 0;
	if (jwks_uri == NULL || (strncmp(jwks_uri, "https://", 8) != 0 &&
				 !(clear_ok && strncmp(jwks_uri, "http://", 7) == 0)))
		goto out;
	jwks = fetch_json(jwks_uri, deadline);
	const json_t *keys = json_object_get(jwks, "keys");
	if (!json_is_array(keys) || (ks = calloc(1, sizeof *ks)) == NULL)
		goto out;
	size_t i;
	const json_t *jwk;
	json_array_foreach(keys, i, jwk)
	{
		if (ks->n < OAUTH_MAX_KEYS && key_take(jwk, &ks->keys[ks->n]))
			ks->n++;
	}
	log_info(NULL, "oauth keys fetched usable=%zu offered=%zu", ks->n, json_array_size(keys));
out:
	json_decref(meta);
	json_decref(jwks);
	return ks;
}

static bool key_fits(const struct key *k, const char *alg, const char *kid)
{
	if (kid && strcmp(k->kid, kid) != 0)
		return false;
	if (k->alg[0] && strcmp(k->alg, alg) != 0)
		return false;
	return k->rsa == (strcmp(alg, "RS256") == 0);
}

/* Under keys_lock (shared): whether a key of the set fits, and then whether it verifies. */
static bool verify_cached(cjose_jws_t *jws, const char *alg, const char *kid, bool *found)
{
	*found = false;
	unsigned tries = 0;
	for (size_t i = 0; current && i < current->n; i++) {
		if (!key_fits(&current->keys[i], alg, kid))
			continue;
		*found = true;
		if (kid == NULL && ++tries > OAUTH_MAX_TRIES_WITHOUT_KID)
			break;
		cjose_err err;
		if (cjose_jws_verify(jws, current->keys[i].jwk, &err))
			return true;
	}
	return false;
}

enum rg_status oauth_keys_verify(cjose_jws_t *jws, const char *alg, const char *kid,
				 bool may_fetch)
{
	bool found;
	pthread_rwlock_rdlock(&keys_lock);
	bool ok = verify_cached(jws, alg, kid, &found);
	long long seen_fetch = last_fetch_ms;
	pthread_rwlock_unlock(&keys_lock);
	long long now = mono_ms();
	bool stale = seen_fetch < 0 || now - seen_fetch >= OAUTH_KEYS_MAX_AGE_MS;
	if (ok && !stale)
		return RG_OK;
	/* A key named by its kid that does not verify is a bad signature: no fetch can change
	 * that (without a kid, the issuer may have rotated: a fetch may). Otherwise at most one
	 * fetch per interval, and keys past their age are fetched again before they verify. */
	if (!stale && ((found && kid) || (seen_fetch >= 0 && now - seen_fetch < refetch_ms)))
		return RG_NOT_FOUND;
	if (!may_fetch)
		return RG_NEEDS_DATABASE;

	pthread_mutex_lock(&fetch_lock);
	pthread_rwlock_rdlock(&keys_lock);
	bool fetched_meanwhile = last_fetch_ms != seen_fetch;
	pthread_rwlock_unlock(&keys_lock);
	if (!fetched_meanwhile) {
		struct keyset *fresh = fetch_keyset(), *old = NULL;
		pthread_rwlock_wrlock(&keys_lock);
		last_fetch_ms = mono_ms();
		if (fresh) { /* a failed fetch keeps the keys there were */
			old = current;
			current = fresh;
		}
		pthread_rwlock_unlock(&keys_lock);
		keyset_free(old);
	}
	pthread_mutex_unlock(&fetch_lock);

	pthread_rwlock_rdlock(&keys_lock);
	ok = verify_cached(jws, alg, kid, &found);
	pthread_rwlock_unlock(&keys_lock);
	return ok ? RG_OK : RG_NOT_FOUND;
}
