/* Strict JSON input: what openapi/openapi.yaml "Order of checks" calls an unparseable body. */
#ifndef RG_CORE_JSONX_H
#define RG_CORE_JSONX_H

#include <stddef.h>
#include <jansson.h>

#define RG_MAX_JSON_DEPTH 32

/* Deepest nesting of arrays/objects in buf (strings are skipped); the top-level object is 1. */
size_t core_json_depth(const char *buf, size_t len);

/* Parses buf strictly: syntax, UTF-8, no NUL in strings, no duplicate keys, depth ≤ 32.
 * Any JSON value is accepted at the top level (the caller decides about non-objects).
 * Returns a new reference, or NULL when the body is unparseable. */
json_t *core_json_parse_strict(const char *buf, size_t len);

#endif
