/*
 * it_framing — HTTP framing answers (openapi/openapi.yaml "HTTP framing and the edge", issue 10
 * item 4), over raw sockets because a client library would refuse to send most of these:
 *   - Content-Length with Transfer-Encoding, two Content-Lengths, or a Transfer-Encoding other
 *     than exactly "chunked" → 400 invalid_request and the connection closed, at once;
 *   - a Content-Length that is not a number → one well-formed 400 invalid_request, one that
 *     overflows 64 bits → 413 payload_too_large (libmicrohttpd 0.9.75 would send its own
 *     status line twice), closed, and nothing written; also while other connections on the
 *     same I/O threads are between their request line and the end of their headers;
 *   - HTTP/1.1 without Host → 400 invalid_request (HTTP/1.0 needs none);
 *   - a body cut by the client's half-close: the connection closed at once, not at the idle
 *     timeout;
 *   - HEAD on every GET route: the GET's status and headers, no body; listed in Allow;
 *   - the request line and head at their limits (4096-byte URI, 6144-byte head, 64 query
 *     parameters): the limit passes, one over is 414 / 431 problem+json, and a query that
 *     would exhaust the connection's memory gets a closed connection at once, never silence.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define MAX_URI 4096
#define MAX_HEAD 6144
#define MAX_PARAMS 64

static struct it_server srv;

/* What came back on one connection for one request. */
struct raw_answer {
	int status;       /* 0: none */
	char head[2048];  /* status line and headers */
	char body[4096];
	bool closed;      /* the server closed the connection (EOF) within the wait */
};

/* Sends `len` bytes of req on a new connection and reads until EOF or 1.5 s of silence. */
static void raw_send(const char *req, size_t len, struct raw_answer *a)
{
	memset(a, 0, sizeof *a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	IT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect");
	for (size_t off = 0; off < len;) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break; /* the server may close before reading everything */
		off += (size_t)n;
	}
	static char buf[65536];
	size_t got = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 1500) <= 0)
			break;
		ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (n <= 0) {
			a->closed = true;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	char *end = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.1 ", 9) == 0)
		a->status = atoi(buf + 9);
	if (end) {
		snprintf(a->head, sizeof a->head, "%.*s", (int)(end - buf), buf);
		snprintf(a->body, sizeof a->body, "%s", end + 4);
	}
}

static void raw(const char *req, struct raw_answer *a)
{
	raw_send(req, strlen(req), a);
}

static bool head_has(const struct raw_answer *a, const char *line)
{
	return strcasestr(a->head, line) != NULL;
}

/* a problem+json answer with this status and code */
static void expect_problem(const struct raw_answer *a, int status, const char *code,
			   const char *what)
{
	char want[96];
	snprintf(want, sizeof want, "\"code\":\"%s\"", code);
	IT_CHECK(a->status == status && head_has(a, "Content-Type: application/problem+json") &&
		     strstr(a->body, want),
		 "%s: expected %d %s, got %d\n%s\n\n%s", what, status, code, a->status, a->head,
		 a->body);
}

static int group_setup(void **state)
{
	(void)state;
	return it_server_start(&srv, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	return it_server_stop(&srv) == 0 ? 0 : -1;
}

static void test_ambiguous_length(void **state)
{
	(void)state;
	struct raw_answer a;
	raw("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
	    &a);
	expect_problem(&a, 400, "invalid_request", "Content-Length with Transfer-Encoding");
	IT_CHECK(head_has(&a, "Connection: close") && a.closed,
		 "the smuggling shape did not close the connection:\n%s", a.head);
	IT_CHECK(strstr(a.body, "HTTP/1.1 200") == NULL,
		 "the request behind it was answered: %s", a.body);
	raw("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
	    &a);
	expect_problem(&a, 400, "invalid_request", "two Content-Length headers");
	IT_CHECK(a.closed, "two Content-Lengths did not close the connection");
}

/* A Transfer-Encoding other than exactly "chunked" is answered at once with 400 and a close
 * (RFC 9112 §6.3), never left waiting for a body whose end cannot be known; "chunked" in any
 * case, with whitespace around it, is a body like any other */
static void test_transfer_codings(void **state)
{
	(void)state;
	static const char *const refused[] = {
	    "Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding: xchunked\r\n",
	    "Transfer-Encoding: chunked, gzip\r\n", "Transfer-Encoding: identity\r\n",
	    "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
	    "Transfer-Encoding: \r\n"};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		char req[256];
		snprintf(req, sizeof req, "POST /v1/tokens HTTP/1.1\r\nHost: x\r\n%s\r\n2\r\n{}\r\n",
			 refused[i]);
		struct raw_answer a;
		raw(req, &a);
		expect_problem(&a, 400, "invalid_request", refused[i]);
		IT_CHECK(head_has(&a, "Connection: close") && a.closed,
			 "%s: the connection was not closed:\n%s", refused[i], a.head);
	}
	struct raw_answer a;
	raw("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked \r\n\r\n"
	    "2\r\n{}\r\n0\r\n\r\n",
	    &a);
	expect_problem(&a, 401, "unauthenticated", "a chunked body without a token");
}

