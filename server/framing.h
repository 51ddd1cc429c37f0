/* Private to server/: how a request frames its body, and one well-formed answer where
 * libmicrohttpd 0.9.75 would refuse a request's Content-Length with a broken one of its own
 * (server/framing.c). */
#ifndef RG_SERVER_FRAMING_H
#define RG_SERVER_FRAMING_H

#include <stdarg.h>
#include <stdbool.h>

#include "server/request.h"

/* From on_uri: conn has a request line; its request has not reached the service yet. */
void framing_uri_seen(struct conn_state *cs, struct MHD_Connection *conn);
/* From the first access call, and when the connection closes. NULL is fine. */
void framing_request_seen(struct conn_state *cs);
/* The detail of a body framing to refuse with 400 invalid_request and close, or NULL: two
 * Content-Length headers, Content-Length with Transfer-Encoding, or a Transfer-Encoding other
 * than exactly "chunked" (RFC 9112 §6.1, §6.3). From the first access call. */
const char *framing_refusal(struct MHD_Connection *conn);
/* libmicrohttpd's logger (MHD_OPTION_EXTERNAL_LOGGER): its messages without the request's
 * text, and framing_on_log. */
void framing_mhd_log(void *cls, const char *fmt, va_list ap);

#endif
