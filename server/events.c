/* The event hub and its streams (see events.h).
 *
 * Threads: the hub thread owns the stream list, the database connection and each stream's
 * position; libmicrohttpd's I/O threads run the content reader; a lane thread admits a
 * stream. A stream's buffer and end state are under its mutex. The response's free callback
 * takes no lock (libmicrohttpd may hold its own): it marks the stream dead and drops a
 * reference; the hub unlinks dead streams. The hub resumes a connection only while its
 * reader left it suspended, and a suspended connection is never closed, so the connection
 * is alive whenever it is resumed. */
#include "server/events.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/ids.h"
#include "db/audit.h"
#include "db/events.h"
#include "server/auth.h"
#include "server/clock.h"
#include "server/log.h"

#define PAGE_ROWS 500          /* records per read */
#define CATCHUP_LOW (64 * 1024) /* a catching-up stream reads more below this many bytes */
#define CATCHUP_TURN 16         /* catching-up streams served per turn of the hub */
#define MAX_PENDING 64          /* horizons waiting for release */
#define POLL_EVERY_MS 1000      /* the sequence is looked at this often without a wake-up */
#define PENDING_CHECK_MS 2      /* how soon a waiting horizon is checked again */
#define RECONNECT_MAX_MS 2000

enum stream_end {
	END_NONE = 0,
	END_CLEAN, /* what is queued goes out, then the chunked body ends */
	END_ABORT, /* the connection is closed (a slow reader's unsent backlog is dropped) */
};

struct stream {
	pthread_mutex_t mu; /* buf, off, len, cap, suspended, end */
	atomic_int refs;    /* the response's and the hub's */
	atomic_bool dead;   /* the response is gone */
	atomic_bool hungry; /* catching up and drained by the reader: the hub should read more */
	struct MHD_Connection *conn;
	int fd; /* a dup of the connection's socket, watched by the hub for the client's close;
		 * the hub's own, so its epoll entry cannot outlive the stream or name another */
	char tenant_id[RG_MAX_ID_BYTES + 1];
	char token_id[RG_MAX_ID_BYTES + 1];
	char resource_type[40];
	char resource_id[260];
	/* the hub's */
	long long pos;            /* every record with seq ≤ pos has been considered */
	bool live;                /* pos ≥ the live mark: fed by the live reads */
	long long last_write_ms;
	struct stream *next;
	/* the mutex's */
	char *buf;
	size_t off, len, cap;
	bool suspended;
	enum stream_end end;
};

struct pending {
	long long h;
	uint64_t x;
};

