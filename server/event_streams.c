/* The stream side of the event hub (see events.h): admission, the chunked response whose
 * content reader suspends its connection when there is nothing to send, and the buffer the
 * hub appends to. Its callbacks run on libmicrohttpd's I/O threads; the free callback takes
 * no lock (libmicrohttpd may hold its own): it marks the stream dead and drops a reference,
 * and the hub unlinks dead streams. */
#include "server/events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handlers/api.h"
#include "server/clock.h"
#include "server/events_internal.h"
#include "server/log.h"

struct event_hub events_hub = {.wake_fd = -1, .epoll_fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

void events_wake(void)
{
	uint64_t one = 1;
	int fd = events_hub.wake_fd;
	if (fd >= 0 && write(fd, &one, sizeof one) < 0 && errno != EAGAIN)
		log_warn(NULL, "event hub wake-up failed");
}

void stream_unref(struct stream *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->mu);
	free(s->buf);
	free(s);
}

/* Under s->mu: resumes the connection if its reader suspended it. */
static void kick_locked(struct stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		MHD_resume_connection(s->conn);
	}
}

/* Under s->mu: queues n bytes; past the backlog limit the stream is aborted instead. */
static void append_locked(struct stream *s, const char *data, size_t n)
{
	if (s->end)
		return;
	if (s->len - s->off + n > EVENTS_BACKLOG_MAX) {
		free(s->buf);
		s->buf = NULL;
		s->off = s->len = s->cap = 0;
		s->end = END_ABORT;
		atomic_fetch_add(&events_hub.slow_closed, 1);
		/* Its connection waits to write, so its reader would not see the end until the
		 * client reads: the next write fails now and libmicrohttpd closes it. */
		if (s->fd >= 0)
			shutdown(s->fd, SHUT_RDWR);
		kick_locked(s);
		return;
	}
	if (s->len + n > s->cap) {
		if (s->off > 0) { /* slide the unsent part to the front first */
			memmove(s->buf, s->buf + s->off, s->len - s->off);
			s->len -= s->off;
			s->off = 0;
		}
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n)
			cap *= 2;
		if (cap != s->cap) {
			char *b = realloc(s->buf, cap);
			if (b == NULL) {
				s->end = END_ABORT;
				kick_locked(s);
				return;
			}
			s->buf = b;
			s->cap = cap;
		}
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	kick_locked(s);
}

void stream_end(struct stream *s, enum stream_end how, bool drop_queued)
{
	pthread_mutex_lock(&s->mu);
	if (drop_queued) {
		free(s->buf);
		s->buf = NULL;
		s->off = s->len = s->cap = 0;
	}
	if (!atomic_load(&s->end))
		atomic_store(&s->end, how);
	kick_locked(s);
	pthread_mutex_unlock(&s->mu);
}

void stream_append(struct stream *s, const char *data, size_t n)
{
	pthread_mutex_lock(&s->mu);
	append_locked(s, data, n);
	pthread_mutex_unlock(&s->mu);
}

