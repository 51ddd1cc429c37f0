/* Private to server/: one well-formed answer where libmicrohttpd 0.9.75 would refuse a
 * request's Content-Length with a broken one of its own (server/framing.c). */
#ifndef RG_SERVER_FRAMING_H
#define RG_SERVER_FRAMING_H

#include <stdbool.h>

#include "server/request.h"

/* From on_uri: conn has a request line; its request has not reached the service yet. */
void framing_uri_seen(struct conn_state *cs, struct MHD_Connection *conn);
/* From the first access call, and when the connection closes. NULL is fine. */
void framing_request_seen(struct conn_state *cs);
/* From libmicrohttpd's logger, with the message's format: true when it was a refused
 * Content-Length and this thread's refused connection was answered and shut. */
bool framing_on_log(const char *fmt);

#endif
