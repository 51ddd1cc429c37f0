/* The dashboard (docs/dashboard.md): the files of ui/, compiled into the binary, answered on
 * the I/O thread with no authentication (the page holds no data: its API calls carry the token
 * the user pastes), gzip-encoded when the client accepts it (compressed at build time, never
 * per request). See docs/dashboard.md for the headers and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/ui_files.h"

/* The page runs only its own files: no inline script or style, no other origin, no framing,
 * no <base> rewriting, forms post only here. Cache-Control no-cache: the browser revalidates
 * every time (a 304 with the ETag), so a new binary's page is picked up at once. Vary: the
 * answer depends on Accept-Encoding, so a cache never hands the gzip form to a client that
 * did not ask for it. */
#define UI_HEADERS                                                                          \
	{"Content-Security-Policy",                                                         \
	 "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"}, \
	{"X-Content-Type-Options", "nosniff"}, {"Referrer-Policy", "no-referrer"},          \
	{"Cache-Control", "no-cache"}, {"Vary", "Accept-Encoding"}
static const struct h_header ui_headers[] = {UI_HEADERS};
static const struct h_header ui_headers_gzip[] = {UI_HEADERS, {"Content-Encoding", "gzip"}};

static int by_path(const void *key, const void *elem)
{
	return strcmp(key, ((const struct h_ui_file *)elem)->path);
}

static const struct h_ui_file *ui_find(const char *path)
{
	return bsearch(path, h_ui_files, h_ui_files_count, sizeof h_ui_files[0], by_path);
}

/* Does an If-None-Match list ("a", W/"b", or *) name etag? */
static bool etag_listed(const char *list, const char *etag)
{
	size_t elen = strlen(etag);
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (strncmp(p, "W/", 2) == 0) /* weak comparison (RFC 9110 §13.1.2) */
			p += 2;
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == elen && strncmp(p, etag, elen) == 0)
			return true;
		if (end == NULL)
			break;
		p = end + 1;
	}
	return false;
}

/* Is the weight that follows a coding's name in an Accept-Encoding member q=0 ("0", "0.",
 * "0.000")? p runs to end (the member's end). RFC 9110 §12.4.2: weight = OWS ";" OWS "q="
 * qvalue. */
static bool weight_is_zero(const char *p, const char *end)
{
	while ((p = memchr(p, ';', (size_t)(end - p))) != NULL) {
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || (*p != 'q' && *p != 'Q') || p[1] != '=')
			continue;
		p += 2;
		if (p == end || *p != '0')
			return false;
		for (p++; p < end && (*p == '.' || *p == '0'); p++)
			;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		return p == end || *p == ';';
	}
	return false;
}

/* Does an Accept-Encoding list (RFC 9110 §12.5.3) accept gzip? "gzip" (or its alias
 * "x-gzip") unless weighted q=0; when neither is listed, "*" unless weighted q=0. */
static bool accepts_gzip(const char *list)
{
	int gzip = -1, any = -1; /* -1 not listed, 0 refused, 1 accepted */
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t name_len = strcspn(p, ",; \t");
		const char *end = p + strcspn(p, ",");
		int ok = !weight_is_zero(p + name_len, end);
		if ((name_len == 4 && strncasecmp(p, "gzip", 4) == 0) ||
		    (name_len == 6 && strncasecmp(p, "x-gzip", 6) == 0))
			gzip = gzip == 1 ? 1 : ok;
		else if (name_len == 1 && *p == '*')
			any = ok;
		p = end;
	}
	return gzip >= 0 ? gzip == 1 : any == 1;
}

static void ui_serve(struct h_ctx *ctx, const char *path)
{
	const struct h_ui_file *f = ui_find(path);
	if (f == NULL) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "The dashboard has no such file.", NULL);
		return;
	}
	const char *accept = ctx->header ? ctx->header(ctx, "Accept-Encoding") : NULL;
	bool gzip = f->gz_bytes != NULL && accept != NULL && accepts_gzip(accept);
	const char *etag = gzip ? f->gz_etag : f->etag;
	ctx->headers = ui_headers;
	ctx->nheaders = sizeof ui_headers / sizeof ui_headers[0];
	snprintf(ctx->etag, sizeof ctx->etag, "%s", etag);
	if (ctx->if_none_match && etag_listed(ctx->if_none_match, etag)) {
		ctx->status = 304;
		return;
	}
	if (gzip) {
		ctx->headers = ui_headers_gzip;
		ctx->nheaders = sizeof ui_headers_gzip / sizeof ui_headers_gzip[0];
	}
	ctx->status = 200;
	ctx->content_type = f->content_type;
	ctx->raw = (char *)(gzip ? f->gz_bytes : f->bytes);
	ctx->raw_len = gzip ? f->gz_len : f->len;
	ctx->raw_static = true;
}

void h_ui_redirect(struct h_ctx *ctx)
{
	ctx->status = 301;
	snprintf(ctx->location, sizeof ctx->location, "/ui/");
}

void h_ui_index(struct h_ctx *ctx)
{
	ui_serve(ctx, "index.html");
}

/* GET /ui/{file} and /ui/<folder>/{file}: the folder is the template's text between "/ui/"
 * and "{file}". */
void h_ui_file(struct h_ctx *ctx)
{
	const char *file = h_param(ctx, "file");
	const char *folder = ctx->route->path + sizeof "/ui/" - 1;
	size_t folder_len = (size_t)(strchr(folder, '{') - folder);
	char path[256];
	int n = snprintf(path, sizeof path, "%.*s%s", (int)folder_len, folder, file ? file : "");
	if (file == NULL || n < 0 || (size_t)n >= sizeof path) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "The dashboard has no such file.", NULL);
		return;
	}
	ui_serve(ctx, path);
}
