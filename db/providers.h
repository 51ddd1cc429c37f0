/* Registered providers, stored decision-context receipts and the semantic-preference hook
 * config (openapi/openapi.yaml "Providers", "Decision context", "Semantic preferences"). Every
 * mutation is one audited statement (db_exec_audited). */
#ifndef RG_DB_PROVIDERS_H
#define RG_DB_PROVIDERS_H

#include <stdbool.h>
#include "db/db.h"

/* A provider as stored (get, list, and the mutations' answers). */
struct db_provider {
	const char *extension_id, *protocol, *endpoint_url;
	const char *doctor_url;       /* NULL = default */
	const char *permissions_json; /* a JSON array */
	int64_t timeout_seconds, revision;
	int64_t verified_revision;    /* doctor_verified_revision; see unverified */
	bool unverified;              /* doctor_verified_revision is NULL */
	bool enabled;
	int64_t created_ms, updated_ms, seq;
};

struct db_provider_new {
	const char *extension_id, *protocol, *endpoint_url;
	const char *doctor_url;       /* NULL = default */
	int timeout_seconds;
	const char *permissions_json; /* a JSON array */
	bool enabled;
};
/* Registers (revision 1) + audit provider.registered. RG_CONFLICT when the id exists.
 * *row: the db_provider row (new, db_rows_free). */
enum rg_status db_provider_create(struct db_conn *c, const struct db_actor *a,
				  const struct db_provider_new *p, struct db_rows *row,
				  struct db_error *err) RG_MUSTCHECK;
/* 0 or 1 db_provider row. */
enum rg_status db_provider_get(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;
/* db_provider rows with seq > after, in seq order: at most limit + 1 (the extra row tells
 * that a next page exists). */
enum rg_status db_provider_list(struct db_conn *c, const char *tenant, int64_t after,
				int limit, struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

/* A PATCH: NULL / negative members keep the stored value. */
struct db_provider_patch {
	const char *extension_id;
	int64_t expected_revision;
	int enabled;              /* -1 keep, 0, 1 */
	const char *endpoint_url; /* NULL keep */
	bool set_doctor_url;      /* doctor_url replaces the stored one (NULL = default) */
	const char *doctor_url;
	int timeout_seconds;      /* 0 keep */
};
/* Revision + 1 under the revision guard + audit provider.updated. A changed endpoint or
 * doctor URL clears the doctor binding; otherwise a passing one moves to the new revision.
 * RG_STALE when the revision moved or the provider is gone. *row: the db_provider row. */
enum rg_status db_provider_patch(struct db_conn *c, const struct db_actor *a,
				 const struct db_provider_patch *p, struct db_rows *row,
				 struct db_error *err) RG_MUSTCHECK;
/* Deletes (guarded by expected_revision unless it is 0) + audit provider.deleted.
 * RG_STALE when there was nothing to delete at that revision. */
enum rg_status db_provider_delete(struct db_conn *c, const struct db_actor *a, const char *id,
				  int64_t expected_revision, struct db_error *err) RG_MUSTCHECK;
/* Records a doctor result for `revision` (doctor_verified_revision = revision when ready,
 * NULL otherwise) + audit provider.doctor_checked. RG_STALE when the provider moved on. */
enum rg_status db_provider_doctor_record(struct db_conn *c, const struct db_actor *a,
					 const char *id, int64_t revision, bool ready,
					 const char *reason_code, struct db_error *err) RG_MUSTCHECK;

/* A dispatch candidate. */
struct db_provider_cand {
	const char *extension_id; /* NULL: no candidate (db_sp_recall_read's empty row) */
	const char *protocol, *endpoint_url;
	bool enabled, ready;      /* ready: the doctor passed at the current revision */
	int64_t timeout_seconds, revision;
};
/* The tenant's providers of `protocol`, and the one named explicit_id (may be NULL) of any
 * protocol, in registration order: db_provider_cand rows. */
enum rg_status db_provider_candidates(struct db_conn *c, const char *tenant,
				      const char *protocol, const char *explicit_id,
				      struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

/* Stores a receipt (its JSON) under receipt_id. */
enum rg_status db_dc_receipt_put(struct db_conn *c, const char *tenant, const char *receipt_id,
				 const char *receipt_json, struct db_error *err) RG_MUSTCHECK;
/* A stored receipt, as the handler rendered it. */
struct db_dc_receipt {
	const char *receipt_json;
};
/* 0 or 1 db_dc_receipt row. */
enum rg_status db_dc_receipt_get(struct db_conn *c, const char *tenant, const char *receipt_id,
				 struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

/* The tenant's semantic-preference hook config. */
struct db_sp_config {
	int64_t revision;
	bool never;              /* never configured (db_sp_recall_read only) */
	const char *config_json; /* NULL when never configured */
};
/* 0 or 1 db_sp_config row. */
enum rg_status db_sp_config_get(struct db_conn *c, const char *tenant, struct db_rows *rows,
				struct db_error *err) RG_MUSTCHECK;
/* Compare-and-swap (expected 0 = never configured) + audit semantic_preference_config.updated.
 * RG_STALE when the revision moved. */
enum rg_status db_sp_config_put(struct db_conn *c, const struct db_actor *a, int64_t expected,
				const char *config_json, int64_t *revision,
				struct db_error *err) RG_MUSTCHECK;
/* The config and the dispatch candidates of a recall in one round trip: *config one
 * db_sp_config row (never = true when the tenant has none), *cands the db_provider_cand
 * rows (one with extension_id NULL when the tenant has no candidate). Both new. */
enum rg_status db_sp_recall_read(struct db_conn *c, const char *tenant, struct db_rows *config,
				 struct db_rows *cands, struct db_error *err) RG_MUSTCHECK;

#endif
