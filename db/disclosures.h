/* The disclosure ledger and the load receipts' list (openapi/openapi.yaml, "Disclosures";
 * docs/disclosures.md): who received which record's content, and when. A context load is
 * recorded by db_mem_deliver (its receipt and its disclosures in one row, under the tenant's
 * memory lock shared with other loads and held exclusively by every memory write); reads are
 * typed rows. */
#ifndef RG_DB_DISCLOSURES_H
#define RG_DB_DISCLOSURES_H

#include <stdbool.h>
#include "db/db.h"

/* One record a context load delivers (borrowed texts). */
struct db_delivery_item {
	const char *record_id;
	const char *record_kind; /* "source" | "derivative" */
	int64_t revision;
	const char *content_hash;
};

/* A context load to record (borrowed texts). */
struct db_delivery {
	struct db_actor actor; /* tenant, token and request of the load */
	const char *receipt_id;
	const char *receipt_json;
	const char *thread_id; /* NULL: none */
	const char *via;       /* "rest" or "mcp" */
	const struct db_delivery_item *items;
	size_t n;
};

/* Records n loads (of any tenants) in one statement: each one's receipt and its items'
 * disclosures (one row), one commit for them all unless c holds a transaction of its own
 * (server/ledger.c gathers the loads of concurrent requests). stale[i] == 0: load i is
 * recorded (committed once this returns RG_OK). stale[i] > 0: that many of its items are no
 * longer retrievable at their revision (revoked, made cold, their assent revoked meanwhile):
 * load i was not recorded, match again. On failure nothing was recorded. */
enum rg_status db_mem_deliver(struct db_conn *c, const struct db_delivery *d, size_t n,
			      size_t *stale, struct db_error *err) RG_MUSTCHECK;

/* A content read (GET /v1/memory/sources/{source_id}/content, the source_content tool):
 * who reads which record; borrowed texts. */
struct db_content_read {
	const char *tenant_id, *record_id, *token_id, *via, *request_id;
};

/* A record's bytes as a content read gives them: content, or a pointer (pointer_uri with
 * content_hash). */
struct db_mem_content {
	const char *content; /* NULL for a pointer */
	const char *pointer_uri, *content_hash;
	const char *record_kind; /* "source" | "derivative" */
	int64_t revision;
};

/* Reads n records (of any tenants) and records a disclosure (surface "content", no thread,
 * no receipt) of each that has content, a pointer delivering none, in one statement: one
 * commit for them all, unless c holds a transaction of its own (server/ledger.c gathers the
 * reads of concurrent requests). each[i] (new: db_rows_free) is read i's one struct
 * db_mem_content row, or empty when there is no such record. On failure each[] is empty and
 * nothing was recorded. */
enum rg_status db_content_reads(struct db_conn *c, const struct db_content_read *reads,
				size_t n, struct db_rows *each, struct db_error *err) RG_MUSTCHECK;

/* One disclosure row. */
struct db_disclosure {
	int64_t seq;
	const char *disclosure_id;
	int64_t at_ms;
	const char *record_id, *record_kind;
	int64_t revision;
	const char *delivered_hash, *token_id;
	const char *thread_id; /* NULL: none */
	const char *surface, *via;
	const char *receipt_id; /* NULL: none */
	const char *request_id;
};

/* The filters of a disclosure list; NULL / RG_TIME_NONE = any. */
struct db_disclosure_filter {
	const char *record_id, *thread_id, *token_id;
	const char *source_id;    /* a source: its own rows (and its derivatives' with the flag) */
	bool include_derivatives;
	int64_t since_ms, until_ms; /* since inclusive, until exclusive */
};

/* Newest first, before the position `before` (0: from the newest; a row's `seq` is its
 * position); limit + 1 rows are read to tell whether there is a next page. */
enum rg_status db_disclosures_list(struct db_conn *c, const char *tenant,
				   const struct db_disclosure_filter *f, int64_t before,
				   int limit, struct db_rows *rows,
				   struct db_error *err) RG_MUSTCHECK;

/* A source's disclosures summed over it and its derivatives (readback). */
struct db_disclosure_summary {
	int64_t count, threads, tokens;
	int64_t first_at_ms, last_at_ms;
	bool first_at_null, last_at_null;
	int64_t after_revocation; /* context deliveries at or after the source's revoked_at */
};
enum rg_status db_disclosure_summary(struct db_conn *c, const char *tenant,
				     const char *source_id, struct db_disclosure_summary *out,
				     struct db_error *err) RG_MUSTCHECK;

/* One stored load receipt of a list. */
struct db_receipt_row {
	int64_t seq;
	const char *body; /* the JSON text stored, unchanged */
};
enum rg_status db_receipts_list(struct db_conn *c, const char *tenant, const char *thread_id,
				int64_t since_ms, int64_t until_ms, int64_t before, int limit,
				struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

#endif
