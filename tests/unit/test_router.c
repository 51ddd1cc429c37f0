/* server/router: templates with {param} segments, 404 vs 405, the sorted Allow list. */
#include "unit.h"

#include "server/router.h"

static void h_health(struct h_ctx *ctx) { (void)ctx; }
static void h_tokens_create(struct h_ctx *ctx) { (void)ctx; }
static void h_tokens_list(struct h_ctx *ctx) { (void)ctx; }
static void h_tokens_stats(struct h_ctx *ctx) { (void)ctx; }
static void h_token_delete(struct h_ctx *ctx) { (void)ctx; }
static void h_mode_put(struct h_ctx *ctx) { (void)ctx; }
static void h_mode_get(struct h_ctx *ctx) { (void)ctx; }
static void h_goal_get(struct h_ctx *ctx) { (void)ctx; }
static void h_audit_verify(struct h_ctx *ctx) { (void)ctx; }
static void h_audit_list(struct h_ctx *ctx) { (void)ctx; }

enum {
	R_HEALTH, R_TOKENS_CREATE, R_TOKENS_LIST, R_TOKENS_STATS, R_TOKEN_DELETE, R_MODE_PUT,
	R_MODE_GET, R_GOAL_GET, R_AUDIT_VERIFY, R_AUDIT_LIST,
};

static const struct h_route routes[] = {
	[R_HEALTH] = {"GET", "/healthz", h_health, 0, NULL, NULL},
	[R_TOKENS_CREATE] = {"POST", "/v1/tokens", h_tokens_create, 1, NULL},
	[R_TOKENS_LIST] = {"GET", "/v1/tokens", h_tokens_list, 1, NULL},
	/* a static path listed before the template it also fits */
	[R_TOKENS_STATS] = {"GET", "/v1/tokens/stats", h_tokens_stats, 1, NULL},
	[R_TOKEN_DELETE] = {"DELETE", "/v1/tokens/{token_id}", h_token_delete, 1, NULL},
	/* PUT listed before GET: Allow must still come out sorted */
	[R_MODE_PUT] = {"PUT", "/v1/threads/{thread_id}/memory-mode", h_mode_put, 8, NULL},
	[R_MODE_GET] = {"GET", "/v1/threads/{thread_id}/memory-mode", h_mode_get, 2, NULL},
	[R_GOAL_GET] = {"GET", "/v1/threads/{thread_id}/goals/{goal_id}", h_goal_get, 2, NULL},
	[R_AUDIT_VERIFY] = {"GET", "/v1/audit/verify", h_audit_verify, 4096, NULL},
	[R_AUDIT_LIST] = {"GET", "/v1/audit", h_audit_list, 4096, NULL},
};

static struct router_match m;

static enum router_result match(const char *method, const char *path)
{
	return router_match(routes, N_ELEMS(routes), method, path, &m);
}

static const char *param(const char *name)
{
	for (size_t i = 0; i < m.nparams; i++)
		if (strcmp(m.params[i].name, name) == 0)
			return m.params[i].value;
	return NULL;
}

