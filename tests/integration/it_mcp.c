/*
 * it_mcp — the edges of POST /mcp (docs/mcp.md): MCP-Protocol-Version (unsupported → 400
 * -32022, absent → 2025-03-26), version negotiation, Origin (403 outside RECALLGATE_CORS_ORIGINS and
 * this server's own loopback origin), 401 with WWW-Authenticate, 202 for notifications and
 * client responses, JSON-RPC error codes for malformed input, GET/DELETE 405, 415 and 406,
 * batches by revision, the tool list by scope, every limit at its edge (batch size, body
 * size, JSON depth), and the lane of a tool that waits on a provider (not a worker's). The tools' answers are compared with /v1 by tests/mcp (the SDK client).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"
#include "harness.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define HUNG_CALLS 6

#define ORIGIN "https://agent.example"
#define MAX_BODY 2048

static struct it_server srv;
static char *tenant, *admin, *reader;
static char own_origin[80];
static struct it_fake fake; /* FAKE_SLOW_MS = IT_FAKE_SLOW_MS */

static int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_CORS_ORIGINS=" ORIGIN, "RECALLGATE_MAX_BODY=2048", NULL};
	const char *slow[] = {"FAKE_SLOW_MS=" STR(IT_FAKE_SLOW_MS), NULL};
	if (it_server_start(&srv, env) != 0 || it_fake_start(&fake, slow) != 0)
		return -1;
	snprintf(own_origin, sizeof own_origin, "http://127.0.0.1:%d", srv.port);
	tenant = it_unique("mcp");
	admin = it_token(tenant, "admin", "it-admin");
	reader = it_token(tenant, "memory:read", "it-reader");
	return admin && reader ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = srv.pid > 0 && it_server_stop(&srv) != 0 ? -1 : 0;
	if (it_fake_stop(&fake) != 0)
		rc = -1;
	free(tenant);
	free(admin);
	free(reader);
	return rc;
}

/* POST /mcp with body and extra headers (NULL-terminated, may be NULL). */
static void post(const char *token, const char *body, const char *const *headers,
		 struct it_resp *r)
{
	it_request(&srv, "POST", "/mcp", token, body, headers, r);
}

/* The JSON-RPC error code of an answer (or of its first item), 0 when none. */
static long long rpc_code(const json_t *answer)
{
	const json_t *a = json_is_array(answer) ? json_array_get(answer, 0) : answer;
	return it_json_int(json_object_get(a, "error"), "code", 0);
}

static void expect_rpc_error(const struct it_resp *r, long status, long long code)
{
	IT_STATUS(r, status);
	IT_CHECK(r->json && rpc_code(r->json) == code, "want JSON-RPC error %lld: %s", code,
		 r->body);
	IT_CHECK(it_json_str_is(r->json, "jsonrpc", "2.0"), "not JSON-RPC 2.0: %s", r->body);
}

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/list\"}";

static char *initialize_body(const char *version)
{
	char *s = NULL;
	if (asprintf(&s,
		     "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"it\","
		     "\"version\":\"1\"}}}",
		     version) < 0)
		abort();
	return s;
}

