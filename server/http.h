/* The libmicrohttpd glue: thread per connection, connection limit and timeout, body cap,
 * routing, authentication, strict JSON, problem rendering, CORS, request ids, access log and
 * metrics. */
#ifndef RG_SERVER_HTTP_H
#define RG_SERVER_HTTP_H

#include <stdbool.h>
#include "db/db.h"
#include "handlers/api.h"
#include "server/config.h"

struct http_server;

/* Starts listening, answering with routes[0..n) (borrowed for the server's lifetime).
 * *out is new: http_stop frees it. false after logging why. */
bool http_start(const struct rg_config *cfg, struct db_pool *pool, struct db_standbys *standbys,
		const struct h_route *routes, size_t n_routes, struct http_server **out) RG_MUSTCHECK;
/* Stops accepting, waits for in-flight requests (at most drain_ms), then stops. */
void http_stop(struct http_server *srv, unsigned drain_ms);

#endif
