/* A pipe: one connection in libpq's pipeline mode that many requests' one-statement reads
 * share. Each statement goes out with its own sync, so it runs in its own implicit
 * transaction and a failure touches no other; they are answered in the order they were sent.
 * The backend works through what queued in its socket while it ran the last one, without a
 * round trip or a wake-up each: that is what makes a pipelined read cheaper for the database
 * than a read on a pool connection. Not thread-safe: the caller serializes the calls. */
#ifndef RG_DB_PIPE_H
#define RG_DB_PIPE_H

#include "db/db.h"
#include "db/row.h"

struct db_pipe;

/* Connects (blocking, up to the pool's connect timeout) with the pool's settings (the
 * statement timeout included; application_name "recallgate pipe"). A statement is prepared
 * on the pipe with its first use. *out is new: free with db_pipe_close. */
enum rg_status db_pipe_open(const char *url, struct db_pipe **out,
			    struct db_error *err) RG_MUSTCHECK;
void db_pipe_close(struct db_pipe *p);
int db_pipe_socket(const struct db_pipe *p);

/* Queues stmt and its sync, and writes out what it can. RG_NOT_SENT, with nothing sent, when
 * stmt is not pipeable (struct db_stmt) or the pipe holds as many as it can; on any other
 * failure the pipe cannot be used any more: close it. */
enum rg_status db_pipe_send(struct db_pipe *p, const struct db_stmt *stmt,
			    const char *const *params, struct db_error *err) RG_MUSTCHECK;
/* Writes out what is queued: 0 when all is out, 1 when some is left (wait until the socket
 * is writable), -1 when the connection is lost. */
int db_pipe_flush(struct db_pipe *p);
/* Reads what has arrived, never waiting. false when the connection is lost: every
 * statement still unanswered is lost with it. */
bool db_pipe_consume(struct db_pipe *p);
/* false once the connection is lost (also noticed by db_pipe_next). */
bool db_pipe_alive(const struct db_pipe *p);
/* The answer of the oldest unanswered statement, once it is complete: true with *st and, on
 * RG_OK, *rows read through its statement's row spec (new: db_rows_free), else err says
 * why. false when it is not complete yet (*rows empty either way). */
bool db_pipe_next(struct db_pipe *p, enum rg_status *st, struct db_rows *rows,
		  struct db_error *err);

#endif