static void test_negotiation(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
		{"2026-07-28", "2025-11-25"}, {"1999-01-01", "2025-11-25"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct it_resp r;
		char *body = initialize_body(cases[i][0]);
		/* the header is not checked on initialize: the version is not negotiated yet */
		const char *h[] = {"MCP-Protocol-Version: 1999-01-01", NULL};
		post(admin, body, h, &r);
		IT_STATUS(&r, 200);
		json_t *res = json_object_get(r.json, "result");
		IT_CHECK(it_json_str_is(res, "protocolVersion", cases[i][1]), "asked %s: %s",
			 cases[i][0], r.body);
		IT_CHECK(json_object_get(json_object_get(res, "capabilities"), "tools"), "tools: %s",
			 r.body);
		IT_CHECK(it_resp_header(&r, "Mcp-Session-Id") == NULL, "stateless: no session");
		it_resp_free(&r);
		free(body);
	}
	struct it_resp r;
	post(admin, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", NULL, &r);
	expect_rpc_error(&r, 200, -32602);
	it_resp_free(&r);
}

static void test_version_header(void **state)
{
	(void)state;
	struct it_resp r;
	/* 2026-07-28 without its _meta: invalid params (tests/mcp/modern.test.mjs has the rest) */
	const char *modern[] = {"MCP-Protocol-Version: 2026-07-28", NULL};
	post(admin, list, modern, &r);
	expect_rpc_error(&r, 400, -32602);
	it_resp_free(&r);
	/* an unknown revision: the modern UnsupportedProtocolVersion, id null (HTTP-level) */
	const char *junk[] = {"MCP-Protocol-Version: not-a-version", NULL};
	post(admin, ping, junk, &r);
	expect_rpc_error(&r, 400, -32022);
	IT_CHECK(it_json_has_null(r.json, "id"), "an HTTP-level error has id null: %s", r.body);
	it_resp_free(&r);

	/* What tools/list shows follows the revision: absent = 2025-03-26 (annotations, no
	 * outputSchema), 2024-11-05 (neither), 2025-06-18 and later (both). */
	static const struct {
		const char *header;
		bool annotations, output;
	} revs[] = {
		{NULL, true, false},
		{"MCP-Protocol-Version: 2024-11-05", false, false},
		{"MCP-Protocol-Version: 2025-03-26", true, false},
		{"MCP-Protocol-Version: 2025-06-18", true, true},
		{"MCP-Protocol-Version: 2025-11-25", true, true},
	};
	for (size_t i = 0; i < sizeof revs / sizeof revs[0]; i++) {
		const char *h[] = {revs[i].header, NULL};
		post(admin, list, h, &r);
		IT_STATUS(&r, 200);
		json_t *tool = json_array_get(
			json_object_get(json_object_get(r.json, "result"), "tools"), 0);
		IT_CHECK(json_object_get(tool, "inputSchema"), "inputSchema: %s", r.body);
		IT_CHECK((json_object_get(tool, "annotations") != NULL) == revs[i].annotations &&
				 (json_object_get(tool, "outputSchema") != NULL) == revs[i].output,
			 "%s: %.300s", revs[i].header ? revs[i].header : "no header", r.body);
		it_resp_free(&r);
	}
}

static void test_origin(void **state)
{
	(void)state;
	struct it_resp r;
	char same[120], other_port[120];
	snprintf(same, sizeof same, "Origin: %s", own_origin);
	snprintf(other_port, sizeof other_port, "Origin: http://127.0.0.1:%d", srv.port == 1 ? 2 : 1);
	const struct {
		const char *origin;
		long status;
	} cases[] = {
		{"Origin: http://evil.example", 403}, {other_port, 403},
		{"Origin: null", 403},		       {"Origin: " ORIGIN, 200},
		{same, 200},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *h[] = {cases[i].origin, NULL};
		post(admin, ping, h, &r);
		if (cases[i].status == 403)
			expect_rpc_error(&r, 403, -32000);
		else
			IT_STATUS(&r, 200);
		it_resp_free(&r);
	}
	/* A rebinding page names itself in Host and Origin alike: still foreign. */
	const char *rebound[] = {"Host: evil.example", "Origin: http://evil.example", NULL};
	post(admin, ping, rebound, &r);
	IT_STATUS(&r, 403);
	it_resp_free(&r);
}

static void test_auth(void **state)
{
	(void)state;
	struct it_resp r;
	post(NULL, ping, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	IT_CHECK(it_json_str_is(r.json, "code", "unauthenticated"), "%s", r.body);
	const char *www = it_resp_header(&r, "WWW-Authenticate");
	IT_CHECK(www && strcmp(www, "Bearer") == 0, "WWW-Authenticate: %s", www ? www : "none");
	it_resp_free(&r);
	post("rg_not_a_token", ping, NULL, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
}

static void test_accepted_without_answer(void **state)
{
	(void)state;
	static const char *const bodies[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
		"{\"requestId\":1}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"x\"}}",
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		struct it_resp r;
		post(admin, bodies[i], NULL, &r);
		IT_STATUS(&r, 202);
		IT_CHECK(r.body_len == 0, "202 has no body: %s", r.body);
		it_resp_free(&r);
	}
}

static void test_rpc_errors(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		long status;
		long long code;
	} cases[] = {
		{"{", 400, -32700},
		{"", 400, -32700},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", 400, -32700},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\\u0000\"}}", 400,
		 -32700},
		{"42", 400, -32600},
		{"{\"foo\":1}", 400, -32600},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", 400, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", 400, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", 400, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", 400, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", 200, -32601},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", 200, -32602},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", 200, -32602},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
		 200, -32602},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"memory_search\",\"arguments\":[]}}",
		 200, -32602},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"x\"}}",
		 200, -32602},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct it_resp r;
		post(admin, cases[i].body, NULL, &r);
		expect_rpc_error(&r, cases[i].status, cases[i].code);
		if (cases[i].status == 200) /* an answer to a request carries its id */
			IT_CHECK(it_json_int(r.json, "id", 0) == 1, "id: %s", r.body);
		it_resp_free(&r);
	}
}

