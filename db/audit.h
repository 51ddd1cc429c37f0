/* The audit log: list and chain verification (records are written by each mutation's own
 * statement, see db_exec_audited). */
#ifndef RG_DB_AUDIT_H
#define RG_DB_AUDIT_H

#include <stdbool.h>
#include <jansson.h>
#include "db/db.h"

/* Records with seq > after_seq, oldest first, at most limit+1 rows; resource_type and
 * resource_id may be NULL (no filter). *res is new; columns: seq, at_ms, actor_token_id,
 * action, resource_type, resource_id, revision_before, revision_after, request_id,
 * details (JSON text), prev_hash, hash. */
enum rg_status db_audit_list(struct db_conn *c, const char *tenant_id, const char *resource_type,
			     const char *resource_id, int64_t after_seq, int limit, PGresult **res,
			     struct db_error *err) RG_MUSTCHECK;

/* One chunk of a verify page: the records with seq > after_seq, oldest first, at most
 * limit+1 rows; resource_type and resource_id may be NULL. *res is new; columns: seq, at (as
 * audit_record_json formats it), actor_token_id, action, resource_type, resource_id,
 * revision_before, revision_after, request_id, details (jsonb text), prev_hash, hash,
 * expected_prev (NULL for a chain's first record; '' when its predecessor is missing). */
enum rg_status db_audit_verify_chunk(struct db_conn *c, const char *tenant_id,
				     const char *resource_type, const char *resource_id,
				     int64_t after_seq, int limit, PGresult **res,
				     struct db_error *err) RG_MUSTCHECK;

/* Row i of db_audit_list's columns (or db/events.h's) as GET /v1/audit lists it; new. */
json_t *db_audit_row_json(const PGresult *res, int i);

#endif
