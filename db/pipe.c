#include "db/pipe.h"
#include "db/pg.h"

#include <stdlib.h>
#include <string.h>

#include "db/row.h"

/* Statements sent and not yet answered, oldest first: more than the server keeps waiting on a
 * pipe (server/pipes.h's PIPES_MAX_WAITING). */
#define PIPE_RING 1024
/* Statements a pipe prepares, each once (the pipeable reads of db/). */
#define PIPE_PREPARED_MAX 64

struct sent {
	const struct db_stmt *stmt;
	bool prepares; /* its group prepared stmt first */
};

/* A statement this pipe has sent a Parse for: confirmed once PostgreSQL answered the Parse. */
struct prepared {
	const struct db_stmt *stmt;
	bool confirmed;
};

struct db_pipe {
	PGconn *pg;
	unsigned pending;  /* syncs sent and not yet answered */
	struct sent ring[PIPE_RING];
	unsigned head;     /* the oldest pending in ring */
	struct prepared prepared[PIPE_PREPARED_MAX];
	size_t nprepared;
	/* results of the oldest pending group seen so far: for a group that prepares, the first
	 * one is the Parse's */
	unsigned group_results;
	bool parse_ok;     /* that Parse succeeded */
	PGresult *answer;  /* of the oldest pending statement, as its results arrive */
	bool answer_error; /* answer is a failure: later results of that statement are not kept */
	bool lost;         /* libpq gave up on the connection while results were owed */
};

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

static struct prepared *find_prepared(struct db_pipe *p, const struct db_stmt *stmt)
{
	for (size_t i = 0; i < p->nprepared; i++)
		if (p->prepared[i].stmt == stmt)
			return &p->prepared[i];
	return NULL;
}

/* The answer of a group that prepared stmt: a failed Parse is forgotten (the next send
 * prepares again); a Parse that succeeded stays, whatever its execution came to. */
static void settle_prepared(struct db_pipe *p, const struct db_stmt *stmt, bool parse_ok)
{
	struct prepared *e = find_prepared(p, stmt);
	if (e && parse_ok)
		e->confirmed = true;
	else if (e)
		*e = p->prepared[--p->nprepared];
}

enum rg_status db_pipe_send(struct db_pipe *p, const struct db_stmt *stmt,
			    const char *const *params, struct db_error *err)
{
	const struct prepared *known = find_prepared(p, stmt);
	bool prepares = known == NULL;
	/* While its Parse is unanswered, an execution sent alone would fail with the Parse
	 * (26000, a 500) if the Parse failed: it goes to the worker lane instead. */
	if (stmt->plan != DB_PIPEABLE || stmt->row == NULL || p->pending == PIPE_RING ||
	    (prepares && p->nprepared == PIPE_PREPARED_MAX) || (known && !known->confirmed))
		return RG_NOT_SENT;
	/* Its first use on this pipe prepares it in the same group: the group's results are the
	 * Parse's and the execution's, and a failed Parse fails the execution with it. */
	bool queued = (!prepares ||
		       PQsendPrepare(p->pg, stmt->name, stmt->sql, stmt->nparams, NULL)) &&
		      PQsendQueryPrepared(p->pg, stmt->name, stmt->nparams, params, NULL, NULL, 0);
	if (!queued || !PQpipelineSync(p->pg)) {
		/* Part of it may be out: the pipe cannot be trusted any more. */
		db_error_set(err, RG_UNAVAILABLE, "08006", PQerrorMessage(p->pg));
		return RG_UNAVAILABLE;
	}
	if (prepares)
		p->prepared[p->nprepared++] = (struct prepared){stmt, false};
	p->ring[(p->head + p->pending) % PIPE_RING] = (struct sent){stmt, prepares};
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

/* The oldest pending statement's answer is complete (a, its last result or its first
 * failure): its rows, or why it failed. */
static enum rg_status take_answer(struct db_pipe *p, PGresult *a, bool failed, struct db_rows *rows,
				  struct db_error *err)
{
	struct sent s = p->ring[p->head];
	p->head = (p->head + 1) % PIPE_RING;
	p->pending--;
	enum rg_status st = failed ? db_error_from(p->pg, a, err)
				   : db_rows_take(a, s.stmt->row, rows, err); /* a is theirs now */
	if (failed)
		PQclear(a);
	if (s.prepares)
		settle_prepared(p, s.stmt, p->parse_ok);
	p->group_results = 0;
	p->parse_ok = false;
	return st;
}

bool db_pipe_next(struct db_pipe *p, enum rg_status *st, struct db_rows *rows,
		  struct db_error *err)
{
	*rows = (struct db_rows){0};
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
		if (p->group_results++ == 0 && p->ring[p->head].prepares)
			p->parse_ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		switch (PQresultStatus(r)) {
		case PGRES_PIPELINE_SYNC: {
			PQclear(r);
			PGresult *a = p->answer;
			bool failed = p->answer_error || a == NULL;
			p->answer = NULL;
			p->answer_error = false;
			*st = take_answer(p, a, failed, rows, err);
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
