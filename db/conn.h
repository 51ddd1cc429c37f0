/* The pool's connection and the pool itself, for db/pool.c (borrowing, connecting) and
 * db/exec.c (running statements on a connection) only. */
#ifndef RG_DB_CONN_H
#define RG_DB_CONN_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "db/pg.h"

#define RG_MAX_PREPARED 256

struct db_conn {
	PGconn *pg;
	PGcancel *cancel;      /* pg's cancel key; swapped under the pool's cancel_lock */
	struct db_pool *pool;
	bool broken;
	bool isolate;          /* db_tx_isolate: each statement runs under a savepoint */
	int64_t idle_since_ms; /* when it was last returned */
	size_t nprepared;
	const struct db_stmt *prepared[RG_MAX_PREPARED];
	/* db_conn_track_commits, until db_release: the position after the latest commit */
	bool track_commits;
	bool lsn_prepared; /* its query is prepared on pg */
	bool lsn_unknown;  /* the latest tracked commit's position could not be read */
	uint64_t commit_lsn;
};

#define POOL_WORDS 4 /* bitmap words: up to 256 connections */

/* Free connections are counted by a semaphore and found in an atomic bitmap: borrowing
 * and returning take no lock, and a thread sleeps (futex) only when every connection is
 * out. glibc's sem_post makes no system call when nobody waits. */
struct db_pool {
	char *url;
	unsigned size;
	unsigned acquire_timeout_ms;
	sem_t free_count;
	atomic_ullong free_bits[POOL_WORDS]; /* bit i set = conns[i] is free */
	atomic_uint in_use;
	atomic_uint waiting;
	atomic_ullong timeouts;
	atomic_ullong retries;
	atomic_bool cancelling; /* db_pool_cancel_busy was called */
	pthread_mutex_t cancel_lock;
	struct db_conn *conns;
};

#endif
