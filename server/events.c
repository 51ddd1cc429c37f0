/* The event hub (see events.h); the streams are server/event_streams.c.
 *
 * Threads: the hub thread owns the database connection and each stream's position, and links
 * and unlinks the stream list (under events_hub.mu, which events_drain takes to walk it);
 * libmicrohttpd's I/O threads run the content reader; a lane thread admits a stream. A
 * stream's buffer is under its mutex. The hub resumes a connection only while its reader left
 * it suspended, and a suspended connection is never closed, so the connection is alive
 * whenever it is resumed. Lock order: events_hub.mu, then a stream's mutex, then
 * libmicrohttpd's. */
#include "server/events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/audit.h"
#include "server/auth.h"
#include "server/clock.h"
#include "server/events_internal.h"
#include "server/log.h"

#define PAGE_ROWS 500             /* records per read */
#define CATCHUP_HIGH (256 * 1024) /* a catching-up stream queues a page only up to this */
#define CATCHUP_TURN 16           /* catching-up streams served per turn of the hub */
#define POLL_EVERY_MS 1000        /* the sequence is looked at this often without a wake-up */
#define PENDING_CHECK_MS 2        /* how soon a waiting horizon is checked again */
/* A sample still held back after this long asks which transactions hold it (pg_locks, at
 * most this often): a writer's transaction usually ends within a few ms; another
 * application's may last minutes (db/migrations/0014_events_horizon_writers.sql). */
#define WRITERS_CHECK_MS 10
#define RECONNECT_MAX_MS 2000

static bool wants(const struct stream *s, const struct core_audit_record *r)
{
	return (!s->resource_type[0] || strcmp(s->resource_type, r->resource_type) == 0) &&
	       (!s->resource_id[0] || strcmp(s->resource_id, r->resource_id) == 0);
}

/* One record as an event: "id: seq\nevent: action\ndata: record\n\n"; new, or NULL. */
static char *event_text(const struct core_audit_record *r, size_t *len)
{
	json_t *record = core_audit_record_json(r);
	char *data = record ? json_dumps(record, JSON_COMPACT) : NULL;
	json_decref(record);
	if (data == NULL)
		return NULL;
	static const char shape[] = "id: %lld\nevent: %s\ndata: %s\n\n";
	size_t cap = sizeof shape + 20 + strlen(r->action) + strlen(data);
	char *text = malloc(cap);
	int n = text ? snprintf(text, cap, shape, (long long)r->seq, r->action, data) : -1;
	free(data);
	if (n < 0 || (size_t)n >= cap) {
		free(text);
		return NULL;
	}
	*len = (size_t)n;
	return text;
}

/* A record's event text, made once for however many streams get it. */
struct row_text {
	char *text;
	size_t len;
};

/* Queues record r on s. A record that cannot be rendered (out of memory) ends the stream:
 * its pos moves past the record anyway, and the client must resume (Last-Event-ID) to get
 * it. */
static void send_row(struct stream *s, const struct core_audit_record *r, struct row_text *rt,
		     long long now)
{
	if (rt->text == NULL && (rt->text = event_text(r, &rt->len)) == NULL) {
		stream_end(s, END_ABORT, true);
		return;
	}
	stream_append(s, rt->text, rt->len);
	s->last_write_ms = now;
	atomic_fetch_add(&events_hub.sent, 1);
}

static bool is_open(const struct stream *s)
{
	return !atomic_load(&s->dead) && atomic_load(&s->end) == END_NONE;
}

