/* Idempotency-Key (openapi/openapi.yaml "IdempotencyKey"): the kept answers of keyed writes,
 * per tenant and token, 24 h. A keyed write runs in one transaction that db_idem_open begins
 * (taking the key's lock, so that the same key in flight elsewhere is seen) and db_idem_keep
 * ends with the answer stored beside the write; so a kept key always means a committed write,
 * and a committed keyed write always has its answer. */
#ifndef RG_DB_IDEMPOTENCY_H
#define RG_DB_IDEMPOTENCY_H

#include <stddef.h>

#include "db/db.h"

#define DB_IDEM_TTL_HOURS 24

/* Which key: the token's (tenant_id, token_id) and the header's value. All borrowed. */
struct db_idem_key {
	const char *tenant_id;
	const char *token_id;
	const char *key;
	const char *fingerprint; /* hex SHA-256 of method, path and body */
};

/* A kept answer. From db_idem_open: every string new (db_idem_answer_free); for db_idem_keep:
 * borrowed. content_type, etag and location may be NULL; headers_json is a JSON array of
 * [name, value] pairs. */
struct db_idem_answer {
	int status;
	char *content_type;
	char *etag;
	char *location;
	char *headers_json;
	char *body;
	size_t body_len;
};

enum db_idem_state {
	DB_IDEM_NEW,       /* not kept: the transaction is open, run the write in it */
	DB_IDEM_REPLAY,    /* kept for this very request: *out holds its answer */
	DB_IDEM_CONFLICT,  /* kept for another request (method, path or body differ) */
	DB_IDEM_IN_FLIGHT, /* a request with this key is running now (here or elsewhere) */
};

/* Begins the key's transaction on c and looks the key up. Only DB_IDEM_NEW leaves the
 * transaction open (end it with db_idem_keep or db_tx_rollback); on any other state, and on
 * failure, nothing is left open. */
enum rg_status db_idem_open(struct db_conn *c, const struct db_idem_key *k,
			    enum db_idem_state *state, struct db_idem_answer *out,
			    struct db_error *err) RG_MUSTCHECK;
/* Stores the answer (status 2xx) with the write and commits both. On failure the write is
 * rolled back with it: nothing was done. */
enum rg_status db_idem_keep(struct db_conn *c, const struct db_idem_key *k,
			    const struct db_idem_answer *a, struct db_error *err) RG_MUSTCHECK;
void db_idem_answer_free(struct db_idem_answer *a);

#endif
