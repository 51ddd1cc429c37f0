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
/* Columns: revision, root_hash, git_head, files (JSON text), file_count. 0 or 1 row. */
enum rg_status db_workspace_get(struct db_conn *c, const char *tenant, const char *id,
				PGresult **res, struct db_error *err) RG_MUSTCHECK;

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
/* Columns: envelope_id, revision, workspace_id, workspace_revision, verdict,
 * failure_codes (JSON), checks (JSON), created_ms, updated_ms, body (JSON). 0 or 1 row. */
enum rg_status db_envelope_get(struct db_conn *c, const char *tenant, const char *id,
			       PGresult **res, struct db_error *err) RG_MUSTCHECK;

#endif
