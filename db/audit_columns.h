/* Private to db/: the columns of an audit record in the order db_audit_row_json reads them
 * (db/audit.c's list, db/events.c's event reads). */
#ifndef RG_DB_AUDIT_COLUMNS_H
#define RG_DB_AUDIT_COLUMNS_H

#define DB_AUDIT_COLUMNS                                                                 \
	"seq, epoch_ms(at), actor_token_id, action, resource_type, resource_id,"        \
	" revision_before, revision_after, request_id, details::text, prev_hash, hash"

#endif
