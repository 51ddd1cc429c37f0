/* A static routing table with path parameters: 404 when no template matches the path,
 * 405 (with the methods for Allow) when only the method differs. */
#ifndef RG_SERVER_ROUTER_H
#define RG_SERVER_ROUTER_H

#include <stddef.h>

#include "handlers/api.h"

#define ROUTER_MAX_PATH 2048

enum router_result { ROUTER_FOUND, ROUTER_NOT_FOUND, ROUTER_METHOD_NOT_ALLOWED };

struct router_match {
	const struct h_route *route;      /* the route of this method, or NULL */
	const struct h_route *path_route; /* the first route whose template fits (405, metrics) */
	struct h_param params[H_MAX_PARAMS];
	size_t nparams;
	char allow[128];              /* "GET, PUT": filled for a 405 and for OPTIONS only */
	char buf[ROUTER_MAX_PATH];    /* the path's segments, which params point into */
	char names[ROUTER_MAX_PATH];  /* the parameter names, which params point into */
};

/* Matches method + path against routes[0..n). m is filled; params borrow from m itself. */
enum router_result router_match(const struct h_route *routes, size_t n, const char *method,
				const char *path, struct router_match *m);

#endif
