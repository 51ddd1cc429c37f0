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
	const char *operation_id, *operation_hash; /* NULL for a create that is not retryable */
};

/* What a mutation function answered. */
struct db_mem_outcome {
	char outcome[24];   /* "ok" or the function's refusal */
	int64_t revision;   /* new revision */
	int64_t at_ms;      /* created / effective / revoked time */
	int64_t current_revision;
	char previous[16];  /* classification before */
	/* "replayed" / "operation_conflict": the record the create's operation_id made */
	char record_id[64];
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
			     const char *content_hash, const char *operation_id,
			     const char *operation_hash, struct db_mem_outcome *out,
			     struct db_error *err) RG_MUSTCHECK;

enum rg_status db_assent_grant(struct db_conn *c, const struct db_actor *a, const char *id,
			       const char *owner, const char *identity, int64_t expires_ms,
			       struct db_mem_outcome *out, struct db_error *err) RG_MUSTCHECK;
/* owner: NULL for an admin token (any owner), else the token's name. */
enum rg_status db_assent_revoke(struct db_conn *c, const struct db_actor *a, const char *id,
				int64_t expected, const char *owner, struct db_mem_outcome *out,
				struct db_error *err) RG_MUSTCHECK;
/* An assent as stored. */
struct db_assent {
	const char *assent_id, *owner, *source_identity;
	int64_t expires_ms, revision;
	int64_t revoked_ms;
	bool not_revoked; /* revoked_ms is SQL NULL */
	int64_t created_ms;
};
/* 0 or 1 struct db_assent rows. */
enum rg_status db_assent_get(struct db_conn *c, const char *tenant, const char *id,
			     struct db_rows *out, struct db_error *err) RG_MUSTCHECK;

/* A record's metadata (source or derivative), as every record read answers it. */
struct db_mem_record {
	const char *record_id, *record_kind; /* "source" | "derivative" */
	int64_t revision;
	const char *source_kind, *derivative_kind, *classification; /* NULL when not the kind's */
	const char *reasons_csv; /* the stored ineligible reasons, "a,b" ("" for none) */
	bool assent_expired;     /* an assent it depends on has expired by now */
	const char *content_hash, *source_identity;
	int64_t created_ms, updated_ms;
	const char *labels_json; /* the stored labels (a JSON object), NULL = none */
	int64_t seq;
	/* A derivative's upstreams in order, "<upstream id> <revision>" joined by ","
	 * (ids hold neither); NULL for a source, and for a derivative in lists other than the
	 * derivatives'. */
	const char *provenance;
};

struct db_mem_filter {
	const char *record_kind;    /* "source" | "derivative" */
	const char *classification; /* NULL = any */
	const char *state;          /* "eligible" | "ineligible" | NULL */
	const char *source_kind;
	const char *thread_id;
	const char *labels_json; /* a JSON object the record's labels must contain, NULL = any */
	bool newest;             /* newest first (cursor: seq below it), else oldest first */
};

/* One record (source or derivative): 0 or 1 struct db_mem_record rows. */
enum rg_status db_mem_get(struct db_conn *c, const char *tenant, const char *id,
			  struct db_rows *out, struct db_error *err) RG_MUSTCHECK;
/* One record as it was at as_of_ms (0 rows: no such record, or not yet created then). */
enum rg_status db_mem_get_as_of(struct db_conn *c, const char *tenant, const char *id,
				int64_t as_of_ms, struct db_rows *out,
				struct db_error *err) RG_MUSTCHECK;
/* A page of struct db_mem_record: seq > after, at most limit + 1 rows. */
enum rg_status db_mem_list(struct db_conn *c, const char *tenant, const struct db_mem_filter *f,
			   int64_t after, int limit, struct db_rows *out,
			   struct db_error *err) RG_MUSTCHECK;

/* One descendant of a source, as its revocation's readback reports it. */
struct db_mem_descendant {
	bool revoked;              /* the source is revoked (the same in every row) */
	const char *derivative_id; /* NULL in the one row of a source without descendants */
	const char *kind;
	bool eligible;             /* retrievable now */
};
/* struct db_mem_descendant rows, oldest first; 0 rows = no such source. */
enum rg_status db_mem_readback(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *out, struct db_error *err) RG_MUSTCHECK;

/* A record a query matched. */
struct db_mem_match {
	const char *record_id, *record_kind;
	int64_t revision;
	double score;
	const char *content_hash;
	const char *content; /* db_mem_context only; NULL for a pointer */
};
/* Eligible matches (struct db_mem_match without content), best first.
 * kinds: "{source,derivative}"-style array literal. thread may be NULL. */
enum rg_status db_mem_search(struct db_conn *c, const char *tenant, const char *query,
			     const char *thread, const char *kinds, int limit,
			     struct db_rows *out, struct db_error *err) RG_MUSTCHECK;
/* Context candidates: the search's struct db_mem_match with content, both kinds. */
enum rg_status db_mem_context(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, int limit, struct db_rows *out,
			      struct db_error *err) RG_MUSTCHECK;

/* A record a query matched, eligible or not, with what explain needs to say why. */
struct db_mem_explained {
	const char *record_id, *record_kind;
	int64_t revision;
	const char *classification; /* NULL for a derivative */
	const char *reasons_csv;    /* stored ineligible reasons, "" for none */
	bool assent_expired;        /* an assent it depends on has expired by now */
	bool thread_disabled;       /* the receiving thread's memory is disabled (every row) */
};
/* Every match (struct db_mem_explained), eligible first then by score; at most limit rows. */
enum rg_status db_mem_explain(struct db_conn *c, const char *tenant, const char *query,
			      const char *thread, const char *kinds, int limit,
			      struct db_rows *out, struct db_error *err) RG_MUSTCHECK;
/* The same as of a past instant (epoch ms), from the eligibility history: records that did
 * not exist then are left out; state, revision and the thread's mode are those in force then. */
enum rg_status db_mem_explain_as_of(struct db_conn *c, const char *tenant, const char *query,
				    const char *thread, const char *kinds, int limit,
				    int64_t as_of_ms, struct db_rows *out,
				    struct db_error *err) RG_MUSTCHECK;

/* A load receipt: the JSON text stored by db_mem_deliver (db/disclosures.h), unchanged. */
struct db_receipt {
	const char *body;
};
/* 0 or 1 struct db_receipt rows. */
enum rg_status db_receipt_get(struct db_conn *c, const char *tenant, const char *id,
			      struct db_rows *out, struct db_error *err) RG_MUSTCHECK;

#endif
