/* Content reads and the group commit of their disclosures (server/ledger.h). */
#include "server/ledger.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "db/standby.h"
#include "server/log.h"

/* One caller's read, on its stack while it waits. */
struct wait {
	const struct db_content_read *in;
	struct db_rows *out;
	enum rg_status st;
	struct db_error *err;
	uint64_t lsn;
	bool done;
	pthread_cond_t cv; /* done, under L.mu */
	struct wait *next;
};

#ifdef RG_BENCH_NO_RECORDING /* the bench's control (CMakeLists.txt) */
#define RECORDING false
#else
#define RECORDING true
#endif

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a read was handed over, or stopping */
	struct wait *head, *tail;
	bool running, stopping;
	pthread_t thread;
	struct db_pool *pool;
	atomic_ullong recorded, batches;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

/* A read that succeeded delivered content: a disclosure (none in the bench's control). */
static bool delivers(const struct db_rows *row)
{
	return RECORDING && row->n &&
	       ((const struct db_mem_content *)db_rows_at(row, 0))->content != NULL;
}

/* Of n reads that succeeded, those recorded. */
static void count(const struct db_rows *rows, size_t n, bool one_commit)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += delivers(&rows[i]);
	atomic_fetch_add(&L.recorded, k);
	atomic_fetch_add(&L.batches, one_commit && k);
}

/* Reads and records one batch (n waits from first), then wakes its callers. */
static void read_batch(struct wait *first, size_t n)
{
	/* the reader thread's alone */
	static struct db_content_read reads[LEDGER_BATCH_MAX];
	static struct db_rows rows[LEDGER_BATCH_MAX];
	struct wait *w = first;
	for (size_t i = 0; i < n; i++, w = w->next)
		reads[i] = *w->in;
	struct db_conn *c = NULL;
	struct db_error err = {0};
	uint64_t lsn = 0;
	enum rg_status st = db_acquire(L.pool, &c, &err);
	if (st == RG_OK)
		st = db_content_reads(c, reads, n, rows, &err);
	/* One question for the whole batch: its commit is past every disclosure in it. */
	if (st == RG_OK) {
		struct db_error lsn_err = {0};
		if (db_commit_lsn_on(c, &lsn, &lsn_err) != RG_OK)
			log_warn(NULL, "no commit LSN for %zu recorded content read(s): %s", n,
				 lsn_err.message);
	}
	if (c)
		db_release(L.pool, c);
	if (st == RG_OK) {
		count(rows, n, true);
	} else { /* whatever the failure, nothing is delivered: a read to try again */
		log_warn(NULL, "%zu content read(s) not recorded (%s); answered 503", n,
			 err.message);
		st = RG_UNAVAILABLE;
	}
	pthread_mutex_lock(&L.mu);
	w = first;
	for (size_t i = 0; i < n; i++) {
		struct wait *next = w->next; /* w is gone once its caller woke */
		*w->out = st == RG_OK ? rows[i] : (struct db_rows){0};
		w->st = st;
		if (st != RG_OK)
			*w->err = err;
		w->lsn = lsn;
		w->done = true;
		pthread_cond_signal(&w->cv);
		w = next;
	}
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
		/* Everything handed over while the last batch was read goes out together. */
		struct wait *first = L.head, *last = first;
		size_t n = 1;
		while (last->next && n < LEDGER_BATCH_MAX) {
			last = last->next;
			n++;
		}
		L.head = last->next;
		if (L.head == NULL)
			L.tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&L.mu);
		read_batch(first, n);
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

/* On the request's own transaction (its disclosure commits with it), or (the bench's control,
 * which records nothing) on a connection of its own. */
static enum rg_status read_alone(struct db_conn *tx, const struct db_content_read *in,
				 struct db_rows *out, struct db_error *err)
{
	struct db_conn *c = tx;
	enum rg_status st = c ? RG_OK : db_acquire(L.pool, &c, err);
	if (st == RG_OK)
		st = db_content_reads(c, in, 1, out, err);
	if (c && c != tx)
		db_release(L.pool, c);
	if (st == RG_OK)
		count(out, 1, false);
	return st;
}

/* Waits for the batch that reads in. */
static enum rg_status read_in_batch(const struct db_content_read *in, struct db_rows *out,
				    uint64_t *lsn, struct db_error *err)
{
	struct wait w = {.in = in, .out = out, .err = err};
	pthread_cond_init(&w.cv, NULL);
	pthread_mutex_lock(&L.mu);
	if (!L.running || L.stopping) {
		pthread_mutex_unlock(&L.mu);
		pthread_cond_destroy(&w.cv);
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
		pthread_cond_wait(&w.cv, &L.mu);
	pthread_mutex_unlock(&L.mu);
	pthread_cond_destroy(&w.cv);
	*lsn = w.lsn;
	return w.st;
}

enum rg_status ledger_read(struct db_conn *tx, const struct db_content_read *in,
			   struct db_rows *out, bool *recorded, uint64_t *lsn,
			   struct db_error *err)
{
	*out = (struct db_rows){0};
	*lsn = 0;
	enum rg_status st = tx || !RECORDING ? read_alone(tx, in, out, err)
					     : read_in_batch(in, out, lsn, err);
	*recorded = st == RG_OK && delivers(out);
	return st;
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