/* One answer: a single status line, nothing after the body. */
static void expect_single_answer(const struct raw_answer *a, const char *what)
{
	IT_CHECK(strstr(a->head + 1, "HTTP/1.") == NULL && strstr(a->body, "HTTP/1.") == NULL,
		 "%s: more than one status line:\n%s\n\n%s", what, a->head, a->body);
	IT_CHECK(head_has(a, "Connection: close") && a->closed, "%s: not closed:\n%s", what,
		 a->head);
}

static void test_malformed_length(void **state)
{
	(void)state;
	static const char *const bad[] = {"abc", "", "-1", "+5", "1e3", "0x10", "5 5", "5,5"};
	char admin_token[256], req[1024];
	char *tenant = it_unique("framing");
	char *admin = it_token(tenant, "admin", "it-framing");
	snprintf(admin_token, sizeof admin_token, "%s", admin);
	free(admin);
	free(tenant);
	struct raw_answer a;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		/* a write with a body: it must not happen */
		snprintf(req, sizeof req,
			 "PUT /v1/threads/framing-cl/memory-mode HTTP/1.1\r\nHost: x\r\n"
			 "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %s\r\n\r\n{\"expected_revision\":0,\"mode\":\"disabled\"}",
			 admin_token, bad[i]);
		raw(req, &a);
		char what[64];
		snprintf(what, sizeof what, "Content-Length: \"%s\"", bad[i]);
		expect_problem(&a, 400, "invalid_request", what);
		expect_single_answer(&a, what);
		IT_CHECK(head_has(&a, "X-Request-Id: req_"), "%s: no request id:\n%s", what, a.head);
	}
	raw("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n"
	    "\r\n{}",
	    &a);
	expect_problem(&a, 413, "payload_too_large", "a Content-Length over 64 bits");
	expect_single_answer(&a, "a Content-Length over 64 bits");
	/* nothing was written */
	struct it_resp m = {0};
	it_request(&srv, "GET", "/v1/threads/framing-cl/memory-mode", admin_token, NULL, NULL, &m);
	IT_CHECK(m.status == 200 && it_json_str_is(m.json, "mode", "enabled") &&
		     it_json_int(m.json, "revision", -1) == 0,
		 "the refused PUTs changed the mode: %ld %s", m.status, m.body);
	it_resp_free(&m);
}

static void send_text(int fd, const char *text)
{
	IT_CHECK(send(fd, text, strlen(text), MSG_NOSIGNAL) == (ssize_t)strlen(text), "send");
}

/* A connection to the server, with `text` sent. */
static int open_with(const char *text)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	IT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect");
	send_text(fd, text);
	return fd;
}

/* Everything the server sends on fd until it closes or 1.5 s of silence. */
static void read_all(int fd, char *buf, size_t size)
{
	size_t got = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (got + 1 < size && poll(&p, 1, 1500) > 0) {
		ssize_t n = recv(fd, buf + got, size - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
}

/* 0 when the server closed fd (EOF) within timeout_ms of now, -1 when it did not; what it
 * sent before is discarded. */
static int closed_within(int fd, int timeout_ms)
{
	long long until = it_now_ms() + timeout_ms;
	char buf[4096];
	for (long long left; (left = until - it_now_ms()) > 0;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)left) <= 0)
			return -1;
		if (recv(fd, buf, sizeof buf, 0) <= 0)
			return 0;
	}
	return -1;
}

/* A client that shuts its sending side in the middle of a body can never complete it: the
 * connection is closed at once (libmicrohttpd alone missed the end of the stream that came
 * while the request was suspended, and waited for the 30 s idle timeout: this failed on its
 * first round); one that shuts it after a whole request is still answered. */
