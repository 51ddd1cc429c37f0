/* The MCP tools: each one a thin adapter over a /v1 route. Its input schema is generated from
 * the field descriptions that validate the route's body (core/fields.h) plus the route's
 * path parameters, and a call runs the route's own handler with the h_ctx /v1 would build:
 * the same validation, scope check, rules, audit records and answer. There is no second
 * implementation of any rule here. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "handlers/common.h"
#include "handlers/mcp_internal.h"

const struct mcp_tool *mcp_tool_find(const char *name)
{
	for (size_t i = 0; name && i < mcp_tools_count; i++)
		if (strcmp(mcp_tools[i].name, name) == 0)
			return &mcp_tools[i];
	return NULL;
}

/* Each tool's route, found once: /mcp asks on every request (its lane, tools/list, a call). */
static const struct h_route *tool_routes[MCP_TOOLS_MAX];
static pthread_once_t tool_routes_once = PTHREAD_ONCE_INIT;

static void find_tool_routes(void)
{
	for (size_t t = 0; t < mcp_tools_count; t++)
		for (size_t i = 0; i < h_routes_count && tool_routes[t] == NULL; i++)
			if (strcmp(h_routes[i].method, mcp_tools[t].method) == 0 &&
			    strcmp(h_routes[i].path, mcp_tools[t].path) == 0)
				tool_routes[t] = &h_routes[i];
}

const struct h_route *mcp_tool_route(const struct mcp_tool *t)
{
	pthread_once(&tool_routes_once, find_tool_routes);
	return tool_routes[t - mcp_tools];
}

/* ---- schemas ------------------------------------------------------------------------ */

static json_t *schema_of(const struct field_spec *f);

/* An input schema has no null unions (§13: some model APIs reject them): a nullable field is
 * an optional property, absent standing for null (mcp_call.c sends null for it). */
static json_t *typed(const char *type)
{
	return json_pack("{s:s}", "type", type);
}

/* A string rule's pattern, when its reason is "must match <pattern>". */
static void add_check(json_t *s, const struct field_spec *f)
{
	static const char match[] = "must match ";
	if (f->check_reason && strncmp(f->check_reason, match, sizeof match - 1) == 0)
		json_object_set_new(s, "pattern", json_string(f->check_reason + sizeof match - 1));
}

static json_t *schema_of(const struct field_spec *f)
{
	json_t *s = NULL;
	switch (f->type) {
	case F_STRING: /* maxLength counts characters: the byte limit bounds them from above */
		s = typed("string");
		add_check(s, f);
		if (json_object_get(s, "pattern")) /* an id's pattern bounds its length too */
			break;
		if (f->min > 0)
			json_object_set_new(s, "minLength", json_integer(f->min));
		if (f->max > 0)
			json_object_set_new(s, "maxLength", json_integer(f->max));
		break;
	case F_INT:
	case F_NUMBER:
		s = typed(f->type == F_INT ? "integer" : "number");
		if (f->min != INT64_MIN)
			json_object_set_new(s, "minimum", json_integer(f->min));
		if (f->max > 0 && f->max != INT64_MAX)
			json_object_set_new(s, "maximum", json_integer(f->max));
		break;
	case F_BOOL:
		s = typed("boolean");
		break;
	case F_ENUM: {
		json_t *values = json_array();
		for (const char *const *e = f->values; e && *e; e++)
			json_array_append_new(values, json_string(*e));
		s = json_pack("{s:o}", "enum", values); /* the values say the type */
		break;
	}
	case F_TIMESTAMP:
		s = typed("string");
		json_object_set_new(s, "format", json_string("date-time"));
		break;
	case F_OBJECT:
		s = f->sub && !f->open ? mcp_schema_of_fields(f->sub) : typed("object");
		break;
	case F_ARRAY:
		s = typed("array");
		if (f->item)
			json_object_set_new(s, "items", schema_of(f->item));
		if (f->min > 0)
			json_object_set_new(s, "minItems", json_integer(f->min));
		if (f->max > 0)
			json_object_set_new(s, "maxItems", json_integer(f->max));
		if (f->unique)
			json_object_set_new(s, "uniqueItems", json_true());
		break;
	case F_MAP:
		s = typed("object");
		if (f->max > 0)
			json_object_set_new(s, "maxProperties", json_integer(f->max));
		if (f->key_pattern)
			json_object_set_new(s, "propertyNames",
					    json_pack("{s:s}", "pattern", f->key_pattern));
		if (f->item)
			json_object_set_new(s, "additionalProperties", schema_of(f->item));
		break;
	}
	if (s && f->desc)
		json_object_set_new(s, "description", json_string(f->desc));
	json_t *dflt = f->dflt ? json_loads(f->dflt, JSON_DECODE_ANY, NULL) : NULL;
	if (s && dflt)
		json_object_set_new(s, "default", dflt);
	else
		json_decref(dflt);
	return s;
}

