#include "server/router.h"

#include <stdbool.h>
#include <string.h>

#define MAX_SEGMENTS 16

/* Splits s (modified in place) on '/', skipping the leading one. Returns the count, or -1
 * when there are too many segments or an empty one (a doubled slash). A trailing slash
 * leaves an empty last segment, which only a template with that slash fits ("/ui/"). */
static int split(char *s, char *seg[MAX_SEGMENTS])
{
	int n = 0;
	if (*s != '/')
		return -1;
	s++;
	for (;;) {
		if (n == MAX_SEGMENTS)
			return -1;
		seg[n++] = s;
		char *slash = strchr(s, '/');
		if (slash == NULL)
			break;
		*slash = '\0';
		s = slash + 1;
	}
	for (int i = 0; i < n; i++)
		if (seg[i][0] == '\0' && i != n - 1)
			return -1;
	return n;
}

/* Does the template fit the path's segments? It is walked in place (no copy: this runs
 * for every route on every request). Parameters are filled only when fill. */
static bool fits(const char *tmpl, char *const *seg, int nseg, struct router_match *m, bool fill)
{
	const char *t = tmpl;
	size_t used = 0;
	if (*t != '/')
		return false;
	for (int i = 0; i < nseg; i++) {
		if (*t != '/')
			return false; /* the template has fewer segments */
		t++;
		const char *end = strchr(t, '/');
		size_t len = end ? (size_t)(end - t) : strlen(t);
		if (len > 2 && t[0] == '{' && t[len - 1] == '}') {
			if (seg[i][0] == '\0')
				return false; /* a parameter is never empty */
			if (fill) {
				if (m->nparams == H_MAX_PARAMS || used + len - 1 > sizeof m->names)
					return false;
				memcpy(m->names + used, t + 1, len - 2);
				m->names[used + len - 2] = '\0';
				m->params[m->nparams].name = m->names + used;
				m->params[m->nparams].value = seg[i];
				m->nparams++;
				used += len - 1;
			}
		} else if (strlen(seg[i]) != len || strncmp(t, seg[i], len) != 0) {
			return false;
		}
		t += len;
	}
	return *t == '\0'; /* and no more */
}

/* HEAD is answered on every GET route (RFC 9110 §9.3.2): same status and headers, and
 * libmicrohttpd sends no body. */
static bool method_fits(const char *route_method, const char *method)
{
	return strcmp(route_method, method) == 0 ||
	       (strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0);
}

enum router_result router_match(const struct h_route *routes, size_t n, const char *method,
				const char *path, struct router_match *m)
{
	char *seg[MAX_SEGMENTS];
	memset(m, 0, offsetof(struct router_match, buf));
	if (strlen(path) >= sizeof m->buf)
		return ROUTER_NOT_FOUND;
	strcpy(m->buf, path);
	int nseg = split(m->buf, seg);
	if (nseg < 0)
		return ROUTER_NOT_FOUND;

	bool path_known = false;
	for (size_t i = 0; i < n; i++) {
		if (!fits(routes[i].path, seg, nseg, m, false))
			continue;
		path_known = true;
		if (m->path_route == NULL)
			m->path_route = &routes[i];
		if (method_fits(routes[i].method, method)) {
			m->route = &routes[i];
			fits(routes[i].path, seg, nseg, m, true);
			break;
		}
	}
	if (!path_known)
		return ROUTER_NOT_FOUND;
	/* Allow is needed only by a 405 and by a preflight: not on the common path. */
	if (m->route && strcmp(method, "OPTIONS") != 0)
		return ROUTER_FOUND;
	/* Allow lists every method of the templates that fit (sorted, for 405 and preflight). */
	const char *methods[16];
	size_t nm = 0;
	for (size_t i = 0; i < n && nm < 15; i++) {
		if (!fits(routes[i].path, seg, nseg, m, false))
			continue;
		for (int head = 0; head < 2; head++) {
			const char *name = head ? "HEAD" : routes[i].method;
			if (head && strcmp(routes[i].method, "GET") != 0)
				break;
			bool seen = false;
			for (size_t j = 0; j < nm; j++)
				seen = seen || strcmp(methods[j], name) == 0;
			if (!seen)
				methods[nm++] = name;
		}
	}
	for (size_t i = 1; i < nm; i++)
		for (size_t j = i; j > 0 && strcmp(methods[j - 1], methods[j]) > 0; j--) {
			const char *t = methods[j];
			methods[j] = methods[j - 1];
			methods[j - 1] = t;
		}
	for (size_t i = 0; i < nm; i++) {
		if (i)
			strncat(m->allow, ", ", sizeof m->allow - strlen(m->allow) - 1);
		strncat(m->allow, methods[i], sizeof m->allow - strlen(m->allow) - 1);
	}
	return m->route ? ROUTER_FOUND : ROUTER_METHOD_NOT_ALLOWED;
}