size_t stream_queued(struct stream *s)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->len - s->off;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static ssize_t stream_read(void *cls, uint64_t at, char *out, size_t max)
{
	struct stream *s = cls;
	ssize_t n;
	(void)at;
	pthread_mutex_lock(&s->mu);
	if (s->end == END_ABORT) {
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	} else if (s->off < s->len) {
		size_t k = s->len - s->off < max ? s->len - s->off : max;
		memcpy(out, s->buf + s->off, k);
		s->off += k;
		if (s->off == s->len) {
			s->off = s->len = 0;
			if (s->cap > CATCHUP_LOW) { /* an idle stream keeps no large buffer */
				free(s->buf);
				s->buf = NULL;
				s->cap = 0;
			}
		}
		if (s->len - s->off < CATCHUP_LOW && atomic_exchange(&s->hungry, false))
			events_wake();
		n = (ssize_t)k;
	} else if (s->end) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		s->suspended = true;
		MHD_suspend_connection(s->conn);
		n = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* A stream's slots, the instance's and its tenant's, are given back. */
static void release_slots(const char *tenant_id)
{
	quota_give(events_hub.per_tenant, tenant_id);
	atomic_fetch_sub(&events_hub.open, 1);
}

static void stream_gone(void *cls)
{
	struct stream *s = cls;
	atomic_store(&s->dead, true);
	release_slots(s->tenant_id);
	stream_unref(s);
	events_wake();
}

bool events_open(struct h_ctx *ctx, const struct h_events_request *req)
{
	if (ctx->shutting_down || atomic_load(&events_hub.draining)) {
		h_problem(ctx, PROBLEM_SHUTTING_DOWN, NULL, NULL);
		return false;
	}
	unsigned open = atomic_load(&events_hub.open);
	do {
		if (open >= events_hub.max) {
			h_problem(ctx, PROBLEM_TOO_MANY_STREAMS, NULL, NULL);
			return false;
		}
	} while (!atomic_compare_exchange_weak(&events_hub.open, &open, open + 1));
	/* One tenant may not take every slot of the instance (docs/events.md). */
	if (!quota_take(events_hub.per_tenant, ctx->tenant_id)) {
		atomic_fetch_sub(&events_hub.open, 1);
		h_problem(ctx, PROBLEM_TOO_MANY_STREAMS,
			  "This tenant has as many event streams open as it may; retry later.", NULL);
		return false;
	}
	struct stream *s = calloc(1, sizeof *s);
	if (s == NULL) {
		release_slots(ctx->tenant_id);
		h_problem(ctx, PROBLEM_INTERNAL, NULL, NULL);
		return false;
	}
	pthread_mutex_init(&s->mu, NULL);
	atomic_init(&s->refs, 1);
	s->fd = -1;
	snprintf(s->tenant_id, sizeof s->tenant_id, "%s", ctx->tenant_id);
	snprintf(s->token_id, sizeof s->token_id, "%s", ctx->token_id);
	snprintf(s->resource_type, sizeof s->resource_type, "%s",
		 req->resource_type ? req->resource_type : "");
	snprintf(s->resource_id, sizeof s->resource_id, "%s",
		 req->resource_id ? req->resource_id : "");
	s->pos = req->after;
	s->last_write_ms = mono_ms();
	char retry[32];
	int n = snprintf(retry, sizeof retry, "retry: %d\n\n", EVENTS_RETRY_MS);
	append_locked(s, retry, (size_t)n);
	ctx->stream = s;
	ctx->status = 200;
	return true;
}

struct MHD_Response *events_response(void *stream, struct MHD_Connection *conn)
{
	struct stream *s = stream;
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->conn = conn;
	s->fd = info ? fcntl(info->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
	/* A fixed send buffer: autotuning would let the kernel hold megabytes for a client that
	 * does not read, past the backlog limit that bounds a stream's memory. */
	int sndbuf = EVENTS_SNDBUF;
	if (s->fd >= 0)
		(void)setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_gone);
	if (resp == NULL) {
		events_discard(s);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no"); /* nginx passes it on at once */
	atomic_fetch_add(&s->refs, 1); /* the hub's */
	pthread_mutex_lock(&events_hub.mu);
	s->next = events_hub.incoming;
	events_hub.incoming = s;
	if (atomic_load(&events_hub.draining)) /* events_drain may have walked the lists already */
		stream_end(s, END_CLEAN, false);
	pthread_mutex_unlock(&events_hub.mu);
	events_wake();
	return resp;
}

void events_discard(void *stream)
{
	release_slots(((struct stream *)stream)->tenant_id);
	stream_unref(stream);
}

void events_local_commit(void)
{
	if (!atomic_exchange(&events_hub.local_commit, true))
		events_wake();
}

void events_get_stats(struct events_stats *out)
{
	out->open = atomic_load(&events_hub.open);
	out->listening = atomic_load(&events_hub.listening);
	out->sent = atomic_load(&events_hub.sent);
	out->slow_closed = atomic_load(&events_hub.slow_closed);
	out->revoked_closed = atomic_load(&events_hub.revoked_closed);
	out->reconnects = atomic_load(&events_hub.reconnects);
}
