/* RFC 9457 problem documents (API.md §0). */
#ifndef RG_CORE_PROBLEM_H
#define RG_CORE_PROBLEM_H

#include <jansson.h>

/* The short, fixed title for a problem code ("Not found"); never private text. */
const char *core_problem_title(const char *code);

/* current_revision values that are not revisions */
#define PROBLEM_NO_REVISION (-1LL)   /* the member is omitted */
#define PROBLEM_NULL_REVISION (-2LL) /* "current_revision": null (a never-written resource) */

/* Builds {type, title, status, detail, code, request_id[, errors][, current_revision]}.
 * errors: borrowed, may be NULL or empty (then omitted).
 * Returns a new reference. */
json_t *core_problem_new(int status, const char *code, const char *detail,
			 const char *request_id, json_t *errors, long long current_revision);

#endif
