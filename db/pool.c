/* sem_clockwait (glibc ≥ 2.30): a monotonic deadline for the acquire timeout. */
#define _GNU_SOURCE
#include "db/conn.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libpq's messages end with a newline and may hold tabs: an error line must stay one line.
 * Control characters become spaces, runs of spaces one, and trailing spaces go. */
static void one_line(char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++) {
		char c = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
		if (c != ' ' || (n > 0 && s[n - 1] != ' '))
			s[n++] = c;
	}
	while (n > 0 && s[n - 1] == ' ')
		n--;
	s[n] = '\0';
}

void db_error_set(struct db_error *err, enum rg_status st, const char *sqlstate,
		  const char *msg)
{
	if (err == NULL)
		return;
	err->status = st;
	err->pool_busy = false;
	err->shutting_down = false;
	snprintf(err->sqlstate, sizeof err->sqlstate, "%s", sqlstate ? sqlstate : "");
	snprintf(err->message, sizeof err->message, "%s", msg ? msg : "");
	one_line(err->message);
}

/* A quoted part of a libpq parse error that cannot be private: one punctuation character
 * (its syntax: "=", "]") or the name of a connection option ("dbname"). */
static bool quote_is_public(const char *q, size_t n, const PQconninfoOption *keywords)
{
	if (n == 1 && strchr("=]@:/?&'\\", *q) != NULL)
		return true;
	for (const PQconninfoOption *k = keywords; k && k->keyword; k++)
		if (strlen(k->keyword) == n && memcmp(k->keyword, q, n) == 0)
			return true;
	return false;
}

bool db_conninfo_check(const char *url, char *why, size_t whylen)
{
	char *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &msg);
	if (opts != NULL) {
		PQconninfoFree(opts);
		return true;
	}
	PQconninfoOption *keywords = PQconndefaults();
	const char *p = msg ? msg : "out of memory";
	size_t n = 0;
	while (*p && n + 1 < whylen) {
		const char *close = *p == '"' ? strchr(p + 1, '"') : NULL;
		if (close == NULL) {
			why[n++] = *p++;
			continue;
		}
		size_t qn = (size_t)(close - p - 1);
		bool show = quote_is_public(p + 1, qn, keywords);
		const char *text = show ? p + 1 : "\xe2\x80\xa6"; /* "…" */
		size_t tn = show ? qn : 3;
		if (n + tn + 3 >= whylen)
			break;
		why[n++] = '"';
		memcpy(why + n, text, tn);
		n += tn;
		why[n++] = '"';
		p = close + 1;
	}
	why[n] = '\0';
	one_line(why);
	PQconninfoFree(keywords);
	PQfreemem(msg);
	return false;
}

enum rg_status db_pool_open(const char *url, unsigned size, unsigned acquire_timeout_ms,
			    struct db_pool **out)
{
	if (size == 0 || size > POOL_WORDS * 64)
		return RG_INVALID;
	struct db_pool *p = calloc(1, sizeof *p);
	if (p == NULL)
		return RG_NOMEM;
	p->conns = calloc(size, sizeof *p->conns);
	p->url = strdup(url);
	if (p->conns == NULL || p->url == NULL || sem_init(&p->free_count, 0, size) != 0) {
		free(p->conns);
		free(p->url);
		free(p);
		return RG_NOMEM;
	}
	p->size = size;
	p->acquire_timeout_ms = acquire_timeout_ms;
	pthread_mutex_init(&p->cancel_lock, NULL);
	for (unsigned i = 0; i < size; i++) {
		p->conns[i].pool = p;
		atomic_fetch_or(&p->free_bits[i / 64], 1ull << (i % 64));
	}
	*out = p;
	return RG_OK;
}

void db_pool_close(struct db_pool *p)
{
	if (p == NULL)
		return;
	for (unsigned i = 0; i < p->size; i++) {
		PQfreeCancel(p->conns[i].cancel);
		if (p->conns[i].pg)
			PQfinish(p->conns[i].pg);
	}
	pthread_mutex_destroy(&p->cancel_lock);
	sem_destroy(&p->free_count);
	free(p->conns);
	free(p->url);
	free(p);
}

void db_pool_get_stats(struct db_pool *p, struct db_pool_stats *out)
{
	out->size = p->size;
	out->in_use = atomic_load(&p->in_use);
	out->waiting = atomic_load(&p->waiting);
	out->acquire_timeouts = atomic_load(&p->timeouts);
	out->statement_retries = atomic_load(&p->retries);
}

bool db_error_is_pool_busy(const struct db_error *err)
{
	return err->pool_busy;
}

void db_pool_count_acquire_timeout(struct db_pool *p)
{
	atomic_fetch_add(&p->timeouts, 1);
}