static void test_half_closed_mid_body(void **state)
{
	(void)state;
	/* A valid token not yet in the server's cache: the request is suspended while a lane
	 * verifies it (held up here by a lock on the tokens), and the half-close arrives
	 * meanwhile. libmicrohttpd then missed it and waited for the idle timeout. */
	char *tenant = it_unique("half");
	static const char *const framing[] = {"Content-Length: 100\r\n\r\n{\"query\":",
					      "Transfer-Encoding: chunked\r\n\r\n40\r\n{\"query\":"};
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < sizeof framing / sizeof *framing; i++) {
			char *token = it_token(tenant, "memory:read", "half");
			char partial[512];
			snprintf(partial, sizeof partial,
				 "POST /v1/memory/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
				 "%s\r\nContent-Type: application/json\r\n%s",
				 token, framing[i]);
			PGconn *locker = it_db_lock("tokens", "ACCESS EXCLUSIVE");
			int fd = open_with(partial);
			shutdown(fd, SHUT_WR);
			it_sleep_ms(200);
			it_db_unlock(locker);
			free(token);
			IT_CHECK(closed_within(fd, 3000) == 0,
				 "a body cut by a half-close (%s) was not closed within 3 s",
				 i ? "chunked" : "Content-Length");
			close(fd);
		}
	}
	free(tenant);
	/* the whole request, then the half-close: answered */
	int fd = open_with("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
	shutdown(fd, SHUT_WR);
	char buf[1024];
	read_all(fd, buf, sizeof buf);
	close(fd);
	IT_CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0, "a half-closed whole request: %s", buf);
}

/* The refused request's head arrives in two parts, and other connections start their
 * requests in between: the answer still goes to the refused one, and only to it. */
static void test_malformed_length_among_others(void **state)
{
	(void)state;
	enum { OTHERS = 8 };
	static char buf[8192];
	int refused = open_with("POST /v1/tokens HTTP/1.1\r\nHost: x\r\n");
	it_sleep_ms(50);
	int others[OTHERS];
	for (int i = 0; i < OTHERS; i++)
		others[i] = open_with("GET /healthz HTTP/1.1\r\nHost: x\r\n");
	it_sleep_ms(50);
	send_text(refused, "Content-Length: abc\r\n\r\n");
	read_all(refused, buf, sizeof buf);
	close(refused);
	IT_CHECK(strncmp(buf, "HTTP/1.1 400 ", 13) == 0 && strstr(buf + 1, "HTTP/1.") == NULL &&
		     strstr(buf, "\"code\":\"invalid_request\""),
		 "the refused connection got:\n%s", buf);
	for (int i = 0; i < OTHERS; i++) {
		send_text(others[i], "Connection: close\r\n\r\n");
		read_all(others[i], buf, sizeof buf);
		close(others[i]);
		IT_CHECK(strncmp(buf, "HTTP/1.1 200 ", 13) == 0 && strstr(buf + 1, "HTTP/1.") == NULL,
			 "connection %d, waiting beside the refused one, got:\n%s", i, buf);
	}
}

static void test_host_required_on_http11(void **state)
{
	(void)state;
	struct raw_answer a;
	raw("GET /healthz HTTP/1.1\r\n\r\n", &a);
	expect_problem(&a, 400, "invalid_request", "HTTP/1.1 without Host");
	raw("GET /healthz HTTP/1.0\r\n\r\n", &a);
	IT_CHECK(a.status == 200, "HTTP/1.0 without Host: %d", a.status);
}

static void test_head_on_get_routes(void **state)
{
	(void)state;
	char *tenant = it_unique("framing");
	char *token = it_token(tenant, "admin", "framing");
	char req[512];
	struct raw_answer get, head;
	static const char *const paths[] = {"/healthz", "/openapi.yaml", "/v1/tokens",
					    "/v1/threads/fr-t/memory-mode"};
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		snprintf(req, sizeof req,
			 "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
			 "X-Request-Id: same\r\nConnection: close\r\n\r\n",
			 paths[i], token);
		raw(req, &get);
		req[0] = 'H', req[1] = 'E', req[2] = 'A';
		memmove(req + 4, req + 3, strlen(req + 3) + 1);
		req[3] = 'D';
		raw(req, &head);
		IT_CHECK(get.status == 200 && head.status == 200, "%s: GET %d, HEAD %d", paths[i],
			 get.status, head.status);
		IT_CHECK(head.body[0] == '\0', "HEAD %s sent a body: %s", paths[i], head.body);
		char *cl = strcasestr(get.head, "Content-Length:");
		char line[64] = "";
		if (cl)
			snprintf(line, sizeof line, "%.*s", (int)strcspn(cl, "\r\n"), cl);
		IT_CHECK(cl && head_has(&head, line), "HEAD %s does not carry the GET's %s",
			 paths[i], line);
	}
	/* a path without GET: 405, and Allow lists HEAD where GET is */
	raw("HEAD /v1/memory/search HTTP/1.1\r\nHost: x\r\n\r\n", &head);
	IT_CHECK(head.status == 405 && head_has(&head, "Allow: POST"), "HEAD on a POST route: %d\n%s",
		 head.status, head.head);
	raw("DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n", &head);
	IT_CHECK(head.status == 405 && head_has(&head, "Allow: GET, HEAD"),
		 "Allow of a GET route: %d\n%s", head.status, head.head);
	free(token);
	free(tenant);
}

