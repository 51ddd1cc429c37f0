/* The deadline for a connection's first request headers (RECALLGATE_HEADER_TIMEOUT): a client
 * that trickles its headers (slowloris) is never idle, so libmicrohttpd's inactivity timeout
 * never fires. A watchdog thread shuts down (shutdown(2)) the socket of every connection
 * whose headers have not arrived by the deadline; libmicrohttpd then sees the end of the
 * stream and closes it itself. The time between requests of a kept-alive connection stays
 * bounded by RECALLGATE_CONNECTION_TIMEOUT (a gateway's idle pool must not be cut early). */
#ifndef RG_SERVER_CONNS_H
#define RG_SERVER_CONNS_H

#include <stdbool.h>

#include "core/status.h"

struct conn_entry;

/* Starts the watchdog. false when its thread could not be started. */
bool conns_start(unsigned header_timeout_ms) RG_MUSTCHECK;
void conns_stop(void);

/* A connection on socket fd was accepted: new, or NULL when out of memory (then it has no
 * deadline). Freed by conns_closed. */
struct conn_entry *conns_opened(int fd);
/* Its first request's headers arrived (the access handler's first call). NULL is fine. */
void conns_headers_done(struct conn_entry *e);
/* libmicrohttpd is about to close the socket: the entry goes. NULL is fine. */
void conns_closed(struct conn_entry *e);

/* Connections cut at the header deadline since the start. */
unsigned long long conns_header_timeouts(void);

#endif
