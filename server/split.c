/* The split poller: one thread that waits, in one epoll set, for the answers of the split
 * reads the I/O threads sent (dispatch_split), then answers them and resumes their
 * connections. A worker would sleep on each statement and be woken for it; here one wake-up
 * serves every answer that arrived together, and a database that stopped answering holds no
 * thread. */
#include "server/split.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server/clock.h"
#include "server/log.h"

static struct {
	pthread_t thread;
	bool started;
	int epoll_fd, wake_fd;
	pthread_mutex_t mu; /* the list, stopping */
	struct request *head;
	unsigned waiting;
	unsigned long long total;
	bool stopping;
	long long abandon_at_ms; /* after it, what is still waited for is answered 503 */
} sp = {.epoll_fd = -1, .wake_fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static char wake_tag;

static void unlink_locked(struct request *r)
{
	sp.waiting--;
	if (r->split_prev)
		r->split_prev->split_next = r->split_next;
	else
		sp.head = r->split_next;
	if (r->split_next)
		r->split_next->split_prev = r->split_prev;
	r->split_prev = r->split_next = NULL;
}

/* The answer is in, or will not be waited for: answers r and resumes its connection. */
static void complete(struct request *r, bool abandon)
{
	(void)epoll_ctl(sp.epoll_fd, EPOLL_CTL_DEL, db_socket(r->split_conn), NULL);
	pthread_mutex_lock(&sp.mu);
	unlink_locked(r);
	pthread_mutex_unlock(&sp.mu);
	if (abandon)
		dispatch_split_abandon(r, PROBLEM_SHUTTING_DOWN);
	else
		(void)dispatch_split_finish(r);
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

static void *split_main(void *arg)
{
	(void)arg;
	struct epoll_event evs[64];
	for (;;) {
		pthread_mutex_lock(&sp.mu);
		bool stopping = sp.stopping, empty = sp.head == NULL;
		long long abandon_at = sp.abandon_at_ms;
		pthread_mutex_unlock(&sp.mu);
		if (stopping && empty)
			return NULL;
		if (stopping && mono_ms() >= abandon_at) {
			for (;;) {
				pthread_mutex_lock(&sp.mu);
				struct request *r = sp.head;
				pthread_mutex_unlock(&sp.mu);
				if (r == NULL)
					return NULL;
				complete(r, true);
			}
		}
		int n = epoll_wait(sp.epoll_fd, evs, 64, stopping ? 10 : -1);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &wake_tag) {
				uint64_t v;
				(void)!read(sp.wake_fd, &v, sizeof v);
				continue;
			}
			struct request *r = evs[i].data.ptr;
			if (db_answer_ready(r->split_conn)) {
				complete(r, false);
				continue;
			}
			/* part of it: wait for the rest */
			struct epoll_event e = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = r};
			if (epoll_ctl(sp.epoll_fd, EPOLL_CTL_MOD, db_socket(r->split_conn), &e) != 0)
				complete(r, false); /* db_finish waits for it */
		}
	}
}

void split_get_stats(struct split_stats *out)
{
	pthread_mutex_lock(&sp.mu);
	*out = (struct split_stats){sp.waiting, sp.total};
	pthread_mutex_unlock(&sp.mu);
}

bool split_start(void)
{
	sp.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	sp.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &wake_tag};
	if (sp.epoll_fd < 0 || sp.wake_fd < 0 ||
	    epoll_ctl(sp.epoll_fd, EPOLL_CTL_ADD, sp.wake_fd, &e) != 0 ||
	    pthread_create(&sp.thread, NULL, split_main, NULL) != 0) {
		log_error(NULL, "cannot start the split poller");
		split_stop(0);
		return false;
	}
	sp.started = true;
	return true;
}

bool split_watch(struct request *r)
{
	/* Under the lock: a stopping poller that answers what it still waits for must not see r
	 * before its socket is watched. An answer that is already there is reported at once. */
	pthread_mutex_lock(&sp.mu);
	struct epoll_event e = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = r};
	bool ok = sp.started && !sp.stopping &&
		  epoll_ctl(sp.epoll_fd, EPOLL_CTL_ADD, db_socket(r->split_conn), &e) == 0;
	if (ok) {
		r->split_prev = NULL;
		r->split_next = sp.head;
		if (sp.head)
			sp.head->split_prev = r;
		sp.head = r;
		sp.waiting++;
		sp.total++;
	}
	pthread_mutex_unlock(&sp.mu);
	return ok;
}

void split_stop(long long abandon_at_ms)
{
	if (sp.started) {
		pthread_mutex_lock(&sp.mu);
		sp.stopping = true;
		sp.abandon_at_ms = abandon_at_ms;
		pthread_mutex_unlock(&sp.mu);
		uint64_t one = 1;
		(void)!write(sp.wake_fd, &one, sizeof one);
		pthread_join(sp.thread, NULL);
		sp.started = false;
	}
	if (sp.wake_fd >= 0)
		close(sp.wake_fd);
	if (sp.epoll_fd >= 0)
		close(sp.epoll_fd);
	sp.wake_fd = sp.epoll_fd = -1;
	sp.stopping = false;
}
