#include "core/problem.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *code;
	const char *title;
} titles[] = {
	{"invalid_json", "Invalid JSON"},
	{"unauthenticated", "Unauthenticated"},
	{"forbidden", "Forbidden"},
	{"not_found", "Not found"},
	{"method_not_allowed", "Method not allowed"},
	{"stale_revision", "Stale revision"},
	{"operation_conflict", "Operation conflict"},
	{"precondition_failed", "Precondition failed"},
	{"payload_too_large", "Payload too large"},
	{"unsupported_media_type", "Unsupported media type"},
	{"validation_failed", "Validation failed"},
	{"unknown_field", "Unknown field"},
	{"capacity_exceeded", "Capacity exceeded"},
	{"rate_limited", "Rate limited"},
	{"database_unavailable", "Database unavailable"},
	{"query_timeout", "Query timeout"},
	{"internal", "Internal error"},
	{"thin_pointer_required", "Thin pointer required"},
	{"assent_missing", "Assent missing"},
	{"assent_invalid", "Assent invalid"},
	{"assent_expired", "Assent expired"},
	{"assent_revoked", "Assent revoked"},
	{"assent_stale", "Assent stale"},
	{"upstream_ineligible", "Upstream ineligible"},
	{"already_revoked", "Already revoked"},
};

const char *core_problem_title(const char *code)
{
	for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
		if (strcmp(titles[i].code, code) == 0)
			return titles[i].title;
	return "Request failed";
}

json_t *core_problem_new(int status, const char *code, const char *detail,
			 const char *request_id, json_t *errors, long long current_revision)
{
	char type[128];
	snprintf(type, sizeof type, "urn:recallgate:problem:%s", code);
	json_t *p = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "type", type, "title",
			      core_problem_title(code), "status", status, "detail",
			      detail ? detail : core_problem_title(code), "code", code,
			      "request_id", request_id ? request_id : "");
	if (p == NULL)
		return NULL;
	if (errors && json_array_size(errors) > 0)
		json_object_set(p, "errors", errors);
	if (current_revision >= 0)
		json_object_set_new(p, "current_revision", json_integer(current_revision));
	else if (current_revision == PROBLEM_NULL_REVISION)
		json_object_set_new(p, "current_revision", json_null());
	return p;
}