static void test_static_route(void **state)
{
	(void)state;
	assert_int_equal(match("GET", "/healthz"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_HEALTH]);
	assert_ptr_equal(m.route->handler, h_health);
	assert_int_equal(m.nparams, 0);
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(match("OPTIONS", "/healthz"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");

	assert_int_equal(match("POST", "/v1/tokens"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_TOKENS_CREATE]);
	assert_int_equal(match("GET", "/v1/tokens"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_TOKENS_LIST]);
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(match("OPTIONS", "/v1/tokens"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD, POST");

	assert_int_equal(match("GET", "/v1/audit"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_AUDIT_LIST]);
	assert_int_equal(match("GET", "/v1/audit/verify"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_AUDIT_VERIFY]);
}

static void test_params(void **state)
{
	(void)state;
	assert_int_equal(match("GET", "/v1/threads/t-1/memory-mode"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_MODE_GET]);
	assert_int_equal(m.nparams, 1);
	assert_string_equal(m.params[0].name, "thread_id");
	assert_string_equal(m.params[0].value, "t-1");

	assert_int_equal(match("PUT", "/v1/threads/abc.DEF:9_x/memory-mode"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_MODE_PUT]);
	assert_string_equal(param("thread_id"), "abc.DEF:9_x");

	assert_int_equal(match("GET", "/v1/threads/t1/goals/g2"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_GOAL_GET]);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(m.params[0].name, "thread_id");
	assert_string_equal(m.params[0].value, "t1");
	assert_string_equal(m.params[1].name, "goal_id");
	assert_string_equal(m.params[1].value, "g2");

	assert_int_equal(match("DELETE", "/v1/tokens/tok_0123456789abcdef0123456789abcdef"),
			 ROUTER_FOUND);
	assert_string_equal(param("token_id"), "tok_0123456789abcdef0123456789abcdef");
}

static void test_params_are_passed_as_given(void **state)
{
	(void)state;
	/* the router neither decodes nor validates: the value is the segment as given (the
	 * server has already URL-decoded the path; the handler checks the id pattern) */
	static const char *const values[] = {
		"a%20b", "a b", "%2F", "\xc3\xa9t\xc3\xa9", "..", ".", "{thread_id}", "-x", "a?b=c",
	};
	for (size_t i = 0; i < N_ELEMS(values); i++) {
		char path[256];
		snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", values[i]);
		assert_int_equal(match("GET", path), ROUTER_FOUND);
		assert_int_equal(m.nparams, 1);
		assert_string_equal(param("thread_id"), values[i]);
	}
}

static void test_not_found(void **state)
{
	(void)state;
	static const char *const paths[] = {
		"/nope",
		"/",
		"",
		"healthz",                               /* no leading slash */
		"//healthz",
		"/HEALTHZ",
		"/healthz/",                             /* trailing slash */
		"/v1/tokens/",
		"/v1/threads/t1/memory-mode/",
		"/v1/threads//memory-mode",              /* empty parameter segment */
		"/v1",
		"/v1/threads",
		"/v1/threads/t1",
		"/v1/threads/t1/memory-mode/extra",
		"/v1/threads/t1/memory_mode",
		"/v1/threads/t1/goals",
		"/v1/threads/t1/goals/g1/x",
		"/v1/audit/verify/x",
		"/v2/tokens",
		"/healthz?x=1",
	};
	static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "OPTIONS"};
	for (size_t i = 0; i < N_ELEMS(paths); i++)
		for (size_t j = 0; j < N_ELEMS(methods); j++) {
			enum router_result r = match(methods[j], paths[i]);
			if (r != ROUTER_NOT_FOUND)
				print_error("%s \"%s\": want 404, got %d\n", methods[j], paths[i], (int)r);
			assert_int_equal(r, ROUTER_NOT_FOUND);
			assert_null(m.route);
		}
}

/* A trailing slash is a segment of its own: only a template that ends in a slash fits it
 * (the dashboard's /ui/), and a parameter never matches it. */
static void test_trailing_slash_template(void **state)
{
	(void)state;
	static const struct h_route ui[] = {
		{.method = "GET", .path = "/ui", .handler = h_health},
		{.method = "GET", .path = "/ui/", .handler = h_tokens_list},
		{.method = "GET", .path = "/ui/{file}", .handler = h_audit_list},
	};
	assert_int_equal(router_match(ui, N_ELEMS(ui), "GET", "/ui", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &ui[0]);
	assert_int_equal(router_match(ui, N_ELEMS(ui), "GET", "/ui/", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &ui[1]);
	assert_int_equal(m.nparams, 0);
	assert_int_equal(router_match(ui, N_ELEMS(ui), "HEAD", "/ui/app.js", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &ui[2]);
	assert_string_equal(param("file"), "app.js");
	static const char *const missing[] = {"/ui//", "//ui/", "/ui/app.js/", "/ui/x/y", "/"};
	for (size_t i = 0; i < N_ELEMS(missing); i++)
		assert_int_equal(router_match(ui, N_ELEMS(ui), "GET", missing[i], &m),
				 ROUTER_NOT_FOUND);
}

static void test_method_not_allowed(void **state)
{
	(void)state;
	assert_int_equal(match("DELETE", "/v1/threads/t1/memory-mode"), ROUTER_METHOD_NOT_ALLOWED);
	assert_null(m.route);
	assert_string_equal(m.allow, "GET, HEAD, PUT");

	assert_int_equal(match("POST", "/v1/threads/t1/memory-mode"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD, PUT");

	assert_int_equal(match("POST", "/healthz"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");

	assert_int_equal(match("DELETE", "/v1/tokens"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD, POST");

	assert_int_equal(match("GET", "/v1/tokens/tok_1"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "DELETE");

	assert_int_equal(match("PUT", "/v1/threads/t1/goals/g1"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");

	/* methods are case-sensitive (RFC 9110 §9.1) */
	assert_int_equal(match("get", "/healthz"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");

	/* OPTIONS is not routed: a preflight reads the Allow list */
	assert_int_equal(match("OPTIONS", "/v1/threads/t1/memory-mode"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD, PUT");
}

static void test_static_path_beats_template_listed_after(void **state)
{
	(void)state;
	assert_int_equal(match("GET", "/v1/tokens/stats"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_TOKENS_STATS]);
	assert_int_equal(m.nparams, 0);
	/* the path fits both: Allow has the methods of both */
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(match("OPTIONS", "/v1/tokens/stats"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "DELETE, GET, HEAD");
	/* the template still serves its own method on that path */
	assert_int_equal(match("DELETE", "/v1/tokens/stats"), ROUTER_FOUND);
	assert_ptr_equal(m.route, &routes[R_TOKEN_DELETE]);
	assert_string_equal(param("token_id"), "stats");
	assert_int_equal(match("PUT", "/v1/tokens/stats"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "DELETE, GET, HEAD");
}

/* HEAD is answered on every GET route, and listed in Allow with it */
static void test_head_on_get_routes(void **state)
{
	(void)state;
	static const struct h_route get_and_post[] = {
		{"POST", "/items", h_mode_put, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"GET", "/items/{id}", h_goal_get, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
	};
	assert_int_equal(router_match(get_and_post, N_ELEMS(get_and_post), "HEAD", "/items/7", &m),
			 ROUTER_FOUND);
	assert_ptr_equal(m.route, &get_and_post[1]);
	assert_string_equal(param("id"), "7");
	assert_int_equal(router_match(get_and_post, N_ELEMS(get_and_post), "HEAD", "/items", &m),
			 ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "POST");
}

static void test_first_listed_wins(void **state)
{
	(void)state;
	static const struct h_route template_first[] = {
		{"GET", "/items/{id}", h_goal_get, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"GET", "/items/special", h_tokens_stats, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
	};
	assert_int_equal(router_match(template_first, N_ELEMS(template_first), "GET",
				      "/items/special", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &template_first[0]);
	assert_string_equal(param("id"), "special");
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(router_match(template_first, N_ELEMS(template_first), "OPTIONS",
				      "/items/special", &m), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");
}

static void test_allow_sorted_and_unique(void **state)
{
	(void)state;
	static const struct h_route many[] = {
		{"PUT", "/x/{id}", h_mode_put, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"POST", "/x/{id}", h_mode_put, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"GET", "/x/{id}", h_mode_get, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"PATCH", "/x/{id}", h_mode_put, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"DELETE", "/x/{id}", h_token_delete, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"GET", "/x/{other}", h_goal_get, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO}, /* same method again: listed once */
		{"HEAD", "/y", h_health, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
		{"GET", "/", h_health, 0, NULL, NULL, H_LANE_WORKER, NULL, NULL, false, H_DB_AUTO},
	};
	assert_int_equal(router_match(many, N_ELEMS(many), "TRACE", "/x/1", &m),
			 ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "DELETE, GET, HEAD, PATCH, POST, PUT");
	assert_int_equal(router_match(many, N_ELEMS(many), "GET", "/x/1", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &many[2]);
	assert_string_equal(param("id"), "1");
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(router_match(many, N_ELEMS(many), "OPTIONS", "/x/1", &m), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "DELETE, GET, HEAD, PATCH, POST, PUT");

	/* a root route */
	assert_int_equal(router_match(many, N_ELEMS(many), "GET", "/", &m), ROUTER_FOUND);
	assert_ptr_equal(m.route, &many[7]);
	assert_int_equal(router_match(many, N_ELEMS(many), "GET", "//", &m), ROUTER_NOT_FOUND);
}

static void test_match_state_is_reset(void **state)
{
	(void)state;
	assert_int_equal(match("GET", "/v1/threads/t1/goals/g2"), ROUTER_FOUND);
	assert_int_equal(m.nparams, 2);
	assert_int_equal(match("GET", "/healthz"), ROUTER_FOUND);
	assert_int_equal(m.nparams, 0);
	assert_string_equal(m.allow, ""); /* Allow: only for a 405 or OPTIONS */
	assert_int_equal(match("OPTIONS", "/healthz"), ROUTER_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, HEAD");
	assert_int_equal(match("GET", "/nope"), ROUTER_NOT_FOUND);
	assert_null(m.route);
	assert_int_equal(m.nparams, 0);
	assert_string_equal(m.allow, "");
}

static void test_path_limits(void **state)
{
	(void)state;
	/* more segments than the router splits */
	char path[ROUTER_MAX_PATH + 16];
	path[0] = '\0';
	for (int i = 0; i < 17; i++)
		strcat(path, "/a");
	assert_int_equal(match("GET", path), ROUTER_NOT_FOUND);
	/* longer than the path buffer */
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	assert_int_equal(match("GET", path), ROUTER_NOT_FOUND);
	/* a long parameter value that still fits is passed whole */
	char *big = malloc(1900);
	assert_non_null(big);
	strcpy(big, "/v1/tokens/");
	memset(big + 11, 'z', 1800);
	big[1811] = '\0';
	assert_int_equal(match("DELETE", big), ROUTER_FOUND);
	assert_int_equal(strlen(param("token_id")), 1800);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_route),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_params_are_passed_as_given),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_trailing_slash_template),
		cmocka_unit_test(test_method_not_allowed),
		cmocka_unit_test(test_static_path_beats_template_listed_after),
		cmocka_unit_test(test_head_on_get_routes),
		cmocka_unit_test(test_first_listed_wins),
		cmocka_unit_test(test_allow_sorted_and_unique),
		cmocka_unit_test(test_match_state_is_reset),
		cmocka_unit_test(test_path_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
