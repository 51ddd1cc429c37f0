#include "db/pipe.h"

#include <stdlib.h>

#include "db/threads.h"

/* The statements a pipe may send, prepared when it connects: a Parse sent in the pipeline
 * could fail (a lock, a timeout) after other executions of it were queued behind it. */
static const struct db_stmt *const piped[] = {&db_thread_mode_get_stmt};
#define N_PIPED (sizeof piped / sizeof piped[0])

struct db_pipe {
	PGconn *pg;
	unsigned pending;  /* syncs sent and not yet answered */
	PGresult *answer;  /* of the oldest pending statement, as its results arrive */
	bool answer_error; /* answer is a failure: later results of that statement are not kept */
	bool lost;         /* libpq gave up on the connection while results were owed */
};

/* Prepares the piped statements (before pipeline mode: one round trip each, once). */
static enum rg_status prepare_all(PGconn *pg, struct db_error *err)
{
	for (size_t i = 0; i < N_PIPED; i++) {
		PGresult *r = PQprepare(pg, piped[i]->name, piped[i]->sql, piped[i]->nparams, NULL);
		bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		enum rg_status st = ok ? RG_OK : db_error_from(pg, r, err);
		PQclear(r);
		if (!ok)
			return st;
	}
	return RG_OK;
}

enum rg_status db_pipe_open(const char *url, struct db_pipe **out, struct db_error *err)
{
	struct db_pipe *p = calloc(1, sizeof *p);
	if (p == NULL) {
		db_error_set(err, RG_NOMEM, "", "out of memory");
		return RG_NOMEM;
	}
	p->pg = db_connect(url, "recallgate pipe", DB_STATEMENT_TIMEOUT_MS, err);
	if (p->pg == NULL) {
		free(p);
		return RG_UNAVAILABLE;
	}
	enum rg_status st = prepare_all(p->pg, err);
	if (st != RG_OK) {
		db_pipe_close(p);
		return st;
	}
	/* Non-blocking: a send never waits for the socket (db_pipe_flush and the caller's
	 * poll finish the write). */
	if (PQsetnonblocking(p->pg, 1) != 0 || PQenterPipelineMode(p->pg) != 1) {
		db_error_set(err, RG_UNAVAILABLE, "08006", PQerrorMessage(p->pg));
		db_pipe_close(p);
		return RG_UNAVAILABLE;
	}
	*out = p;
	return RG_OK;
}

void db_pipe_close(struct db_pipe *p)
{
	if (p == NULL)
		return;
	PQclear(p->answer);
	PQfinish(p->pg);
	free(p);
}

int db_pipe_socket(const struct db_pipe *p)
{
	return PQsocket(p->pg);
}

static bool is_piped(const struct db_stmt *stmt)
{
	for (size_t i = 0; i < N_PIPED; i++)
		if (piped[i] == stmt)
			return true;
	return false;
}

enum rg_status db_pipe_send(struct db_pipe *p, const struct db_stmt *stmt,
			    const char *const *params, struct db_error *err)
{
	if (!is_piped(stmt))
		return RG_NOT_SENT;
	if (!PQsendQueryPrepared(p->pg, stmt->name, stmt->nparams, params, NULL, NULL, 0) ||
	    !PQpipelineSync(p->pg)) {
		/* Part of it may be out: the pipe cannot be trusted any more. */
		db_error_set(err, RG_UNAVAILABLE, "08006", PQerrorMessage(p->pg));
		return RG_UNAVAILABLE;
	}
	p->pending++;
	return RG_OK;
}

int db_pipe_flush(struct db_pipe *p)
{
	return PQflush(p->pg);
}

bool db_pipe_consume(struct db_pipe *p)
{
	return PQconsumeInput(p->pg) == 1 && db_pipe_alive(p);
}

bool db_pipe_alive(const struct db_pipe *p)
{
	return !p->lost && PQstatus(p->pg) == CONNECTION_OK;
}

bool db_pipe_next(struct db_pipe *p, enum rg_status *st, PGresult **res, struct db_error *err)
{
	*res = NULL;
	bool after_null = false;
	/* With nothing pending PQgetResult would answer NULL forever. */
	while (p->pending > 0 && !PQisBusy(p->pg)) {
		PGresult *r = PQgetResult(p->pg);
		if (r == NULL) {
			/* The end of one command's results; a second one in a row means libpq has
			 * given up on the connection (it is not busy, yet owes results). */
			if (after_null) {
				p->lost = true;
				return false;
			}
			after_null = true;
			continue;
		}
		after_null = false;
		switch (PQresultStatus(r)) {
		case PGRES_PIPELINE_SYNC: {
			PQclear(r);
			p->pending--;
			PGresult *a = p->answer;
			bool failed = p->answer_error || a == NULL;
			p->answer = NULL;
			p->answer_error = false;
			if (failed) {
				*st = db_error_from(p->pg, a, err);
				PQclear(a);
			} else {
				*st = RG_OK;
				*res = a;
			}
			return true;
		}
		case PGRES_TUPLES_OK:
		case PGRES_COMMAND_OK:
			if (p->answer_error) {
				PQclear(r);
			} else {
				PQclear(p->answer);
				p->answer = r;
			}
			break;
		case PGRES_PIPELINE_ABORTED: /* after a failure, which is kept */
			PQclear(r);
			break;
		default: /* the first failure is the answer */
			if (p->answer_error) {
				PQclear(r);
			} else {
				PQclear(p->answer);
				p->answer = r;
				p->answer_error = true;
			}
			break;
		}
	}
	return false;
}
