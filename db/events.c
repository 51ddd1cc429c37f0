#include "db/events.h"
#include "db/pg.h"
#include "db/audit_columns.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct db_events {
	PGconn *pg;
};

/* Audit records (db_audit_record_row reads them). */
#define EVENT_COLUMNS "SELECT " DB_AUDIT_COLUMNS " FROM audit_log"

static bool run(struct db_events *ev, const char *sql, struct db_error *err)
{
	PGresult *res = PQexec(ev->pg, sql);
	bool ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		(void)db_error_from(ev->pg, res, err);
	PQclear(res);
	return ok;
}

/* The horizon is asked after about every other local commit: prepared once, not planned
 * (13 us) on each. */
#define HORIZON_STMT "events_horizon"

static bool prepare_horizon(struct db_events *ev, struct db_error *err)
{
	PGresult *res = PQprepare(ev->pg, HORIZON_STMT,
				  "SELECT h, x, m FROM events_horizon($1, $2, $3)", 3, NULL);
	bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok)
		(void)db_error_from(ev->pg, res, err);
	PQclear(res);
	return ok;
}

bool db_events_connect(const char *url, struct db_events **out, struct db_error *err)
{
	/* Its queries are small; a stuck one must not stall every stream for long. */
	char app[64]; /* the process id tells an operator (and a test) whose listener it is */
	snprintf(app, sizeof app, "recallgate events %ld", (long)getpid());
	struct db_events *ev = calloc(1, sizeof *ev);
	*out = NULL;
	if (ev == NULL) {
		db_error_set(err, RG_ERROR, "", "out of memory");
		return false;
	}
	ev->pg = db_connect(url, app, 2000, err);
	if (ev->pg == NULL) {
		db_events_close(ev);
		return false;
	}
	if (!run(ev, "SET synchronous_commit = off", err) ||
	    !run(ev, "LISTEN recallgate_audit", err) || !run(ev, "LISTEN recallgate_token", err) ||
	    !prepare_horizon(ev, err)) {
		db_events_close(ev);
		return false;
	}
	*out = ev;
	return true;
}

void db_events_close(struct db_events *ev)
{
	if (ev == NULL)
		return;
	if (ev->pg)
		PQfinish(ev->pg);
	free(ev);
}

int db_events_socket(const struct db_events *ev)
{
	return PQsocket(ev->pg);
}

/* "<hex> <tenant_id> <token_id>" (tokens_notify_deleted); ids hold no spaces. */
static void token_message(char *payload, db_token_deleted_fn on_token, void *arg)
{
	char *tenant = strchr(payload, ' ');
	char *token = tenant ? strchr(tenant + 1, ' ') : NULL;
	if (token == NULL)
		return;
	*tenant++ = '\0';
	*token++ = '\0';
	on_token(payload, tenant, token, arg);
}

bool db_events_consume(struct db_events *ev, unsigned *commits, db_token_deleted_fn on_token,
		       void *arg)
{
	if (!PQconsumeInput(ev->pg) || PQstatus(ev->pg) != CONNECTION_OK)
		return false;
	for (PGnotify *n; (n = PQnotifies(ev->pg)) != NULL; PQfreemem(n)) {
		if (strcmp(n->relname, "recallgate_token") == 0)
			token_message(n->extra, on_token, arg);
		else
			(*commits)++;
	}
	return true;
}

static uint64_t xid_value(const PGresult *res, int col)
{
	return PQgetisnull(res, 0, col) ? 0 : strtoull(PQgetvalue(res, 0, col), NULL, 10);
}

bool db_events_horizon(struct db_events *ev, const int64_t *notify_after,
		       const int64_t *sample_after, uint64_t waiting, struct db_horizon *out,
		       struct db_error *err)
{
	char n[DB_INT_SIZE], sa[DB_INT_SIZE], w[DB_INT_SIZE];
	const char *params[] = {notify_after ? db_int_param(n, *notify_after) : NULL,
				sample_after ? db_int_param(sa, *sample_after) : NULL,
				waiting ? db_int_param(w, (int64_t)waiting) : NULL};
	PGresult *res = PQexecPrepared(ev->pg, HORIZON_STMT, 3, params, NULL, NULL, 0);
	bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
	if (ok) {
		out->h = db_int(res, 0, 0);
		out->x = xid_value(res, 1);
		out->m = xid_value(res, 2);
	} else {
		(void)db_error_from(ev->pg, res, err);
	}
	PQclear(res);
	return ok;
}

