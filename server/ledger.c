/* The group commit of content-read disclosures (server/ledger.h). */
#include "server/ledger.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "server/log.h"

struct waiter {
	const struct db_content_read *read;
	enum rg_status st;
	struct db_error err;
	bool done;
	struct waiter *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a read was handed over, or stopping */
	pthread_cond_t done; /* a batch committed (or failed) */
	struct waiter *head, *tail;
	bool running, stopping;
	pthread_t thread;
	struct db_pool *pool;
	atomic_ullong recorded, batches;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .work = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER};

/* Writes one batch (the list from first, n reads) and answers its waiters. */
static void write_batch(struct waiter *first, size_t n)
{
	struct db_content_read reads[LEDGER_BATCH_MAX];
	struct waiter *w = first;
	for (size_t i = 0; i < n; i++, w = w->next)
		reads[i] = *w->read;
	struct db_conn *c = NULL;
	struct db_error err = {0};
	enum rg_status st = db_acquire(L.pool, &c, &err);
	if (st == RG_OK)
		st = db_content_reads_record(c, reads, n, &err);
	if (c)
		db_release(L.pool, c);
	if (st == RG_OK) {
		atomic_fetch_add(&L.recorded, n);
		atomic_fetch_add(&L.batches, 1);
	} else {
		log_warn(NULL, "%zu content disclosure(s) not recorded: %s", n, err.message);
	}
	pthread_mutex_lock(&L.mu);
	w = first;
	for (size_t i = 0; i < n; i++) {
		struct waiter *next = w->next;
		w->st = st;
		w->err = err;
		w->done = true; /* w belongs to its request again from here */
		w = next;
	}
	pthread_cond_broadcast(&L.done);
	pthread_mutex_unlock(&L.mu);
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&L.mu);
	for (;;) {
		while (L.head == NULL && !L.stopping)
			pthread_cond_wait(&L.work, &L.mu);
		if (L.head == NULL)
			break;
		/* Everything handed over while the last batch was written goes out together. */
		struct waiter *first = L.head, *last = first;
		size_t n = 1;
		while (last->next && n < LEDGER_BATCH_MAX) {
			last = last->next;
			n++;
		}
		L.head = last->next;
		if (L.head == NULL)
			L.tail = NULL;
		pthread_mutex_unlock(&L.mu);
		write_batch(first, n);
		pthread_mutex_lock(&L.mu);
	}
	pthread_mutex_unlock(&L.mu);
	return NULL;
}

bool ledger_start(struct db_pool *pool)
{
	L.pool = pool;
	L.stopping = false;
	if (pthread_create(&L.thread, NULL, run, NULL) != 0) {
		log_error(NULL, "cannot start the disclosure ledger's thread");
		return false;
	}
	L.running = true;
	return true;
}

enum rg_status ledger_record(const struct db_content_read *r, struct db_error *err)
{
	struct waiter w = {.read = r};
	pthread_mutex_lock(&L.mu);
	if (!L.running || L.stopping) {
		pthread_mutex_unlock(&L.mu);
		db_error_set(err, RG_UNAVAILABLE, NULL, "the disclosure ledger is stopping");
		return RG_UNAVAILABLE;
	}
	if (L.tail)
		L.tail->next = &w;
	else
		L.head = &w;
	L.tail = &w;
	pthread_cond_signal(&L.work);
	while (!w.done)
		pthread_cond_wait(&L.done, &L.mu);
	pthread_mutex_unlock(&L.mu);
	if (w.st != RG_OK)
		*err = w.err;
	return w.st;
}

void ledger_stop(void)
{
	if (!L.running)
		return;
	pthread_mutex_lock(&L.mu);
	L.stopping = true;
	pthread_cond_signal(&L.work);
	pthread_mutex_unlock(&L.mu);
	pthread_join(L.thread, NULL);
	L.running = false;
}

void ledger_get_stats(struct ledger_stats *out)
{
	out->recorded = atomic_load(&L.recorded);
	out->batches = atomic_load(&L.batches);
}
