/* Memory records, assents and load receipts. Mutations that recompute eligibility are
 * PL/pgSQL functions (db/migrations/0004_memory.sql): one round trip, one transaction, and
 * the recomputation runs as its own statement after the row locks were taken. */
#ifndef RG_DB_MEMORY_H
#define RG_DB_MEMORY_H

#include <stdbool.h>
#include "db/db.h"

struct db_mem_source {
	const char *record_id, *source_kind, *thread_id;
	const char *labels_json;         /* NULL = none */
	const char *content;             /* XOR pointer_uri */
	const char *pointer_uri;
	const char *content_hash, *source_identity, *classification;
	const char *foreign_owner, *assent_id; /* NULL unless foreign */
};

/* What a mutation function answered. */
struct db_mem_outcome {
	char outcome[24];   /* "ok" or the function's refusal */
	int64_t revision;   /* new revision */
	int64_t at_ms;      /* created / effective / revoked time */
	int64_t current_revision;
	char previous[16];  /* classification before */
};

enum rg_status db_mem_admit(struct db_conn *c, const struct db_actor *a,
			    const struct db_mem_source *s, struct db_mem_outcome *out,
			    struct db_error *err) RG_MUSTCHECK;
enum rg_status db_mem_classify(struct db_conn *c, const struct db_actor *a, const char *id,
			       int64_t expected, const char *classification,
			       struct db_mem_outcome *out, struct db_error *err) RG_MUSTCHECK;
enum rg_status db_mem_revoke(struct db_conn *c, const struct db_actor *a, const char *id,
			     int64_t expected, const char *reason, struct db_mem_outcome *out,
			     struct db_error *err) RG_MUSTCHECK;
/* upstreams/revisions: n entries. */
enum rg_status db_mem_derive(struct db_conn *c, const struct db_actor *a, const char *id,
			     const char *kind, const char *const *upstreams,
			     const int64_t *revisions, size_t n, const char *content,
			     const char *content_hash, struct db_mem_outcome *out,
			     struct db_error *err) RG_MUSTCHECK;

enum rg_status db_assent_grant(struct db_conn *c, const struct db_actor *a, const char *id,
			       const char *owner, const char *identity, int64_t expires_ms,
			       struct db_mem_outcome *out, struct db_error *err) RG_MUSTCHECK;
/* owner: NULL for an admin token (any owner), else the token's name. */
enum rg_status db_assent_revoke(struct db_conn *c, const struct db_actor *a, const char *id,
				int64_t expected, const char *owner, struct db_mem_outcome *out,
				struct db_error *err) RG_MUSTCHECK;
/* Columns: assent_id, owner, source_identity, expires_ms, revision, revoked_ms, created_ms. */
enum rg_status db_assent_get(struct db_conn *c, const char *tenant, const char *id,
			     PGresult **res, struct db_error *err) RG_MUSTCHECK;

/* Metadata columns of every record query (DB_MEM_META_COLUMNS of them):
 * 0 record_id, 1 record_kind, 2 revision, 3 source_kind, 4 derivative_kind,
 * 5 classification, 6 stored reasons csv, 7 assent expired now (t/f), 8 content_hash,
 * 9 source_identity, 10 created_ms, 11 updated_ms, 12 labels (JSON text or null),
 * 13 seq, 14 provenance (JSON text [{source_id, revision}] or null). */
#define DB_MEM_META_COLUMNS 15

struct db_mem_filter {
	const char *record_kind;    /* "source" | "derivative" */
	const char *classification; /* NULL = any */
	const char *state;          /* "eligible" | "ineligible" | NULL */
	const char *source_kind;
	const char *thread_id;
};

/* One record (source or derivative): 0 or 1 row. */
enum rg_status db_mem_get(struct db_conn *c, const char *tenant, const char *id, PGresult **res,
			  struct db_error *err) RG_MUSTCHECK;
/* A page: seq > after, at most limit + 1 rows. */
enum rg_status db_mem_list(struct db_conn *c, const char *tenant, const struct db_mem_filter *f,
			   int64_t after, int limit, PGresult **res,
			   struct db_error *err) RG_MUSTCHECK;
/* Columns: content, pointer_uri, content_hash, record_kind. 0 or 1 row. */
enum rg_status db_mem_content(struct db_conn *c, const char *tenant, const char *id,
			      PGresult **res, struct db_error *err) RG_MUSTCHECK;
/* Columns: revoked (t/f), derivative_id, kind, eligible now (t/f); one row per descendant,
 * oldest first (one row with null derivative_id when there are none); 0 rows = no source. */
enum rg_status db_mem_readback(struct db_conn *c, const char *tenant, const char *id,
			       PGresult **res, struct db_error *err) RG_MUSTCHECK;

/* Eligible matches, best first: record_id, record_kind, revision, score, content_hash.
 * kinds: "{source,derivative}"-style array literal. thread may be NULL. */
enum rg_status db_mem_search(struct db_conn *c, const char *tenant, const char *query,
			     const char *thread, const char *kinds, int limit, PGresult **res,
			     struct db_error *err) RG_MUSTCHECK;
/* Context candidates: the search's columns plus content (column 5), both kinds. */
enum rg_status db_mem_context(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, int limit, PGresult **res,
			      struct db_error *err) RG_MUSTCHECK;
/* Every match, eligible first then by score: record_id, record_kind, revision,
 * classification, stored reasons csv, assent expired now, effective eligible,
 * thread disabled; at most limit rows. */
enum rg_status db_mem_explain(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, const char *kinds, int limit, PGresult **res,
			      struct db_error *err) RG_MUSTCHECK;

enum rg_status db_receipt_put(struct db_conn *c, const char *tenant, const char *id,
			      const char *body, struct db_error *err) RG_MUSTCHECK;
/* Column: body. 0 or 1 row. */
enum rg_status db_receipt_get(struct db_conn *c, const char *tenant, const char *id,
			      PGresult **res, struct db_error *err) RG_MUSTCHECK;

#endif
