/* Preference journals: one read that returns everything a decision needs, one
 * compare-and-swap write that appends the operation, updates the entry and the journal and
 * writes the audit record. Reads answer with typed rows (db/row.h): texts are borrowed from
 * the rows' block and live until it is freed. */
#ifndef RG_DB_PREFERENCES_H
#define RG_DB_PREFERENCES_H

#include "db/db.h"

struct db_pref_scope {
	const char *tenant_id;
	const char *goal_id;
	const char *agent_id;
};

/* One entry of a journal as stored (the key's latest operation). */
struct db_pref_entry {
	const char *key;
	const char *state;        /* "active" | "retired" */
	const char *statement;    /* NULL when retired */
	const char *source_ref;   /* the retirement's for a retired key */
	const char *source_quote;
	int64_t expires_ms;
	bool expires_null;        /* no expiry */
	int64_t entry_revision;
	const char *operation_id;
	int64_t updated_ms;
};

/* An operation's stored receipt facts (openapi/openapi.yaml, PreferenceReceipt). */
struct db_pref_receipt {
	const char *operation_id;
	const char *action;                   /* "remember" | "retire" */
	const char *key;
	const char *intent_hash;
	const char *predecessor_operation_id; /* NULL: the key's first operation */
	int64_t revision_before;
	bool revision_before_null;            /* the journal had never been written */
	int64_t revision_after;
	int64_t at_ms;
};

/* A journal as loaded: its revision, its entries sorted by key (bytewise) and, when an
 * operation id was asked for, that operation's receipt. */
struct db_pref_journal {
	int64_t revision;                      /* 0: never written */
	size_t n;                              /* entries: db_pref_entry_at(j, 0 .. n-1) */
	const struct db_pref_receipt *receipt; /* NULL: no such operation (or none asked) */
	struct db_rows rows;                   /* owns every text; db_pref_journal_free */
};

/* Entry i (i < j->n), borrowed from j. */
const struct db_pref_entry *db_pref_entry_at(const struct db_pref_journal *j, size_t i);
/* Frees what db_pref_load filled; j is zeroed (freeing a zeroed journal is fine). */
void db_pref_journal_free(struct db_pref_journal *j);

/* The whole journal and the receipt of operation_id (may be NULL) in one round trip. On
 * RG_OK *out is new (db_pref_journal_free); on failure it is empty. */
enum rg_status db_pref_load(struct db_conn *c, const struct db_pref_scope *scope,
			    const char *operation_id, struct db_pref_journal *out,
			    struct db_error *err) RG_MUSTCHECK;
/* db_pref_load's statement ($1 tenant, $2 goal, $3 agent, $4 operation id or NULL), for a read
 * that runs it itself (it is pipeable), and the journal its rows hold. That journal borrows
 * the rows: do not db_pref_journal_free it. */
extern const struct db_stmt db_pref_load_stmt;
void db_pref_journal_of(const struct db_rows *rows, struct db_pref_journal *out);

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

/* One operation of a journal's history. */
struct db_pref_operation {
	const char *operation_id;
	const char *action; /* "remember" | "retire" */
	const char *key;
	const char *statement; /* NULL for a retirement */
	const char *source_ref;
	const char *source_quote;
	const char *predecessor_operation_id; /* NULL: the key's first operation */
	int64_t revision_after;
	int64_t at_ms;
};

/* Operations with revision_after > after, oldest first, at most limit+1 rows:
 * struct db_pref_operation rows, *rows new (db_rows_free). */
enum rg_status db_pref_history(struct db_conn *c, const struct db_pref_scope *scope,
			       int64_t after, int limit, struct db_rows *rows,
			       struct db_error *err) RG_MUSTCHECK;

#endif
