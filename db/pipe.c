#include "db/pipe.h"

#include <stdlib.h>

#define PIPE_MAX_PREPARED 16

struct db_pipe {
	PGconn *pg;
	unsigned pending;  /* syncs sent and not yet answered */
	PGresult *answer;  /* of the oldest pending statement, as its results arrive */
	bool answer_error; /* answer is a failure: later results of that statement are not kept */
	size_t nprepared;
	const struct db_stmt *prepared[PIPE_MAX_PREPARED];
};

enum rg_status db_pipe_open(const char *url, struct db_pipe **out, struct db_error *err)
{
	struct db_pipe *p = calloc(1, sizeof *p);
	if (p == NULL) {
		db_error_set(err, RG_NOMEM, "", "out of memory");
		return RG_NOMEM;
	}
	p->pg = db_connect(url, err);
	if (p->pg == NULL) {
		free(p);
		return RG_UNAVAILABLE;
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

static bool is_prepared(const struct db_pipe *p, const struct db_stmt *stmt)
{
	for (size_t i = 0; i < p->nprepared; i++)
		if (p->prepared[i] == stmt)
			return true;
	return false;
}

enum rg_status db_pipe_send(struct db_pipe *p, const struct db_stmt *stmt,
			    const char *const *params, struct db_error *err)
{
	bool prepare = !is_prepared(p, stmt);
	if (prepare && p->nprepared == PIPE_MAX_PREPARED) {
		db_error_set(err, RG_ERROR, "", "too many pipelined statements: raise PIPE_MAX_PREPARED");
		return RG_ERROR;
	}
	/* The Parse goes out before the first execution, under the same sync: if it fails, the
	 * execution is aborted and the Parse's failure is the statement's answer. */
	if ((prepare && !PQsendPrepare(p->pg, stmt->name, stmt->sql, stmt->nparams, NULL)) ||
	    !PQsendQueryPrepared(p->pg, stmt->name, stmt->nparams, params, NULL, NULL, 0) ||
	    !PQpipelineSync(p->pg)) {
		/* Part of it may be out: the pipe cannot be trusted any more. */
		db_error_set(err, RG_UNAVAILABLE, "08006", PQerrorMessage(p->pg));
		return RG_UNAVAILABLE;
	}
	if (prepare)
		p->prepared[p->nprepared++] = stmt;
	p->pending++;
	return RG_OK;
}

int db_pipe_flush(struct db_pipe *p)
{
	return PQflush(p->pg);
}

bool db_pipe_consume(struct db_pipe *p)
{
	return PQconsumeInput(p->pg) == 1 && PQstatus(p->pg) == CONNECTION_OK;
}

unsigned db_pipe_pending(const struct db_pipe *p)
{
	return p->pending;
}

bool db_pipe_next(struct db_pipe *p, enum rg_status *st, PGresult **res, struct db_error *err)
{
	*res = NULL;
	/* With nothing pending PQgetResult would answer NULL forever. */
	while (p->pending > 0 && !PQisBusy(p->pg)) {
		PGresult *r = PQgetResult(p->pg);
		if (r == NULL) /* the end of one command's results */
			continue;
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
		case PGRES_COMMAND_OK: /* the Parse's, then the execution's: the last one is kept */
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
