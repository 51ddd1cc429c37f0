/* The dashboard's files (ui/), compiled into the binary by cmake/embed.cmake (MODE=ui). */
#ifndef RG_HANDLERS_UI_FILES_H
#define RG_HANDLERS_UI_FILES_H

struct h_ui_file {
	const char *path;         /* relative to ui/: "index.html", "views/explain.js" */
	const char *content_type; /* from the extension */
	const char *etag;         /* "\"<24 hex digits of the SHA-256>\"" */
	const char *bytes;        /* NUL-terminated */
	unsigned long len;
};

/* Sorted by path. */
extern const struct h_ui_file h_ui_files[];
extern const unsigned h_ui_files_count;

#endif