static void test_transport_refusals(void **state)
{
	(void)state;
	struct it_resp r;
	static const char *const methods[] = {"GET", "DELETE", "PUT"};
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		const char *sse[] = {"Accept: text/event-stream", NULL};
		it_request(&srv, methods[i], "/mcp", admin, NULL, sse, &r);
		IT_PROBLEM(&r, 405, "method_not_allowed");
		const char *allow = it_resp_header(&r, "Allow");
		IT_CHECK(allow && strcmp(allow, "POST") == 0, "Allow: %s", allow ? allow : "none");
		it_resp_free(&r);
	}
	const char *text[] = {"Content-Type: text/plain", NULL};
	post(admin, ping, text, &r);
	expect_rpc_error(&r, 415, -32000);
	it_resp_free(&r);
	const char *html[] = {"Accept: text/html", NULL};
	post(admin, ping, html, &r);
	expect_rpc_error(&r, 406, -32000);
	it_resp_free(&r);
	const char *sdk[] = {"Accept: application/json, text/event-stream", NULL};
	post(admin, ping, sdk, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_object_size(json_object_get(r.json, "result")) == 0, "ping: %s", r.body);
	it_resp_free(&r);
}

/* A batch of n pings (and one notification): only for revisions that have batches. */
static char *batch(size_t n)
{
	size_t cap = 64 + n * 48;
	char *s = malloc(cap), *p = s;
	p += sprintf(p, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	for (size_t i = 1; i < n; i++)
		p += sprintf(p, ",{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"ping\"}", i);
	strcpy(p, "]");
	return s;
}

static void test_batches(void **state)
{
	(void)state;
	struct it_resp r;
	char *at_limit = batch(32), *over = batch(33);
	post(admin, at_limit, NULL, &r); /* no header: 2025-03-26, which has batches */
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(r.json) == 31, "31 answers (one notification): %.200s", r.body);
	it_resp_free(&r);
	post(admin, over, NULL, &r);
	expect_rpc_error(&r, 400, -32600);
	it_resp_free(&r);
	post(admin, "[]", NULL, &r);
	expect_rpc_error(&r, 400, -32600);
	it_resp_free(&r);
	const char *v06[] = {"MCP-Protocol-Version: 2025-06-18", NULL};
	post(admin, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", v06, &r);
	expect_rpc_error(&r, 400, -32600);
	it_resp_free(&r);
	post(admin, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]", NULL, &r);
	IT_STATUS(&r, 202);
	it_resp_free(&r);
	char *init = initialize_body("2025-03-26"), *mixed = NULL;
	if (asprintf(&mixed, "[%s,%s,7]", init, ping) < 0)
		abort();
	post(admin, mixed, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(r.json) == 3 && rpc_code(r.json) == -32600 &&
			 json_object_get(json_array_get(r.json, 1), "result") &&
			 rpc_code(json_array_get(r.json, 2)) == -32600,
		 "initialize refused in a batch, ping answered, 7 invalid: %s", r.body);
	it_resp_free(&r);
	free(init);
	free(mixed);
	free(at_limit);
	free(over);
	/* a batch may read content twice: each read is recorded before its result is rendered,
	 * so both results carry the content and the ledger holds both reads */
	it_request(&srv, "POST", "/v1/memory/sources", admin,
		   "{\"source_kind\":\"note\",\"content\":\"batched\"}", NULL, &r);
	IT_STATUS(&r, 201);
	char two[600], id[96], path[160];
	snprintf(id, sizeof id, "%s", it_json_str(r.json, "source_id"));
	snprintf(two, sizeof two,
		 "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"source_content\",\"arguments\":{\"source_id\":\"%s\"}}},{\"jsonrpc\":\"2.0\","
		 "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"source_content\","
		 "\"arguments\":{\"source_id\":\"%s\"}}}]",
		 id, id);
	it_resp_free(&r);
	post(admin, two, NULL, &r);
	IT_STATUS(&r, 200);
	for (size_t i = 0; i < 2; i++) {
		json_t *result = json_object_get(json_array_get(r.json, i), "result");
		const char *text = json_string_value(json_object_get(
			json_array_get(json_object_get(result, "content"), 0), "text"));
		IT_CHECK(json_is_false(json_object_get(result, "isError")) && text &&
				 strstr(text, "batched") &&
				 json_string_value(json_object_get(json_object_get(result, "_meta"),
								   "io.recallgate/commit-lsn")),
			 "content read %zu of a batch, with its commit LSN: %s", i + 1, r.body);
	}
	it_resp_free(&r);
	snprintf(path, sizeof path, "/v1/disclosures?record_id=%s", id);
	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 2 &&
			 strcmp(it_json_str(json_array_get(items, 0), "via"), "mcp") == 0 &&
			 strcmp(it_json_str(json_array_get(items, 1), "via"), "mcp") == 0,
		 "both reads of the batch recorded: %s", r.body);
	it_resp_free(&r);
}