json_t *mcp_schema_of_fields(const struct field_spec *spec)
{
	json_t *props = json_object(), *required = json_array();
	for (const struct field_spec *f = spec; f && f->name; f++) {
		json_object_set_new(props, f->name, schema_of(f));
		if (f->required && !f->nullable)
			json_array_append_new(required, json_string(f->name));
	}
	json_t *s = json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
			      "additionalProperties", 0);
	if (json_array_size(required) > 0)
		json_object_set_new(s, "required", required);
	else
		json_decref(required);
	return s;
}

void mcp_each_path_param(const char *tmpl, void (*fn)(const char *, size_t, void *), void *arg)
{
	for (const char *p = strchr(tmpl, '{'); p; p = strchr(p + 1, '{')) {
		const char *end = strchr(p, '}');
		if (end == NULL)
			return;
		fn(p + 1, (size_t)(end - p - 1), arg);
	}
}

/* What each path parameter of a tool's route names: the parameter's description in
 * openapi/openapi.yaml too (tests/unit/openapi_drift.py compares them). */
static const struct {
	const char *name, *desc;
} path_params[] = {
	{"source_id", "The record's src_ id, or its drv_ id where any record is taken."},
	{"thread_id", "The thread's id."},
	{"goal_id", "The goal's id."},
	{"agent_id", "The agent's id."},
	{"key", "The preference's stable subject (not one message)."},
	{"envelope_id", "The env_ id recallgate gave the envelope, not its own envelope_id."},
	{"receipt_id", "The load receipt's id (lrc_...)."},
};

const char *mcp_path_param_desc(const char *name)
{
	for (size_t i = 0; i < sizeof path_params / sizeof path_params[0]; i++)
		if (strcmp(path_params[i].name, name) == 0)
			return path_params[i].desc;
	return NULL;
}

static void add_path_param(const char *name, size_t len, void *arg)
{
	json_t *schema = arg;
	char key[64];
	snprintf(key, sizeof key, "%.*s", (int)len, name);
	json_t *p = json_pack("{s:s, s:s}", "type", "string", "pattern", RG_ID_PATTERN);
	const char *desc = mcp_path_param_desc(key);
	if (desc)
		json_object_set_new(p, "description", json_string(desc));
	json_object_set_new(json_object_get(schema, "properties"), key, p);
	json_t *required = json_object_get(schema, "required");
	if (required == NULL) {
		required = json_array();
		json_object_set_new(schema, "required", required);
	}
	json_array_append_new(required, json_string(key));
}

/* The tool's input schema: the body's fields, the query parameters, the path parameters. */
static json_t *input_schema(const struct mcp_tool *t, const struct h_route *route)
{
	json_t *schema = mcp_schema_of_fields(route->body);
	json_t *props = json_object_get(schema, "properties");
	for (const struct field_spec *q = t->query; q && q->name; q++)
		json_object_set_new(props, q->name, schema_of(q));
	mcp_each_path_param(route->path, add_path_param, schema);
	return schema;
}

json_t *mcp_tool_describe(const struct mcp_tool *t, enum mcp_revision rev)
{
	const struct h_route *route = mcp_tool_route(t);
	if (route == NULL)
		return NULL;
	json_t *tool = json_pack("{s:s, s:s, s:o}", "name", t->name, "description", t->description,
				 "inputSchema", input_schema(t, route));
	if (rev >= MCP_REV_2025_06_18) {
		json_object_set_new(tool, "title", json_string(t->title));
		json_t *answer = json_loads(t->output_schema, 0, NULL);
		if (answer) /* a refusal has no structuredContent (mcp_call.c): the answer only */
			json_object_set_new(tool, "outputSchema", answer);
	}
	if (rev >= MCP_REV_2025_03_26) {
		/* Every hint explicit (the spec's defaults assume the worst: destructive, open);
		 * the write hints only for a tool that writes. The title once: annotations
		 * carry it only before 2025-06-18 gave a tool its own. */
		json_t *a = json_pack("{s:b, s:b}", "readOnlyHint", t->read_only, "openWorldHint",
				      t->open_world);
		if (!t->read_only) {
			json_object_set_new(a, "destructiveHint", json_boolean(t->destructive));
			json_object_set_new(a, "idempotentHint", json_boolean(t->idempotent));
		}
		if (rev < MCP_REV_2025_06_18)
			json_object_set_new(a, "title", json_string(t->title));
		json_object_set_new(tool, "annotations", a);
	}
	return tool;
}
