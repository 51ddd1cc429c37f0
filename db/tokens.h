/* Tenants and bearer tokens. Only the SHA-256 of a token is stored. */
#ifndef RG_DB_TOKENS_H
#define RG_DB_TOKENS_H

#include "db/db.h"

struct db_token {
	char tenant_id[129];
	char token_id[41];
	char name[129];
	char scopes_csv[512]; /* "a,b,c" */
	int64_t created_ms;
	int64_t seq;
};

/* Creates the tenant when missing and the token (audited as token.created).
 * sha256_hex: hex digest of the secret. scopes_csv: "a,b". created_ms is set on success. */
enum rg_status db_token_create(struct db_conn *c, const struct db_actor *actor,
			       const char *token_id, const char *name, const char *scopes_csv,
			       const char *sha256_hex, int64_t *created_ms,
			       struct db_error *err) RG_MUSTCHECK;

/* Looks up a live token by the hex SHA-256 of its secret. RG_NOT_FOUND when unknown. */
enum rg_status db_token_by_hash(struct db_conn *c, const char *sha256_hex, struct db_token *out,
				struct db_error *err) RG_MUSTCHECK;

/* A token as listed (no tenant: the list is the caller's). */
struct db_token_item {
	const char *token_id, *name, *scopes_csv; /* scopes_csv: "a,b" */
	int64_t created_ms, seq;
};
/* Live tokens of the tenant with seq > after_seq, oldest first, at most limit+1 rows
 * (the extra row tells the caller there is a next page): db_token_item rows. */
enum rg_status db_token_list(struct db_conn *c, const char *tenant_id, int64_t after_seq,
			     int limit, struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

/* Marks the token deleted (audited as token.deleted). sha256_hex_out[65] receives the digest
 * so the caller can drop it from its cache. RG_NOT_FOUND when no live token matched. */
enum rg_status db_token_delete(struct db_conn *c, const struct db_actor *actor,
			       const char *token_id, char *sha256_hex_out,
			       struct db_error *err) RG_MUSTCHECK;

#endif
