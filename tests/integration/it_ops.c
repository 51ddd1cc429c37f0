/*
 * it_ops — the operations surface (openapi/openapi.yaml "Operations", foundation-contract
 * Operations/HTTP/CORS): /healthz, /readyz, /metrics (request counter by route template,
 * latency histogram, pool gauges, no private text), /openapi.yaml, JSON log lines without
 * tokens or bodies, CORS (allowed origin, other origin, preflight), SIGTERM → exit 0 (also with
 * a slow client).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "harness.h"

#define ORIGIN "https://app.example"

static struct it_server srv;
static char *tenant;
static char *admin;
static char *thread;
/* a PUT body with unusual spacing, so that it can be recognised if it leaks */
static const char put_body[] = "{ \"mode\" :  \"disabled\" ,   \"expected_revision\" :  0 }";

static int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_CORS_ORIGINS=" ORIGIN, NULL};
	if (it_server_start(&srv, env) != 0)
		return -1;
	tenant = it_unique("ops");
	thread = it_unique("thread");
	admin = it_token(tenant, "admin", "it-admin");
	return admin ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	free(tenant);
	free(thread);
	free(admin);
	return rc;
}

static char *mode_path(void)
{
	char buf[512];
	snprintf(buf, sizeof buf, "/v1/threads/%s/memory-mode", thread);
	return strdup(buf);
}

static bool has_line_prefix(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *line = text; line && *line;) {
		if (strncmp(line, prefix, n) == 0)
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

static void test_healthz(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/healthz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	const char *ct = it_resp_header(&r, "Content-Type");
	IT_CHECK(ct && strncmp(ct, "application/json", 16) == 0, "Content-Type %s",
		 ct ? ct : "none");
	IT_CHECK(json_is_object(r.json) && json_object_size(r.json) == 1 &&
		     it_json_str_is(r.json, "status", "ok"),
		 "/healthz body is not {\"status\":\"ok\"}: %s", r.body);
	IT_CHECK(it_resp_header(&r, "X-Request-Id") != NULL, "no X-Request-Id");
	it_resp_free(&r);
}

static void test_readyz(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "status", "ready"),
		 "/readyz body is not {\"status\":\"ready\"}: %s", r.body);
	it_resp_free(&r);
}

