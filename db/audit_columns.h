/* Private to db/: an audit record's columns, named as struct core_audit_record's members
 * (core/audit.h), and the row spec that reads them (db/audit.c's list and verify reads,
 * db/events.c's event reads). */
#ifndef RG_DB_AUDIT_COLUMNS_H
#define RG_DB_AUDIT_COLUMNS_H

#include "db/row.h"

#define DB_AUDIT_COLUMNS                                                                 \
	"seq, epoch_ms(at) AS at_ms, tenant_id, actor_token_id, action, resource_type,"  \
	" resource_id, revision_before, revision_after, request_id, details::text AS details," \
	" prev_hash, hash"

/* struct core_audit_record from DB_AUDIT_COLUMNS. */
extern const struct db_row_spec db_audit_record_row;

#endif
