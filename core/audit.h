/* Audit records (API.md §10): the hash of a record, recomputed outside the database, and
 * the opaque cursor of GET /v1/audit/verify. No I/O. */
#ifndef RG_CORE_AUDIT_H
#define RG_CORE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hash.h"

/* The most records one verify page checks, its default, and how many rows one statement
 * reads (a page is read in chunks so that memory stays bounded and no statement comes near
 * the statement timeout). */
#define RG_AUDIT_VERIFY_MAX 100000
#define RG_AUDIT_VERIFY_DEFAULT 10000
#define RG_AUDIT_VERIFY_CHUNK 10000

/* One record as PostgreSQL prints its columns (all borrowed; NULL = SQL NULL). `at` is the
 * text audit_record_json gives it ("YYYY-MM-DDTHH:MM:SS.mmmZ"), integers are decimal text,
 * details is jsonb's text output. */
struct core_audit_record {
	const char *seq, *at, *actor_token_id, *action, *resource_type, *resource_id;
	const char *revision_before, *revision_after, *request_id, *details, *prev_hash;
};

/* Writes "sha256:<hex>" of (prev_hash or "") followed by the record's canonical JSON — the
 * same bytes the database's audit_hash() hashes (db/migrations/0001_foundation.sql:
 * canonical_json(audit_record_json(r))). false when details is not JSON text or memory ran
 * out. */
bool core_audit_hash(const struct core_audit_record *r,
		     char out[RG_SHA256_TAGGED_SIZE]) RG_MUSTCHECK;

/* The canonical form of jsonb's text output: compact, object keys sorted bytewise at every
 * level, strings and numbers exactly as jsonb prints them. *out is new (free()); false on
 * malformed input or no memory. Exposed for the unit tests. */
bool core_canonical_jsonb(const char *text, char **out, size_t *out_len) RG_MUSTCHECK;

/* The verify cursor: the last checked seq, bound to the tenant and the filters it was
 * issued for (type and id may be NULL), as 40 hex digits. Not a secret: it only keeps a
 * cursor from being edited or carried to another tenant or another filter unnoticed. */
#define RG_AUDIT_CURSOR_SIZE 41
void core_audit_cursor_encode(const char *tenant, const char *type, const char *id,
			      int64_t seq, char out[RG_AUDIT_CURSOR_SIZE]);
/* false when s is not a cursor this tenant and these filters were given. */
bool core_audit_cursor_decode(const char *tenant, const char *type, const char *id,
			      const char *s, int64_t *seq) RG_MUSTCHECK;

#endif
