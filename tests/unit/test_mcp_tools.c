/* The MCP tool table and the schemas generated from field descriptions (handlers/mcp_tools.c):
 * every tool adapts a route that exists, no argument name means two things, each field type
 * maps to the JSON Schema it should, and what tools/list shows follows the revision. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ids.h"
#include "handlers/mcp_internal.h"

static bool in_spec(const struct field_spec *spec, const char *name)
{
	for (const struct field_spec *f = spec; f && f->name; f++)
		if (strcmp(f->name, name) == 0)
			return true;
	return false;
}

static void test_every_tool_has_its_route(void **state)
{
	(void)state;
	assert_int_equal(mcp_tools_count, 21);
	for (size_t i = 0; i < mcp_tools_count; i++) {
		const struct mcp_tool *t = &mcp_tools[i];
		const struct h_route *route = mcp_tool_route(t);
		assert_non_null(route);
		assert_ptr_equal(mcp_tool_find(t->name), t);
		assert_true(route->scope != 0 && route->scope != H_SCOPE_TOKEN);
		/* written for a model to choose, short: what every tool shares is in the
		 * instructions */
		assert_true(strlen(t->description) > 80 && strlen(t->description) < 320);
		/* every query argument is described */
		for (const struct field_spec *q = t->query; q && q->name; q++)
			assert_non_null(q->desc);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(mcp_tools[j].name, t->name);
		/* a path parameter is neither a body field nor a query parameter */
		for (const char *p = strchr(route->path, '{'); p; p = strchr(p + 1, '{')) {
			char name[64];
			size_t n = (size_t)(strchr(p, '}') - p - 1);
			memcpy(name, p + 1, n);
			name[n] = '\0';
			assert_false(in_spec(route->body, name));
			assert_false(in_spec(t->query, name));
		}
		for (const struct field_spec *q = t->query; q && q->name; q++)
			assert_false(in_spec(route->body, q->name));
	}
	assert_null(mcp_tool_find(NULL));
	assert_null(mcp_tool_find("memory_searc"));
}

static void test_describe_by_revision(void **state)
{
	(void)state;
	const struct mcp_tool *t = mcp_tool_find("preference_remember");
	json_t *latest = mcp_tool_describe(t, MCP_REV_2025_11_25);
	json_t *in = json_object_get(latest, "inputSchema");
	assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
	assert_true(json_is_false(json_object_get(in, "additionalProperties")));
	json_t *key = json_object_get(json_object_get(in, "properties"), "key");
	assert_string_equal(json_string_value(json_object_get(key, "pattern")),
			    "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
	assert_non_null(json_object_get(key, "description"));
	/* expected_revision is required and nullable in /v1: optional here (absent is null) */
	json_t *required = json_object_get(in, "required");
	for (size_t i = 0; i < json_array_size(required); i++)
		assert_string_not_equal(json_string_value(json_array_get(required, i)),
					"expected_revision");
	json_t *out = json_object_get(latest, "outputSchema");
	assert_string_equal(json_string_value(json_object_get(out, "type")), "object");
	assert_null(json_object_get(out, "anyOf")); /* a refusal has no structuredContent */
	assert_non_null(json_object_get(latest, "title"));
	json_t *ann = json_object_get(latest, "annotations");
	assert_null(json_object_get(ann, "title")); /* the tool's own title says it */
	assert_true(json_is_false(json_object_get(ann, "readOnlyHint")));
	assert_true(json_is_true(json_object_get(ann, "idempotentHint")));
	json_decref(latest);
	json_t *mid = mcp_tool_describe(t, MCP_REV_2025_03_26);
	assert_null(json_object_get(mid, "outputSchema"));
	assert_non_null(json_object_get(json_object_get(mid, "annotations"), "title"));
	json_decref(mid);
	/* the hints tell the truth (§13) */
	static const struct {
		const char *tool;
		bool read_only, open_world;
	} hints[] = {{"memory_context", true, false}, {"source_content", true, false},
		     {"decision_context_retrieve", true, true}, {"source_revoke", false, false},
		     {"memory_search", true, false}};
	for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
		const struct mcp_tool *h = mcp_tool_find(hints[i].tool);
		assert_non_null(h);
		assert_int_equal(h->read_only, hints[i].read_only);
		assert_int_equal(h->open_world, hints[i].open_world);
	}
	assert_true(mcp_tool_find("source_revoke")->destructive);
	assert_true(mcp_tool_find("preference_retire")->destructive);
	assert_false(mcp_tool_find("source_classify")->destructive);
	json_t *old = mcp_tool_describe(t, MCP_REV_2024_11_05);
	assert_null(json_object_get(old, "annotations"));
	assert_int_equal(json_object_size(old), 3); /* name, description, inputSchema */
	json_decref(old);
	for (size_t i = 0; i < mcp_tools_count; i++) { /* every output schema is JSON */
		json_t *d = mcp_tool_describe(&mcp_tools[i], MCP_REV_2025_11_25);
		assert_non_null(json_object_get(d, "outputSchema"));
		json_decref(d);
	}
}