/* Server notices ("relation already exists, skipping") are not errors and not ours to print. */
static void ignore_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

PGconn *db_connect(const char *url, const char *application_name, unsigned statement_timeout_ms,
		   struct db_error *err)
{
	/* Every statement is bounded so that a stuck lock cannot hold a request (and the
	 * shutdown drain) beyond its budget; 57014 then answers 504 query_timeout. Keepalives and
	 * tcp_user_timeout (unacknowledged data) notice a database host that vanished without
	 * closing the connection, which the statement timeout cannot: a request must not wait
	 * out TCP's minutes of retries. The URL's own settings win over these defaults (later
	 * keywords override). */
	static const char *const keys[] = {"connect_timeout", "application_name", "options",
					   "keepalives_idle", "keepalives_interval",
					   "keepalives_count", "tcp_user_timeout", "dbname", NULL};
	char options[96];
	snprintf(options, sizeof options,
		 "-c statement_timeout=%u -c idle_in_transaction_session_timeout=10000",
		 statement_timeout_ms);
	const char *vals[] = {"3", application_name, options, "10", "5", "2", "10000", url, NULL};
	PGconn *pg = PQconnectdbParams(keys, vals, 1);
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK) {
		db_error_set(err, RG_UNAVAILABLE, "08006", pg ? PQerrorMessage(pg) : "out of memory");
		PQfinish(pg);
		return NULL;
	}
	PQsetNoticeProcessor(pg, ignore_notice, NULL);
	return pg;
}

/* The cancel key of c (with pg: a new connection's, or NULL: none). */
static void set_cancel(struct db_pool *p, struct db_conn *c, PGconn *pg)
{
	PGcancel *key = pg ? PQgetCancel(pg) : NULL;
	pthread_mutex_lock(&p->cancel_lock);
	PGcancel *old = c->cancel;
	c->cancel = key;
	pthread_mutex_unlock(&p->cancel_lock);
	PQfreeCancel(old);
}

/* (Re)connects c. */
static bool connect_conn(struct db_pool *p, struct db_conn *c, struct db_error *err)
{
	if (c->pg)
		PQfinish(c->pg);
	c->nprepared = 0;
	c->lsn_prepared = false;
	c->pg = db_connect(p->url, "recallgate", DB_STATEMENT_TIMEOUT_MS, err);
	c->broken = c->pg == NULL;
	set_cancel(p, c, c->pg);
	return c->pg != NULL;
}

void db_pool_cancel_busy(struct db_pool *p)
{
	atomic_store(&p->cancelling, true);
	pthread_mutex_lock(&p->cancel_lock);
	for (unsigned i = 0; i < p->size; i++) {
		bool borrowed = !(atomic_load(&p->free_bits[i / 64]) & (1ull << (i % 64)));
		char why[256];
		if (borrowed && p->conns[i].cancel)
			(void)PQcancel(p->conns[i].cancel, why, sizeof why);
	}
	pthread_mutex_unlock(&p->cancel_lock);
}

#define IDLE_CHECK_MS 50

