#include "core/fields.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/timefmt.h"

#define PATH_MAX_BYTES 256

void core_fields_error(json_t *errors, const char *field, const char *reason)
{
	/* one past the cap tells core_problem_new to say errors_truncated; the rest would only
	 * cost memory for entries no answer carries */
	if (json_array_size(errors) > RG_MAX_ERRORS)
		return;
	json_array_append_new(errors, json_pack("{s:s, s:s}", "field", field, "reason", reason));
}

__attribute__((format(printf, 3, 4)))
static void errorf(json_t *errors, const char *field, const char *fmt, ...)
{
	char reason[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	core_fields_error(errors, field, reason);
}

static bool check_object(const json_t *obj, const struct field_spec *spec, const char *path,
			 json_t *errors, bool *unknown, bool open);

/* "path.key" into out; a cut never splits a UTF-8 sequence (jansson refuses broken UTF-8,
 * and a dropped error would let a bad body through). */
static void join_path(char *out, size_t size, const char *path, const char *key)
{
	int n = snprintf(out, size, "%s%s%s", path, *path ? "." : "", key);
	if (n < 0 || (size_t)n < size)
		return;
	size_t end = size - 1, lead = end;
	while (lead > 0 && ((unsigned char)out[lead - 1] & 0xC0) == 0x80)
		lead--;
	if (lead == 0)
		return;
	unsigned char c = (unsigned char)out[lead - 1];
	size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (end - (lead - 1) < want)
		out[lead - 1] = '\0'; /* the last sequence was cut: drop it whole */
}

static void check_value(const json_t *v, const struct field_spec *f, const char *path,
			json_t *errors, bool *unknown)
{
	if (json_is_null(v)) {
		if (!f->nullable)
			core_fields_error(errors, path, "must not be null");
		return;
	}
	switch (f->type) {
	case F_STRING:
	case F_ENUM:
	case F_TIMESTAMP: {
		if (!json_is_string(v)) {
			core_fields_error(errors, path, "must be a string");
			return;
		}
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (f->type == F_ENUM) {
			for (const char *const *e = f->values; *e; e++)
				if (strcmp(*e, s) == 0)
					return;
			char reason[200] = "must be one of:";
			for (const char *const *e = f->values; *e; e++) {
				strncat(reason, " ", sizeof reason - strlen(reason) - 1);
				strncat(reason, *e, sizeof reason - strlen(reason) - 1);
			}
			core_fields_error(errors, path, reason);
			return;
		}
		if (f->type == F_TIMESTAMP) {
			int64_t ms;
			if (!core_time_parse(s, &ms))
				core_fields_error(errors, path,
						  "must be an RFC 3339 timestamp with a real date");
			return;
		}
		if ((int64_t)n < f->min)
			errorf(errors, path, "must be at least %lld bytes", (long long)f->min);
		else if (f->max > 0 && (int64_t)n > f->max)
			errorf(errors, path, "must be at most %lld bytes", (long long)f->max);
		else if (f->check && !f->check(s))
			core_fields_error(errors, path, f->check_reason ? f->check_reason : "must pass this field's rule");
		return;
	}
	case F_INT: {
		if (!json_is_integer(v)) {
			core_fields_error(errors, path, "must be an integer");
			return;
		}
		json_int_t i = json_integer_value(v);
		if (i < f->min || (f->max > 0 && i > f->max)) {
			if (f->max > 0)
				errorf(errors, path, "must be between %lld and %lld", (long long)f->min,
				       (long long)f->max);
			else
				errorf(errors, path, "must be at least %lld", (long long)f->min);
		}
		return;
	}
	case F_NUMBER: {
		if (!json_is_number(v)) {
			core_fields_error(errors, path, "must be a number");
			return;
		}
		double d = json_number_value(v);
		if (!isfinite(d) || d < (double)f->min || (f->max > 0 && d > (double)f->max)) {
			if (f->max > 0)
				errorf(errors, path, "must be between %lld and %lld", (long long)f->min,
				       (long long)f->max);
			else
				errorf(errors, path, "must be at least %lld", (long long)f->min);
		}
		return;
	}
	case F_BOOL:
		if (!json_is_boolean(v))
			core_fields_error(errors, path, "must be a boolean");
		return;
	case F_OBJECT:
		if (!json_is_object(v)) {
			core_fields_error(errors, path, "must be an object");
			return;
		}
		if (f->sub)
			check_object(v, f->sub, path, errors, unknown, f->open);
		return;
	case F_MAP: {
		const char *key;
		json_t *member;
		if (!json_is_object(v)) {
			core_fields_error(errors, path, "must be an object");
			return;
		}
		if (f->max > 0 && (int64_t)json_object_size(v) > f->max) {
			errorf(errors, path, "must have at most %lld members", (long long)f->max);
			return;
		}
		/* A map's keys are the caller's words (a label name, a context key): private.
		 * A member is named by its position in the object as sent (labels[3]); jansson
		 * iterates in insertion order, and duplicate keys never parse. */
		size_t pos = 0;
		json_object_foreach((json_t *)v, key, member) {
			char sub[PATH_MAX_BYTES];
			snprintf(sub, sizeof sub, "%s[%zu]", path, pos++);
			if (f->check && !f->check(key)) {
				errorf(errors, sub, "must have a key matching %s",
				       f->key_pattern ? f->key_pattern : "this map's key rule");
				continue;
			}
			if (f->item)
				check_value(member, f->item, sub, errors, unknown);
		}
		return;
	}
	case F_ARRAY: {
		if (!json_is_array(v)) {
			core_fields_error(errors, path, "must be an array");
			return;
		}
		size_t n = json_array_size(v);
		if ((int64_t)n < f->min) {
			errorf(errors, path, "must have at least %lld items", (long long)f->min);
			return;
		}
		if (f->max > 0 && (int64_t)n > f->max) {
			errorf(errors, path, "must have at most %lld items", (long long)f->max);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			char sub[PATH_MAX_BYTES];
			json_t *el = json_array_get(v, i);
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			if (f->item)
				check_value(el, f->item, sub, errors, unknown);
			if (f->unique && json_is_string(el))
				for (size_t j = 0; j < i; j++)
					if (json_equal(el, json_array_get(v, j))) {
						core_fields_error(errors, sub, "must not repeat an item");
						break;
					}
		}
		return;
	}
	}
}

static bool check_object(const json_t *obj, const struct field_spec *spec, const char *path,
			 json_t *errors, bool *unknown, bool open)
{
	char sub[PATH_MAX_BYTES];
	const char *key;
	json_t *v;
	size_t before = json_array_size(errors);

	/* Unknown members first, in the body's order. */
	json_object_foreach((json_t *)obj, key, v) {
		if (open)
			break;
		const struct field_spec *f = spec;
		while (f->name && strcmp(f->name, key) != 0)
			f++;
		if (f->name == NULL) {
			join_path(sub, sizeof sub, path, key);
			core_fields_error(errors, sub, FIELDS_REASON_UNKNOWN);
			*unknown = true;
		}
	}
	for (const struct field_spec *f = spec; f->name; f++) {
		join_path(sub, sizeof sub, path, f->name);
		v = json_object_get(obj, f->name);
		if (v == NULL) {
			if (f->required)
				core_fields_error(errors, sub, "must be present");
			continue;
		}
		check_value(v, f, sub, errors, unknown);
	}
	return json_array_size(errors) == before;
}

enum fields_result core_fields_validate(const json_t *obj, const struct field_spec *spec,
					json_t *errors)
{
	bool unknown = false;
	if (!json_is_object(obj)) {
		core_fields_error(errors, "", "must be a JSON object");
		return FIELDS_INVALID;
	}
	bool clean = check_object(obj, spec, "", errors, &unknown, false);
	if (unknown)
		return FIELDS_UNKNOWN;
	return clean ? FIELDS_OK : FIELDS_INVALID;
}

enum rg_problem core_fields_check_body(const json_t *body, const struct field_spec *spec,
				       enum rg_problem (*check)(const json_t *body, json_t *errors),
				       json_t *errors)
{
	enum fields_result fr = core_fields_validate(body, spec, errors);
	enum rg_problem code = fr == FIELDS_OK && check ? check(body, errors) : PROBLEM_NONE;
	if (code != PROBLEM_NONE)
		return code;
	if (fr == FIELDS_UNKNOWN)
		return PROBLEM_UNKNOWN_FIELD;
	return fr == FIELDS_OK ? PROBLEM_NONE : PROBLEM_VALIDATION_FAILED;
}
