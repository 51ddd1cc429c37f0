/* The dashboard (docs/dashboard.md): the files of ui/, compiled into the binary, answered on
 * the I/O thread with no authentication (the page holds no data: its API calls carry the token
 * the user pastes). See docs/dashboard.md for the headers and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/common.h"
#include "handlers/handlers.h"
#include "handlers/ui_files.h"

/* The page runs only its own files: no inline script or style, no other origin, no framing,
 * no <base> rewriting, forms post only here. Cache-Control no-cache: the browser revalidates
 * every time (a 304 with the ETag), so a new binary's page is picked up at once. */
static const struct h_header ui_headers[] = {
	{"Content-Security-Policy",
	 "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-cache"},
};

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

static void ui_serve(struct h_ctx *ctx, const char *path)
{
	const struct h_ui_file *f = ui_find(path);
	if (f == NULL) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "The dashboard has no such file.", NULL);
		return;
	}
	ctx->headers = ui_headers;
	ctx->nheaders = sizeof ui_headers / sizeof ui_headers[0];
	snprintf(ctx->etag, sizeof ctx->etag, "%s", f->etag);
	if (ctx->if_none_match && etag_listed(ctx->if_none_match, f->etag)) {
		ctx->status = 304;
		return;
	}
	ctx->status = 200;
	ctx->content_type = f->content_type;
	ctx->raw = (char *)f->bytes;
	ctx->raw_len = f->len;
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
