/* The dashboard's files (ui/), compiled into the binary by cmake/embed.cmake (MODE=ui). */
#ifndef RG_HANDLERS_UI_FILES_H
#define RG_HANDLERS_UI_FILES_H

#include <stddef.h>

struct h_ui_file {
	const char *path;         /* relative to ui/: "index.html", "views/explain.js" */
	const char *content_type; /* from the extension */
	const char *etag;         /* "\"<24 hex digits of the SHA-256>\"" */
	const char *bytes;        /* NUL-terminated */
	unsigned long len;
	/* The same file gzip-encoded at build time (Content-Encoding: gzip), with its own ETag
	 * ("\"<the same 24 hex digits>-gz\"": another representation, another validator); all
	 * NULL / 0 when gzip would not make it smaller. */
	const char *gz_etag;
	const char *gz_bytes;
	unsigned long gz_len;
};

/* Sorted by path. */
extern const struct h_ui_file h_ui_files[];
extern const unsigned h_ui_files_count;

#endif