static void test_limits(void **state)
{
	(void)state;
	struct it_resp r;
	/* RECALLGATE_MAX_BODY bytes pass, one more is 413 */
	char body[MAX_BODY + 2];
	size_t n = strlen(ping);
	memcpy(body, ping, n);
	memset(body + n, ' ', MAX_BODY - n);
	body[MAX_BODY] = '\0';
	post(admin, body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	body[MAX_BODY] = ' ';
	body[MAX_BODY + 1] = '\0';
	post(admin, body, NULL, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	/* JSON nesting: 32 levels parse (the message is level 1), 33 do not */
	for (int depth = 32; depth <= 33; depth++) {
		char deep[512];
		int k = snprintf(deep, sizeof deep,
				 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":");
		for (int i = 0; i < depth - 2; i++)
			deep[k++] = '[';
		for (int i = 0; i < depth - 2; i++)
			deep[k++] = ']';
		strcpy(deep + k, "}}");
		post(admin, deep, NULL, &r);
		if (depth == 32)
			IT_STATUS(&r, 200);
		else
			expect_rpc_error(&r, 400, -32700);
		it_resp_free(&r);
	}
}

static void test_tools_by_scope(void **state)
{
	(void)state;
	struct it_resp r;
	post(reader, list, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *tools = json_object_get(json_object_get(r.json, "result"), "tools");
	IT_CHECK(json_array_size(tools) == 9, "memory:read sees 9 tools: %.300s", r.body);
	it_resp_free(&r);
	post(admin, list, NULL, &r);
	tools = json_object_get(json_object_get(r.json, "result"), "tools");
	IT_CHECK(json_array_size(tools) == 21, "admin sees 21 tools: %.300s", r.body);
	it_resp_free(&r);
	/* a hidden tool called anyway: an isError result with the problem (403 over /v1) */
	const char *v[] = {"MCP-Protocol-Version: 2025-11-25", NULL};
	post(reader,
	     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"audit_verify\",\"arguments\":{}}}",
	     v, &r);
	IT_STATUS(&r, 200);
	json_t *res = json_object_get(r.json, "result");
	json_t *text = json_object_get(json_array_get(json_object_get(res, "content"), 0), "text");
	json_t *problem = json_loads(json_string_value(text), 0, NULL);
	IT_CHECK(json_is_true(json_object_get(res, "isError")) &&
			 it_json_str_is(problem, "code", "forbidden") &&
			 json_object_get(res, "structuredContent") == NULL,
		 "%s", r.body);
	json_decref(problem);
	it_resp_free(&r);
}

/* a tool call's errors[] is capped like /v1's: 20 entries, then errors_truncated
 * (openapi/openapi.yaml "Problem"), and the problem is sent once, as the result's text (no
 * structuredContent), so the answer is no larger than /v1's but for the JSON-RPC envelope and
 * the text's escaping */
static void test_errors_capped(void **state)
{
	(void)state;
	const char *v[] = {"MCP-Protocol-Version: 2025-11-25", NULL};
	for (int n = 20; n <= 21; n++) {
		char body[MAX_BODY + 128], args[MAX_BODY / 2];
		int k = snprintf(args, sizeof args, "{\"query\":\"q\"");
		for (int i = 0; i < n; i++)
			k += snprintf(args + k, sizeof args - (size_t)k, ",\"u%d\":0", i);
		snprintf(args + k, sizeof args - (size_t)k, "}");
		snprintf(body, sizeof body,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
			 "\"params\":{\"name\":\"memory_search\",\"arguments\":%s}}",
			 args);
		struct it_resp r, twin;
		post(admin, body, v, &r);
		IT_STATUS(&r, 200);
		json_t *res = json_object_get(r.json, "result");
		json_t *text = json_object_get(json_array_get(json_object_get(res, "content"), 0), "text");
		json_t *problem = json_loads(json_string_value(text), 0, NULL);
		IT_CHECK(it_json_str_is(problem, "code", "unknown_field") &&
				 json_array_size(json_object_get(problem, "errors")) == 20 &&
				 json_object_get(res, "structuredContent") == NULL,
			 "%d unknown arguments: %.400s", n, r.body);
		json_t *cut = json_object_get(problem, "errors_truncated");
		IT_CHECK(n == 20 ? cut == NULL : json_is_true(cut), "%d errors: errors_truncated %s", n,
			 cut ? "present" : "absent");
		it_request(&srv, "POST", "/v1/memory/search", admin, args, NULL, &twin);
		IT_STATUS(&twin, 422);
		IT_CHECK(r.body_len <= twin.body_len + 512,
			 "%d unknown arguments: MCP answered %zu bytes, /v1 %zu", n, r.body_len,
			 twin.body_len);
		json_decref(problem);
		it_resp_free(&twin);
		it_resp_free(&r);
	}
}

static const char hung_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	"\"decision_context_retrieve\",\"arguments\":{\"extension_id\":\"mcp-slow\","
	"\"namespace\":\"it-mcp\",\"scope_ref\":\"s\",\"query\":\"q\",\"query_summary\":"
	"\"lane check\",\"max_results\":3,\"timeout_seconds\":20,\"observed_at\":"
	"\"2026-11-29T21:07:22.123Z\"}}}";

/* decision_context_retrieve waits on its provider where POST /v1/decision-context/retrieve
 * does, on the elastic lane: with two workers, six hung tool calls all reach the provider and
 * a /v1 read is answered meanwhile. On the worker lane only two would, and the read would
 * wait for them. */
static void test_provider_tool_holds_no_worker(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=2", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	it_provider_ready(&s, admin, &fake, "mcp-slow", "dc", "slow", 20);
	static struct it_hung_call calls[HUNG_CALLS];
	static struct it_hung hung = {.calls = calls, .n = HUNG_CALLS};
	static const char *const v[] = {"MCP-Protocol-Version: 2025-11-25", NULL};
	for (int i = 0; i < HUNG_CALLS; i++)
		calls[i] = (struct it_hung_call){.s = &s, .path = "/mcp", .token = admin,
						 .body = hung_body, .headers = v};
	long at_provider = it_hung_start(&hung, &fake, "dc", "slow");
	struct it_resp m;
	it_request(&s, "GET", "/v1/threads/mcp-t/memory-mode", admin, NULL, NULL, &m);
	int done_when_answered = atomic_load(&hung.done);
	IT_CHECK(at_provider == HUNG_CALLS, "only %ld of %d tool calls reached the provider",
		 at_provider, HUNG_CALLS);
	IT_STATUS(&m, 200);
	IT_CHECK(done_when_answered == 0, "%d tool calls had finished before the read was answered",
		 done_when_answered);
	it_resp_free(&m);
	it_hung_join(&hung);
	for (int i = 0; i < HUNG_CALLS; i++) {
		IT_STATUS(&calls[i].resp, 200);
		json_t *res = json_object_get(calls[i].resp.json, "result");
		json_t *receipt = json_object_get(json_object_get(res, "structuredContent"), "receipt");
		IT_CHECK(json_is_false(json_object_get(res, "isError")) &&
				 it_json_str_is(receipt, "status", "completed"),
			 "hung call %d: %.300s", i, calls[i].resp.body);
		it_resp_free(&calls[i].resp);
	}
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* One HTTP request pays the token's rate limit once; a batch's later tool calls each pay
 * their own, and those refused are isError rate_limited results (the others run). */
static void test_batch_pays_rate_limit(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_RATE_LIMIT=1", "RECALLGATE_RATE_BURST=3", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
				   "\"params\":{\"name\":\"memory_search\",\"arguments\":"
				   "{\"query\":\"alpha\"}}}";
	char body[1024], *p = body;
	p += sprintf(p, "[");
	for (int i = 1; i <= 5; i++) {
		p += sprintf(p, "%s", i > 1 ? "," : "");
		p += sprintf(p, call, i);
	}
	sprintf(p, "]");
	struct it_resp r;
	it_request(&s, "POST", "/mcp", admin, body, NULL, &r); /* 2025-03-26: batches */
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(r.json) == 5, "5 answers: %.300s", r.body);
	for (size_t i = 0; i < 5; i++) {
		const json_t *res = json_object_get(json_array_get(r.json, i), "result");
		const char *text = json_string_value(
			json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
		bool limited = text && strstr(text, "\"code\":\"rate_limited\"");
		/* the request and the next two calls fit the burst of 3 */
		IT_CHECK(json_is_boolean(json_object_get(res, "isError")) &&
				 json_is_true(json_object_get(res, "isError")) == (i >= 3) &&
				 limited == (i >= 3),
			 "call %zu of the batch: %.300s", i + 1, r.body);
	}
	it_resp_free(&r);
	it_request(&s, "GET", "/metrics", NULL, NULL, NULL, &r);
	double refused = it_metric_value(r.body, "recallgate_rate_limited_total");
	it_resp_free(&r);
	IT_CHECK(refused == 2, "recallgate_rate_limited_total is %.0f, want 2", refused);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negotiation),
		cmocka_unit_test(test_version_header),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_accepted_without_answer),
		cmocka_unit_test(test_rpc_errors),
		cmocka_unit_test(test_transport_refusals),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_batch_pays_rate_limit),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_tools_by_scope),
		cmocka_unit_test(test_errors_capped),
		cmocka_unit_test(test_provider_tool_holds_no_worker),
	};
	int rc = cmocka_run_group_tests_name("it_mcp", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
