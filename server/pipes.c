/* pthread_timedjoin_np: the stop does not wait out a connect attempt. */
#define _GNU_SOURCE
#include "server/pipes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "db/pipe.h"
#include "server/clock.h"
#include "server/log.h"

#define RECONNECT_MS 1000
#define CHECK_MS 100
/* The statement timeout and a second for the answer to arrive. */
#define GIVE_UP_MS (DB_STATEMENT_TIMEOUT_MS + 1000)
/* How long the stop waits for a connect attempt in progress (up to the connect timeout, 3 s,
 * to an unreachable host) before leaving it to the process's exit. */
#define CONNECTOR_JOIN_MS 200

/* One pipe: its connection (NULL while down) and the reads sent on it, oldest first. Every
 * use of the connection and the list is under mu. */
struct slot {
	pthread_mutex_t mu;
	struct db_pipe *db;
	bool broken;    /* a send failed: the poller closes it */
	bool want_out;  /* part of a send is still to be written */
	bool closed;    /* stopped: takes no read */
	atomic_bool up; /* db, and neither broken nor closed: what choose() looks at */
	struct request *head, *tail;
	atomic_uint waiting;
	atomic_llong head_sent_ms; /* when the oldest read went out; valid while waiting > 0 */
};

static struct {
	char *url;
	int epoll_fd, wake_fd;
	pthread_t poller, connector;
	bool poller_up, connector_up;
	atomic_bool stopping;
	atomic_llong abandon_at_ms;
	atomic_ullong total;
	pthread_mutex_t mu; /* the connector's wait */
	pthread_cond_t need;
	bool needed; /* a pipe went down since the connector's last pass */
	struct slot slots[PIPES_COUNT];
} pp = {.epoll_fd = -1, .wake_fd = -1};

static char wake_tag;

static void wake_poller(void)
{
	uint64_t one = 1;
	(void)!write(pp.wake_fd, &one, sizeof one);
}

/* With s->mu held: unlinks and returns the oldest read. */
static struct request *pop(struct slot *s)
{
	struct request *r = s->head;
	s->head = r->pipe_next;
	if (s->head == NULL)
		s->tail = NULL;
	r->pipe_next = NULL;
	atomic_fetch_sub(&s->waiting, 1);
	if (s->head)
		atomic_store(&s->head_sent_ms, s->head->pipe_sent_ms);
	return r;
}