static bool never(const char *s)
{
	(void)s;
	return false;
}

static void test_schema_of_every_type(void **state)
{
	(void)state;
	static const char *const colours[] = {"red", "blue", NULL};
	static const struct field_spec item = {.type = F_STRING, .min = 1, .max = 8};
	static const struct field_spec sub[] = {
		{.name = "a", .type = F_BOOL, .required = true}, {.name = NULL}};
	const struct field_spec spec[] = {
		{.name = "s", .type = F_STRING, .required = true, .min = 1, .max = 10,
		 .check = never, .check_reason = "must match ^x$"},
		{.name = "r", .type = F_STRING, .check = never, .check_reason = "must be safe"},
		{.name = "i", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX,
		 .nullable = true, .desc = "An integer."},
		{.name = "f", .type = F_NUMBER, .min = 1, .max = 120, .dflt = "5"},
		{.name = "e", .type = F_ENUM, .values = colours, .nullable = true},
		{.name = "t", .type = F_TIMESTAMP},
		{.name = "o", .type = F_OBJECT, .sub = sub},
		{.name = "free", .type = F_OBJECT},
		{.name = "l", .type = F_ARRAY, .min = 1, .max = 2, .item = &item, .unique = true},
		{.name = "m", .type = F_MAP, .max = 4, .key_pattern = "^[a-z]+$", .item = &item},
		{.name = NULL},
	};
	json_t *s = mcp_schema_of_fields(spec);
	char *text = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *p = json_object_get(s, "properties");
	/* no null unions (an optional value is an absent property); ids' patterns bound them */
	const char *want[][2] = {
		{"s", "{\"pattern\":\"^x$\",\"type\":\"string\"}"},
		{"r", "{\"type\":\"string\"}"},
		{"i", "{\"description\":\"An integer.\",\"minimum\":1,\"type\":\"integer\"}"},
		{"f", "{\"default\":5,\"maximum\":120,\"minimum\":1,\"type\":\"number\"}"},
		{"e", "{\"enum\":[\"red\",\"blue\"]}"},
		{"t", "{\"format\":\"date-time\",\"type\":\"string\"}"},
		{"o", "{\"additionalProperties\":false,\"properties\":{\"a\":{\"type\":\"boolean\"}},"
		      "\"required\":[\"a\"],\"type\":\"object\"}"},
		{"free", "{\"type\":\"object\"}"},
		{"l", "{\"items\":{\"maxLength\":8,\"minLength\":1,\"type\":\"string\"},"
		      "\"maxItems\":2,\"minItems\":1,\"type\":\"array\",\"uniqueItems\":true}"},
		{"m", "{\"additionalProperties\":{\"maxLength\":8,\"minLength\":1,\"type\":\"string\"},"
		      "\"maxProperties\":4,\"propertyNames\":{\"pattern\":\"^[a-z]+$\"},"
		      "\"type\":\"object\"}"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char *got = json_dumps(json_object_get(p, want[i][0]), JSON_COMPACT | JSON_SORT_KEYS);
		assert_string_equal(got, want[i][1]);
		free(got);
	}
	assert_int_equal(json_array_size(json_object_get(s, "required")), 1);
	free(text);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_tool_has_its_route),
		cmocka_unit_test(test_describe_by_revision),
		cmocka_unit_test(test_schema_of_every_type),
	};
	return cmocka_run_group_tests_name("unit_mcp_tools", tests, NULL, NULL);
}
