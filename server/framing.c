/* What libmicrohttpd 0.9.75 refuses before the service is called: a Content-Length that is
 * not a number, or one too large for 64 bits. It answers those itself, and its answer is
 * broken: the status line and headers go out twice (transmit_error_response queues the
 * answer while parsing the headers, then the state machine builds its headers again), as
 * HTML. The service never sees the request, but libmicrohttpd logs the refusal, on the
 * connection's I/O thread, just before answering. So each I/O thread keeps the connections
 * whose request line it has read and whose request has not reached the service yet; when
 * the log says the length was refused, the one among them whose headers are complete is the
 * one refused (headers are parsed straight after they complete, and a request whose parse
 * passed has reached the service). It gets our answer, one well-formed problem, and its
 * sending side is shut, so that libmicrohttpd's answer fails to go out and the connection
 * closes. */
#include "server/framing.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "core/problem.h"
#include "server/log.h"

/* This thread's connections between their request line and the service's first call. Only
 * the connection's own I/O thread links and unlinks it (libmicrohttpd runs every callback of
 * a connection, its close included, on the thread that owns it). */
static _Thread_local struct conn_state *pending;

void framing_uri_seen(struct conn_state *cs, struct MHD_Connection *conn)
{
	if (cs == NULL || cs->pending)
		return;
	cs->conn = conn;
	cs->pending = true;
	cs->prev = NULL;
	cs->next = pending;
	if (pending)
		pending->prev = cs;
	pending = cs;
}

void framing_request_seen(struct conn_state *cs)
{
	if (cs == NULL || !cs->pending)
		return;
	if (cs->prev)
		cs->prev->next = cs->next;
	else
		pending = cs->next;
	if (cs->next)
		cs->next->prev = cs->prev;
	cs->prev = cs->next = NULL;
	cs->pending = false;
}

/* The pending connection whose headers are complete and which has no answer yet. */
static struct conn_state *refused_one(void)
{
	for (struct conn_state *cs = pending; cs; cs = cs->next) {
		if (MHD_get_connection_info(cs->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) &&
		    MHD_get_connection_info(cs->conn, MHD_CONNECTION_INFO_HTTP_STATUS) == NULL)
			return cs;
	}
	return NULL;
}

/* Writes the whole of buf to the non-blocking socket fd, as far as it will take it now. */
static bool send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Our answer to a refused length: problem+json, Connection: close. */
static bool answer(int fd, enum rg_problem code, const char *detail, const char *request_id)
{
	json_t *body = core_problem_new(code, detail, request_id, NULL, -1);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL)
		return false;
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
	int status = core_problem_status(code);
	char head[512];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 %d %s\r\nDate: %s\r\nConnection: close\r\n"
			 "Content-Type: application/problem+json; charset=utf-8\r\n"
			 "Cache-Control: no-store\r\nX-Request-Id: %s\r\nContent-Length: %zu\r\n\r\n",
			 status, status == 413 ? "Content Too Large" : "Bad Request", date,
			 request_id, strlen(text));
	bool ok = n > 0 && (size_t)n < sizeof head && send_all(fd, head, (size_t)n) &&
		  send_all(fd, text, strlen(text));
	free(text);
	return ok;
}

/* From libmicrohttpd's logger, with the message's format: true when it was a refused
 * Content-Length and this thread's refused connection was answered and shut. */
static bool framing_on_log(const char *fmt)
{
	enum rg_problem code;
	const char *detail;
	if (strncmp(fmt, "Failed to parse `Content-Length' header.", 40) == 0) {
		code = PROBLEM_INVALID_REQUEST;
		detail = "Content-Length must be a decimal number.";
	} else if (strncmp(fmt, "Too large value of 'Content-Length' header.", 43) == 0) {
		code = PROBLEM_PAYLOAD_TOO_LARGE;
		detail = NULL;
	} else {
		return false;
	}
	struct conn_state *cs = refused_one();
	if (cs == NULL)
		return false; /* not found: libmicrohttpd's own answer goes out */
	framing_request_seen(cs);
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(cs->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (fd == NULL)
		return false;
	char request_id[RG_MAX_REQUEST_ID_BYTES + 1];
	http_new_request_id(request_id, sizeof request_id);
	bool sent = answer(fd->connect_fd, code, detail, request_id);
	/* Shut either way: libmicrohttpd's own answer must not follow ours. */
	shutdown(fd->connect_fd, SHUT_WR);
	log_info(request_id, "http: refused a request whose Content-Length %s (%d%s)",
		 code == PROBLEM_INVALID_REQUEST ? "is not a number" : "overflows",
		 core_problem_status(code), sent ? "" : ", answer not sent");
	return true;
}

/* How a request frames its body: its Content-Length headers, and its Transfer-Encoding
 * headers with whether each is exactly the one coding we accept. */
struct body_framing {
	unsigned lengths;
	unsigned encodings;
	bool only_chunked; /* every Transfer-Encoding header is "chunked" alone */
};

/* "chunked", case-insensitive, with optional whitespace around it (RFC 9110 §5.6.3) */
static bool is_chunked_alone(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	if (strncasecmp(v, "chunked", 7) != 0)
		return false;
	for (v += 7; *v == ' ' || *v == '\t'; v++)
		;
	return *v == '\0';
}

/* Counts into *(struct body_framing *)cls. Two lengths make the body's length ambiguous (a
 * request smuggling vector behind a proxy); a coding list other than "chunked" alone is one
 * libmicrohttpd cannot decode, and it would wait for the body until the idle timeout. */
static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct body_framing *f = cls;
	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->lengths++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->only_chunked = (f->encodings == 0 || f->only_chunked) && is_chunked_alone(value);
		f->encodings++;
	}
	return MHD_YES;
}

const char *framing_refusal(struct MHD_Connection *conn)
{
	struct body_framing framing = {0}, *f = &framing;
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, f);
	if (f->lengths > 1)
		return "Conflicting Content-Length headers.";
	if (f->lengths > 0 && f->encodings > 0)
		return "Content-Length and Transfer-Encoding together.";
	if (f->encodings > 1 || (f->encodings == 1 && !f->only_chunked))
		return "Transfer-Encoding must be chunked alone.";
	return NULL;
}

/* libmicrohttpd's messages, without the request's text: its strings (a URL, a header's
 * value, the HTML of an answer) become "…"; numbers stay. A refused Content-Length also
 * gets our answer (framing_on_log). */
void framing_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char safe[512], msg[512];
	size_t o = 0;
	(void)cls;
	(void)framing_on_log(fmt);
	for (const char *p = fmt; *p && o + sizeof "…%.0s" < sizeof safe; p++) {
		if (p[0] == '%' && p[1] == '%') {
			safe[o++] = *p++;
			safe[o++] = *p;
		} else if (p[0] == '%' && p[1] == 's') {
			memcpy(safe + o, "…%.0s", sizeof "…%.0s" - 1);
			o += sizeof "…%.0s" - 1;
			p++;
		} else {
			safe[o++] = *p;
		}
	}
	safe[o] = '\0';
	if (o + sizeof "…%.0s" >= sizeof safe) { /* cut: a conversion may be cut in half */
		log_warn(NULL, "http: a libmicrohttpd message too long to log");
		return;
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(msg, sizeof msg, safe, ap);
#pragma GCC diagnostic pop
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_warn(NULL, "http: %s", msg);
}
