/* Content reads, context loads and the group commit of their disclosures (server/ledger.h). */
#include "server/ledger.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"

#ifdef RG_BENCH_NO_RECORDING /* the bench's control (CMakeLists.txt) */
#define RECORDING false
#else
#define RECORDING true
#endif

/* One caller's read or load, on its stack while it waits. */
struct wait {
	const void *in;  /* its queue's input struct (struct db_content_read, db_delivery) */
	void *out;       /* its output (struct db_rows, size_t stale count), as the caller set it */
	enum rg_status st;
	struct db_error *err;
	uint64_t lsn;
	bool done;
	pthread_cond_t cv; /* done, under its queue's mu */
	struct wait *next;
};

/* Gathers the waits handed over meanwhile and runs them as one statement, on its thread. */
struct queue {
	const char *what;        /* for the log: "content read" | "context load" */
	size_t in_size, out_size; /* one input, one output */
	/* Runs n inputs (in, n structs) as one statement on c, their n outputs into out, and
	 * counts the disclosures recorded among them; on failure nothing is recorded. */
	enum rg_status (*run)(struct db_conn *c, const void *in, size_t n, void *out,
			      size_t *recorded, struct db_error *err);
	pthread_mutex_t mu;
	pthread_cond_t work; /* a wait was handed over, or stopping */
	struct wait *head, *tail;
	bool running, stopping;
	pthread_t thread;
	atomic_ullong recorded, commits; /* what it recorded, and the batches that committed it */
	atomic_uint waiting;             /* handed over and not answered yet */
};

static struct db_pool *pool;

/* A read that succeeded delivered content: a disclosure (none in the bench's control). */
static bool delivers(const struct db_rows *row)
{
	return RECORDING && row->n &&
	       ((const struct db_mem_content *)db_rows_at(row, 0))->content != NULL;
}

static enum rg_status run_reads(struct db_conn *c, const void *in, size_t n, void *out,
				size_t *recorded, struct db_error *err)
{
	struct db_rows *rows = out;
	enum rg_status st = db_content_reads(c, in, n, rows, err);
	*recorded = 0;
	for (size_t i = 0; st == RG_OK && i < n; i++)
		*recorded += delivers(&rows[i]);
	return st;
}

/* A load's disclosures are its items: *recorded counts the loads that were recorded. */
static enum rg_status run_loads(struct db_conn *c, const void *in, size_t n, void *out,
				size_t *recorded, struct db_error *err)
{
	const size_t *stale = out;
	enum rg_status st = db_mem_deliver(c, in, n, out, err);
	*recorded = 0;
	for (size_t i = 0; RECORDING && st == RG_OK && i < n; i++)
		*recorded += stale[i] == 0;
	return st;
}

static struct queue reads = {.what = "content read",
			     .in_size = sizeof(struct db_content_read),
			     .out_size = sizeof(struct db_rows),
			     .run = run_reads,
			     .mu = PTHREAD_MUTEX_INITIALIZER,
			     .work = PTHREAD_COND_INITIALIZER};
static struct queue loads = {.what = "context load",
			     .in_size = sizeof(struct db_delivery),
			     .out_size = sizeof(size_t),
			     .run = run_loads,
			     .mu = PTHREAD_MUTEX_INITIALIZER,
			     .work = PTHREAD_COND_INITIALIZER};

/* Gathers n waits' inputs, runs them on c, scatters the outputs back (only on success: a
 * failure leaves each caller's output as it set it). */
static enum rg_status run_gathered(struct queue *q, struct db_conn *c, struct wait *const *w,
				   size_t n, size_t *recorded, struct db_error *err)
{
	char *in = malloc(n * q->in_size), *out = malloc(n * q->out_size);
	enum rg_status st = RG_NOMEM;
	if (in && out) {
		for (size_t i = 0; i < n; i++)
			memcpy(in + i * q->in_size, w[i]->in, q->in_size);
		st = q->run(c, in, n, out, recorded, err);
	}
	for (size_t i = 0; st == RG_OK && i < n; i++)
		memcpy(w[i]->out, out + i * q->out_size, q->out_size);
	free(in);
	free(out);
	return st;
}

/* Runs one batch (n waits from first), then wakes its callers. */
static void run_batch(struct queue *q, struct wait *first, size_t n)
{
	struct wait *w[LEDGER_BATCH_MAX];
	struct wait *x = first;
	for (size_t i = 0; i < n; i++, x = x->next)
		w[i] = x;
	struct db_conn *c = NULL;
	struct db_error err = {0};
	uint64_t lsn = 0;
	size_t recorded = 0;
	enum rg_status st = db_acquire(pool, &c, &err);
	if (st == RG_OK) {
		/* One position for the whole batch, asked in its statement's round trip: its
		 * commit is past every disclosure in it. */
		db_conn_track_commits(c);
		st = run_gathered(q, c, w, n, &recorded, &err);
	}
	if (st == RG_OK && recorded) {
		atomic_fetch_add(&q->recorded, recorded);
		atomic_fetch_add(&q->commits, 1);
	}
	if (st == RG_OK && !db_conn_commit_lsn(c, &lsn))
		log_warn(NULL, "no commit LSN for %zu recorded %s(s)", n, q->what);
	if (c)
		db_release(pool, c);
	if (st != RG_OK) { /* whatever the failure, nothing is delivered: to try again */
		log_warn(NULL, "%zu %s(s) not recorded (%s); answered 503", n, q->what,
			 err.message);
		st = RG_UNAVAILABLE;
	}
	pthread_mutex_lock(&q->mu);
	for (size_t i = 0; i < n; i++) { /* w[i] is gone once its caller woke */
		w[i]->st = st;
		if (st != RG_OK)
			*w[i]->err = err;
		w[i]->lsn = lsn;
		w[i]->done = true;
		pthread_cond_signal(&w[i]->cv);
	}
	pthread_mutex_unlock(&q->mu);
}

