/* Audit records (openapi/openapi.yaml, /v1/audit): their one JSON rendering, the hash of a
 * record recomputed outside the database, and the opaque cursor of GET /v1/audit/verify.
 * No I/O. */
#ifndef RG_CORE_AUDIT_H
#define RG_CORE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/hash.h"

/* The most records one verify page checks, its default, and how many rows one statement
 * reads (a page is read in chunks so that memory stays bounded and no statement comes near
 * the statement timeout). */
#define RG_AUDIT_VERIFY_MAX 100000
#define RG_AUDIT_VERIFY_DEFAULT 10000
#define RG_AUDIT_VERIFY_CHUNK 10000

/* One audit record, typed: db/audit.c reads it by column name (db/audit_columns.h), for the
 * list, the verify walk and the event stream alike. Texts are borrowed; NULL is SQL NULL. */
struct core_audit_record {
	int64_t seq;
	int64_t at_ms; /* epoch_ms(at): the "at" of the API's record */
	const char *tenant_id, *actor_token_id, *action, *resource_type, *resource_id;
	int64_t revision_before, revision_after;
	bool no_revision_before, no_revision_after; /* SQL NULL */
	const char *request_id;
	const char *details; /* jsonb's text output */
	const char *prev_hash, *hash;
};

/* The record as GET /v1/audit lists it and GET /v1/events sends it (openapi/openapi.yaml,
 * AuditRecord): the one renderer of an audit record. New; NULL when memory ran out. */
json_t *core_audit_record_json(const struct core_audit_record *r);

/* Writes "sha256:<hex>" of (prev_hash or "") followed by the record's canonical JSON — the
 * same bytes the database's audit_hash() hashes (db/functions/audit_hash.sql:
 * canonical_json(audit_record_json(r))). That form is the chain's, not the API's: `at` is
 * the record's time as audit_record_json prints it (to_char, "YYYY-MM-DDTHH:MM:SS.mmmZ",
 * sub-milliseconds cut off, where at_ms rounds). false when details is not JSON text or
 * memory ran out. */
bool core_audit_hash(const struct core_audit_record *r, const char *at,
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