/* A cheap clock (no system call through the vDSO, a few ms of resolution). */
static int64_t coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the semaphore until the acquire timeout. */
static bool take_ticket(struct db_pool *p)
{
	struct timespec deadline;
	if (sem_trywait(&p->free_count) == 0)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += p->acquire_timeout_ms / 1000;
	deadline.tv_nsec += (long)(p->acquire_timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	atomic_fetch_add(&p->waiting, 1);
	int rc;
	while ((rc = sem_clockwait(&p->free_count, CLOCK_MONOTONIC, &deadline)) != 0 &&
	       errno == EINTR)
		;
	atomic_fetch_sub(&p->waiting, 1);
	if (rc != 0)
		atomic_fetch_add(&p->timeouts, 1);
	return rc == 0;
}

/* Claims one free bit; the ticket guarantees there is one. */
static struct db_conn *claim(struct db_pool *p)
{
	for (;;) {
		for (unsigned w = 0; w < POOL_WORDS; w++) {
			unsigned long long bits = atomic_load(&p->free_bits[w]);
			while (bits) {
				unsigned bit = (unsigned)__builtin_ctzll(bits);
				if (atomic_compare_exchange_weak(&p->free_bits[w], &bits,
								 bits & ~(1ull << bit)))
					return &p->conns[w * 64 + bit];
			}
		}
	}
}

enum rg_status db_acquire(struct db_pool *p, struct db_conn **out, struct db_error *err)
{
	if (!take_ticket(p)) {
		db_error_set(err, RG_UNAVAILABLE, "", "connection pool exhausted");
		if (err)
			err->pool_busy = true;
		return RG_UNAVAILABLE;
	}
	struct db_conn *c = claim(p);
	atomic_fetch_add(&p->in_use, 1);

	/* An idle connection has nothing to read (we never LISTEN): anything readable is the
	 * server's goodbye after a restart or termination. Noticing it here, without blocking,
	 * spares the request a failed first statement. A connection that was busy a moment ago
	 * is not checked: under load that saves a system call per request. */
	if (c->pg && !c->broken && coarse_ms() - c->idle_since_ms > IDLE_CHECK_MS) {
		struct pollfd pfd = {.fd = PQsocket(c->pg), .events = POLLIN};
		if (pfd.fd < 0 || poll(&pfd, 1, 0) != 0)
			c->broken = true;
	}
	if (c->pg == NULL || c->broken || PQstatus(c->pg) != CONNECTION_OK) {
		if (!connect_conn(p, c, err)) {
			db_release(p, c);
			return RG_UNAVAILABLE;
		}
	}
	*out = c;
	return RG_OK;
}

void db_release(struct db_pool *p, struct db_conn *c)
{
	if (c == NULL)
		return;
	/* A connection left inside a transaction (a failed multi-statement path) is rolled back
	 * now, so that its locks go with it (an Idempotency-Key's would say "in flight"), and is
	 * replaced at its next acquire. */
	if (c->pg && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
		PQclear(PQexec(c->pg, "ROLLBACK"));
		c->broken = true;
	}
	c->isolate = false;
	c->track_commits = c->lsn_unknown = false;
	c->commit_lsn = 0;
	size_t i = (size_t)(c - p->conns);
	c->idle_since_ms = coarse_ms();
	atomic_fetch_sub(&p->in_use, 1);
	atomic_fetch_or(&p->free_bits[i / 64], 1ull << (i % 64));
	sem_post(&p->free_count);
}

/* SQLSTATE → status, in one place (Taler's HARD / SOFT / NO_ROWS idea). */
enum rg_status db_error_from(PGconn *pg, const PGresult *res, struct db_error *err)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	/* The log must not carry request values, and PostgreSQL's messages can quote them
	 * ("invalid input syntax for type bigint: \"...\""). Connection, resource and internal
	 * failures (classes 08, 53, 57, XX) say nothing of the request and are kept; for the
	 * rest only the names of the constraint, table and column go to the operator. */
	char names[200];
	const char *msg;
	if (state == NULL || strncmp(state, "08", 2) == 0 || strncmp(state, "53", 2) == 0 ||
	    strncmp(state, "57", 2) == 0 || strncmp(state, "XX", 2) == 0) {
		msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
		if (msg == NULL)
			msg = PQerrorMessage(pg);
	} else {
		const char *constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
		const char *table = PQresultErrorField(res, PG_DIAG_TABLE_NAME);
		const char *column = PQresultErrorField(res, PG_DIAG_COLUMN_NAME);
		snprintf(names, sizeof names, "constraint=%s table=%s column=%s",
			 constraint ? constraint : "-", table ? table : "-", column ? column : "-");
		msg = names;
	}
	enum rg_status st = RG_ERROR;
	if (PQstatus(pg) != CONNECTION_OK || state == NULL || strncmp(state, "08", 2) == 0 ||
	    strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 ||
	    strcmp(state, "57P03") == 0 || strcmp(state, "25006") == 0) {
		/* 25006: a write reached a read-only server, i.e. DATABASE_URL led to a standby (a
		 * demoted primary after a failover, or a wrong URL). The connection is replaced,
		 * and libpq's target_session_attrs=read-write finds the primary again. */
		st = RG_UNAVAILABLE;
	} else if (strcmp(state, "57014") == 0) {
		/* statement_timeout (or a cancel): the connection is fine and the database is up;
		 * reporting it as unavailable would send operators after an outage that is not
		 * there and let a gateway pull a healthy instance. */
		st = RG_TIMEOUT;
	} else if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
		st = RG_RETRY;
	} else if (strcmp(state, "23505") == 0) {
		st = RG_CONFLICT;
	}
	db_error_set(err, st, state, msg);
	return st;
}

/* A PostgreSQL array literal (db/db.h). */
char *db_array_literal(const char *const *items, size_t n)
{
	size_t len = 3;
	for (size_t i = 0; i < n; i++)
		len += items[i] ? 2 * strlen(items[i]) + 3 : 5; /* every byte escaped, or NULL */
	char *out = malloc(len);
	if (out == NULL)
		return NULL;
	char *p = out;
	*p++ = '{';
	for (size_t i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		if (items[i] == NULL) {
			memcpy(p, "NULL", 4);
			p += 4;
			continue;
		}
		*p++ = '"';
		for (const char *s = items[i]; *s; s++) {
			if (*s == '"' || *s == '\\')
				*p++ = '\\';
			*p++ = *s;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return out;
}
