/* The test's own PostgreSQL session, for what a test does to the database behind the server's
 * back (harness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "harness.h"

PGconn *it_db_lock(const char *table, const char *mode)
{
	PGconn *locker = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(locker) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(locker));
	char sql[160];
	snprintf(sql, sizeof sql, "BEGIN; LOCK TABLE %s IN %s MODE", table, mode);
	PGresult *res = PQexec(locker, sql);
	IT_CHECK(PQresultStatus(res) == PGRES_COMMAND_OK, "LOCK: %s", PQerrorMessage(locker));
	PQclear(res);
	return locker;
}

void it_db_unlock(PGconn *locker)
{
	PQclear(PQexec(locker, "ROLLBACK"));
	PQfinish(locker);
}