static bool fetch(struct db_events *ev, const char *sql, int n, const char *const *params,
		  PGresult **res, struct db_error *err)
{
	*res = PQexecParams(ev->pg, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(*res) == PGRES_TUPLES_OK)
		return true;
	(void)db_error_from(ev->pg, *res, err);
	PQclear(*res);
	*res = NULL;
	return false;
}

/* fetch, its rows read as audit records. */
static bool fetch_records(struct db_events *ev, const char *sql, int n,
			  const char *const *params, struct db_rows *rows, struct db_error *err)
{
	PGresult *res = NULL;
	*rows = (struct db_rows){0};
	if (!fetch(ev, sql, n, params, &res, err))
		return false;
	enum rg_status st = db_rows_fill(res, &db_audit_record_row, rows, err);
	PQclear(res);
	return st == RG_OK;
}

/* db_array_literal, with err set when memory ran out. */
static char *text_array(const char *const *ids, size_t n, struct db_error *err)
{
	char *array = db_array_literal(ids, n);
	if (array == NULL)
		db_error_set(err, RG_ERROR, "", "out of memory");
	return array;
}

bool db_events_fetch_tenants(struct db_events *ev, const char *const *tenant_ids, size_t n,
			     int64_t after, int64_t upto, int limit, struct db_rows *rows,
			     struct db_error *err)
{
	*rows = (struct db_rows){0};
	char *array = text_array(tenant_ids, n, err);
	if (array == NULL)
		return false;
	char a[DB_INT_SIZE], u[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {array, db_int_param(a, after), db_int_param(u, upto),
				db_int_param(l, limit)};
	bool ok = fetch_records(ev,
				EVENT_COLUMNS " WHERE tenant_id = ANY($1::text[]) AND seq > $2::bigint"
					      " AND seq <= $3::bigint ORDER BY seq LIMIT $4::int",
				4, params, rows, err);
	free(array);
	return ok;
}

bool db_events_fetch_one(struct db_events *ev, const char *tenant_id, const char *resource_type,
			 const char *resource_id, int64_t after, int64_t upto, int limit,
			 struct db_rows *rows, struct db_error *err)
{
	char a[DB_INT_SIZE], u[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {tenant_id, resource_type, resource_id, db_int_param(a, after),
				db_int_param(u, upto), db_int_param(l, limit)};
	return fetch_records(ev,
			     EVENT_COLUMNS " WHERE ($1::text IS NULL OR tenant_id = $1)"
					   " AND ($2::text IS NULL OR resource_type = $2)"
					   " AND ($3::text IS NULL OR resource_id = $3) AND seq > $4::bigint"
					   " AND seq <= $5::bigint ORDER BY seq LIMIT $6::int",
			     6, params, rows, err);
}

bool db_events_tokens_gone(struct db_events *ev, const char *const *tenant_ids,
			   const char *const *token_ids, size_t n, bool *gone,
			   struct db_error *err)
{
	char *tenants = text_array(tenant_ids, n, err);
	char *tokens = tenants ? text_array(token_ids, n, err) : NULL;
	PGresult *res = NULL;
	const char *params[] = {tenants, tokens};
	bool ok = tokens && fetch(ev,
				  "SELECT t.i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY"
				  " AS t(tenant, token, i) WHERE NOT EXISTS (SELECT 1 FROM tokens k"
				  " WHERE k.tenant_id = t.tenant AND k.token_id = t.token"
				  " AND k.deleted_at IS NULL)",
				  2, params, &res, err);
	free(tenants);
	free(tokens);
	if (!ok)
		return false;
	memset(gone, 0, n * sizeof *gone);
	for (int i = 0; i < PQntuples(res); i++) {
		int64_t k = db_int(res, i, 0);
		if (k >= 1 && (size_t)k <= n)
			gone[k - 1] = true;
	}
	PQclear(res);
	return true;
}

static const struct db_stmt newest_seq_stmt = {
	"events_newest_seq", "SELECT h FROM events_horizon(NULL, NULL, NULL)", 0, false, NULL};

enum rg_status db_events_newest_seq(struct db_conn *c, int64_t *out, struct db_error *err)
{
	PGresult *res = NULL;
	enum rg_status st = db_exec(c, &newest_seq_stmt, NULL, &res, err);
	if (st == RG_OK)
		*out = db_int(res, 0, 0);
	PQclear(res);
	return st;
}
