/* Workspace snapshots and envelopes. */
#ifndef RG_DB_ENVELOPES_H
#define RG_DB_ENVELOPES_H

#include "db/db.h"

/* Compare-and-swap write of a snapshot (expected 0 = never written) + audit.
 * RG_STALE when the revision moved. files_json: {path: hash}. */
enum rg_status db_workspace_put(struct db_conn *c, const struct db_actor *a, const char *id,
				int64_t expected, const char *root_hash, const char *git_head,
				const char *files_json, int file_count, int64_t *revision,
				struct db_error *err) RG_MUSTCHECK;
/* A stored workspace snapshot. */
struct db_workspace {
	int64_t revision, file_count;
	const char *root_hash, *git_head;
	const char *files_json; /* {path: hash} */
};
/* 0 or 1 db_workspace row. */
enum rg_status db_workspace_get(struct db_conn *c, const char *tenant, const char *id,
				struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

struct db_envelope_verdict {
	const char *verdict;
	const char *failure_codes_json;
	const char *checks_json;
	const char *workspace_id;   /* may be NULL */
	int64_t workspace_revision; /* 0 = none */
};

/* Stores a new envelope with its verdict (revision 1) + audit envelope.submitted. */
enum rg_status db_envelope_create(struct db_conn *c, const struct db_actor *a, const char *id,
				  const char *body_json, const struct db_envelope_verdict *v,
				  int64_t *created_ms, struct db_error *err) RG_MUSTCHECK;
/* Replaces the latest verdict (revision + 1) + audit envelope.verified. RG_NOT_FOUND when
 * there is no such envelope. */
enum rg_status db_envelope_reverify(struct db_conn *c, const struct db_actor *a, const char *id,
				    const struct db_envelope_verdict *v, int64_t *revision,
				    int64_t *updated_ms, struct db_error *err) RG_MUSTCHECK;
/* A stored envelope with its latest verdict. */
struct db_envelope {
	const char *envelope_id;
	const char *workspace_id;   /* NULL = none */
	const char *verdict;
	const char *failure_codes_json, *checks_json, *body_json;
	int64_t revision;
	int64_t workspace_revision; /* 0 = none */
	int64_t created_ms, updated_ms;
};
/* 0 or 1 db_envelope row. */
enum rg_status db_envelope_get(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *rows, struct db_error *err) RG_MUSTCHECK;

#endif
