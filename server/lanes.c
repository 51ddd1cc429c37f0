#include "server/lanes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "server/clock.h"
#include "server/log.h"

struct job {
	void (*run)(void *arg);
	void (*expire)(void *arg);
	void *arg;
	long long expires_ms; /* CLOCK_MONOTONIC */
	struct job *next;
};

struct lane {
	const char *name;
	pthread_mutex_t lock;
	pthread_cond_t work;    /* a job was queued, or the lane is stopping */
	pthread_cond_t drained; /* a thread left */
	pthread_cond_t watch;   /* a job was queued while the watchdog was parked, or stopping */
	struct job *head, *tail;
	size_t queued;
	unsigned long long expired;
	unsigned long long submitted; /* jobs queued since the start */
	bool watchdog_parked;         /* waiting without a deadline: a submit must wake it */
	unsigned min_threads, max_threads, threads, idle, max_wait_ms;
	bool stopping, watchdog_running;
	pthread_t watchdog;
	/* Threads are joined, never detached: a thread's exit runs its thread-local destructors
	 * (libcurl's handle, OpenSSL's per-thread state), which must be over before the process
	 * cleans those libraries up. One slot per thread; a thread that leaves marks its slot,
	 * and the next spawn (or lane_stop) joins it. */
	struct lane_slot {
		pthread_t tid;
		enum { SLOT_FREE, SLOT_RUNNING, SLOT_LEFT } state;
	} *slots;
};

/* With l->lock held: the head job, unlinked. */
static struct job *pop(struct lane *l)
{
	struct job *j = l->head;
	l->head = j->next;
	if (l->head == NULL)
		l->tail = NULL;
	l->queued--;
	return j;
}

/* With l->lock held: waits on l->watch until the monotonic instant due_ms. */
static void watch_until(struct lane *l, long long due_ms)
{
	struct timespec until = {.tv_sec = (time_t)(due_ms / 1000),
				 .tv_nsec = (long)(due_ms % 1000) * 1000000L};
	pthread_cond_timedwait(&l->watch, &l->lock, &until);
}

/* Expires what waited too long. Jobs are queued in order and wait the same time, so the
 * head is always the first to expire: sleep until it is due. With the queue empty, linger one
 * period while jobs keep coming, and park (and be woken by the next submit) only after a
 * period without any: a busy lane's queue empties and fills with every request, and waking
 * this thread each time cost a context switch per request. A job queued while it lingers is
 * due at least max_wait_ms later, so the lingering wait ends before the job is due. */
