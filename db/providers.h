/* Registered providers, stored decision-context receipts and the semantic-preference hook
 * config (API.md §6–8). Every mutation is one audited statement (db_exec_audited). */
#ifndef RG_DB_PROVIDERS_H
#define RG_DB_PROVIDERS_H

#include <stdbool.h>
#include "db/db.h"

/* Columns of every provider row (get, list, and the mutations' answers). */
enum {
	DB_PROV_EXTENSION_ID, DB_PROV_PROTOCOL, DB_PROV_ENDPOINT_URL, DB_PROV_DOCTOR_URL,
	DB_PROV_TIMEOUT, DB_PROV_PERMISSIONS /* JSON */, DB_PROV_ENABLED /* "t"/"f" */,
	DB_PROV_REVISION, DB_PROV_VERIFIED_REVISION /* NULL */, DB_PROV_CREATED_MS,
	DB_PROV_UPDATED_MS, DB_PROV_SEQ,
};

struct db_provider_new {
	const char *extension_id, *protocol, *endpoint_url;
	const char *doctor_url;       /* NULL = default */
	int timeout_seconds;
	const char *permissions_json; /* a JSON array */
	bool enabled;
};
/* Registers (revision 1) + audit provider.registered. RG_CONFLICT when the id exists.
 * *res: the provider row. */
enum rg_status db_provider_create(struct db_conn *c, const struct db_actor *a,
				  const struct db_provider_new *p, PGresult **res,
				  struct db_error *err) RG_MUSTCHECK;
/* 0 or 1 provider row. */
enum rg_status db_provider_get(struct db_conn *c, const char *tenant, const char *id,
			       PGresult **res, struct db_error *err) RG_MUSTCHECK;
/* Provider rows with seq > after, in seq order, at most limit. */
enum rg_status db_provider_list(struct db_conn *c, const char *tenant, int64_t after,
				int limit, PGresult **res, struct db_error *err) RG_MUSTCHECK;

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
 * RG_STALE when the revision moved or the provider is gone. *res: the provider row. */
enum rg_status db_provider_patch(struct db_conn *c, const struct db_actor *a,
				 const struct db_provider_patch *p, PGresult **res,
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

/* Columns of a dispatch candidate. */
enum {
	DB_CAND_EXTENSION_ID, DB_CAND_PROTOCOL, DB_CAND_ENABLED, DB_CAND_READY,
	DB_CAND_ENDPOINT_URL, DB_CAND_TIMEOUT, DB_CAND_REVISION,
};
/* The tenant's providers of `protocol`, and the one named explicit_id (may be NULL) of any
 * protocol, in registration order. */
enum rg_status db_provider_candidates(struct db_conn *c, const char *tenant,
				      const char *protocol, const char *explicit_id,
				      PGresult **res, struct db_error *err) RG_MUSTCHECK;

/* Stores a receipt (its JSON) under receipt_id. */
enum rg_status db_dc_receipt_put(struct db_conn *c, const char *tenant, const char *receipt_id,
				 const char *receipt_json, struct db_error *err) RG_MUSTCHECK;
/* 0 or 1 row: receipt (JSON text). */
enum rg_status db_dc_receipt_get(struct db_conn *c, const char *tenant, const char *receipt_id,
				 PGresult **res, struct db_error *err) RG_MUSTCHECK;

/* 0 or 1 row: revision, config (JSON text). */
enum rg_status db_sp_config_get(struct db_conn *c, const char *tenant, PGresult **res,
				struct db_error *err) RG_MUSTCHECK;
/* Compare-and-swap (expected 0 = never configured) + audit semantic_preference_config.updated.
 * RG_STALE when the revision moved. */
enum rg_status db_sp_config_put(struct db_conn *c, const struct db_actor *a, int64_t expected,
				const char *config_json, int64_t *revision,
				struct db_error *err) RG_MUSTCHECK;
/* The config and the dispatch candidates of a recall in one round trip: at least one row;
 * column 0 revision (NULL when never configured), 1 config (JSON), then the DB_CAND_*
 * columns shifted by 2 (all NULL when the tenant has no candidate). */
enum rg_status db_sp_recall_read(struct db_conn *c, const char *tenant, PGresult **res,
				 struct db_error *err) RG_MUSTCHECK;
#define DB_SP_CAND_OFFSET 2

#endif
