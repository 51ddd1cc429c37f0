/* Preference journals: one read that returns everything a decision needs, one
 * compare-and-swap write that appends the operation, updates the entry and the journal and
 * writes the audit record. */
#ifndef RG_DB_PREFERENCES_H
#define RG_DB_PREFERENCES_H

#include "db/db.h"

struct db_pref_scope {
	const char *tenant_id;
	const char *goal_id;
	const char *agent_id;
};

/* The whole journal in one round trip, rows sorted by key (bytewise). Columns:
 * 0 revision (null: never written), 1 key (null: no entries), 2 state, 3 statement,
 * 4 source_ref, 5 source_quote, 6 expires_ms, 7 entry_revision, 8 operation_id, 9 updated_ms,
 * 10 the stored receipt of operation_id as JSON text {operation_id, action, key, state,
 * intent_hash, supersedes_operation_id, revision_before, revision_after, at_ms} or null.
 * *res is new. */
enum rg_status db_pref_load(struct db_conn *c, const struct db_pref_scope *scope,
			    const char *operation_id, PGresult **res,
			    struct db_error *err) RG_MUSTCHECK;

struct db_pref_write {
	const char *operation_id;
	const char *action;       /* "remember" | "retire" */
	const char *key;
	const char *statement;    /* NULL for retire */
	const char *source_ref;
	const char *source_quote;
	int64_t expires_ms;       /* RG_TIME_NONE = none */
	const char *intent_hash;
	const char *predecessor_operation_id; /* may be NULL */
	int64_t expected_revision;            /* 0 = never written */
};

/* RG_OK with the new revision and time; RG_STALE when the journal moved; RG_CONFLICT when
 * the operation id was taken meanwhile. */
enum rg_status db_pref_commit(struct db_conn *c, const struct db_actor *actor,
			      const struct db_pref_scope *scope, const struct db_pref_write *w,
			      int64_t *revision_after, int64_t *at_ms,
			      struct db_error *err) RG_MUSTCHECK;

/* Operations with revision_after > after, oldest first, at most limit+1 rows. Columns:
 * operation_id, action, key, statement, source_ref, source_quote, predecessor_operation_id,
 * revision_after, at_ms. *res is new. */
enum rg_status db_pref_history(struct db_conn *c, const struct db_pref_scope *scope,
			       int64_t after, int limit, PGresult **res,
			       struct db_error *err) RG_MUSTCHECK;

#endif
