#include "server/conns.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "server/clock.h"

#define WATCH_EVERY_MS 100
/* A body's end of stream must be seen on this many watches in a row: a request whose whole
 * body and FIN came at once has had its final access call long before the second. */
#define HALF_CLOSED_WATCHES 2

/* A connection whose request head is awaited, on one of two lists: each list's deadlines are
 * its entries' times plus the same offset, so each is oldest first and the watchdog only ever
 * looks at the heads. */
struct deadlines;

struct conn_entry {
	int fd;
	long long deadline_ms;
	/* the list it is on, NULL: no deadline now; written under the lock, read without it by
	 * conns_headers_done and conns_request_line (the common case: nothing to do) */
	_Atomic(struct deadlines *) list;
	struct conn_entry *prev, *next;
	unsigned eof_watches; /* on the bodies list: watches in a row that saw the end */
};

struct deadlines {
	struct conn_entry *head, *tail;
	long long offset_ms;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* the head of a new connection's first request, or of a request whose line arrived:
	 * RECALLGATE_HEADER_TIMEOUT */
	struct deadlines heads;
	/* a kept-alive connection's next request, from the previous answer:
	 * RECALLGATE_CONNECTION_TIMEOUT (libmicrohttpd's idle limit, which every byte resets)
	 * plus RECALLGATE_HEADER_TIMEOUT */
	struct deadlines next;
	/* requests whose body is arriving: watched for a half-close (no deadline) */
	struct deadlines bodies;
	long long header_ms;
	bool running, stopping;
	pthread_t watchdog;
	atomic_ullong timeouts, half_closed;
} w = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* With w.lock held. */
static void unlink_entry(struct conn_entry *e)
{
	struct deadlines *l = atomic_load(&e->list);
	if (l == NULL)
		return;
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
	atomic_store(&e->list, NULL);
}

/* With w.lock held: e (on no list) goes last on l, its deadline l's offset from now. */
static void append_entry(struct deadlines *l, struct conn_entry *e, long long now)
{
	e->deadline_ms = now + l->offset_ms;
	e->prev = l->tail;
	e->next = NULL;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
	atomic_store(&e->list, l);
}

/* With w.lock held: shuts down the connections of l past their deadline. */
static void cut_expired(struct deadlines *l, long long now)
{
	while (l->head && now >= l->head->deadline_ms) {
		struct conn_entry *e = l->head;
		shutdown(e->fd, SHUT_RDWR);
		unlink_entry(e);
		atomic_fetch_add(&w.timeouts, 1);
	}
}

/* With w.lock held: shuts down the connections of the bodies list whose client has shut its
 * sending side with nothing left unread (recv peeks: libmicrohttpd reads what was sent). */
static void cut_half_closed(void)
{
	for (struct conn_entry *e = w.bodies.head, *next; e; e = next) {
		next = e->next;
		char byte;
		if (recv(e->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0) {
			e->eof_watches = 0; /* data, or nothing yet (EAGAIN) */
			continue;
		}
		if (++e->eof_watches < HALF_CLOSED_WATCHES)
			continue;
		shutdown(e->fd, SHUT_RDWR);
		unlink_entry(e);
		atomic_fetch_add(&w.half_closed, 1);
	}
}

/* The socket stays open (libmicrohttpd closes it, after conns_closed): the entry is still on
 * the list under the lock, so its fd cannot have been reused by another connection. */
static void *watch(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&w.lock);
	while (!w.stopping) {
		long long now = mono_ms();
		cut_expired(&w.heads, now);
		cut_expired(&w.next, now);
		cut_half_closed();
		struct timespec ts = realtime_in_ms(WATCH_EVERY_MS);
		pthread_cond_timedwait(&w.wake, &w.lock, &ts);
	}
	pthread_mutex_unlock(&w.lock);
	return NULL;
}

bool conns_start(unsigned header_timeout_ms, unsigned idle_timeout_ms)
{
	w.header_ms = header_timeout_ms;
	w.heads.offset_ms = header_timeout_ms;
	w.next.offset_ms = (long long)idle_timeout_ms + header_timeout_ms;
	w.stopping = false;
	w.running = pthread_create(&w.watchdog, NULL, watch, NULL) == 0;
	return w.running;
}

void conns_stop(void)
{
	if (!w.running)
		return;
	pthread_mutex_lock(&w.lock);
	w.stopping = true;
	pthread_cond_signal(&w.wake);
	pthread_mutex_unlock(&w.lock);
	pthread_join(w.watchdog, NULL);
	w.running = false;
}

struct conn_entry *conns_opened(int fd)
{
	struct conn_entry *e = calloc(1, sizeof *e);
	if (e == NULL)
		return NULL;
	e->fd = fd;
	pthread_mutex_lock(&w.lock);
	append_entry(&w.heads, e, mono_ms());
	pthread_mutex_unlock(&w.lock);
	return e;
}

void conns_request_line(struct conn_entry *e)
{
	if (e == NULL || atomic_load(&e->list) != &w.next)
		return; /* a first request: its deadline runs from the accept, and is earlier */
	pthread_mutex_lock(&w.lock);
	long long now = mono_ms(); /* under the lock: each list stays in deadline order */
	if (atomic_load(&e->list) == &w.next && now + w.header_ms < e->deadline_ms) {
		unlink_entry(e);
		append_entry(&w.heads, e, now);
	}
	pthread_mutex_unlock(&w.lock);
}

void conns_headers_done(struct conn_entry *e, bool with_body)
{
	if (e == NULL || (atomic_load(&e->list) == NULL && !with_body))
		return;
	pthread_mutex_lock(&w.lock);
	unlink_entry(e);
	if (with_body) {
		e->eof_watches = 0;
		append_entry(&w.bodies, e, mono_ms());
	}
	pthread_mutex_unlock(&w.lock);
}

void conns_body_done(struct conn_entry *e)
{
	if (e == NULL || atomic_load(&e->list) != &w.bodies)
		return;
	pthread_mutex_lock(&w.lock);
	if (atomic_load(&e->list) == &w.bodies)
		unlink_entry(e);
	pthread_mutex_unlock(&w.lock);
}

void conns_answered(struct conn_entry *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&w.lock);
	unlink_entry(e);
	append_entry(&w.next, e, mono_ms());
	pthread_mutex_unlock(&w.lock);
}

void conns_closed(struct conn_entry *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&w.lock);
	unlink_entry(e);
	pthread_mutex_unlock(&w.lock);
	free(e);
}

unsigned long long conns_header_timeouts(void)
{
	return atomic_load(&w.timeouts);
}

unsigned long long conns_half_closed(void)
{
	return atomic_load(&w.half_closed);
}