/* Answers a read (its rows, freed here, or a failure in r->ctx.dberr) and resumes it. */
static void complete(struct request *r, enum rg_status st, struct db_rows *rows)
{
	dispatch_pipe_finish(r, st, rows);
	db_rows_free(rows);
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

/* Closes s's connection: what it still awaited is answered 503 database_unavailable. */
static void tear_down(struct slot *s, const char *why)
{
	pthread_mutex_lock(&s->mu);
	struct request *lost = s->head;
	unsigned n = atomic_load(&s->waiting);
	if (s->db) {
		(void)epoll_ctl(pp.epoll_fd, EPOLL_CTL_DEL, db_pipe_socket(s->db), NULL);
		db_pipe_close(s->db);
	}
	s->db = NULL;
	atomic_store(&s->up, false);
	s->broken = s->want_out = false;
	s->head = s->tail = NULL;
	atomic_store(&s->waiting, 0);
	pthread_mutex_unlock(&s->mu);
	log_warn(NULL, "pipe lost (%s); %u read(s) answered 503", why, n);
	while (lost) {
		struct request *r = lost;
		lost = r->pipe_next;
		r->pipe_next = NULL;
		db_error_set(&r->ctx.dberr, RG_UNAVAILABLE, "08006", why);
		struct db_rows none = {0};
		complete(r, RG_UNAVAILABLE, &none);
	}
	pthread_mutex_lock(&pp.mu);
	pp.needed = true;
	pthread_cond_signal(&pp.need);
	pthread_mutex_unlock(&pp.mu);
}

/* With s->mu held: writes out what is queued, and watches for writability while some is
 * left. false when the connection is lost. */
static bool flush_locked(struct slot *s)
{
	int left = db_pipe_flush(s->db);
	if (left < 0)
		return false;
	if ((left == 1) != s->want_out) {
		s->want_out = left == 1;
		struct epoll_event e = {.events = EPOLLIN | (s->want_out ? EPOLLOUT : 0),
					.data.ptr = s};
		(void)epoll_ctl(pp.epoll_fd, EPOLL_CTL_MOD, db_pipe_socket(s->db), &e);
	}
	return true;
}

/* The socket of s is ready: reads what arrived and answers the reads it completes. */
static void serve(struct slot *s)
{
	struct request *done = NULL, **tail = &done;
	pthread_mutex_lock(&s->mu);
	if (s->db == NULL) {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	bool ok = !s->broken && flush_locked(s) && db_pipe_consume(s->db);
	enum rg_status st;
	struct db_rows rows;
	/* Answers are handed over in the order of the list: r's outcome rides on r until the
	 * lock is released (ctx.dberr is r's own). */
	while (ok && s->head && db_pipe_next(s->db, &st, &rows, &s->head->ctx.dberr)) {
		struct request *r = pop(s);
		r->pipe_st = st;
		r->pipe_rows = rows;
		*tail = r;
		tail = &r->pipe_next;
	}
	ok = ok && db_pipe_alive(s->db);
	pthread_mutex_unlock(&s->mu);
	while (done) {
		struct request *r = done;
		done = r->pipe_next;
		r->pipe_next = NULL;
		complete(r, r->pipe_st, &r->pipe_rows);
	}
	if (!ok)
		tear_down(s, "the connection to the database was lost");
}

static bool idle_all(void)
{
	for (int i = 0; i < PIPES_COUNT; i++)
		if (atomic_load(&pp.slots[i].waiting) > 0)
			return false;
	return true;
}

/* At the drain's end: what is still awaited is answered 503 shutting_down. */
static void abandon_all(void)
{
	for (int i = 0; i < PIPES_COUNT; i++) {
		struct slot *s = &pp.slots[i];
		pthread_mutex_lock(&s->mu);
		struct request *r = s->head;
		s->closed = true;
		atomic_store(&s->up, false);
		s->head = s->tail = NULL;
		atomic_store(&s->waiting, 0);
		pthread_mutex_unlock(&s->mu);
		while (r) {
			struct request *next = r->pipe_next;
			r->pipe_next = NULL;
			reply_resume_problem(r, PROBLEM_SHUTTING_DOWN);
			r = next;
		}
	}
}

/* While reads wait, every CHECK_MS: reads what libpq may have taken in outside the poller
 * (a send that found the socket full reads too, and epoll then has nothing to report), and
 * closes a pipe whose oldest read has waited past any statement's timeout (a host that
 * stopped answering without closing the connection). */
static void check_waiting(void)
{
	long long now = mono_ms();
	for (int i = 0; i < PIPES_COUNT; i++) {
		struct slot *s = &pp.slots[i];
		if (atomic_load(&s->waiting) == 0)
			continue;
		if (now - atomic_load(&s->head_sent_ms) > GIVE_UP_MS)
			tear_down(s, "the database did not answer within the statement timeout");
		else
			serve(s);
	}
}

static void *poller_main(void *arg)
{
	(void)arg;
	struct epoll_event evs[PIPES_COUNT + 1];
	long long next_check = mono_ms() + CHECK_MS;
	for (;;) {
		bool stopping = atomic_load(&pp.stopping);
		if (stopping && (idle_all() || mono_ms() >= atomic_load(&pp.abandon_at_ms))) {
			abandon_all();
			return NULL;
		}
		/* Ten wake-ups a second when idle: a read sent meanwhile needs no wake-up of its
		 * own for its check. */
		int n = epoll_wait(pp.epoll_fd, evs, PIPES_COUNT + 1, stopping ? 10 : CHECK_MS);
		if (mono_ms() >= next_check) {
			check_waiting();
			next_check = mono_ms() + CHECK_MS;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &wake_tag) {
				uint64_t v;
				(void)!read(pp.wake_fd, &v, sizeof v);
				for (int k = 0; k < PIPES_COUNT; k++) /* a send that failed, or left
									  * part of it unwritten */
					serve(&pp.slots[k]);
				continue;
			}
			serve(evs[i].data.ptr);
		}
	}
}

/* Connects the pipes that are down, again every RECONNECT_MS while that fails. */
static void *connector_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pp.mu);
	while (!atomic_load(&pp.stopping)) {
		bool failed = false;
		pp.needed = false; /* a pipe that goes down during this pass asks for another */
		for (int i = 0; i < PIPES_COUNT && !atomic_load(&pp.stopping); i++) {
			struct slot *s = &pp.slots[i];
			pthread_mutex_lock(&s->mu);
			bool down = s->db == NULL;
			pthread_mutex_unlock(&s->mu);
			if (!down)
				continue;
			pthread_mutex_unlock(&pp.mu);
			struct db_pipe *p = NULL;
			struct db_error err = {0};
			bool ok = db_pipe_open(pp.url, &p, &err) == RG_OK;
			pthread_mutex_lock(&pp.mu);
			if (!ok) {
				failed = true;
				continue;
			}
			pthread_mutex_lock(&s->mu);
			struct epoll_event e = {.events = EPOLLIN, .data.ptr = s};
			if (epoll_ctl(pp.epoll_fd, EPOLL_CTL_ADD, db_pipe_socket(p), &e) == 0) {
				s->db = p;
				atomic_store(&s->up, !s->closed);
			} else {
				db_pipe_close(p);
				failed = true;
			}
			pthread_mutex_unlock(&s->mu);
		}
		if (atomic_load(&pp.stopping)) /* checked under pp.mu, which the stop signals under */
			break;
		if (failed) {
			struct timespec until = realtime_in_ms(RECONNECT_MS);
			pthread_cond_timedwait(&pp.need, &pp.mu, &until);
		} else if (!pp.needed) {
			pthread_cond_wait(&pp.need, &pp.mu);
		}
	}
	pthread_mutex_unlock(&pp.mu);
	return NULL;
}

