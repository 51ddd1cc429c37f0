/* core_fields_validate (core/fields.c) over fuzzed JSON, against the body description of
 * every route of the handlers' table (h_routes) and then, as server/http.c does, the route's
 * cross-field check. Besides the sanitizers, each answer must keep the promises of
 * core/fields.h and handlers/api.h:
 *   FIELDS_OK exactly when errors[] is empty (a dropped error would let a bad body through);
 *   FIELDS_UNKNOWN exactly when an error says "unknown field";
 *   a non-object body is INVALID with field "";
 *   every error is {field, reason}, both strings, the reason non-empty;
 *   the same body gives the same errors twice;
 *   a route check returns a code exactly when it appended an error. */
#include <stdbool.h>
#include <string.h>

#include "core/fields.h"
#include "core/jsonx.h"
#include "handlers/api.h"
#include "fuzz.h"

static bool has_unknown(const json_t *errors)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e)
		if (strcmp(json_string_value(json_object_get(e, "reason")), FIELDS_REASON_UNKNOWN) == 0)
			return true;
	return false;
}

static void check_errors_shape(const json_t *errors)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e) {
		const json_t *reason = json_object_get(e, "reason");
		FUZZ_ASSERT(json_is_object(e) && json_object_size(e) == 2);
		FUZZ_ASSERT(json_is_string(json_object_get(e, "field")));
		FUZZ_ASSERT(json_is_string(reason) && json_string_length(reason) > 0);
	}
}

static void validate(const json_t *body, const struct h_route *route)
{
	json_t *errors = json_array(), *again = json_array();
	enum fields_result r = core_fields_validate(body, route->body, errors);
	FUZZ_ASSERT(r == FIELDS_OK || r == FIELDS_INVALID || r == FIELDS_UNKNOWN);
	FUZZ_ASSERT((r == FIELDS_OK) == (json_array_size(errors) == 0));
	FUZZ_ASSERT((r == FIELDS_UNKNOWN) == has_unknown(errors));
	if (!json_is_object(body)) {
		FUZZ_ASSERT(r == FIELDS_INVALID && json_array_size(errors) == 1);
		FUZZ_ASSERT(strcmp(json_string_value(json_object_get(json_array_get(errors, 0),
								     "field")), "") == 0);
	}
	check_errors_shape(errors);
	FUZZ_ASSERT(core_fields_validate(body, route->body, again) == r);
	FUZZ_ASSERT(json_equal(errors, again));
	if (r == FIELDS_OK && route->check) {
		enum rg_problem code = route->check(body, errors);
		FUZZ_ASSERT((code != PROBLEM_NONE) == (json_array_size(errors) > 0));
		FUZZ_ASSERT(code < PROBLEM_COUNT);
		check_errors_shape(errors);
	}
	json_decref(errors);
	json_decref(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *body = core_json_parse_strict((const char *)data, size);
	if (body == NULL)
		return 0; /* the server answers 400 invalid_json before any field check */
	for (size_t i = 0; i < h_routes_count; i++)
		if (h_routes[i].body)
			validate(body, &h_routes[i]);
	json_decref(body);
	return 0;
}
