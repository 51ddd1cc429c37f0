/* Private to server/events.c (the hub) and server/event_streams.c (the streams): the
 * shared state and the stream, see events.h. Nothing else includes this. */
#ifndef RG_SERVER_EVENTS_INTERNAL_H
#define RG_SERVER_EVENTS_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "db/events.h"
#include "server/quota.h"

#define MAX_PENDING 64 /* horizons waiting for release */
#define CATCHUP_LOW (64 * 1024) /* a catching-up stream reads more below this many bytes */

enum stream_end {
	END_NONE = 0,
	END_CLEAN, /* what is queued goes out, then the chunked body ends */
	END_ABORT, /* the connection is closed (a slow reader's unsent backlog is dropped) */
};

struct stream {
	pthread_mutex_t mu; /* buf, off, len, cap, suspended, end */
	atomic_int refs;    /* the response's and the hub's */
	atomic_bool dead;   /* the response is gone */
	atomic_bool hungry; /* catching up and drained by the reader: the hub should read more */
	struct MHD_Connection *conn;
	int fd; /* a dup of the connection's socket, watched by the hub for the client's close;
		 * the hub's own, so its epoll entry cannot outlive the stream or name another */
	char tenant_id[RG_MAX_ID_BYTES + 1];
	char token_id[RG_MAX_ID_BYTES + 1];
	char resource_type[40];
	char resource_id[260];
	/* the hub's */
	long long pos;            /* every record with seq ≤ pos has been considered */
	bool live;                /* pos ≥ the live mark: fed by the live reads */
	bool token_checked;       /* its token was seen undeleted while the hub listened */
	long long last_write_ms;
	struct stream *next;
	/* the mutex's */
	char *buf;
	size_t off, len, cap;
	bool suspended;
	atomic_int end; /* enum stream_end: written under mu, read anywhere */
};

struct pending {
	long long h;
	uint64_t x;
	long long taken_ms; /* mono_ms() when sampled */
};

struct event_hub {
	pthread_t thread;
	bool started;
	char url[2048];
	unsigned max;
	struct quota *per_tenant; /* streams open per tenant (RECALLGATE_MAX_STREAMS_PER_TENANT) */
	int wake_fd;
	int epoll_fd;             /* wake_fd, the database socket, each stream's socket */
	pthread_mutex_t mu;       /* incoming, and the stream list's links (events_drain walks it) */
	struct stream *incoming;  /* responses made, not yet adopted by the hub */
	atomic_uint open;
	atomic_bool draining, stop, listening, local_commit;
	atomic_ullong sent, slow_closed, revoked_closed, reconnects;
	/* the hub thread's (streams: linked and unlinked under mu) */
	struct stream *streams;
	struct db_events *ev;
	struct pending pend[MAX_PENDING];
	size_t npend;
	long long seen;    /* the newest seq sampled (-1: sample whatever the sequence says) */
	long long notified; /* the newest seq this hub woke the other instances for */
	long long mark;    /* live mark: records ≤ mark are final and went to every live stream */
	bool mark_known;
	long long writers_checked_ms; /* the last call that asked who holds pend[0] back */
};
extern struct event_hub events_hub;

/* Wakes the hub thread; any thread, never blocks. */
void events_wake(void);
/* Drops a reference; the last one frees the stream (and closes its dup'd socket). */
void stream_unref(struct stream *s);
/* Queues n bytes for the client (past the backlog limit the stream is aborted instead) and
 * resumes the connection if its reader suspended it. */
void stream_append(struct stream *s, const char *data, size_t n);
/* Ends the stream (drop_queued: what is queued is not sent either). */
void stream_end(struct stream *s, enum stream_end how, bool drop_queued);
/* Bytes queued and not yet handed to libmicrohttpd. */
size_t stream_queued(struct stream *s);

#endif
