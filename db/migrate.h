/* Embedded, checksummed migrations. */
#ifndef RG_DB_MIGRATE_H
#define RG_DB_MIGRATE_H

#include <stdbool.h>
#include "db/db.h"

/* Applies every pending migration in order, each in its own transaction, under an advisory
 * lock. RG_CONFLICT when an applied migration's checksum differs from the embedded one. */
enum rg_status db_migrate(struct db_conn *conn, unsigned *applied,
			  struct db_error *err) RG_MUSTCHECK;

/* RG_OK when every embedded migration is applied with its checksum, RG_STALE when some are
 * pending or differ, RG_UNAVAILABLE when the database does not answer. */
enum rg_status db_migrations_current(struct db_conn *conn, struct db_error *err) RG_MUSTCHECK;

#endif
