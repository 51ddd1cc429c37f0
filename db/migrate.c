#include "db/migrate.h"
#include "db/pg.h"

#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "db/embedded.h"

static const struct db_stmt applied_stmt = {
	"migrations_applied",
	"SELECT version, checksum FROM schema_migrations ORDER BY version", 0, false, NULL};
static const struct db_stmt record_stmt = {
	"migrations_record",
	"INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)", 2, false, NULL};
/* Readiness: one cheap query. */
static const struct db_stmt summary_stmt = {
	"migrations_summary", "SELECT version, checksum FROM schema_migrations", 0, false, NULL};

static void checksum(const struct rg_embedded_file *m, char out[RG_SHA256_TAGGED_SIZE])
{
	core_sha256_tagged(m->bytes, m->len, out);
}

static const char *lookup(PGresult *res, const char *version)
{
	for (int i = 0; i < PQntuples(res); i++)
		if (strcmp(PQgetvalue(res, i, 0), version) == 0)
			return PQgetvalue(res, i, 1);
	return NULL;
}

/* Every file of db/functions, in one transaction: each SQL function has one current text,
 * there, and a migration holds schema changes (a function it needs that does not exist yet
 * it creates itself, and the file takes over). Applied on every migrate, after the
 * migrations, so that an edited file reaches the database with the next deploy. */
static enum rg_status apply_functions(struct db_conn *conn, struct db_error *err)
{
	enum rg_status st = db_exec_script(conn, "BEGIN", err);
	for (unsigned i = 0; st == RG_OK && i < rg_functions_count; i++) {
		st = db_exec_script(conn, rg_functions[i].bytes, err);
		if (st != RG_OK) { /* which file, for the operator */
			char reason[sizeof err->message];
			memcpy(reason, err->message, sizeof reason);
			snprintf(err->message, sizeof err->message, "db/functions/%.60s: %.120s",
				 rg_functions[i].name, reason);
		}
	}
	if (st == RG_OK)
		return db_exec_script(conn, "COMMIT", err);
	struct db_error ignored;
	if (db_exec_script(conn, "ROLLBACK", &ignored) != RG_OK)
		return st; /* the connection is gone: the function's error is what matters */
	return st;
}

enum rg_status db_migrate(struct db_conn *conn, unsigned *applied, struct db_error *err)
{
	PGresult *res = NULL;
	enum rg_status st;
	*applied = 0;
	st = db_exec_script(conn,
			    /* Migrations build indexes over whole tables: the request
			     * statement_timeout of the pool's connections does not apply. */
			    "SET statement_timeout = 0;"
			    "SELECT pg_advisory_lock(7411001);"
			    "CREATE TABLE IF NOT EXISTS schema_migrations ("
			    " version text PRIMARY KEY, checksum text NOT NULL,"
			    " applied_at timestamptz NOT NULL DEFAULT now())",
			    err);
	if (st != RG_OK)
		return st;
	st = db_exec(conn, &applied_stmt, NULL, &res, err);
	if (st != RG_OK)
		goto out;
	for (unsigned i = 0; i < rg_migrations_count; i++) {
		const struct rg_embedded_file *m = &rg_migrations[i];
		char sum[RG_SHA256_TAGGED_SIZE];
		checksum(m, sum);
		const char *have = lookup(res, m->name);
		if (have) {
			if (strcmp(have, sum) != 0) {
				snprintf(err->message, sizeof err->message,
					 "applied migration %s was edited (checksum differs)", m->name);
				err->status = RG_CONFLICT;
				err->sqlstate[0] = '\0';
				st = RG_CONFLICT;
				goto out;
			}
			continue;
		}
		PGresult *r2 = NULL;
		const char *params[] = {m->name, sum};
		if ((st = db_exec_script(conn, "BEGIN", err)) != RG_OK ||
		    (st = db_exec_script(conn, m->bytes, err)) != RG_OK ||
		    (st = db_exec(conn, &record_stmt, params, &r2, err)) != RG_OK ||
		    (st = db_exec_script(conn, "COMMIT", err)) != RG_OK) {
			PQclear(r2);
			struct db_error ignored;
			if (db_exec_script(conn, "ROLLBACK", &ignored) != RG_OK)
				break; /* the connection is gone; the migration's error is what matters */
			goto out;
		}
		PQclear(r2);
		(*applied)++;
	}
	st = apply_functions(conn, err);
out:
	PQclear(res);
	{
		/* A failed unlock means a lost connection, which releases the lock anyway. */
		struct db_error ignored;
		if (db_exec_script(conn, "SELECT pg_advisory_unlock(7411001)", &ignored) != RG_OK)
			st = st == RG_OK ? RG_UNAVAILABLE : st;
	}
	return st;
}

enum rg_status db_migrations_current(struct db_conn *conn, struct db_error *err)
{
	PGresult *res = NULL;
	enum rg_status st = db_exec(conn, &summary_stmt, NULL, &res, err);
	if (st == RG_ERROR && strcmp(err->sqlstate, "42P01") == 0)
		return RG_STALE; /* never migrated: no schema_migrations table */
	if (st != RG_OK)
		return st;
	/* Every migration this binary knows must be applied unchanged; newer ones applied by a
	 * newer binary (a rolling deploy) do not make this instance unready. */
	for (unsigned i = 0; i < rg_migrations_count && st == RG_OK; i++) {
		char sum[RG_SHA256_TAGGED_SIZE];
		checksum(&rg_migrations[i], sum);
		const char *have = lookup(res, rg_migrations[i].name);
		if (have == NULL || strcmp(have, sum) != 0)
			st = RG_STALE;
	}
	PQclear(res);
	return st;
}
