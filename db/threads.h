/* Thread memory mode (openapi/openapi.yaml, /v1/threads/{thread_id}/memory-mode). */
#ifndef RG_DB_THREADS_H
#define RG_DB_THREADS_H

#include "db/db.h"

struct db_thread_mode {
	char mode[16];          /* "enabled" | "disabled" */
	char previous_mode[16];
	int64_t revision;       /* 0 = never set */
	int64_t effective_ms;   /* valid when revision > 0 */
};

/* Reads a thread's mode; a thread never set reads enabled, revision 0. */
enum rg_status db_thread_mode_get(struct db_conn *c, const char *tenant_id,
				  const char *thread_id, struct db_thread_mode *out,
				  struct db_error *err) RG_MUSTCHECK;

/* db_thread_mode_get on a pipe (db/pipe.h): the statement goes out, and its answer, from
 * db_pipe_next, is read through the statement's row spec (db_rows_fill with
 * db_thread_mode_get_stmt.row) and then by db_thread_mode_from. Its statement is one
 * db/pipe.c prepares on every pipe. */
extern const struct db_stmt db_thread_mode_get_stmt;
struct db_pipe;
enum rg_status db_thread_mode_get_send(struct db_pipe *p, const char *tenant_id,
				       const char *thread_id, struct db_error *err) RG_MUSTCHECK;
/* The mode in rows (db_thread_mode_get_stmt's), or a thread never set (no row). */
void db_thread_mode_from(const struct db_rows *rows, struct db_thread_mode *out);

/* Compare-and-swap write + audit record in one statement. RG_STALE when expected_revision
 * is not the current revision (the caller reads the current one for the 409). */
enum rg_status db_thread_mode_put(struct db_conn *c, const struct db_actor *actor,
				  const char *thread_id, int64_t expected_revision,
				  const char *mode, struct db_thread_mode *out,
				  struct db_error *err) RG_MUSTCHECK;

#endif
