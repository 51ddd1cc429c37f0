#include "db/idempotency.h"
#include "db/pg.h"

#include <stdlib.h>
#include <string.h>

/* The key's lock, held to the end of the transaction: a second request with the key finds it
 * taken and is told the first is in flight (a 64-bit hash; a collision only ever says "in
 * flight" to a retry that would have waited anyway). */
static const struct db_stmt lock_stmt = {
	"idem_lock",
	"SELECT pg_try_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))",
	3, false, NULL};

static const struct db_stmt get_stmt = {
	"idem_get",
	"SELECT fingerprint, status, content_type, etag, location, headers::text, body"
	" FROM idempotency_keys WHERE tenant_id = $1 AND token_id = $2 AND idem_key = $3"
	"  AND created_at > now() - make_interval(hours => $4::int)",
	4, false, NULL};

/* An expired row of the same key is replaced; a few other expired rows go with each insert,
 * so the table holds about a day of keyed writes without a purge job. */
static const struct db_stmt put_stmt = {
	"idem_put",
	"WITH purge AS (DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM"
	"  idempotency_keys WHERE created_at <= now() - make_interval(hours => $11::int)"
	"  ORDER BY created_at LIMIT 8))"
	" INSERT INTO idempotency_keys (tenant_id, token_id, idem_key, fingerprint, status,"
	"  content_type, etag, location, headers, body)"
	" VALUES ($1, $2, $3, $4, $5::int, $6, $7, $8, $9::jsonb, $10)"
	" ON CONFLICT (tenant_id, token_id, idem_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
	"  status = EXCLUDED.status, content_type = EXCLUDED.content_type, etag = EXCLUDED.etag,"
	"  location = EXCLUDED.location, headers = EXCLUDED.headers, body = EXCLUDED.body,"
	"  created_at = now()"
	" WHERE idempotency_keys.created_at <= now() - make_interval(hours => $11::int)",
	11, false, NULL};

static char *dup_or_null(const PGresult *res, int col)
{
	const char *v = db_text(res, 0, col);
	return v ? strdup(v) : NULL;
}

void db_idem_answer_free(struct db_idem_answer *a)
{
	free(a->content_type);
	free(a->etag);
	free(a->location);
	free(a->headers_json);
	free(a->body);
	memset(a, 0, sizeof *a);
}

enum rg_status db_idem_open(struct db_conn *c, const struct db_idem_key *k,
			    enum db_idem_state *state, struct db_idem_answer *out,
			    struct db_error *err)
{
	char ttl[DB_INT_SIZE];
	const char *params[] = {k->tenant_id, k->token_id, k->key,
				db_int_param(ttl, DB_IDEM_TTL_HOURS)};
	PGresult *res = NULL;
	memset(out, 0, sizeof *out);
	enum rg_status st = db_tx_begin(c, err);
	if (st != RG_OK)
		return st;
	if ((st = db_exec(c, &lock_stmt, params, &res, err)) != RG_OK)
		goto failed;
	bool locked = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	res = NULL;
	if (!locked) {
		*state = DB_IDEM_IN_FLIGHT;
		db_tx_rollback(c);
		return RG_OK;
	}
	if ((st = db_exec(c, &get_stmt, params, &res, err)) != RG_OK)
		goto failed;
	if (PQntuples(res) == 0) {
		PQclear(res);
		*state = DB_IDEM_NEW;
		db_tx_isolate(c, true); /* the handler's statements run in it, each on its own */
		return RG_OK;
	}
	if (strcmp(PQgetvalue(res, 0, 0), k->fingerprint) != 0) {
		*state = DB_IDEM_CONFLICT;
	} else {
		*state = DB_IDEM_REPLAY;
		out->status = (int)db_int(res, 0, 1);
		out->content_type = dup_or_null(res, 2);
		out->etag = dup_or_null(res, 3);
		out->location = dup_or_null(res, 4);
		out->headers_json = dup_or_null(res, 5);
		out->body = dup_or_null(res, 6);
		out->body_len = out->body ? strlen(out->body) : 0;
		if (out->body == NULL || out->headers_json == NULL) {
			db_idem_answer_free(out);
			PQclear(res);
			db_tx_rollback(c);
			db_error_set(err, RG_NOMEM, "", "out of memory for a kept answer");
			return RG_NOMEM;
		}
	}
	PQclear(res);
	db_tx_rollback(c);
	return RG_OK;
failed:
	db_tx_rollback(c);
	return st;
}

enum rg_status db_idem_keep(struct db_conn *c, const struct db_idem_key *k,
			    const struct db_idem_answer *a, struct db_error *err)
{
	char status[DB_INT_SIZE], ttl[DB_INT_SIZE];
	const char *params[] = {k->tenant_id,   k->token_id,
				k->key,         k->fingerprint,
				db_int_param(status, a->status), a->content_type,
				a->etag,        a->location,
				a->headers_json, a->body,
				db_int_param(ttl, DB_IDEM_TTL_HOURS)};
	PGresult *res = NULL;
	db_tx_isolate(c, false); /* a failure rolls it all back anyway */
	enum rg_status st = db_exec(c, &put_stmt, params, &res, err);
	PQclear(res);
	if (st != RG_OK) {
		db_tx_rollback(c);
		return st;
	}
	return db_tx_commit(c, err);
}