/* "GET <uri> HTTP/1.1\r\nHost: x\r\n\r\n" with a URI of exactly `len` bytes */
static char *request_with_uri(size_t len)
{
	const char *path = "/healthz?x=";
	size_t n = strlen(path);
	char *req = malloc(len + 64);
	IT_CHECK(req != NULL && len > n, "malloc");
	memcpy(req, "GET ", 4);
	memcpy(req + 4, path, n);
	memset(req + 4 + n, 'a', len - n);
	strcpy(req + 4 + len, " HTTP/1.1\r\nHost: x\r\n\r\n");
	return req;
}

static void test_uri_and_head_limits(void **state)
{
	(void)state;
	struct raw_answer a;
	char *req = request_with_uri(MAX_URI);
	raw(req, &a);
	free(req);
	IT_CHECK(a.status == 200, "a %d-byte URI: %d", MAX_URI, a.status);
	req = request_with_uri(MAX_URI + 1);
	raw(req, &a);
	free(req);
	expect_problem(&a, 414, "uri_too_long", "a URI one byte over");

	/* the whole head: request line, headers and the blank line */
	static const char base[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ";
	char *big = malloc(MAX_HEAD + 2);
	IT_CHECK(big != NULL, "malloc");
	for (size_t total = MAX_HEAD; total <= MAX_HEAD + 1; total++) {
		size_t pad = total - (sizeof base - 1) - 4;
		memcpy(big, base, sizeof base - 1);
		memset(big + sizeof base - 1, 'a', pad);
		memcpy(big + sizeof base - 1 + pad, "\r\n\r\n", 4);
		raw_send(big, total, &a);
		if (total == MAX_HEAD)
			IT_CHECK(a.status == 200, "a %zu-byte head: %d", total, a.status);
		else
			expect_problem(&a, 431, "headers_too_large", "a head one byte over");
	}
	free(big);
}

static void test_query_parameters(void **state)
{
	(void)state;
	struct raw_answer a;
	char req[8192];
	static const size_t counts[] = {MAX_PARAMS, MAX_PARAMS + 1, 450};
	for (size_t c = 0; c < 3; c++) {
		size_t n = (size_t)snprintf(req, sizeof req, "GET /healthz?p0=1");
		for (size_t i = 1; i < counts[c]; i++)
			n += (size_t)snprintf(req + n, sizeof req - n, "&p%zu=1", i);
		snprintf(req + n, sizeof req - n, " HTTP/1.1\r\nHost: x\r\n\r\n");
		raw(req, &a);
		if (counts[c] == MAX_PARAMS)
			IT_CHECK(a.status == 200, "%zu query parameters: %d", counts[c], a.status);
		else
			IT_CHECK(a.status == 0 && a.closed,
				 "%zu query parameters: status %d, closed %d (expected a closed "
				 "connection, never silence)",
				 counts[c], a.status, a.closed);
	}
	/* the server is fine afterwards */
	raw("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", &a);
	IT_CHECK(a.status == 200, "/healthz after the closed ones: %d", a.status);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ambiguous_length),
	    cmocka_unit_test(test_transfer_codings),
	    cmocka_unit_test(test_half_closed_mid_body),
	    cmocka_unit_test(test_malformed_length),
	    cmocka_unit_test(test_malformed_length_among_others),
	    cmocka_unit_test(test_host_required_on_http11),
	    cmocka_unit_test(test_head_on_get_routes),
	    cmocka_unit_test(test_uri_and_head_limits),
	    cmocka_unit_test(test_query_parameters),
	};
	int rc = cmocka_run_group_tests_name("it_framing", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
