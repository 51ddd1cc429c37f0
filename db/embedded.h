/* Files compiled into the binary by cmake/embed.cmake. */
#ifndef RG_DB_EMBEDDED_H
#define RG_DB_EMBEDDED_H

struct rg_embedded_file {
	const char *name;   /* e.g. "0001_foundation.sql" */
	const char *bytes;  /* NUL-terminated */
	unsigned long len;
};

extern const struct rg_embedded_file rg_migrations[];
extern const unsigned rg_migrations_count;
/* The files of db/functions, by name: each one function's current CREATE OR REPLACE text */
extern const struct rg_embedded_file rg_functions[];
extern const unsigned rg_functions_count;
extern const char *const rg_openapi_yaml;
extern const unsigned long rg_openapi_yaml_len;

#endif