static void *lane_watchdog(void *arg)
{
	struct lane *l = arg;
	unsigned long long seen = 0;
	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		long long now = mono_ms();
		if (l->head == NULL) {
			if (l->submitted != seen) {
				seen = l->submitted;
				watch_until(l, now + l->max_wait_ms);
			} else {
				l->watchdog_parked = true;
				pthread_cond_wait(&l->watch, &l->lock);
				l->watchdog_parked = false;
			}
			continue;
		}
		if (l->head->expires_ms > now) {
			watch_until(l, l->head->expires_ms);
			continue;
		}
		struct job *j = pop(l);
		l->expired++;
		pthread_mutex_unlock(&l->lock);
		j->expire(j->arg);
		free(j);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void *lane_thread(void *arg);

struct thread_arg {
	struct lane *lane;
	struct lane_slot *slot;
};

/* With l->lock held: joins the threads that left (they are past their destructors soon; the
 * join waits for that), and returns a free slot, or NULL. */
static struct lane_slot *free_slot(struct lane *l)
{
	struct lane_slot *found = NULL;
	for (unsigned i = 0; i < l->max_threads; i++) {
		if (l->slots[i].state == SLOT_LEFT) {
			pthread_join(l->slots[i].tid, NULL);
			l->slots[i].state = SLOT_FREE;
		}
		if (found == NULL && l->slots[i].state == SLOT_FREE)
			found = &l->slots[i];
	}
	return found;
}

/* With l->lock held. */
static bool spawn(struct lane *l)
{
	struct lane_slot *slot = free_slot(l);
	struct thread_arg *ta = slot ? malloc(sizeof *ta) : NULL;
	pthread_attr_t attr;
	if (ta == NULL || pthread_attr_init(&attr) != 0) {
		free(ta);
		return false;
	}
	*ta = (struct thread_arg){l, slot};
	/* Handlers keep their buffers on the heap; 512 KiB is ample (TLS and getaddrinfo
	 * included) and keeps a lane of hundreds of blocked provider calls cheap. */
	pthread_attr_setstacksize(&attr, 512 * 1024);
	bool ok = pthread_create(&slot->tid, &attr, lane_thread, ta) == 0;
	pthread_attr_destroy(&attr);
	if (ok) {
		slot->state = SLOT_RUNNING;
		l->threads++;
	} else {
		free(ta);
	}
	return ok;
}

static void *lane_thread(void *arg)
{
	struct thread_arg ta = *(struct thread_arg *)arg;
	struct lane *l = ta.lane;
	free(arg);
	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (l->head == NULL && !l->stopping) {
			l->idle++;
			int rc = 0;
			if (l->threads > l->min_threads) {
				struct timespec until = realtime_in_ms(LANE_IDLE_MS);
				rc = pthread_cond_timedwait(&l->work, &l->lock, &until);
			} else {
				pthread_cond_wait(&l->work, &l->lock);
			}
			l->idle--;
			if (rc == ETIMEDOUT && l->head == NULL && l->threads > l->min_threads)
				goto leave;
		}
		if (l->head == NULL) /* stopping, and nothing is left to run */
			goto leave;
		struct job *j = pop(l);
		pthread_mutex_unlock(&l->lock);
		j->run(j->arg);
		free(j);
		pthread_mutex_lock(&l->lock);
	}
leave:
	ta.slot->state = SLOT_LEFT;
	l->threads--;
	pthread_cond_broadcast(&l->drained);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

bool lane_start(const char *name, unsigned min_threads, unsigned max_threads,
		unsigned max_wait_ms, struct lane **out)
{
	struct lane *l = calloc(1, sizeof *l);
	if (l == NULL || min_threads == 0 || max_threads < min_threads) {
		free(l);
		return false;
	}
	l->name = name;
	l->min_threads = min_threads;
	l->max_threads = max_threads;
	l->max_wait_ms = max_wait_ms;
	l->slots = calloc(max_threads, sizeof *l->slots);
	if (l->slots == NULL) {
		free(l);
		return false;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->drained, NULL);
	/* the watchdog's timed waits are on the monotonic clock, as the deadlines are */
	pthread_condattr_t monotonic;
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&l->watch, &monotonic);
	pthread_condattr_destroy(&monotonic);
	pthread_mutex_lock(&l->lock);
	bool ok = pthread_create(&l->watchdog, NULL, lane_watchdog, l) == 0;
	l->watchdog_running = ok;
	for (unsigned i = 0; ok && i < min_threads; i++)
		ok = spawn(l);
	pthread_mutex_unlock(&l->lock);
	if (!ok) {
		log_error(NULL, "lane %s: cannot start its threads", name);
		lane_stop(l);
		return false;
	}
	*out = l;
	return true;
}

bool lane_submit(struct lane *l, void (*run)(void *arg), void (*expire)(void *arg), void *arg)
{
	struct job *j = malloc(sizeof *j);
	if (j == NULL)
		return false;
	*j = (struct job){run, expire, arg, mono_ms() + l->max_wait_ms, NULL};
	pthread_mutex_lock(&l->lock);
	if (l->stopping) {
		pthread_mutex_unlock(&l->lock);
		free(j);
		return false;
	}
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	l->queued++;
	l->submitted++;
	bool wake_watchdog = l->watchdog_parked, wake_worker = l->idle > 0;
	/* Grow while every thread is busy; a failed spawn leaves the job to the others. */
	if (l->idle < l->queued && l->threads < l->max_threads && !spawn(l))
		log_warn(NULL, "lane %s: cannot start another thread (%u running)", l->name,
			 l->threads);
	/* Signalled with the lock held: lane_stop may free the lane once it is released. */
	if (wake_worker)
		pthread_cond_signal(&l->work);
	if (wake_watchdog)
		pthread_cond_signal(&l->watch);
	pthread_mutex_unlock(&l->lock);
	return true;
}

void lane_get_stats(struct lane *l, struct lane_stats *out)
{
	pthread_mutex_lock(&l->lock);
	*out = (struct lane_stats){l->threads, l->threads - l->idle, l->queued, l->expired};
	pthread_mutex_unlock(&l->lock);
}

void lane_stop(struct lane *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	pthread_cond_broadcast(&l->work);
	pthread_cond_signal(&l->watch);
	while (l->threads > 0)
		pthread_cond_wait(&l->drained, &l->lock);
	(void)free_slot(l); /* joins every thread */
	pthread_mutex_unlock(&l->lock);
	if (l->watchdog_running)
		pthread_join(l->watchdog, NULL);
	pthread_cond_destroy(&l->watch);
	pthread_cond_destroy(&l->drained);
	pthread_cond_destroy(&l->work);
	pthread_mutex_destroy(&l->lock);
	free(l->slots);
	free(l);
}
