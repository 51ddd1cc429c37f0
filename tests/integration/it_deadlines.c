/*
 * it_deadlines — how long a connection may take to send a request's head (openapi/openapi.yaml
 * "HTTP framing and the edge", RECALLGATE_HEADER_TIMEOUT; server/conns.h), over raw sockets, on
 * a server with a 1 s header timeout and a 2 s idle timeout:
 *   - a new connection's first head: within the deadline it is answered, trickled past it the
 *     connection is cut;
 *   - a later request on a kept-alive connection: its head trickled for longer than the header
 *     timeout after its request line is cut too (it used to be bounded only by the idle
 *     timeout, which every byte resets); a request line trickled without end is cut at the
 *     idle timeout plus the header timeout after the previous answer;
 *   - an idle kept-alive connection is not cut before the idle timeout, and is closed after;
 *   - every cut is counted in recallgate_http_header_timeouts_total.
 * The bounds on when a cut comes are wide: the watchdog looks every 100 ms and ctest runs
 * two tests at once.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define HEADER_S 1
#define IDLE_S 2

static struct it_server srv;
static unsigned cuts; /* connections the tests expect the server to have cut */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	IT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect");
	return fd;
}

static void send_text(int fd, const char *text)
{
	IT_CHECK(send(fd, text, strlen(text), MSG_NOSIGNAL) == (ssize_t)strlen(text), "send");
}

enum peer { PEER_QUIET, PEER_CLOSED, PEER_SENT };

/* What the server did on fd within wait_ms: nothing, closed it (EOF or reset), or sent
 * something (left unread). */
static enum peer peer_within(int fd, int wait_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, wait_ms) <= 0)
		return PEER_QUIET;
	char c;
	return recv(fd, &c, 1, MSG_PEEK) > 0 ? PEER_SENT : PEER_CLOSED;
}

static bool closed_within(int fd, int wait_ms)
{
	enum peer e = peer_within(fd, wait_ms);
	IT_CHECK(e != PEER_SENT, "the server sent something unasked");
	return e == PEER_CLOSED;
}

/* Sends text one byte every every_ms. Returns the ms from the call until the server closed
 * the connection, or -1 when it did not (all of text went out, or an answer came). */
static long long trickle(int fd, const char *text, int every_ms)
{
	long long t0 = now_ms();
	for (const char *p = text; *p; p++) {
		if (send(fd, p, 1, MSG_NOSIGNAL) != 1)
			return now_ms() - t0;
		enum peer e = peer_within(fd, every_ms);
		if (e == PEER_CLOSED)
			return now_ms() - t0;
		if (e == PEER_SENT)
			return -1;
	}
	return -1;
}

/* Reads one answer (head and Content-Length body) from a kept-alive connection: its status. */
static int read_answer(int fd)
{
	char buf[8192];
	size_t got = 0;
	char *end = NULL;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (got + 1 < sizeof buf && poll(&p, 1, 5000) > 0) {
		ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL) {
			const char *cl = strcasestr(buf, "\r\nContent-Length: ");
			size_t body = cl && cl < end ? strtoul(cl + 18, NULL, 10) : 0;
			if (got >= (size_t)(end + 4 - buf) + body)
				break;
		}
	}
	buf[got] = '\0';
	IT_CHECK(end != NULL && strncmp(buf, "HTTP/1.1 ", 9) == 0, "no answer: %s", buf);
	return atoi(buf + 9);
}