void pipes_get_stats(struct pipes_stats *out)
{
	*out = (struct pipes_stats){0, 0, atomic_load(&pp.total)};
	for (int i = 0; i < PIPES_COUNT; i++) {
		struct slot *s = &pp.slots[i];
		out->connected += atomic_load(&s->up);
		out->waiting += atomic_load(&s->waiting);
	}
}

bool pipes_start(const char *url)
{
	pthread_mutex_init(&pp.mu, NULL);
	pthread_cond_init(&pp.need, NULL);
	for (int i = 0; i < PIPES_COUNT; i++)
		pthread_mutex_init(&pp.slots[i].mu, NULL);
	atomic_store(&pp.stopping, false);
	pp.url = strdup(url);
	pp.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	pp.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &wake_tag};
	pp.poller_up = pp.url && pp.epoll_fd >= 0 && pp.wake_fd >= 0 &&
		       epoll_ctl(pp.epoll_fd, EPOLL_CTL_ADD, pp.wake_fd, &e) == 0 &&
		       pthread_create(&pp.poller, NULL, poller_main, NULL) == 0;
	pp.connector_up =
		pp.poller_up && pthread_create(&pp.connector, NULL, connector_main, NULL) == 0;
	if (!pp.connector_up) {
		log_error(NULL, "cannot start the pipelined reads' threads");
		pipes_stop(0);
		return false;
	}
	return true;
}

/* The pipe with the fewest reads waiting among those that may take one, or NULL. */
static struct slot *choose(long long now)
{
	struct slot *best = NULL;
	unsigned best_n = PIPES_MAX_WAITING;
	for (int i = 0; i < PIPES_COUNT; i++) {
		struct slot *s = &pp.slots[i];
		unsigned n = atomic_load(&s->waiting);
		if (atomic_load(&s->up) && n < best_n &&
		    (n == 0 || now - atomic_load(&s->head_sent_ms) < PIPES_STALL_MS)) {
			best = s;
			best_n = n;
		}
	}
	return best;
}

bool pipes_submit(struct request *r)
{
	if (!pp.poller_up || atomic_load(&pp.stopping))
		return false;
	long long now = mono_ms();
	struct slot *s = choose(now);
	if (s == NULL)
		return false;
	pthread_mutex_lock(&s->mu);
	bool ok = s->db != NULL && !s->broken && !s->closed;
	enum rg_status st = ok ? dispatch_pipe_send(r, s->db) : RG_NOT_SENT;
	if (ok && st != RG_OK) {
		ok = false;
		if (st != RG_NOT_SENT) { /* nothing was sent */
			s->broken = true; /* the poller closes it */
			atomic_store(&s->up, false);
			wake_poller();
		}
		r->ctx.dberr = (struct db_error){0}; /* the lane reports its own */
	}
	if (ok) {
		r->pipe_sent_ms = now;
		r->pipe_next = NULL;
		if (s->tail)
			s->tail->pipe_next = r;
		else
			s->head = r;
		s->tail = r;
		if (atomic_fetch_add(&s->waiting, 1) == 0)
			atomic_store(&s->head_sent_ms, now);
		atomic_fetch_add_explicit(&pp.total, 1, memory_order_relaxed);
		int left = db_pipe_flush(s->db);
		if (left != 0) /* the poller writes the rest, or finds the connection lost */
			wake_poller();
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

void pipes_stop(long long abandon_at_ms)
{
	atomic_store(&pp.abandon_at_ms, abandon_at_ms);
	atomic_store(&pp.stopping, true);
	bool connector_busy = false;
	if (pp.connector_up) {
		pthread_mutex_lock(&pp.mu);
		pthread_cond_signal(&pp.need);
		pthread_mutex_unlock(&pp.mu);
		struct timespec until = realtime_in_ms(CONNECTOR_JOIN_MS);
		if (pthread_timedjoin_np(pp.connector, NULL, &until) != 0) {
			pthread_detach(pp.connector); /* still connecting: it ends with the process */
			connector_busy = true;
		}
		pp.connector_up = false;
	}
	if (pp.poller_up) {
		wake_poller();
		pthread_join(pp.poller, NULL);
		pp.poller_up = false;
	}
	if (connector_busy)
		return; /* it may still install a pipe: the slots and the URL stay */
	for (int i = 0; i < PIPES_COUNT; i++) {
		db_pipe_close(pp.slots[i].db);
		pp.slots[i].db = NULL;
		pp.slots[i].closed = false;
	}
	if (pp.wake_fd >= 0)
		close(pp.wake_fd);
	if (pp.epoll_fd >= 0)
		close(pp.epoll_fd);
	pp.wake_fd = pp.epoll_fd = -1;
	free(pp.url);
	pp.url = NULL;
}
