/* Validation is data: a body's fields are described once and checked by one helper that
 * produces the 422 errors[] of openapi/openapi.yaml "Problem". */
#ifndef RG_CORE_FIELDS_H
#define RG_CORE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "core/problem.h"

enum field_type {
	F_STRING,    /* min..max UTF-8 bytes; optional `check` */
	F_INT,       /* a JSON integer in min..max (1.0 and true are not integers) */
	F_NUMBER,    /* a finite JSON number in min..max */
	F_BOOL,
	F_ENUM,      /* a string from `values` */
	F_TIMESTAMP, /* an RFC 3339 timestamp with a real calendar date */
	F_OBJECT,    /* an object checked against `sub` (free-form when sub is NULL) */
	F_ARRAY,     /* min..max items, each checked against `item`; `unique` forbids repeats */
	F_MAP,       /* an object of at most max members; keys pass `check` (described by
		      * key_pattern), values `item`. Keys are private: errors name a member by
		      * its position in the object as sent, "labels[3]", never by its key */
};

struct field_spec {
	const char *name;
	enum field_type type;
	bool required;
	bool nullable;               /* JSON null is accepted (and counts as present) */
	int64_t min, max;            /* bytes, value or item count; max 0 = unbounded */
	const char *const *values;   /* F_ENUM: NULL-terminated list */
	bool (*check)(const char *); /* F_STRING: extra rule */
	const char *check_reason;    /* F_STRING: reason when `check` fails ("must ...") */
	const char *key_pattern;     /* F_MAP: the pattern `check` enforces on keys, for the reason */
	const struct field_spec *sub;/* F_OBJECT: fields, terminated by a NULL name */
	const struct field_spec *item;/* F_ARRAY: one spec for every element (name unused) */
	bool unique;                 /* F_ARRAY of strings: no repeats */
	bool open;                   /* F_OBJECT: members not in `sub` are allowed (ignored) */
	/* One sentence for a reader (a model calling the MCP tool, a client reading
	 * openapi/openapi.yaml, whose property description must equal it: openapi_drift). */
	const char *desc;
	/* The value an absent field stands for, as JSON text ("10", "\"active\""): the schema's
	 * `default` in an MCP tool and in openapi.yaml (openapi_drift). NULL: none. Documents
	 * what the handler does; validation never fills it in. */
	const char *dflt;
};

enum fields_result {
	FIELDS_OK = 0,
	FIELDS_INVALID, /* → 422 validation_failed */
	FIELDS_UNKNOWN, /* → 422 unknown_field (an unknown member was present) */
};

/* Checks obj against spec (terminated by an entry with a NULL name) and appends
 * {field, reason} objects to `errors` (borrowed, must be an array). A non-object → INVALID
 * with field "" ("body"). */
enum fields_result core_fields_validate(const json_t *obj, const struct field_spec *spec,
					json_t *errors);

/* A body's whole check, as every caller of a route's handler runs it (server/dispatch.c for
 * /v1, handlers/mcp_tools.c for a tool call): the field descriptions, then the route's rule
 * across fields (`check`, may be NULL; run only when the fields passed, or when it finds a
 * problem of its own). PROBLEM_NONE when the body is fine; otherwise the 422 code to answer,
 * with errors (borrowed, an array) appended. */
enum rg_problem core_fields_check_body(const json_t *body, const struct field_spec *spec,
				       enum rg_problem (*check)(const json_t *body, json_t *errors),
				       json_t *errors);

/* One wording for every 422 reason: a phrase that completes "<field> ...", always starting
 * with "must" ("must be at most 256 bytes", "must be present"). Shared phrases: */
#define FIELDS_REASON_UNKNOWN "must not be sent: this endpoint has no such field"
#define FIELDS_REASON_UTC "must be an RFC 3339 timestamp in UTC (ending in Z)"
#define FIELDS_REASON_FUTURE "must be in the future"

/* A default's JSON text from a numeric constant: .dflt = FIELDS_DEFAULT(RG_X_DEFAULT). */
#define FIELDS_DEFAULT(v) FIELDS_STR_(v)
#define FIELDS_STR_(v) #v

/* Appends {field, reason} to errors, unless it already holds more than RG_MAX_ERRORS
 * (core/problem.h): the answer keeps only that many. */
void core_fields_error(json_t *errors, const char *field, const char *reason);

#endif