static void lost_connection(const struct db_error *err)
{
	db_events_close(events_hub.ev);
	events_hub.ev = NULL;
	atomic_store(&events_hub.listening, false);
	/* After the reconnect: a fresh sample (a release lost with the connection is taken again)
	 * and every stream's token looked at (a deletion now would go unheard). */
	events_hub.seen = -1;
	for (struct stream *s = events_hub.streams; s; s = s->next)
		s->token_checked = false;
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
	bool all = false; /* more tenants than one read names: read every tenant's records */
	for (struct stream *s = events_hub.streams; s; s = s->next) {
		if (!s->live || !is_open(s))
			continue;
		from = s->pos < from ? s->pos : from;
		bool seen = all;
		for (size_t i = 0; i < n && !seen; i++)
			seen = strcmp(tenants[i], s->tenant_id) == 0;
		if (!seen && n < sizeof tenants / sizeof tenants[0])
			tenants[n++] = s->tenant_id;
		else if (!seen)
			all = true;
	}
	if (from < events_hub.mark)
		from = events_hub.mark;
	while (n > 0 && from < upto) {
		struct db_rows rows = {0};
		struct db_error err = {0};
		struct db_events *ev = events_hub.ev;
		bool ok = all ? db_events_fetch_one(ev, NULL, NULL, NULL, from, upto, PAGE_ROWS,
						    &rows, &err)
			      : db_events_fetch_tenants(ev, tenants, n, from, upto, PAGE_ROWS, &rows,
							&err);
		if (!ok) {
			lost_connection(&err);
			return false;
		}
		for (size_t i = 0; i < rows.n; i++) {
			const struct core_audit_record *r = db_rows_at(&rows, i);
			struct row_text rt = {0};
			for (struct stream *s = events_hub.streams; s; s = s->next)
				if (s->live && is_open(s) && r->seq > s->pos &&
				    strcmp(s->tenant_id, r->tenant_id) == 0 && wants(s, r)) {
					send_row(s, r, &rt, now);
					s->pos = r->seq; /* a read that fails later repeats nothing */
				}
			free(rt.text);
		}
		from = rows.n == PAGE_ROWS
			   ? ((const struct core_audit_record *)db_rows_at(&rows, rows.n - 1))->seq
			   : upto;
		db_rows_free(&rows);
	}
	for (struct stream *s = events_hub.streams; s; s = s->next)
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
	for (struct stream *s = events_hub.streams; s && events_hub.ev; s = s->next) {
		if (s->live || !is_open(s))
			continue;
		if (!events_hub.mark_known || s->pos >= events_hub.mark) {
			s->live = events_hub.mark_known;
			continue;
		}
		pthread_mutex_lock(&s->mu);
		bool room = s->len - s->off < CATCHUP_LOW;
		if (!room) /* under the mutex: the reader cannot drain it unseen in between */
			atomic_store(&s->hungry, true);
		pthread_mutex_unlock(&s->mu);
		if (!room)
			continue;
		if (served++ == CATCHUP_TURN) {
			more = true;
			break;
		}
		struct db_rows rows = {0};
		struct db_error err = {0};
		if (!db_events_fetch_one(events_hub.ev, s->tenant_id,
					 s->resource_type[0] ? s->resource_type : NULL,
					 s->resource_id[0] ? s->resource_id : NULL, s->pos,
					 events_hub.mark, PAGE_ROWS, &rows, &err)) {
			lost_connection(&err);
			return false;
		}
		size_t sent = 0;
		/* A page goes in only up to CATCHUP_HIGH bytes (records can be large): the rest
		 * comes with the next read, at the client's pace, never past the backlog limit. */
		for (; sent < rows.n && stream_queued(s) < CATCHUP_HIGH; sent++) {
			const struct core_audit_record *r = db_rows_at(&rows, sent);
			struct row_text rt = {0};
			send_row(s, r, &rt, now);
			free(rt.text);
			s->pos = r->seq;
		}
		if (sent < rows.n || rows.n == PAGE_ROWS) {
			more = true;
		} else {
			s->pos = events_hub.mark;
			s->live = true;
		}
		db_rows_free(&rows);
	}
	return more;
}

static void on_token_deleted(const char *sha256_hex, const char *tenant_id,
			     const char *token_id, void *arg)
{
	(void)arg;
	auth_forget(sha256_hex);
	for (struct stream *s = events_hub.streams; s; s = s->next)
		if (strcmp(s->tenant_id, tenant_id) == 0 && strcmp(s->token_id, token_id) == 0 &&
		    is_open(s)) {
			stream_end(s, END_CLEAN, true);
			atomic_fetch_add(&events_hub.revoked_closed, 1);
		}
}

/* Ends the streams whose token was deleted while no notification could say so: streams
 * adopted since (their token was verified before the hub listened for its deletion) and,
 * after a reconnect, every stream. LISTEN is in effect, so a later deletion is heard. */
static void check_tokens(void)
{
	enum { BATCH = 256 };
	struct stream *batch[BATCH];
	const char *tenants[BATCH], *tokens[BATCH];
	bool gone[BATCH];
	for (;;) {
		size_t n = 0;
		for (struct stream *s = events_hub.streams; s && n < BATCH; s = s->next)
			if (!s->token_checked && is_open(s)) {
				batch[n] = s;
				tenants[n] = s->tenant_id;
				tokens[n++] = s->token_id;
			}
		if (n == 0)
			return;
		struct db_error err = {0};
		if (!db_events_tokens_gone(events_hub.ev, tenants, tokens, n, gone, &err)) {
			lost_connection(&err);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			batch[i]->token_checked = true;
			if (gone[i]) {
				stream_end(batch[i], END_CLEAN, true);
				atomic_fetch_add(&events_hub.revoked_closed, 1);
			}
		}
	}
}

/* Moves new streams into the list (*adopted: any) and unlinks dead ones; the number of open
 * streams. */
