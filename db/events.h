/* The event hub's own connection (one per instance, outside the pool): LISTEN for commits
 * and token deletions, the order horizon of db/migrations/0011_events.sql, and the reads
 * that feed the streams. Used by one thread (server/events.c). */
#ifndef RG_DB_EVENTS_H
#define RG_DB_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct db_events;

/* Connects, listens on both channels, turns synchronous_commit off for this session (its
 * transactions write nothing but a notification). false with err set; *out is new. */
bool db_events_connect(const char *url, struct db_events **out, struct db_error *err);
void db_events_close(struct db_events *ev);
int db_events_socket(const struct db_events *ev);

/* A token deletion heard on the channel (all borrowed for the call). */
typedef void (*db_token_deleted_fn)(const char *sha256_hex, const char *tenant_id,
				    const char *token_id, void *arg);
/* Reads what arrived: *commits counts commit wake-ups; on_token is called per deletion.
 * false when the connection is lost. */
bool db_events_consume(struct db_events *ev, unsigned *commits, db_token_deleted_fn on_token,
		       void *arg);

struct db_horizon {
	int64_t h;  /* the newest seq drawn */
	uint64_t x; /* a transaction id taken after h was read; 0 = none taken */
	uint64_t m; /* every sample whose x is below m is final */
};
/* events_horizon() (db/migrations/0014_events_horizon_writers.sql): wakes every instance's
 * hub when h > *notify_after, takes x when h > *sample_after; a NULL bound turns its part
 * off. m is pg_snapshot_xmin, unless it is at or below waiting (0 = none: the hub's oldest
 * sample, once it has waited), when it is the oldest transaction still writing audit_log
 * (pg_locks), so that other transactions of the cluster hold no stream back. */
bool db_events_horizon(struct db_events *ev, const int64_t *notify_after,
		       const int64_t *sample_after, uint64_t waiting, struct db_horizon *out,
		       struct db_error *err);

/* The records of these tenants with after < seq ≤ upto, oldest first, at most limit. *rows
 * is new: struct core_audit_record rows (core/audit.h), as db_audit_list's. tenant_ids are
 * ids (core_id_valid). */
bool db_events_fetch_tenants(struct db_events *ev, const char *const *tenant_ids, size_t n,
			     int64_t after, int64_t upto, int limit, struct db_rows *rows,
			     struct db_error *err);
/* One tenant's records (every tenant's with NULL) with the filters (NULL = none),
 * after < seq ≤ upto, at most limit; *rows as db_events_fetch_tenants's. */
bool db_events_fetch_one(struct db_events *ev, const char *tenant_id, const char *resource_type,
			 const char *resource_id, int64_t after, int64_t upto, int limit,
			 struct db_rows *rows, struct db_error *err);

/* Which of these streams' tokens are deleted (or unknown): gone[i] for the pair
 * (tenant_ids[i], token_ids[i]). Ids are ids (core_id_valid). */
bool db_events_tokens_gone(struct db_events *ev, const char *const *tenant_ids,
			   const char *const *token_ids, size_t n, bool *gone,
			   struct db_error *err);

/* The newest seq drawn so far (a stream opened without a position starts after it). */
enum rg_status db_events_newest_seq(struct db_conn *c, int64_t *out,
				    struct db_error *err) RG_MUSTCHECK;

#endif
