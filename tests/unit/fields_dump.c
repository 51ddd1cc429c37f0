/* Prints, as one JSON object, the field descriptions (core/fields.h) of every route that takes a
 * body (handlers/routes.c), keyed "METHOD path", with the MCP tool that adapts the route (if
 * one does: handlers/mcp_tools.c), the values of the rules that accept a closed set, and, per
 * MCP tool, its route and the arguments that are not body fields: its query parameters (the
 * tool table's field_spec) and its path parameters with their descriptions.
 * tests/unit/openapi_drift.py compares them with openapi/openapi.yaml's request schemas and
 * parameters. The dump is lossless: every member of a field_spec that validation or a schema
 * reads is printed (its one-sentence `desc` too), so a change to a table is a change here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/ids.h"
#include "handlers/api.h"
#include "handlers/mcp_internal.h"

static const char *const type_names[] = {
	[F_STRING] = "string", [F_INT] = "int",   [F_NUMBER] = "number",
	[F_BOOL] = "bool",     [F_ENUM] = "enum", [F_TIMESTAMP] = "timestamp",
	[F_OBJECT] = "object", [F_ARRAY] = "array", [F_MAP] = "map",
};

static json_t *dump_fields(const struct field_spec *spec);

/* A bound as JSON: null for "none" (INT64_MIN / INT64_MAX, or a max of 0). */
static json_t *bound(int64_t v, bool is_max)
{
	if (v == INT64_MIN || v == INT64_MAX || (is_max && v == 0))
		return json_null();
	return json_integer((json_int_t)v);
}

static json_t *dump_field(const struct field_spec *f)
{
	json_t *o = json_pack("{s:s, s:b, s:b}", "type", type_names[f->type], "required",
			      f->required, "nullable", f->nullable);
	if (f->name)
		json_object_set_new(o, "name", json_string(f->name));
	if (f->desc)
		json_object_set_new(o, "desc", json_string(f->desc));
	if (f->dflt) { /* JSON text; an unparseable one is printed as a string and then differs */
		json_t *d = json_loads(f->dflt, JSON_DECODE_ANY, NULL);
		json_object_set_new(o, "default", d ? d : json_string(f->dflt));
	}
	switch (f->type) {
	case F_STRING:
	case F_INT:
	case F_NUMBER:
	case F_ARRAY:
		json_object_set_new(o, "min", bound(f->min, false));
		json_object_set_new(o, "max", bound(f->max, true));
		break;
	case F_MAP: /* a map has a most, never a least */
		json_object_set_new(o, "max", bound(f->max, true));
		break;
	default:
		break;
	}
	if (f->type == F_ENUM) {
		json_t *values = json_array();
		for (const char *const *e = f->values; e && *e; e++)
			json_array_append_new(values, json_string(*e));
		json_object_set_new(o, "values", values);
	}
	if (f->check)
		json_object_set_new(o, "check_reason",
				    json_string(f->check_reason ? f->check_reason : ""));
	if (f->key_pattern)
		json_object_set_new(o, "key_pattern", json_string(f->key_pattern));
	if (f->type == F_OBJECT) {
		json_object_set_new(o, "open", json_boolean(f->open));
		json_object_set_new(o, "fields", f->sub ? dump_fields(f->sub) : json_null());
	}
	if (f->item)
		json_object_set_new(o, "item", dump_field(f->item));
	if (f->type == F_ARRAY)
		json_object_set_new(o, "unique", json_boolean(f->unique));
	return o;
}

static json_t *dump_fields(const struct field_spec *spec)
{
	json_t *a = json_array();
	for (const struct field_spec *f = spec; f->name; f++)
		json_array_append_new(a, dump_field(f));
	return a;
}

/* The values a rule accepts, for the rules that accept a closed set (keyed by the rule's
 * reason): openapi.yaml may state them as an enum. */
static json_t *rule_values(void)
{
	json_t *scopes = json_array();
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++)
		json_array_append_new(scopes, json_string(core_scope_name(i)));
	return json_pack("{s:o}", "must be a known scope", scopes);
}

/* The name of the MCP tool that adapts route r, or NULL. */
static const char *tool_of(const struct h_route *r)
{
	for (size_t t = 0; t < mcp_tools_count; t++)
		if (mcp_tool_route(&mcp_tools[t]) == r)
			return mcp_tools[t].name;
	return NULL;
}

static void add_path_param(const char *name, size_t len, void *arg)
{
	char key[64];
	snprintf(key, sizeof key, "%.*s", (int)len, name);
	json_t *p = json_pack("{s:s}", "name", key);
	const char *desc = mcp_path_param_desc(key);
	if (desc)
		json_object_set_new(p, "desc", json_string(desc));
	json_array_append_new(arg, p);
}

/* Every MCP tool, keyed by name: its route ("METHOD path"), its query parameters and its path
 * parameters, each with the description its input schema shows. */
static json_t *dump_tools(void)
{
	json_t *tools = json_object();
	for (size_t t = 0; t < mcp_tools_count; t++) {
		const struct mcp_tool *tool = &mcp_tools[t];
		char route[300];
		snprintf(route, sizeof route, "%s %s", tool->method, tool->path);
		json_t *path = json_array();
		mcp_each_path_param(tool->path, add_path_param, path);
		json_object_set_new(tools, tool->name,
				    json_pack("{s:s, s:o, s:o}", "route", route, "query",
					      tool->query ? dump_fields(tool->query) : json_array(),
					      "path", path));
	}
	return tools;
}

int main(void)
{
	json_t *all = json_object();
	for (size_t i = 0; i < h_routes_count; i++) {
		const struct h_route *r = &h_routes[i];
		if (r->body == NULL)
			continue;
		char key[300];
		snprintf(key, sizeof key, "%s %s", r->method, r->path);
		json_t *route = json_pack("{s:o, s:b}", "fields", dump_fields(r->body),
					  "cross_field_check", r->check != NULL);
		const char *tool = tool_of(r);
		if (tool)
			json_object_set_new(route, "mcp_tool", json_string(tool));
		json_object_set_new(all, key, route);
	}
	all = json_pack("{s:o, s:o, s:o}", "routes", all, "tools", dump_tools(), "rule_values",
			rule_values());
	int rc = json_dumpf(all, stdout, JSON_INDENT(1) | JSON_SORT_KEYS) == 0 ? 0 : 1;
	json_decref(all);
	putchar('\n');
	return rc;
}
