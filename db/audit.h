/* The audit log: list and chain verification (records are written by each mutation's own
 * statement, see db_exec_audited). Records are struct core_audit_record rows (core/audit.h),
 * rendered by core_audit_record_json. */
#ifndef RG_DB_AUDIT_H
#define RG_DB_AUDIT_H

#include <stdbool.h>

#include "core/audit.h"
#include "db/db.h"

/* Records with seq > after_seq, oldest first (newest: seq < after_seq, or from the newest
 * when it is 0, newest first), at most limit+1 rows; resource_type and resource_id may be
 * NULL (no filter). *rows is new: struct core_audit_record rows. */
enum rg_status db_audit_list(struct db_conn *c, const char *tenant_id, const char *resource_type,
			     const char *resource_id, bool newest, int64_t after_seq, int limit,
			     struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

/* A record as the verify walk checks it. */
struct db_audit_check {
	struct core_audit_record record;
	const char *hash_at;       /* `at` as the chain's canonical form prints it (core_audit_hash) */
	const char *expected_prev; /* NULL for a chain's first record; "" when its predecessor is
				    * missing; else the hash of the record before it in its chain */
};

/* One chunk of a verify page: the records with seq > after_seq, oldest first, at most
 * limit+1 rows; resource_type and resource_id may be NULL. *rows is new: struct
 * db_audit_check rows. */
enum rg_status db_audit_verify_chunk(struct db_conn *c, const char *tenant_id,
				     const char *resource_type, const char *resource_id,
				     int64_t after_seq, int limit, struct db_rows *rows,
				     struct db_error *err) RG_MUSTCHECK;

#endif