static size_t tend_streams(long long now, bool keepalive, bool *adopted)
{
	pthread_mutex_lock(&events_hub.mu);
	*adopted = events_hub.incoming != NULL;
	while (events_hub.incoming) {
		struct stream *s = events_hub.incoming;
		events_hub.incoming = s->next;
		s->next = events_hub.streams;
		events_hub.streams = s;
		s->live = events_hub.mark_known && s->pos >= events_hub.mark;
		/* While suspended, libmicrohttpd does not watch the socket: the hub does, so that
		 * a client that went away frees its stream without waiting for a write to fail. */
		struct epoll_event e = {.events = EPOLLRDHUP | EPOLLONESHOT, .data.ptr = s};
		if (s->fd >= 0 && !atomic_load(&s->dead))
			(void)epoll_ctl(events_hub.epoll_fd, EPOLL_CTL_ADD, s->fd, &e);
	}
	/* events_hub.mu stays held while the list changes: events_drain walks it from another
	 * thread */
	bool draining = atomic_load(&events_hub.draining);
	size_t n = 0;
	for (struct stream **p = &events_hub.streams; *p;) {
		struct stream *s = *p;
		if (atomic_load(&s->dead)) {
			*p = s->next;
			if (s->fd >= 0)
				(void)epoll_ctl(events_hub.epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
			stream_unref(s);
			continue;
		}
		if (draining)
			stream_end(s, END_CLEAN, false);
		else if (keepalive && now - s->last_write_ms >= EVENTS_KEEPALIVE_MS) {
			static const char comment[] = ": keep-alive\n\n";
			stream_append(s, comment, sizeof comment - 1);
			s->last_write_ms = now;
		}
		n++;
		p = &s->next;
	}
	pthread_mutex_unlock(&events_hub.mu);
	return n;
}

/* One call of events_horizon: records the sample, releases what the snapshot allows and
 * feeds the live streams up to the new mark. */
static void advance(bool notify, size_t nstreams, long long now)
{
	struct event_hub *h = &events_hub;
	struct db_horizon hz;
	struct db_error err = {0};
	int64_t notify_after = h->notified, sample_after = h->seen;
	bool sample = nstreams > 0 && h->npend < MAX_PENDING;
	uint64_t waiting = 0;
	if (h->npend > 0 && now - h->pend[0].taken_ms >= WRITERS_CHECK_MS &&
	    now - h->writers_checked_ms >= WRITERS_CHECK_MS) {
		waiting = h->pend[0].x;
		h->writers_checked_ms = now;
	}
	if (!db_events_horizon(h->ev, notify ? &notify_after : NULL, sample ? &sample_after : NULL,
			       waiting, &hz, &err)) {
		lost_connection(&err);
		return;
	}
	if (notify && hz.h > h->notified)
		h->notified = hz.h;
	if (hz.x) {
		h->pend[h->npend++] = (struct pending){hz.h, hz.x, now};
		h->seen = hz.h;
	} else if (!sample && h->npend == 0) {
		h->seen = -1; /* the next sample is taken whatever the sequence says */
	}
	long long released = -1;
	size_t k = 0;
	while (k < h->npend && h->pend[k].x < hz.m)
		released = h->pend[k++].h;
	memmove(h->pend, h->pend + k, (h->npend - k) * sizeof h->pend[0]);
	h->npend -= k;
	if (released < 0 || (h->mark_known && released <= h->mark))
		return;
	if (!h->mark_known || feed_live(released, now)) {
		h->mark = released;
		h->mark_known = true;
	}
}

static char wake_tag, db_tag; /* epoll data of the wake-up and database descriptors */

/* Waits up to timeout ms for a wake-up, the database or a client's close (which ends its
 * stream at once: there is nobody to send the rest to). */
static void wait_events(int timeout)
{
	struct epoll_event evs[64];
	int n = epoll_wait(events_hub.epoll_fd, evs, 64, timeout);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &wake_tag) {
			uint64_t v;
			if (read(events_hub.wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
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
	while (!atomic_load(&events_hub.stop)) {
		long long now = mono_ms();
		if (events_hub.ev == NULL && now >= retry_at) {
			struct db_error err = {0};
			if (db_events_connect(events_hub.url, &events_hub.ev, &err)) {
				struct epoll_event e = {.events = EPOLLIN, .data.ptr = &db_tag};
				(void)epoll_ctl(events_hub.epoll_fd, EPOLL_CTL_ADD,
						db_events_socket(events_hub.ev), &e);
				atomic_store(&events_hub.listening, true);
				auth_cache_enable(true);
				atomic_fetch_add(&events_hub.reconnects, 1);
				backoff = 100;
				want = true;
				log_info(NULL, "event listener connected");
			} else {
				retry_at = now + backoff;
				backoff = backoff * 2 < RECONNECT_MAX_MS ? backoff * 2
									 : RECONNECT_MAX_MS;
			}
		}
		int timeout = POLL_EVERY_MS;
		if (events_hub.ev == NULL)
			timeout = (int)(retry_at > now ? retry_at - now : 0);
		else if (catchup_more || want)
			timeout = 0;
		else if (events_hub.npend > 0)
			timeout = PENDING_CHECK_MS;
		wait_events(timeout);
		now = mono_ms();
		bool keepalive = now >= keepalive_at;
		if (keepalive)
			keepalive_at = now + 1000;
		bool adopted;
		size_t nstreams = tend_streams(now, keepalive, &adopted);
		if (events_hub.ev == NULL)
			continue;
		check_tokens();
		if (events_hub.ev == NULL)
			continue;
		unsigned commits = 0;
		if (!db_events_consume(events_hub.ev, &commits, on_token_deleted, NULL)) {
			struct db_error err = {0};
			snprintf(err.message, sizeof err.message, "the connection was closed");
			lost_connection(&err);
			continue;
		}
		bool notify = atomic_exchange(&events_hub.local_commit, false);
		/* A first stream needs a mark, so a sample, even when the sequence did not move. A
		 * new stream that resumes at or past the mark is live at once: the records
		 * committed since the last sample (whose wake-up came while no stream wanted it)
		 * need a sample now, not at the next poll. */
		want = want || adopted ||
		       (nstreams > 0 && !events_hub.mark_known && events_hub.npend == 0);
		/* With no stream, nothing to notify and nothing pending, a call would sample nothing
		 * and release nothing: other instances' commits cost this one no query. */
		if (nstreams == 0 && !notify && events_hub.npend == 0)
			want = false;
		else if (want || notify || commits > 0 || events_hub.npend > 0 ||
			 now - polled_at >= POLL_EVERY_MS) {
			polled_at = now;
			want = false;
			advance(notify, nstreams, now);
			if (events_hub.ev == NULL)
				continue;
		}
		catchup_more = feed_catchup(now);
	}
	return NULL;
}

bool events_start(const char *database_url, unsigned max_streams, unsigned max_per_tenant)
{
	snprintf(events_hub.url, sizeof events_hub.url, "%s", database_url);
	events_hub.max = max_streams;
	if (!quota_new(max_per_tenant, &events_hub.per_tenant))
		return false;
	events_hub.seen = -1;
	events_hub.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	events_hub.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &wake_tag};
	if (events_hub.wake_fd < 0 || events_hub.epoll_fd < 0 ||
	    epoll_ctl(events_hub.epoll_fd, EPOLL_CTL_ADD, events_hub.wake_fd, &e) != 0) {
		if (events_hub.wake_fd >= 0)
			close(events_hub.wake_fd);
		if (events_hub.epoll_fd >= 0)
			close(events_hub.epoll_fd);
		events_hub.wake_fd = events_hub.epoll_fd = -1;
		return false;
	}
	auth_cache_enable(false);
	if (pthread_create(&events_hub.thread, NULL, hub_main, NULL) != 0) {
		close(events_hub.wake_fd);
		close(events_hub.epoll_fd);
		events_hub.wake_fd = events_hub.epoll_fd = -1;
		return false;
	}
	events_hub.started = true;
	return true;
}

/* Ends every stream from the stopping thread itself, so that none is left suspended for
 * MHD_stop_daemon even when the hub is stuck in a database call. */
void events_drain(void)
{
	atomic_store(&events_hub.draining, true);
	pthread_mutex_lock(&events_hub.mu);
	for (struct stream *s = events_hub.streams; s; s = s->next)
		stream_end(s, END_CLEAN, false);
	for (struct stream *s = events_hub.incoming; s; s = s->next)
		stream_end(s, END_CLEAN, false);
	pthread_mutex_unlock(&events_hub.mu);
	events_wake();
}

/* events_stop's part for a hub that started. */
static void stop_hub(void)
{
	atomic_store(&events_hub.stop, true);
	events_wake();
	pthread_join(events_hub.thread, NULL);
	events_hub.started = false;
	bool adopted;
	tend_streams(mono_ms(), false, &adopted);
	while (events_hub.streams) {
		struct stream *s = events_hub.streams;
		events_hub.streams = s->next;
		stream_unref(s);
	}
	db_events_close(events_hub.ev);
	events_hub.ev = NULL;
	close(events_hub.wake_fd);
	close(events_hub.epoll_fd);
	events_hub.wake_fd = events_hub.epoll_fd = -1;
}

void events_stop(void)
{
	if (events_hub.started)
		stop_hub();
	quota_free(events_hub.per_tenant); /* the daemon is gone: no stream ends after this */
	events_hub.per_tenant = NULL;
}