/* A connection that has had one request answered: the next one's head is awaited. */
static int kept_alive(void)
{
	int fd = connect_server();
	send_text(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
	IT_CHECK(read_answer(fd) == 200, "the first request");
	return fd;
}

static int group_setup(void **state)
{
	(void)state;
	static const char *const env[] = {"RECALLGATE_HEADER_TIMEOUT=1",
					  "RECALLGATE_CONNECTION_TIMEOUT=2", NULL};
	return it_server_start(&srv, env);
}

static int group_teardown(void **state)
{
	(void)state;
	return it_server_stop(&srv) == 0 ? 0 : -1;
}

/* About 0.5 s to send a whole head: inside the 1 s deadline. */
static void test_first_head_inside(void **state)
{
	(void)state;
	int fd = connect_server();
	IT_CHECK(trickle(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: abcdefgh\r\n\r\n", 10) <
			 0,
		 "a head sent in 0.5 s was cut");
	IT_CHECK(read_answer(fd) == 200, "a head sent within the deadline is answered");
	close(fd);
}

static void test_first_head_past(void **state)
{
	(void)state;
	int fd = connect_server();
	long long t = trickle(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n",
			      100);
	close(fd);
	IT_CHECK(t >= HEADER_S * 1000 - 200 && t <= HEADER_S * 1000 + 2500,
		 "a first head trickled past %d s: cut after %lld ms (-1: never)", HEADER_S, t);
	cuts++;
}

/* The request line arrives at once, then the head trickles: cut the header timeout later. */
static void test_later_head_past(void **state)
{
	(void)state;
	int fd = kept_alive();
	send_text(fd, "GET /healthz HTTP/1.1\r\n");
	long long t = trickle(fd, "Host: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n",
			      100);
	close(fd);
	IT_CHECK(t >= HEADER_S * 1000 - 200 && t <= HEADER_S * 1000 + 2500,
		 "a kept-alive connection's second head trickled past %d s: cut after %lld ms "
		 "(-1: never)",
		 HEADER_S, t);
	cuts++;
}

static void test_later_head_inside(void **state)
{
	(void)state;
	int fd = kept_alive();
	IT_CHECK(trickle(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: abcdefgh\r\n\r\n", 10) <
			 0,
		 "a second head sent in 0.5 s was cut");
	IT_CHECK(read_answer(fd) == 200, "a second head sent within the deadline is answered");
	close(fd);
}

/* A request line that never ends: each byte resets the idle timeout, the deadline does not. */
static void test_later_line_without_end(void **state)
{
	(void)state;
	int fd = kept_alive();
	long long t = trickle(fd, "GET /healthz?aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				  " HTTP/1.1\r\n\r\n",
			      100);
	close(fd);
	int limit = (IDLE_S + HEADER_S) * 1000;
	IT_CHECK(t >= limit - 200 && t <= limit + 2500,
		 "a request line trickled after an answer: cut after %lld ms (-1: never), "
		 "expected about %d",
		 t, limit);
	cuts++;
}

/* Idle for less than the idle timeout: the next request is served; past it: closed. */
static void test_idle_keep_alive(void **state)
{
	(void)state;
	int fd = kept_alive();
	IT_CHECK(!closed_within(fd, IDLE_S * 1000 - 500), "an idle connection was cut early");
	send_text(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
	IT_CHECK(read_answer(fd) == 200, "a request after %d ms idle", IDLE_S * 1000 - 500);
	long long t0 = now_ms();
	IT_CHECK(closed_within(fd, IDLE_S * 1000 + 2500), "an idle connection stays open");
	long long t = now_ms() - t0;
	IT_CHECK(t >= IDLE_S * 1000 - 200, "an idle connection closed after %lld ms", t);
	close(fd);
}

static void test_cuts_counted(void **state)
{
	(void)state;
	struct it_resp r;
	IT_CHECK(it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r) == 0 && r.status == 200,
		 "metrics");
	double n = it_metric_value(r.body, "recallgate_http_header_timeouts_total");
	IT_CHECK(n == cuts, "recallgate_http_header_timeouts_total %g, expected %u", n, cuts);
	it_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_head_inside),
	    cmocka_unit_test(test_first_head_past),
	    cmocka_unit_test(test_later_head_past),
	    cmocka_unit_test(test_later_head_inside),
	    cmocka_unit_test(test_later_line_without_end),
	    cmocka_unit_test(test_idle_keep_alive),
	    cmocka_unit_test(test_cuts_counted),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
