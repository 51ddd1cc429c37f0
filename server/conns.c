#include "server/conns.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "server/clock.h"

#define WATCH_EVERY_MS 100

/* Connections whose first headers are awaited, oldest first: the deadline is the same for
 * all, so the watchdog only ever looks at the head. */
struct conn_entry {
	int fd;
	long long opened_ms;
	atomic_bool pending; /* on the list; read without the lock by conns_headers_done */
	struct conn_entry *prev, *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct conn_entry *head, *tail;
	long long timeout_ms;
	bool running, stopping;
	pthread_t watchdog;
	atomic_ullong timeouts;
} w = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* With w.lock held. */
static void unlink_entry(struct conn_entry *e)
{
	if (!e->pending)
		return;
	if (e->prev)
		e->prev->next = e->next;
	else
		w.head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		w.tail = e->prev;
	e->prev = e->next = NULL;
	e->pending = false;
}

/* The socket stays open (libmicrohttpd closes it, after conns_closed): the entry is still on
 * the list under the lock, so its fd cannot have been reused by another connection. */
static void *watch(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&w.lock);
	while (!w.stopping) {
		long long now = mono_ms();
		while (w.head && now - w.head->opened_ms >= w.timeout_ms) {
			struct conn_entry *e = w.head;
			shutdown(e->fd, SHUT_RDWR);
			unlink_entry(e);
			atomic_fetch_add(&w.timeouts, 1);
		}
		struct timespec ts = realtime_in_ms(WATCH_EVERY_MS);
		pthread_cond_timedwait(&w.wake, &w.lock, &ts);
	}
	pthread_mutex_unlock(&w.lock);
	return NULL;
}

bool conns_start(unsigned header_timeout_ms)
{
	w.timeout_ms = header_timeout_ms;
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
	e->opened_ms = mono_ms();
	e->pending = true;
	pthread_mutex_lock(&w.lock);
	e->prev = w.tail;
	if (w.tail)
		w.tail->next = e;
	else
		w.head = e;
	w.tail = e;
	pthread_mutex_unlock(&w.lock);
	return e;
}

void conns_headers_done(struct conn_entry *e)
{
	if (e == NULL || !atomic_load(&e->pending)) /* the common case: a later request */
		return;
	pthread_mutex_lock(&w.lock);
	unlink_entry(e);
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