static void *run(void *arg)
{
	struct queue *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == NULL && !q->stopping)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->head == NULL)
			break;
		/* Everything handed over while the last batch ran goes out together. */
		struct wait *first = q->head, *last = first;
		size_t n = 1;
		while (last->next && n < LEDGER_BATCH_MAX) {
			last = last->next;
			n++;
		}
		q->head = last->next;
		if (q->head == NULL)
			q->tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&q->mu);
		run_batch(q, first, n);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static bool queue_start(struct queue *q)
{
	q->stopping = false;
	if (pthread_create(&q->thread, NULL, run, q) != 0) {
		log_error(NULL, "cannot start the disclosure ledger's %s thread", q->what);
		return false;
	}
	q->running = true;
	return true;
}

static void queue_stop(struct queue *q)
{
	if (!q->running)
		return;
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	q->running = false;
}

bool ledger_start(struct db_pool *p)
{
	pool = p;
	if (!queue_start(&reads))
		return false;
	if (queue_start(&loads))
		return true;
	queue_stop(&reads);
	return false;
}

/* Hands in over to q and waits for the batch that runs it. */
static enum rg_status in_batch(struct queue *q, const void *in, void *out, uint64_t *lsn,
			       struct db_error *err)
{
	struct wait w = {.in = in, .out = out, .err = err};
	pthread_cond_init(&w.cv, NULL);
	pthread_mutex_lock(&q->mu);
	if (!q->running || q->stopping) {
		pthread_mutex_unlock(&q->mu);
		pthread_cond_destroy(&w.cv);
		db_error_set(err, RG_UNAVAILABLE, NULL, "the disclosure ledger is stopping");
		return RG_UNAVAILABLE;
	}
	if (q->tail)
		q->tail->next = &w;
	else
		q->head = &w;
	q->tail = &w;
	atomic_fetch_add(&q->waiting, 1);
	pthread_cond_signal(&q->work);
	while (!w.done)
		pthread_cond_wait(&w.cv, &q->mu);
	atomic_fetch_sub(&q->waiting, 1);
	pthread_mutex_unlock(&q->mu);
	pthread_cond_destroy(&w.cv);
	*lsn = w.lsn;
	return w.st;
}

/* On the request's own transaction (its disclosures commit with it), or (the bench's control,
 * which records nothing) on a connection of its own: q's statement for one. */
static enum rg_status alone(struct queue *q, struct db_conn *tx, const void *in, void *out,
			    struct db_error *err)
{
	struct db_conn *c = tx;
	enum rg_status st = c ? RG_OK : db_acquire(pool, &c, err);
	size_t recorded = 0;
	if (st == RG_OK)
		st = q->run(c, in, 1, out, &recorded, err);
	if (c && c != tx)
		db_release(pool, c);
	if (st == RG_OK)
		atomic_fetch_add(&q->recorded, recorded);
	return st;
}

enum rg_status ledger_read(struct db_conn *tx, const struct db_content_read *in,
			   struct db_rows *out, bool *recorded, uint64_t *lsn,
			   struct db_error *err)
{
	*out = (struct db_rows){0};
	*lsn = 0;
	enum rg_status st = tx || !RECORDING ? alone(&reads, tx, in, out, err)
					     : in_batch(&reads, in, out, lsn, err);
	*recorded = st == RG_OK && delivers(out);
	return st;
}

enum rg_status ledger_deliver(struct db_conn *tx, const struct db_delivery *d, size_t *stale,
			      uint64_t *lsn, struct db_error *err)
{
	*stale = 0;
	*lsn = 0;
	return tx || !RECORDING ? alone(&loads, tx, d, stale, err)
				: in_batch(&loads, d, stale, lsn, err);
}

void ledger_stop(void)
{
	queue_stop(&reads);
	queue_stop(&loads);
}

void ledger_get_stats(struct ledger_stats *out)
{
	out->reads = atomic_load(&reads.recorded);
	out->read_commits = atomic_load(&reads.commits);
	out->loads = atomic_load(&loads.recorded);
	out->load_commits = atomic_load(&loads.commits);
	out->reads_waiting = atomic_load(&reads.waiting);
	out->loads_waiting = atomic_load(&loads.waiting);
}
