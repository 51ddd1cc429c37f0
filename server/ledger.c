/* The group commit of content-read disclosures (server/ledger.h). */
#include "server/ledger.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/lsn.h"
#include "db/disclosures.h"
#include "db/standby.h"
#include "server/log.h"
#include "server/request.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a request was handed over, or stopping */
	struct request *head, *tail;
	bool running, stopping;
	pthread_t thread;
	struct db_pool *pool;
	atomic_ullong recorded, batches;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

/* Sends r's answer, or 503 in its place when its disclosure was not committed. A committed
 * one carries the commit's LSN (lsn, "" when it could not be read: the disclosure stands),
 * the only one it has: this commit comes after any write of its own request (dispatch asks
 * for none when the ledger will). */
static void finish(struct request *r, enum rg_status st, const struct db_error *err,
		   const char *lsn)
{
	if (st == RG_OK && lsn[0] && r->resp && r->status >= 200 && r->status <= 299)
		MHD_add_response_header(r->resp, H_COMMIT_LSN_HEADER, lsn);
	if (st != RG_OK) {
		if (r->resp)
			MHD_destroy_response(r->resp);
		r->resp = NULL;
		r->dberr = *err;
		r->retry_after_s = 1;
		(void)reply_problem(r, PROBLEM_DATABASE_UNAVAILABLE, NULL, NULL, -1, NULL);
	}
	r->lane_done = true;
	MHD_resume_connection(r->conn);
}

/* Writes one batch (n requests from first) and resumes them. */
static void write_batch(struct request *first, size_t n)
{
	static struct db_content_read reads[LEDGER_BATCH_MAX]; /* the writer thread's alone */
	struct request *r = first;
	for (size_t i = 0; i < n; i++, r = r->ledger_next) {
		reads[i] = (struct db_content_read){
			.tenant_id = r->who.tenant_id,
			.record_id = r->disclosure.record_id,
			.record_kind = r->disclosure.record_kind,
			.revision = r->disclosure.revision,
			.delivered_hash = r->disclosure.delivered_hash,
			.token_id = r->who.token_id,
			.via = r->disclosure.via,
			.request_id = r->request_id,
		};
	}
	struct db_conn *c = NULL;
	struct db_error err = {0};
	char lsn_text[RG_LSN_SIZE] = "";
	uint64_t lsn;
	enum rg_status st = db_acquire(L.pool, &c, &err);
	if (st == RG_OK)
		st = db_content_reads_record(c, reads, n, &err);
	/* One question for the whole batch: its commit is past every disclosure in it. */
	if (st == RG_OK) {
		struct db_error lsn_err = {0};
		if (db_commit_lsn_on(c, &lsn, &lsn_err) == RG_OK)
			core_lsn_format(lsn, lsn_text);
		else
			log_warn(NULL, "no commit LSN for %zu recorded content read(s): %s", n,
				 lsn_err.message);
	}
	if (c)
		db_release(L.pool, c);
	if (st == RG_OK) {
		atomic_fetch_add(&L.recorded, n);
		atomic_fetch_add(&L.batches, 1);
	} else {
		log_warn(NULL, "%zu content disclosure(s) not recorded; answered 503", n);
	}
	r = first;
	for (size_t i = 0; i < n; i++) {
		struct request *next = r->ledger_next; /* r may be gone once resumed */
		r->ledger_next = NULL;
		finish(r, st, &err, lsn_text);
		r = next;
	}
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
		struct request *first = L.head, *last = first;
		size_t n = 1;
		while (last->ledger_next && n < LEDGER_BATCH_MAX) {
			last = last->ledger_next;
			n++;
		}
		L.head = last->ledger_next;
		if (L.head == NULL)
			L.tail = NULL;
		last->ledger_next = NULL;
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

void ledger_submit(struct request *r)
{
	pthread_mutex_lock(&L.mu);
	if (!L.running || L.stopping) {
		pthread_mutex_unlock(&L.mu);
		struct db_error err = {0};
		db_error_set(&err, RG_UNAVAILABLE, NULL, "the disclosure ledger is stopping");
		finish(r, RG_UNAVAILABLE, &err, "");
		return;
	}
	r->ledger_next = NULL;
	if (L.tail)
		L.tail->ledger_next = r;
	else
		L.head = r;
	L.tail = r;
	pthread_cond_signal(&L.work);
	pthread_mutex_unlock(&L.mu);
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
