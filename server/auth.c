#include "server/auth.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/hash.h"
#include "core/ids.h"
#include "db/tokens.h"
#include "server/clock.h"
#include "server/oauth.h"

#define CACHE_SLOTS 1024

struct cache_slot {
	pthread_rwlock_t lock; /* readers (every request) never block each other */
	bool used;
	unsigned char digest[32];
	int64_t expires_ms;
	struct auth_principal who;
};

static struct cache_slot *cache;
/* Off while this instance cannot hear token deletions (server/events.c): a cached token
 * could outlive its deletion elsewhere. */
static atomic_bool caching;
/* Moves on every deletion: a lookup that started before a deletion must not cache what it
 * read (the token may be the deleted one). */
static atomic_ullong revocations;

void auth_init(void)
{
	cache = calloc(CACHE_SLOTS, sizeof *cache);
	for (size_t i = 0; cache && i < CACHE_SLOTS; i++)
		pthread_rwlock_init(&cache[i].lock, NULL);
}

void auth_shutdown(void)
{
	for (size_t i = 0; cache && i < CACHE_SLOTS; i++)
		pthread_rwlock_destroy(&cache[i].lock);
	free(cache);
	cache = NULL;
}

static struct cache_slot *slot_for(const unsigned char digest[32])
{
	return &cache[(digest[0] | (unsigned)digest[1] << 8) % CACHE_SLOTS];
}

static bool cache_get(const unsigned char digest[32], struct auth_principal *out)
{
	bool hit = false;
	if (cache == NULL || !atomic_load(&caching))
		return false;
	struct cache_slot *s = slot_for(digest);
	pthread_rwlock_rdlock(&s->lock);
	if (s->used && core_equal_ct(s->digest, digest, 32) && s->expires_ms > mono_ms()) {
		*out = s->who;
		hit = true;
	}
	pthread_rwlock_unlock(&s->lock);
	return hit;
}

static void cache_put(const unsigned char digest[32], const struct auth_principal *who,
		      unsigned long long seen_revocations)
{
	if (cache == NULL)
		return;
	struct cache_slot *s = slot_for(digest);
	pthread_rwlock_wrlock(&s->lock);
	/* Checked under the slot's lock, which auth_forget takes after counting: either this
	 * sees the new count, or the forget comes after this put and clears it. */
	if (atomic_load(&revocations) == seen_revocations && atomic_load(&caching)) {
		s->used = true;
		memcpy(s->digest, digest, 32);
		s->who = *who;
		s->expires_ms = mono_ms() + AUTH_CACHE_TTL_MS;
	}
	pthread_rwlock_unlock(&s->lock);
}

void auth_forget(const char *sha256_hex)
{
	unsigned char digest[32];
	atomic_fetch_add(&revocations, 1);
	if (cache == NULL || !core_unhex32(sha256_hex, digest))
		return;
	struct cache_slot *s = slot_for(digest);
	pthread_rwlock_wrlock(&s->lock);
	if (s->used && memcmp(s->digest, digest, 32) == 0)
		s->used = false;
	pthread_rwlock_unlock(&s->lock);
}

void auth_cache_enable(bool on)
{
	/* A lookup in progress (started while the cache was off, or before it went off) must not
	 * cache what it read: the token may have been deleted unheard. */
	atomic_fetch_add(&revocations, 1);
	atomic_store(&caching, on);
	if (on || cache == NULL)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		pthread_rwlock_wrlock(&cache[i].lock);
		cache[i].used = false;
		pthread_rwlock_unlock(&cache[i].lock);
	}
}

/* The bearer token of an Authorization header value, or NULL. */
static const char *bearer_token(const char *authorization)
{
	if (authorization == NULL || strncasecmp(authorization, "Bearer ", 7) != 0)
		return NULL;
	const char *token = authorization + 7;
	while (*token == ' ')
		token++;
	return token;
}

/* An OAuth access token (server/oauth.c) when OAuth is on and the bearer token is a JWT:
 * true with its verdict in *st. A JWT is never looked up among recallgate's own tokens. */
static bool oauth_token(const char *authorization, bool may_fetch, struct auth_principal *out,
			enum rg_status *st)
{
	const char *token = bearer_token(authorization);
	if (token == NULL || !oauth_enabled() || !oauth_token_is_jwt(token))
		return false;
	*st = oauth_verify(token, may_fetch, out);
	return true;
}

/* The token's digest from an Authorization header value; false when the header is missing
 * or holds anything this service never issues (refused without a database query). */
static bool token_digest(const char *authorization, unsigned char digest[32])
{
	const char *token = bearer_token(authorization);
	if (token == NULL || !core_token_shape_valid(token))
		return false;
	core_sha256(token, strlen(token), digest);
	return true;
}

enum rg_status auth_verify_cached(const char *authorization, struct auth_principal *out)
{
	unsigned char digest[32];
	enum rg_status st;
	if (oauth_token(authorization, false, out, &st))
		return st; /* a fetch of the issuer's keys waits for a lane: RG_NEEDS_DATABASE */
	if (!token_digest(authorization, digest))
		return RG_NOT_FOUND;
	return cache_get(digest, out) ? RG_OK : RG_NEEDS_DATABASE;
}

enum rg_status auth_verify(struct db_pool *pool, const char *authorization,
			   struct auth_principal *out, struct db_conn **conn, struct db_error *err)
{
	unsigned char digest[32];
	char hex[65];
	*conn = NULL;
	enum rg_status jwt_st;
	if (oauth_token(authorization, true, out, &jwt_st))
		return jwt_st;
	if (!token_digest(authorization, digest))
		return RG_NOT_FOUND;
	if (cache_get(digest, out))
		return RG_OK;

	unsigned long long seen = atomic_load(&revocations);
	core_hex(digest, 32, hex);
	struct db_token t;
	enum rg_status st = db_acquire(pool, conn, err);
	if (st == RG_OK)
		st = db_token_by_hash(*conn, hex, &t, err);
	if (st != RG_OK) {
		db_release(pool, *conn);
		*conn = NULL;
		return st;
	}
	memset(out, 0, sizeof *out);
	snprintf(out->tenant_id, sizeof out->tenant_id, "%s", t.tenant_id);
	snprintf(out->token_id, sizeof out->token_id, "%s", t.token_id);
	snprintf(out->name, sizeof out->name, "%s", t.name);
	/* Scopes were validated on the way in; a name this binary does not know grants nothing. */
	char csv[sizeof t.scopes_csv];
	snprintf(csv, sizeof csv, "%s", t.scopes_csv);
	for (char *save = NULL, *s = strtok_r(csv, ",", &save); s; s = strtok_r(NULL, ",", &save))
		out->scopes |= core_scope_from_name(s);
	cache_put(digest, out, seen);
	return RG_OK;
}
