/* Outbound HTTP to registered providers: libcurl, one reused easy handle per thread. */
#ifndef RG_SERVER_OUTBOUND_H
#define RG_SERVER_OUTBOUND_H

#include "handlers/api.h"

/* Performs `call` (see struct h_call): traceparent (may be NULL) is passed on when it has
 * the W3C shape. Fills *out; never longer than the deadline plus libcurl's granularity. */
void outbound_call(const struct h_call *call, const char *traceparent,
		   struct h_call_result *out);

/* From now on every call ends by mono_ms (CLOCK_MONOTONIC milliseconds): a call in flight is
 * cut within libcurl's one-second progress granularity and fails as a timeout, a new one
 * gets no more time than is left. For the drain. */
void outbound_cut_at(long long mono_ms);

/* true when s is a W3C traceparent: 2 hex "-" 32 hex "-" 16 hex "-" 2 hex (lowercase). */
bool outbound_traceparent_valid(const char *s);

#endif
