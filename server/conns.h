/* Deadlines for request heads (RECALLGATE_HEADER_TIMEOUT): a client that trickles its head
 * (slowloris) is never idle, so libmicrohttpd's inactivity timeout, which every byte resets,
 * never fires. A watchdog thread shuts down (shutdown(2)) the socket of every connection
 * whose head has not arrived by its deadline; libmicrohttpd then sees the end of the stream
 * and closes it itself.
 *   - a new connection's first request: its head within RECALLGATE_HEADER_TIMEOUT of the
 *     accept;
 *   - each later request of a kept-alive connection: its head within
 *     RECALLGATE_CONNECTION_TIMEOUT + RECALLGATE_HEADER_TIMEOUT of the previous answer (an
 *     idle connection is closed by libmicrohttpd at RECALLGATE_CONNECTION_TIMEOUT anyway, so
 *     a gateway's idle pool is never cut earlier), and within RECALLGATE_HEADER_TIMEOUT of its
 *     request line.
 * And a request whose body is still arriving when its client has shut its sending side (a
 * half-close) can never complete: libmicrohttpd 0.9.75 does not always notice (it waited
 * for the idle timeout, 30 s, in up to 8 of 12 tries), so the watchdog looks for the end of
 * the stream on such connections and shuts them down too. */
#ifndef RG_SERVER_CONNS_H
#define RG_SERVER_CONNS_H

#include <stdbool.h>

#include "core/status.h"

struct conn_entry;

/* Starts the watchdog (idle_timeout_ms: RECALLGATE_CONNECTION_TIMEOUT). false when its thread
 * could not be started. */
bool conns_start(unsigned header_timeout_ms, unsigned idle_timeout_ms) RG_MUSTCHECK;
void conns_stop(void);

/* A connection on socket fd was accepted: new, or NULL when out of memory (then it has no
 * deadline). Freed by conns_closed. */
struct conn_entry *conns_opened(int fd);
/* A request's line arrived (libmicrohttpd's URI callback): a later request's head now has
 * RECALLGATE_HEADER_TIMEOUT at most. NULL is fine. */
void conns_request_line(struct conn_entry *e);
/* A request's head arrived (the access handler's first call): no deadline while it runs.
 * with_body: a body follows (Content-Length over 0, or chunked), and the connection is watched
 * for a half-close until conns_body_done. NULL is fine. */
void conns_headers_done(struct conn_entry *e, bool with_body);
/* The request's body is complete (the access handler's final call). NULL is fine. */
void conns_body_done(struct conn_entry *e);
/* A request was answered (or ended): the next one's head is awaited. NULL is fine. */
void conns_answered(struct conn_entry *e);
/* libmicrohttpd is about to close the socket: the entry goes. NULL is fine. */
void conns_closed(struct conn_entry *e);

/* Connections cut at the header deadline since the start. */
unsigned long long conns_header_timeouts(void);
/* Connections cut because their client half-closed in the middle of a body. */
unsigned long long conns_half_closed(void);

#endif