static struct {
	pthread_t thread;
	bool started;
	char url[2048];
	unsigned max;
	int wake_fd;
	int epoll_fd;             /* wake_fd, the database socket, each stream's socket */
	pthread_mutex_t mu;       /* incoming */
	struct stream *incoming;  /* responses made, not yet adopted by the hub */
	atomic_uint open;
	atomic_bool draining, stop, listening, local_commit;
	atomic_ullong sent, slow_closed, revoked_closed, reconnects;
	/* the hub thread's */
	struct stream *streams;
	struct db_events *ev;
	struct pending pend[MAX_PENDING];
	size_t npend;
	long long seen;    /* the newest seq sampled */
	long long mark;    /* live mark: records ≤ mark are final and went to every live stream */
	bool mark_known;
} hub = {.wake_fd = -1, .epoll_fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static void wake(void)
{
	uint64_t one = 1;
	if (hub.wake_fd >= 0 && write(hub.wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
		log_warn(NULL, "event hub wake-up failed");
}

static void unref(struct stream *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->mu);
	free(s->buf);
	free(s);
}

/* ---------------------------------------------------------------- the stream's side */

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
		atomic_fetch_add(&hub.slow_closed, 1);
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

static void stream_end(struct stream *s, enum stream_end how, bool drop_queued)
{
	pthread_mutex_lock(&s->mu);
	if (drop_queued) {
		free(s->buf);
		s->buf = NULL;
		s->off = s->len = s->cap = 0;
	}
	if (!s->end)
		s->end = how;
	kick_locked(s);
	pthread_mutex_unlock(&s->mu);
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
			wake();
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

static void stream_gone(void *cls)
{
	struct stream *s = cls;
	atomic_store(&s->dead, true);
	atomic_fetch_sub(&hub.open, 1);
	unref(s);
	wake();
}

bool events_open(struct h_ctx *ctx, const struct h_events_request *req)
{
	if (ctx->shutting_down || atomic_load(&hub.draining)) {
		ctx->problem_code = PROBLEM_SHUTTING_DOWN;
		return false;
	}
	unsigned open = atomic_load(&hub.open);
	do {
		if (open >= hub.max) {
			ctx->problem_code = PROBLEM_TOO_MANY_STREAMS;
			return false;
		}
	} while (!atomic_compare_exchange_weak(&hub.open, &open, open + 1));
	struct stream *s = calloc(1, sizeof *s);
	if (s == NULL) {
		atomic_fetch_sub(&hub.open, 1);
		ctx->problem_code = PROBLEM_INTERNAL;
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
	pthread_mutex_lock(&hub.mu);
	s->next = hub.incoming;
	hub.incoming = s;
	pthread_mutex_unlock(&hub.mu);
	wake();
	return resp;
}

void events_discard(void *stream)
{
	atomic_fetch_sub(&hub.open, 1);
	unref(stream);
}

void events_local_commit(void)
{
	if (!atomic_exchange(&hub.local_commit, true))
		wake();
}

void events_get_stats(struct events_stats *out)
{
	out->open = atomic_load(&hub.open);
	out->listening = atomic_load(&hub.listening);
	out->sent = atomic_load(&hub.sent);
	out->slow_closed = atomic_load(&hub.slow_closed);
	out->revoked_closed = atomic_load(&hub.revoked_closed);
	out->reconnects = atomic_load(&hub.reconnects);
}

/* ---------------------------------------------------------------- the hub's side */

static bool wants(const struct stream *s, const PGresult *res, int i)
{
	return (!s->resource_type[0] || strcmp(s->resource_type, PQgetvalue(res, i, 4)) == 0) &&
	       (!s->resource_id[0] || strcmp(s->resource_id, PQgetvalue(res, i, 5)) == 0);
}

/* One record as an event: "id: seq\nevent: action\ndata: record\n\n"; new, or NULL. */
static char *event_text(const PGresult *res, int i, size_t *len)
{
	json_t *record = db_audit_row_json(res, i);
	char *data = record ? json_dumps(record, JSON_COMPACT) : NULL;
	json_decref(record);
	if (data == NULL)
		return NULL;
	static const char shape[] = "id: %s\nevent: %s\ndata: %s\n\n";
	const char *id = PQgetvalue(res, i, 0), *action = PQgetvalue(res, i, 3);
	size_t cap = sizeof shape + strlen(id) + strlen(action) + strlen(data);
	char *text = malloc(cap);
	int n = text ? snprintf(text, cap, shape, id, action, data) : -1;
	free(data);
	if (n < 0 || (size_t)n >= cap) {
		free(text);
		return NULL;
	}
	*len = (size_t)n;
	return text;
}

/* Row i's event text, made once for however many streams get it. */
struct row_text {
	char *text;
	size_t len;
};

static void send_row(struct stream *s, const PGresult *res, int i, struct row_text *rt,
		     long long now)
{
	if (rt->text == NULL && (rt->text = event_text(res, i, &rt->len)) == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	append_locked(s, rt->text, rt->len);
	pthread_mutex_unlock(&s->mu);
	s->last_write_ms = now;
	atomic_fetch_add(&hub.sent, 1);
}

static bool is_open(const struct stream *s)
{
	return !atomic_load(&s->dead) && s->end == END_NONE;
}

static void lost_connection(const struct db_error *err)
{
	db_events_close(hub.ev);
	hub.ev = NULL;
	atomic_store(&hub.listening, false);
	auth_cache_enable(false); /* a deletion now would go unheard */
	log_warn(NULL, "event listener lost its database connection: %s", err->message);
}

/* Live reads: every record in (mark, upto] of the live streams' tenants, page by page, to
 * each live stream that wants it. */
static bool feed_live(long long upto, long long now)
{
	const char *tenants[256];
	long long from = upto;
	size_t n = 0;
	for (struct stream *s = hub.streams; s; s = s->next) {
		if (!s->live || !is_open(s))
			continue;
		from = s->pos < from ? s->pos : from;
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = strcmp(tenants[i], s->tenant_id) == 0;
		if (!seen && n < sizeof tenants / sizeof tenants[0])
			tenants[n++] = s->tenant_id;
		else if (!seen) /* more tenants than one read takes: read them all */
			n = sizeof tenants / sizeof tenants[0] + 1;
	}
	if (from < hub.mark)
		from = hub.mark;
	while (n > 0 && from < upto) {
		PGresult *res = NULL;
		struct db_error err = {0};
		bool all = n > sizeof tenants / sizeof tenants[0];
		bool ok = all ? db_events_fetch_one(hub.ev, NULL, NULL, NULL, from, upto, PAGE_ROWS,
						    &res, &err)
			      : db_events_fetch_tenants(hub.ev, tenants, n, from, upto, PAGE_ROWS,
							&res, &err);
		if (!ok) {
			lost_connection(&err);
			return false;
		}
		int rows = PQntuples(res);
		for (int i = 0; i < rows; i++) {
			long long seq = db_int(res, i, 0);
			const char *tenant = PQgetvalue(res, i, 12);
			struct row_text rt = {0};
			for (struct stream *s = hub.streams; s; s = s->next)
				if (s->live && is_open(s) && seq > s->pos &&
				    strcmp(s->tenant_id, tenant) == 0 && wants(s, res, i)) {
					send_row(s, res, i, &rt, now);
					s->pos = seq; /* a read that fails later repeats nothing */
				}
			free(rt.text);
		}
		from = rows == PAGE_ROWS ? db_int(res, rows - 1, 0) : upto;
		PQclear(res);
	}
	for (struct stream *s = hub.streams; s; s = s->next)
		if (s->live && s->pos < upto)
			s->pos = upto;
	return true;
}

/* Backlog reads for streams behind the live mark, a page each while their client keeps up;
 * true when one may read more at once. */
static bool feed_catchup(long long now)
{
	unsigned served = 0;
	bool more = false;
	for (struct stream *s = hub.streams; s && hub.ev; s = s->next) {
		if (s->live || !is_open(s))
			continue;
		if (!hub.mark_known || s->pos >= hub.mark) {
			s->live = hub.mark_known;
			continue;
		}
		pthread_mutex_lock(&s->mu);
		bool room = s->len - s->off < CATCHUP_LOW;
		pthread_mutex_unlock(&s->mu);
		if (!room) {
			atomic_store(&s->hungry, true);
			continue;
		}
		if (served++ == CATCHUP_TURN) {
			more = true;
			break;
		}
		PGresult *res = NULL;
		struct db_error err = {0};
		if (!db_events_fetch_one(hub.ev, s->tenant_id,
					 s->resource_type[0] ? s->resource_type : NULL,
					 s->resource_id[0] ? s->resource_id : NULL, s->pos, hub.mark,
					 PAGE_ROWS, &res, &err)) {
			lost_connection(&err);
			return false;
		}
		int rows = PQntuples(res);
		for (int i = 0; i < rows; i++) {
			struct row_text rt = {0};
			send_row(s, res, i, &rt, now);
			free(rt.text);
		}
		if (rows == PAGE_ROWS) {
			s->pos = db_int(res, rows - 1, 0);
			more = true;
		} else {
			s->pos = hub.mark;
			s->live = true;
		}
		PQclear(res);
	}
	return more;
}

static void on_token_deleted(const char *sha256_hex, const char *tenant_id,
			     const char *token_id, void *arg)
{
	(void)arg;
	auth_forget(sha256_hex);
	for (struct stream *s = hub.streams; s; s = s->next)
		if (strcmp(s->tenant_id, tenant_id) == 0 && strcmp(s->token_id, token_id) == 0 &&
		    is_open(s)) {
			stream_end(s, END_CLEAN, true);
			atomic_fetch_add(&hub.revoked_closed, 1);
		}
}

/* Moves new streams into the list and unlinks dead ones; the number of open streams. */
static size_t tend_streams(long long now, bool keepalive)
{
	pthread_mutex_lock(&hub.mu);
	while (hub.incoming) {
		struct stream *s = hub.incoming;
		hub.incoming = s->next;
		s->next = hub.streams;
		hub.streams = s;
		s->live = hub.mark_known && s->pos >= hub.mark;
		/* While suspended, libmicrohttpd does not watch the socket: the hub does, so that
		 * a client that went away frees its stream without waiting for a write to fail. */
		struct epoll_event e = {.events = EPOLLRDHUP | EPOLLONESHOT, .data.ptr = s};
		if (s->fd >= 0 && !atomic_load(&s->dead))
			(void)epoll_ctl(hub.epoll_fd, EPOLL_CTL_ADD, s->fd, &e);
	}
	pthread_mutex_unlock(&hub.mu);
	bool draining = atomic_load(&hub.draining);
	size_t n = 0;
	for (struct stream **p = &hub.streams; *p;) {
		struct stream *s = *p;
		if (atomic_load(&s->dead)) {
			*p = s->next;
			if (s->fd >= 0)
				(void)epoll_ctl(hub.epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
			unref(s);
			continue;
		}
		if (draining)
			stream_end(s, END_CLEAN, false);
		else if (keepalive && now - s->last_write_ms >= EVENTS_KEEPALIVE_MS) {
			static const char comment[] = ": keep-alive\n\n";
			pthread_mutex_lock(&s->mu);
			append_locked(s, comment, sizeof comment - 1);
			pthread_mutex_unlock(&s->mu);
			s->last_write_ms = now;
		}
		n++;
		p = &s->next;
	}
	return n;
}

/* One call of events_horizon: records the sample, releases what the snapshot allows and
 * feeds the live streams up to the new mark. */
static void advance(bool notify, size_t nstreams, long long now)
{
	struct db_horizon hz;
	struct db_error err = {0};
	bool sample = nstreams > 0 && hub.npend < MAX_PENDING;
	if (!db_events_horizon(hub.ev, notify, sample, hub.seen, &hz, &err)) {
		lost_connection(&err);
		return;
	}
	if (hz.x) {
		hub.pend[hub.npend++] = (struct pending){hz.h, hz.x};
		hub.seen = hz.h;
	} else if (!sample && hub.npend == 0) {
		hub.seen = -1; /* the next sample is taken whatever the sequence says */
	}
	long long released = -1;
	size_t k = 0;
	while (k < hub.npend && hub.pend[k].x < hz.m)
		released = hub.pend[k++].h;
	memmove(hub.pend, hub.pend + k, (hub.npend - k) * sizeof hub.pend[0]);
	hub.npend -= k;
	if (released < 0 || (hub.mark_known && released <= hub.mark))
		return;
	if (!hub.mark_known || feed_live(released, now)) {
		hub.mark = released;
		hub.mark_known = true;
	}
}

static char wake_tag, db_tag; /* epoll data of the wake-up and database descriptors */

/* Waits up to timeout ms for a wake-up, the database or a client's close (which ends its
 * stream at once: there is nobody to send the rest to). */
static void wait_events(int timeout)
{
	struct epoll_event evs[64];
	int n = epoll_wait(hub.epoll_fd, evs, 64, timeout);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &wake_tag) {
			uint64_t v;
			if (read(hub.wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
				log_warn(NULL, "event hub wake-up read failed");
		} else if (evs[i].data.ptr != &db_tag) {
			stream_end(evs[i].data.ptr, END_CLEAN, true);
		}
	}
}

static void *hub_main(void *arg)
{
	(void)arg;
	long long retry_at = 0, backoff = 100, polled_at = 0, keepalive_at = 0;
	bool catchup_more = false, want = true;
	while (!atomic_load(&hub.stop)) {
		long long now = mono_ms();
		if (hub.ev == NULL && now >= retry_at) {
			struct db_error err = {0};
			if (db_events_connect(hub.url, &hub.ev, &err)) {
				struct epoll_event e = {.events = EPOLLIN, .data.ptr = &db_tag};
				(void)epoll_ctl(hub.epoll_fd, EPOLL_CTL_ADD, db_events_socket(hub.ev), &e);
				atomic_store(&hub.listening, true);
				auth_cache_enable(true);
				atomic_fetch_add(&hub.reconnects, 1);
				backoff = 100;
				want = true;
				log_info(NULL, "event listener connected");
			} else {
				retry_at = now + backoff;
				backoff = backoff * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : backoff * 2;
			}
		}
		bool keepalive = now >= keepalive_at;
		if (keepalive)
			keepalive_at = now + 1000;
		size_t nstreams = tend_streams(now, keepalive);

		int timeout = POLL_EVERY_MS;
		if (hub.ev == NULL)
			timeout = (int)(retry_at > now ? retry_at - now : 0);
		else if (catchup_more || want)
			timeout = 0;
		else if (hub.npend > 0)
			timeout = PENDING_CHECK_MS;
		wait_events(timeout);
		if (hub.ev == NULL)
			continue;
		now = mono_ms();
		nstreams = tend_streams(now, false);
		unsigned commits = 0;
		if (!db_events_consume(hub.ev, &commits, on_token_deleted, NULL)) {
			struct db_error err = {0};
			snprintf(err.message, sizeof err.message, "the connection was closed");
			lost_connection(&err);
			continue;
		}
		bool notify = atomic_exchange(&hub.local_commit, false);
		if (want || notify || commits > 0 || hub.npend > 0 || now - polled_at >= POLL_EVERY_MS) {
			polled_at = now;
			want = false;
			advance(notify, nstreams, now);
			if (hub.ev == NULL)
				continue;
			/* a new stream needs a fresh sample even when the sequence did not move */
			want = nstreams > 0 && !hub.mark_known && hub.npend == 0;
		}
		catchup_more = feed_catchup(now);
	}
	return NULL;
}

bool events_start(const char *database_url, unsigned max_streams)
{
	snprintf(hub.url, sizeof hub.url, "%s", database_url);
	hub.max = max_streams;
	hub.seen = -1;
	hub.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	hub.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &wake_tag};
	if (hub.wake_fd < 0 || hub.epoll_fd < 0 ||
	    epoll_ctl(hub.epoll_fd, EPOLL_CTL_ADD, hub.wake_fd, &e) != 0) {
		if (hub.wake_fd >= 0)
			close(hub.wake_fd);
		if (hub.epoll_fd >= 0)
			close(hub.epoll_fd);
		hub.wake_fd = hub.epoll_fd = -1;
		return false;
	}
	auth_cache_enable(false);
	if (pthread_create(&hub.thread, NULL, hub_main, NULL) != 0) {
		close(hub.wake_fd);
		close(hub.epoll_fd);
		hub.wake_fd = hub.epoll_fd = -1;
		return false;
	}
	hub.started = true;
	return true;
}

void events_drain(void)
{
	atomic_store(&hub.draining, true);
	wake();
}

void events_stop(void)
{
	if (!hub.started)
		return;
	atomic_store(&hub.stop, true);
	wake();
	pthread_join(hub.thread, NULL);
	hub.started = false;
	tend_streams(mono_ms(), false);
	while (hub.streams) {
		struct stream *s = hub.streams;
		hub.streams = s->next;
		unref(s);
	}
	db_events_close(hub.ev);
	hub.ev = NULL;
	close(hub.wake_fd);
	close(hub.epoll_fd);
	hub.wake_fd = hub.epoll_fd = -1;
}