static void test_metrics(void **state)
{
	(void)state;
	struct it_resp r;
	char *path = mode_path();
	static const char series[] =
	    "recallgate_http_requests_total{route=\"/v1/threads/{thread_id}/memory-mode\","
	    "method=\"GET\",status=\"200\"}";

	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	double before = it_metric_value(r.body, series);
	it_resp_free(&r);

	it_request(&srv, "GET", path, admin, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "PUT", path, admin, put_body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/definitely-not-a-route", NULL, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	const char *ct = it_resp_header(&r, "Content-Type");
	IT_CHECK(ct && strncmp(ct, "text/plain", 10) == 0, "/metrics Content-Type is %s",
		 ct ? ct : "none");
	double after = it_metric_value(r.body, series);
	IT_CHECK(after >= 1 && after >= before + 1, "%s went from %g to %g", series, before, after);
	IT_CHECK(it_metric_value(r.body,
			      "recallgate_http_requests_total{route=\"/v1/threads/{thread_id}/"
			      "memory-mode\",method=\"PUT\",status=\"200\"}") >= 1,
		 "no PUT 200 counter");
	IT_CHECK(strstr(r.body, "route=\"unmatched\"") != NULL,
		 "an unmatched path is not counted with route=\"unmatched\"");
	IT_CHECK(has_line_prefix(r.body, "recallgate_http_request_duration_seconds_bucket{"),
		 "no recallgate_http_request_duration_seconds_bucket");
	IT_CHECK(strstr(r.body, "le=\"+Inf\"") != NULL, "histogram without le=\"+Inf\"");
	IT_CHECK(has_line_prefix(r.body, "recallgate_http_request_duration_seconds_sum") &&
		     has_line_prefix(r.body, "recallgate_http_request_duration_seconds_count"),
		 "histogram without _sum/_count");
	static const char *const gauges[] = {"recallgate_db_pool_size", "recallgate_db_pool_in_use",
					     "recallgate_db_pool_waiting",
					     "recallgate_db_pool_acquire_timeouts_total"};
	for (size_t i = 0; i < sizeof gauges / sizeof *gauges; i++)
		IT_CHECK(has_line_prefix(r.body, gauges[i]), "no %s in /metrics", gauges[i]);
	/* route templates only: no raw path, no private text */
	IT_CHECK(strstr(r.body, thread) == NULL, "/metrics contains a raw thread id");
	IT_CHECK(strstr(r.body, "definitely-not-a-route") == NULL, "/metrics contains a raw path");
	IT_CHECK(strstr(r.body, admin) == NULL, "/metrics contains a token");
	IT_CHECK(strstr(r.body, put_body) == NULL, "/metrics contains a request body");
	it_resp_free(&r);
	free(path);
}

static void test_openapi(void **state)
{
	(void)state;
	struct it_resp r;
	it_request(&srv, "GET", "/openapi.yaml", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(r.body_len > 12 && strncmp(r.body, "openapi: 3.1", 12) == 0,
		 "/openapi.yaml does not start with `openapi: 3.1`");
	const char *ct = it_resp_header(&r, "Content-Type");
	IT_CHECK(ct && strncmp(ct, "application/yaml", 16) == 0, "/openapi.yaml Content-Type is %s",
		 ct ? ct : "none");
	IT_CHECK(strstr(r.body, "/v1/threads/{thread_id}/memory-mode") != NULL &&
		     strstr(r.body, "/v1/tokens") != NULL && strstr(r.body, "/v1/audit") != NULL,
		 "/openapi.yaml does not describe the foundation's paths");
	it_resp_free(&r);
}

static bool list_contains(const char *list, const char *item)
{
	/* comma separated, case-insensitive */
	size_t n = strlen(item);
	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (strncasecmp(p, item, n) == 0 && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

static void expect_cors(const struct it_resp *r)
{
	const char *acao = it_resp_header(r, "Access-Control-Allow-Origin");
	IT_CHECK(acao && strcmp(acao, ORIGIN) == 0, "%s: Access-Control-Allow-Origin is %s",
		 r->desc, acao ? acao : "missing");
	const char *vary = it_resp_header(r, "Vary");
	IT_CHECK(vary && list_contains(vary, "Origin"), "%s: no Vary: Origin", r->desc);
}

static void expect_no_cors(const struct it_resp *r)
{
	static const char *const names[] = {
	    "Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
	    "Access-Control-Allow-Headers", "Access-Control-Allow-Credentials"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		IT_CHECK(it_resp_header(r, names[i]) == NULL, "%s: %s given to a foreign origin",
			 r->desc, names[i]);
}

static void test_cors(void **state)
{
	(void)state;
	struct it_resp r;
	char *path = mode_path();
	const char *allowed[] = {"Origin: " ORIGIN, NULL};
	const char *other[] = {"Origin: https://evil.example", NULL};
	const char *prefix[] = {"Origin: https://app.example.evil", NULL};

	it_request(&srv, "GET", "/healthz", NULL, NULL, allowed, &r);
	IT_STATUS(&r, 200);
	expect_cors(&r);
	it_resp_free(&r);

	it_request(&srv, "GET", path, admin, NULL, allowed, &r);
	IT_STATUS(&r, 200);
	expect_cors(&r);
	const char *expose = it_resp_header(&r, "Access-Control-Expose-Headers");
	IT_CHECK(expose && list_contains(expose, "ETag") && list_contains(expose, "X-Request-Id") &&
		     list_contains(expose, "Location") &&
		     list_contains(expose, "Idempotent-Replayed") &&
		     list_contains(expose, "Retry-After"),
		 "Access-Control-Expose-Headers is %s", expose ? expose : "missing");
	it_resp_free(&r);

	/* problems carry CORS headers too, or a browser could not read them */
	it_request(&srv, "GET", path, NULL, NULL, allowed, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	expect_cors(&r);
	it_resp_free(&r);

	it_request(&srv, "GET", path, admin, NULL, other, &r);
	IT_STATUS(&r, 200);
	expect_no_cors(&r);
	it_resp_free(&r);
	it_request(&srv, "GET", "/healthz", NULL, NULL, prefix, &r);
	IT_STATUS(&r, 200);
	expect_no_cors(&r);
	it_resp_free(&r);

	/* preflight from the allowed origin: 204, no auth needed */
	const char *pre[] = {
	    "Origin: " ORIGIN, "Access-Control-Request-Method: PUT",
	    "Access-Control-Request-Headers: authorization, content-type, if-match", NULL};
	it_request(&srv, "OPTIONS", path, NULL, NULL, pre, &r);
	IT_STATUS(&r, 204);
	expect_cors(&r);
	const char *m = it_resp_header(&r, "Access-Control-Allow-Methods");
	IT_CHECK(m && list_contains(m, "PUT") && list_contains(m, "GET"),
		 "Access-Control-Allow-Methods is %s", m ? m : "missing");
	const char *h = it_resp_header(&r, "Access-Control-Allow-Headers");
	IT_CHECK(h && list_contains(h, "Authorization") && list_contains(h, "Content-Type") &&
		     list_contains(h, "If-Match") && list_contains(h, "X-Request-Id") &&
		     list_contains(h, "Idempotency-Key"),
		 "Access-Control-Allow-Headers is %s", h ? h : "missing");
	const char *age = it_resp_header(&r, "Access-Control-Max-Age");
	IT_CHECK(age && strcmp(age, "600") == 0, "Access-Control-Max-Age is %s",
		 age ? age : "missing");
	IT_CHECK(r.body_len == 0, "204 preflight with a body");
	it_resp_free(&r);

	/* preflight from another origin: 204 without CORS headers */
	const char *pre_other[] = {"Origin: https://evil.example",
				   "Access-Control-Request-Method: PUT", NULL};
	it_request(&srv, "OPTIONS", path, NULL, NULL, pre_other, &r);
	IT_STATUS(&r, 204);
	expect_no_cors(&r);
	it_resp_free(&r);
	free(path);
}

static void test_sigterm_with_slow_client(void **state)
{
	(void)state;
	/* a second server, a client that sent half a request and then nothing: SIGTERM still
	 * ends the process with 0 within the 10 s drain */
	struct it_server s2;
	IT_CHECK(it_server_start(&s2, NULL) == 0, "second server did not start");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	IT_CHECK(fd >= 0, "socket");
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)s2.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	IT_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
	static const char partial[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
	IT_CHECK(write(fd, partial, sizeof partial - 1) == (ssize_t)(sizeof partial - 1), "write");
	struct timespec pause = {0, 200 * 1000000L};
	nanosleep(&pause, NULL);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int st = it_server_stop(&s2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	IT_CHECK(st == 0, "exit status %d after SIGTERM with a slow client", st);
	IT_CHECK(secs <= 12.0, "took %.1f s to exit (the drain is at most 10 s)", secs);
}

static void test_sigterm_and_log(void **state)
{
	(void)state;
	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);

	size_t len = 0;
	char *log = it_log_read(&srv, &len);
	IT_CHECK(log != NULL && len > 0, "empty server log %s", srv.log_path);
	bool leaked_token = strstr(log, admin) != NULL;
	bool leaked_body = strstr(log, put_body) != NULL;
	/* every line is a JSON object */
	size_t lines = 0, bad = 0;
	char *save = NULL;
	for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		json_error_t err;
		json_t *j = json_loads(line, 0, &err);
		if (!json_is_object(j)) {
			if (bad++ < 3)
				fprintf(stderr, "not a JSON object log line: %.300s\n", line);
		}
		json_decref(j);
	}
	free(log);
	IT_CHECK(!leaked_token, "the server log contains a bearer token");
	IT_CHECK(!leaked_body, "the server log contains a request body");
	IT_CHECK(lines > 0 && bad == 0, "%zu of %zu log lines are not JSON objects", bad, lines);
	IT_CHECK(it_log_contains(&srv, "/v1/threads/{thread_id}/memory-mode"),
		 "no log line carries the route template");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_healthz),
	    cmocka_unit_test(test_readyz),
	    cmocka_unit_test(test_metrics),
	    cmocka_unit_test(test_openapi),
	    cmocka_unit_test(test_cors),
	    cmocka_unit_test(test_sigterm_with_slow_client),
	    cmocka_unit_test(test_sigterm_and_log),
	};
	int rc = cmocka_run_group_tests_name("it_ops", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
