#include "core/problem.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *code;
	int status;
	const char *title;
	const char *detail;
} problems[PROBLEM_COUNT] = {
#define RG_PROBLEM_ROW(name, code_, status_, title_, detail_) \
	[PROBLEM_##name] = {#code_, status_, title_, detail_},
	RG_PROBLEMS(RG_PROBLEM_ROW)
#undef RG_PROBLEM_ROW
};

static bool known(enum rg_problem p)
{
	return p > PROBLEM_NONE && p < PROBLEM_COUNT;
}

const char *core_problem_code(enum rg_problem p)
{
	return known(p) ? problems[p].code : NULL;
}

const char *core_problem_title(enum rg_problem p)
{
	return known(p) ? problems[p].title : NULL;
}

int core_problem_status(enum rg_problem p)
{
	return known(p) ? problems[p].status : 0;
}

const char *core_problem_default_detail(enum rg_problem p)
{
	return known(p) ? problems[p].detail : NULL;
}

enum rg_problem core_problem_from_code(const char *code)
{
	for (int p = PROBLEM_NONE + 1; code && p < PROBLEM_COUNT; p++)
		if (strcmp(problems[p].code, code) == 0)
			return (enum rg_problem)p;
	return PROBLEM_NONE;
}

json_t *core_problem_new(enum rg_problem p, const char *detail, const char *request_id,
			 json_t *errors, long long current_revision)
{
	if (!known(p))
		return NULL;
	char type[128];
	snprintf(type, sizeof type, "urn:recallgate:problem:%s", problems[p].code);
	json_t *doc = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "type", type, "title",
				problems[p].title, "status", problems[p].status, "detail",
				detail ? detail : problems[p].detail, "code", problems[p].code,
				"request_id", request_id ? request_id : "");
	if (doc == NULL)
		return NULL;
	if (errors && json_array_size(errors) > RG_MAX_ERRORS) {
		json_t *kept = json_array();
		for (size_t i = 0; kept && i < RG_MAX_ERRORS; i++)
			json_array_append(kept, json_array_get(errors, i));
		json_object_set_new(doc, "errors", kept);
		json_object_set_new(doc, "errors_truncated", json_true());
	} else if (errors && json_array_size(errors) > 0) {
		json_object_set(doc, "errors", errors);
	}
	if (current_revision >= 0)
		json_object_set_new(doc, "current_revision", json_integer(current_revision));
	else if (current_revision == PROBLEM_NULL_REVISION)
		json_object_set_new(doc, "current_revision", json_null());
	return doc;
}
