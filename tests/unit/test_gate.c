/* The gate (handlers/gate.c) that HTTP requests and MCP tool calls both pass: its check
 * order (path parameters and body 422/415/400, then scope 403), one table of cases; and the
 * handler's context it makes (the route's part set, the answer cleared). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ids.h"
#include "handlers/api.h"

static void no_handler(struct h_ctx *ctx)
{
	(void)ctx;
}

static const struct field_spec body_spec[] = {
	{.name = "count", .type = F_INT, .required = true, .min = 0, .max = 10},
	{.name = NULL},
};
static const struct h_route with_body = {.method = "PUT", .path = "/v1/things/{thing_id}",
					 .handler = no_handler,
					 .scope = RG_SCOPE_MEMORY_ADMIN, .body = body_spec};
static const struct h_route any_token = {.method = "POST", .path = "/mcp",
					 .handler = no_handler, .scope = H_SCOPE_TOKEN};

struct gate_case {
	const char *name;
	const struct h_route *route;
	const char *param;        /* thing_id, or NULL: none */
	const char *content_type; /* with raw */
	const char *raw;          /* the HTTP transport's bytes */
	const char *json;         /* or the body a transport built (MCP's arguments) */
	const char *transport_error; /* a field the transport could not map, or NULL */
	bool unknown;
	unsigned scopes;
	enum rg_problem want; /* PROBLEM_NONE: the handler may run */
	const char *want_error; /* the errors[0].field expected, or NULL */
};

static const struct gate_case cases[] = {
	{"passes", &with_body, "t1", "application/json", "{\"count\":3}", NULL, NULL, false,
	 RG_SCOPE_MEMORY_ADMIN, PROBLEM_NONE, NULL},
	{"MCP body passes", &with_body, "t1", NULL, NULL, "{\"count\":3}", NULL, false,
	 RG_SCOPE_MEMORY_ADMIN, PROBLEM_NONE, NULL},
	{"bad id before a bad body", &with_body, "bad id", "text/plain", "x", NULL, NULL, false,
	 0, PROBLEM_VALIDATION_FAILED, "thing_id"},
	{"transport's unknown argument", &with_body, "t1", NULL, NULL, "{\"count\":3}", "extra",
	 true, RG_SCOPE_MEMORY_ADMIN, PROBLEM_UNKNOWN_FIELD, "extra"},
	{"415 before 400", &with_body, "t1", "text/plain", "not json", NULL, NULL, false, 0,
	 PROBLEM_UNSUPPORTED_MEDIA_TYPE, NULL},
	{"400 before 403", &with_body, "t1", "application/json", "{", NULL, NULL, false, 0,
	 PROBLEM_INVALID_JSON, NULL},
	{"422 before 403", &with_body, "t1", "application/json", "{\"count\":11}", NULL, NULL,
	 false, 0, PROBLEM_VALIDATION_FAILED, "count"},
	{"403 last", &with_body, "t1", "application/json", "{\"count\":1}", NULL, NULL, false,
	 RG_SCOPE_MEMORY_READ, PROBLEM_FORBIDDEN, NULL},
	{"any token", &any_token, NULL, NULL, NULL, NULL, NULL, false, 0, PROBLEM_NONE, NULL},
};

static void test_check_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct gate_case *c = &cases[i];
		struct h_param param = {"thing_id", c->param};
		struct h_ctx ctx = {.scopes = c->scopes, .request_id = "r1", .status = 599};
		ctx.raw_body = c->raw;
		ctx.raw_body_len = c->raw ? strlen(c->raw) : 0;
		json_t *errors = NULL;
		if (c->transport_error) {
			errors = json_array();
			core_fields_error(errors, c->transport_error, FIELDS_REASON_UNKNOWN);
		}
		struct h_request in = {
			.route = c->route,
			.params = c->param ? &param : NULL,
			.nparams = c->param ? 1 : 0,
			.body = c->json ? json_loads(c->json, 0, NULL) : NULL,
			.content_type = c->content_type,
			.errors = errors,
			.unknown = c->unknown,
		};
		bool ok = h_gate(&ctx, &in);
		print_message("case: %s\n", c->name);
		assert_int_equal(ok, c->want == PROBLEM_NONE);
		assert_int_equal(ctx.problem_code, c->want);
		assert_null(in.body);
		assert_null(in.errors);
		assert_ptr_equal(ctx.route, c->route);
		if (ok) {
			assert_int_equal(ctx.status, 0); /* the answer part is the handler's */
			assert_int_equal(ctx.current_revision, -1);
			assert_int_equal(ctx.body != NULL, c->route->body != NULL);
		}
		if (c->want_error) {
			const json_t *e = json_array_get(ctx.problem_errors, 0);
			assert_string_equal(json_string_value(json_object_get(e, "field")),
					    c->want_error);
		}
		json_decref(ctx.body);
		json_decref(ctx.problem_errors);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
