/* The event hub (docs/events.md): one thread and one database connection per instance feed
 * every open GET /v1/events stream, and hear token deletions from every instance.
 *
 * A stream is a chunked response whose content reader suspends its connection when it has
 * nothing to send, so an idle stream holds no thread and no database connection; the hub
 * appends records and resumes it. Records go out in seq order and only up to a watermark
 * below which every seq is final (db/migrations/0011_events.sql says why that holds). */
#ifndef RG_SERVER_EVENTS_H
#define RG_SERVER_EVENTS_H

#include <microhttpd.h>
#include <stdbool.h>

#include "handlers/api.h"

#define EVENTS_RETRY_MS 2000             /* the stream's retry: field */
#define EVENTS_KEEPALIVE_MS 15000        /* a comment after this much silence */
#define EVENTS_BACKLOG_MAX (1024 * 1024) /* unsent bytes past which a stream is closed */
#define EVENTS_SNDBUF (64 * 1024)        /* a stream socket's send buffer (the kernel doubles it) */

struct events_stats {
	unsigned open;                /* streams open now */
	bool listening;               /* the hub's connection is up (LISTEN in effect) */
	unsigned long long sent;      /* records sent to streams */
	unsigned long long slow_closed, revoked_closed, reconnects;
};

/* Starts the hub (it connects, and reconnects, by itself): at most max_streams streams open,
 * and at most max_per_tenant of one tenant. false when the thread cannot start. Until it
 * listens the token cache stays off (server/auth.c). */
bool events_start(const char *database_url, unsigned max_streams, unsigned max_per_tenant);
/* SIGTERM: refuses new streams and ends every open one (what is queued still goes out). */
void events_drain(void);
/* After the daemon stopped: ends the hub. */
void events_stop(void);
/* A write committed here: the hub wakes every instance's hub (one notification however many
 * writes it covers). Any thread; never blocks. */
void events_local_commit(void);

/* h_ctx.events_open: admits a stream (max streams, per tenant too; drain) and leaves it in
 * ctx->stream. */
bool events_open(struct h_ctx *ctx, const struct h_events_request *req);
/* The response of an admitted stream, for conn; it owns the stream from then on. */
struct MHD_Response *events_response(void *stream, struct MHD_Connection *conn);
/* An admitted stream that never got its response. */
void events_discard(void *stream);

void events_get_stats(struct events_stats *out);

#endif
