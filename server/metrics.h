/* Prometheus metrics: requests by route template, method and status; latency histogram by
 * route and method; database pool gauges. Lock-free on the request path. */
#ifndef RG_SERVER_METRICS_H
#define RG_SERVER_METRICS_H

#include <stddef.h>
#include "db/db.h"

struct db_standbys;

/* routes[i] names route index i; index n_routes is "unmatched". Strings are borrowed for
 * the process lifetime. */
void metrics_init(const char *const *route_names, size_t n_routes, struct db_pool *pool,
		  struct db_standbys *standbys);
void metrics_observe(size_t route_index, const char *method, int status, double seconds);
/* Counts one provider call (names as struct h_ctx.provider_observe says; others ignored). */
void metrics_provider(const char *call, const char *outcome);
/* The exposition text (new: free()), length in *len. */
char *metrics_render(size_t *len);
void metrics_shutdown(void);

#endif
