/* Thread memory mode (openapi/openapi.yaml "Threads"). */
#ifndef RG_DB_THREADS_H
#define RG_DB_THREADS_H

#include "db/db.h"
#include "db/row.h"

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

/* The statement of db_thread_mode_get, for a read that renders its typed rows itself (a
 * route answered by one statement, which may go out on a pipe): its rows are
 * struct db_thread_mode_row, none for a thread never set. */
extern const struct db_stmt db_thread_mode_get_stmt;
struct db_thread_mode_row {
	const char *mode;
	int64_t revision;
	int64_t effective_ms;
};
/* The mode its rows say (none: a thread never set reads enabled, revision 0). */
void db_thread_mode_of(const struct db_rows *rows, struct db_thread_mode *out);

/* Compare-and-swap write + audit record in one statement. RG_STALE when expected_revision
 * is not the current revision (the caller reads the current one for the 409). */
enum rg_status db_thread_mode_put(struct db_conn *c, const struct db_actor *actor,
				  const char *thread_id, int64_t expected_revision,
				  const char *mode, struct db_thread_mode *out,
				  struct db_error *err) RG_MUSTCHECK;

#endif
