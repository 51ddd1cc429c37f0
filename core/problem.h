/* RFC 9457 problem documents (openapi/openapi.yaml "Problem"). */
#ifndef RG_CORE_PROBLEM_H
#define RG_CORE_PROBLEM_H

#include <jansson.h>

/* Every problem code the service can answer, in one table: its status, its own title and
 * the detail used when the caller of core_problem_new gives none. A code is an enum value,
 * so a code without a title cannot be written: the compiler refuses a name that is not
 * here. Titles and details are fixed text; never private values.
 * X(NAME, code, status, title, default detail) */
#define RG_PROBLEMS(X) \
	X(INVALID_JSON, invalid_json, 400, "Invalid JSON", "The body is not valid JSON.") \
	X(INVALID_REQUEST, invalid_request, 400, "Invalid HTTP request", \
	  "The request's HTTP framing is not valid.") \
	X(UNAUTHENTICATED, unauthenticated, 401, "Unauthenticated", \
	  "A valid bearer token is required.") \
	X(FORBIDDEN, forbidden, 403, "Forbidden", "The token may not do this.") \
	X(ASSENT_MISSING, assent_missing, 403, "Assent missing", \
	  "The foreign source needs its owner's live assent.") \
	X(ASSENT_INVALID, assent_invalid, 403, "Assent invalid", \
	  "The foreign source needs its owner's live assent.") \
	X(ASSENT_EXPIRED, assent_expired, 403, "Assent expired", \
	  "The foreign source needs its owner's live assent.") \
	X(ASSENT_REVOKED, assent_revoked, 403, "Assent revoked", \
	  "The foreign source needs its owner's live assent.") \
	X(ASSENT_STALE, assent_stale, 403, "Assent stale", \
	  "The foreign source needs its owner's live assent.") \
	X(NOT_FOUND, not_found, 404, "Not found", "No such resource.") \
	X(METHOD_NOT_ALLOWED, method_not_allowed, 405, "Method not allowed", \
	  "This path does not support the method.") \
	X(STALE_REVISION, stale_revision, 409, "Stale revision", \
	  "expected_revision is not the current revision.") \
	X(OPERATION_CONFLICT, operation_conflict, 409, "Operation conflict", \
	  "operation_id was already used with different arguments.") \
	X(ALREADY_EXISTS, already_exists, 409, "Already exists", "The resource already exists.") \
	X(ALREADY_REVOKED, already_revoked, 409, "Already revoked", \
	  "The resource is already revoked.") \
	X(UPSTREAM_INELIGIBLE, upstream_ineligible, 409, "Upstream ineligible", \
	  "An upstream record is not eligible for retrieval.") \
	X(PRECONDITION_FAILED, precondition_failed, 412, "Precondition failed", \
	  "If-Match does not name the current revision.") \
	X(PAYLOAD_TOO_LARGE, payload_too_large, 413, "Payload too large", \
	  "The body exceeds the size limit.") \
	X(URI_TOO_LONG, uri_too_long, 414, "URI too long", "The request line is too long.") \
	X(UNSUPPORTED_MEDIA_TYPE, unsupported_media_type, 415, "Unsupported media type", \
	  "The body must be application/json.") \
	X(VALIDATION_FAILED, validation_failed, 422, "Validation failed", \
	  "The request is not valid: errors[] names each field and what it must be.") \
	X(UNKNOWN_FIELD, unknown_field, 422, "Unknown field", \
	  "The body has a field this endpoint does not accept: errors[] names it.") \
	X(CAPACITY_EXCEEDED, capacity_exceeded, 422, "Capacity exceeded", \
	  "The request would exceed a stored limit.") \
	X(THIN_POINTER_REQUIRED, thin_pointer_required, 422, "Thin pointer required", \
	  "A foreign source must be a pointer: errors[] names the field.") \
	X(RATE_LIMITED, rate_limited, 429, "Rate limited", "Too many requests; retry later.") \
	X(HEADERS_TOO_LARGE, headers_too_large, 431, "Request headers too large", \
	  "The request's header block is too large.") \
	X(INTERNAL, internal, 500, "Internal error", "The request could not be completed.") \
	X(SEMANTIC_PREFERENCE_UNAVAILABLE, semantic_preference_unavailable, 502, \
	  "Semantic preference provider unavailable", \
	  "The semantic-preference provider could not answer.") \
	X(DATABASE_UNAVAILABLE, database_unavailable, 503, "Database unavailable", \
	  "The database is unavailable; retry later.") \
	X(SHUTTING_DOWN, shutting_down, 503, "Shutting down", \
	  "This instance is shutting down; retry on another.") \
	X(TOO_MANY_STREAMS, too_many_streams, 503, "Too many event streams", \
	  "This instance serves as many event streams as it may; retry later.") \
	X(QUERY_TIMEOUT, query_timeout, 504, "Query timeout", \
	  "The database did not finish the request within its time limit; retry, or ask for " \
	  "less.")

enum rg_problem {
	PROBLEM_NONE = 0, /* no problem: a handler's answer is its reply */
#define RG_PROBLEM_ENUM(name, code, status, title, detail) PROBLEM_##name,
	RG_PROBLEMS(RG_PROBLEM_ENUM)
#undef RG_PROBLEM_ENUM
	PROBLEM_COUNT
};

/* The code's wire name ("not_found"); NULL for PROBLEM_NONE or out of range. */
const char *core_problem_code(enum rg_problem p);
/* The short, fixed title ("Not found"); NULL for PROBLEM_NONE or out of range. */
const char *core_problem_title(enum rg_problem p);
/* The HTTP status of a code (404); 0 for PROBLEM_NONE or out of range. */
int core_problem_status(enum rg_problem p);
/* The detail used when none is given; NULL for PROBLEM_NONE or out of range. */
const char *core_problem_default_detail(enum rg_problem p);
/* The code with this wire name, or PROBLEM_NONE. */
enum rg_problem core_problem_from_code(const char *code);

/* current_revision values that are not revisions */
#define PROBLEM_NO_REVISION (-1LL)   /* the member is omitted */
#define PROBLEM_NULL_REVISION (-2LL) /* "current_revision": null (a never-written resource) */

/* errors[] holds at most this many entries, in body order; past it the problem says
 * "errors_truncated": true (openapi/openapi.yaml "Problem"), so an answer is never much larger
 * than its request. core_fields_error keeps one more than this, so that the problem knows it
 * was cut. */
#define RG_MAX_ERRORS 20

/* Builds {type, title, status, detail, code, request_id[, errors[, errors_truncated]]
 * [, current_revision]} with the status of p. detail: NULL for p's default detail. errors:
 * borrowed, may be NULL or empty (then omitted); its first RG_MAX_ERRORS entries are kept.
 * Returns a new reference (NULL for PROBLEM_NONE). */
json_t *core_problem_new(enum rg_problem p, const char *detail, const char *request_id,
			 json_t *errors, long long current_revision);

#endif
