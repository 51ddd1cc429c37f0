#include "server/metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/standby.h"
#include "server/events.h"
#include "server/ledger.h"
#include "server/pipes.h"
#include "server/clients.h"
#include "server/conns.h"
#include "server/ratelimit.h"

#define N_METHODS 8
#define N_STATUS 24
#define N_BUCKETS 14

static const char *const methods[N_METHODS] = {"GET", "POST", "PUT", "PATCH", "DELETE",
					       "OPTIONS", "HEAD", "OTHER"};
static const double bounds[N_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
					 0.1,    0.25,  0.5,    1,     2.5,  5,    10};

struct slot {
	atomic_int status[N_STATUS];     /* 0 = free */
	atomic_ullong count[N_STATUS];
	atomic_ullong bucket[N_BUCKETS + 1];
	atomic_ullong sum_us;
};

static const char *const call_names[] = {"retrieve", "recall", "doctor"};
static const char *const outcome_names[] = {"ok",      "unavailable", "invalid",  "http_error",
					    "timeout", "unreachable", "oversize"};
#define N_CALLS (sizeof call_names / sizeof call_names[0])
#define N_OUTCOMES (sizeof outcome_names / sizeof outcome_names[0])
static atomic_ullong provider_calls[N_CALLS][N_OUTCOMES];

static struct {
	const char *const *names;
	size_t n_routes;
	struct slot *slots; /* (n_routes + 1) * N_METHODS */
	struct db_pool *pool;
	struct db_standbys *standbys; /* NULL: no RECALLGATE_READ_DATABASE_URL */
} m;

void metrics_init(const char *const *route_names, size_t n_routes, struct db_pool *pool,
		  struct db_standbys *standbys)
{
	m.names = route_names;
	m.n_routes = n_routes;
	m.pool = pool;
	m.standbys = standbys;
	m.slots = calloc((n_routes + 1) * N_METHODS, sizeof *m.slots);
}

void metrics_shutdown(void)
{
	free(m.slots);
	m.slots = NULL;
}

/* Each standby's state and the reads that went to the primary instead (docs/scaling.md). The
 * standby label is its host:port, as RECALLGATE_READ_DATABASE_URL names it. */
static void render_standbys(FILE *f)
{
	static const char *const why[DB_FALLBACK_KINDS] = {"none_usable", "unreachable",
							   "min_lsn"};
	size_t n = db_standbys_count(m.standbys);
	struct db_standby_stats st[DB_STANDBYS_MAX];
	for (size_t i = 0; i < n; i++)
		db_standbys_get(m.standbys, i, &st[i]);
	fputs("# HELP recallgate_standby_up 1 while the standby serves reads (reachable, in "
	      "recovery and not lagging past RECALLGATE_READ_MAX_LAG_MS).\n"
	      "# TYPE recallgate_standby_up gauge\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "recallgate_standby_up{standby=\"%s\"} %d\n", st[i].name, st[i].usable);
	fputs("# HELP recallgate_standby_lag_seconds How long ago the primary reached the oldest "
	      "WAL position the standby has not replayed (0: caught up; -1: not yet probed).\n"
	      "# TYPE recallgate_standby_lag_seconds gauge\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "recallgate_standby_lag_seconds{standby=\"%s\"} %.3f\n", st[i].name,
			st[i].lag_ms < 0 ? -1.0 : (double)st[i].lag_ms / 1000.0);
	fputs("# HELP recallgate_standby_reads_total Requests whose reads the standby served.\n"
	      "# TYPE recallgate_standby_reads_total counter\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "recallgate_standby_reads_total{standby=\"%s\"} %llu\n", st[i].name,
			(unsigned long long)st[i].reads);
	fputs("# HELP recallgate_standby_fallbacks_total Reads sent to the primary because no "
	      "standby could serve them, by reason.\n"
	      "# TYPE recallgate_standby_fallbacks_total counter\n", f);
	for (int k = 0; k < DB_FALLBACK_KINDS; k++)
		fprintf(f, "recallgate_standby_fallbacks_total{reason=\"%s\"} %llu\n", why[k],
			(unsigned long long)db_standbys_fallbacks(m.standbys, (enum db_fallback)k));
}

static size_t method_index(const char *method)
{
	for (size_t i = 0; i + 1 < N_METHODS; i++)
		if (strcmp(methods[i], method) == 0)
			return i;
	return N_METHODS - 1;
}

void metrics_observe(size_t route, const char *method, int status, double seconds)
{
	if (m.slots == NULL)
		return;
	if (route > m.n_routes)
		route = m.n_routes;
	struct slot *s = &m.slots[route * N_METHODS + method_index(method)];
	for (size_t i = 0; i < N_STATUS; i++) {
		int cur = atomic_load(&s->status[i]);
		if (cur == 0) {
			int expected = 0;
			if (!atomic_compare_exchange_strong(&s->status[i], &expected, status) &&
			    expected != status)
				continue;
			cur = status;
		}
		if (cur == status) {
			atomic_fetch_add(&s->count[i], 1);
			break;
		}
	}
	size_t b = 0;
	while (b < N_BUCKETS && seconds > bounds[b])
		b++;
	atomic_fetch_add(&s->bucket[b], 1);
	atomic_fetch_add(&s->sum_us, (unsigned long long)(seconds * 1e6));
}

static size_t name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return n;
}

void metrics_provider(const char *call, const char *outcome)
{
	size_t c = name_index(call_names, N_CALLS, call);
	size_t o = name_index(outcome_names, N_OUTCOMES, outcome);
	if (c < N_CALLS && o < N_OUTCOMES)
		atomic_fetch_add(&provider_calls[c][o], 1);
}

static const char *route_name(size_t r)
{
	return r < m.n_routes ? m.names[r] : "unmatched";
}

char *metrics_render(size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (f == NULL)
		return NULL;
	size_t nslots = (m.n_routes + 1) * N_METHODS;
	fputs("# HELP recallgate_http_requests_total HTTP requests by route template, method and status.\n"
	      "# TYPE recallgate_http_requests_total counter\n", f);
	for (size_t i = 0; m.slots && i < nslots; i++)
		for (size_t k = 0; k < N_STATUS; k++) {
			int st = atomic_load(&m.slots[i].status[k]);
			if (st == 0)
				break;
			fprintf(f, "recallgate_http_requests_total{route=\"%s\",method=\"%s\",status=\"%d\"} %llu\n",
				route_name(i / N_METHODS), methods[i % N_METHODS], st,
				atomic_load(&m.slots[i].count[k]));
		}
	fputs("# HELP recallgate_http_request_duration_seconds Request latency by route template and method.\n"
	      "# TYPE recallgate_http_request_duration_seconds histogram\n", f);
	for (size_t i = 0; m.slots && i < nslots; i++) {
		struct slot *s = &m.slots[i];
		unsigned long long cum = 0;
		if (atomic_load(&s->status[0]) == 0)
			continue;
		const char *r = route_name(i / N_METHODS), *meth = methods[i % N_METHODS];
		for (size_t b = 0; b <= N_BUCKETS; b++) {
			cum += atomic_load(&s->bucket[b]);
			if (b < N_BUCKETS)
				fprintf(f, "recallgate_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\",le=\"%g\"} %llu\n",
					r, meth, bounds[b], cum);
			else
				fprintf(f, "recallgate_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\",le=\"+Inf\"} %llu\n",
					r, meth, cum);
		}
		fprintf(f, "recallgate_http_request_duration_seconds_sum{route=\"%s\",method=\"%s\"} %.6f\n",
			r, meth, (double)atomic_load(&s->sum_us) / 1e6);
		fprintf(f, "recallgate_http_request_duration_seconds_count{route=\"%s\",method=\"%s\"} %llu\n",
			r, meth, cum);
	}
	struct db_pool_stats ps = {0};
	if (m.pool)
		db_pool_get_stats(m.pool, &ps);
	fprintf(f,
		"# HELP recallgate_db_pool_size Database connections in the pool.\n"
		"# TYPE recallgate_db_pool_size gauge\nrecallgate_db_pool_size %u\n"
		"# HELP recallgate_db_pool_in_use Database connections borrowed by requests.\n"
		"# TYPE recallgate_db_pool_in_use gauge\nrecallgate_db_pool_in_use %u\n"
		"# HELP recallgate_db_pool_waiting Requests waiting for a database connection.\n"
		"# TYPE recallgate_db_pool_waiting gauge\nrecallgate_db_pool_waiting %u\n"
		"# HELP recallgate_db_pool_acquire_timeouts_total Pool acquisitions that timed out.\n"
		"# TYPE recallgate_db_pool_acquire_timeouts_total counter\n"
		"recallgate_db_pool_acquire_timeouts_total %llu\n"
		"# HELP recallgate_db_statement_retries_total Statements run again after a "
		"serialization failure or a deadlock (at most 2 per statement).\n"
		"# TYPE recallgate_db_statement_retries_total counter\n"
		"recallgate_db_statement_retries_total %llu\n"
		"# HELP recallgate_provider_calls_total Outbound provider calls by outcome.\n"
		"# TYPE recallgate_provider_calls_total counter\n",
		ps.size, ps.in_use, ps.waiting, (unsigned long long)ps.acquire_timeouts,
		(unsigned long long)ps.statement_retries);
	for (size_t c = 0; c < N_CALLS; c++)
		for (size_t o = 0; o < N_OUTCOMES; o++)
			fprintf(f, "recallgate_provider_calls_total{call=\"%s\",outcome=\"%s\"} %llu\n",
				call_names[c], outcome_names[o],
				atomic_load(&provider_calls[c][o]));
	fprintf(f,
		"# HELP recallgate_http_header_timeouts_total Connections closed because a request's "
		"head did not arrive within its deadline (RECALLGATE_HEADER_TIMEOUT).\n"
		"# TYPE recallgate_http_header_timeouts_total counter\n"
		"recallgate_http_header_timeouts_total %llu\n"
		"# HELP recallgate_http_half_closed_total Connections shut down because their client "
		"ended its side in the middle of a request body (it could never complete).\n"
		"# TYPE recallgate_http_half_closed_total counter\n"
		"recallgate_http_half_closed_total %llu\n",
		conns_header_timeouts(), conns_half_closed());
	/* No token, tenant or address label: the counts are the instance's (privacy, bounded). */
	struct ratelimit_stats rs;
	ratelimit_get_stats(&rs);
	struct clients_stats cs;
	clients_get_stats(&cs);
	fprintf(f,
		"# HELP recallgate_client_limit_refused_total Requests refused 429 because their "
		"forwarded client had RECALLGATE_MAX_CLIENT_CONNECTIONS requests in flight.\n"
		"# TYPE recallgate_client_limit_refused_total counter\n"
		"recallgate_client_limit_refused_total %llu\n",
		cs.refused);
	fprintf(f,
		"# HELP recallgate_rate_limited_total Requests refused 429 rate_limited.\n"
		"# TYPE recallgate_rate_limited_total counter\nrecallgate_rate_limited_total %llu\n"
		"# HELP recallgate_rate_limit_evictions_total Rate-limit buckets dropped for another "
		"token before they were full (the table is too small for the tokens in use).\n"
		"# TYPE recallgate_rate_limit_evictions_total counter\n"
		"recallgate_rate_limit_evictions_total %llu\n",
		rs.refused, rs.evicted_partial);
	struct events_stats es;
	events_get_stats(&es);
	fprintf(f,
		"# HELP recallgate_event_streams Event streams (GET /v1/events) open.\n"
		"# TYPE recallgate_event_streams gauge\nrecallgate_event_streams %u\n"
		"# HELP recallgate_event_listener_up 1 while the event hub's database connection "
		"listens (token deletions by other instances are heard; the token cache is on).\n"
		"# TYPE recallgate_event_listener_up gauge\nrecallgate_event_listener_up %d\n"
		"# HELP recallgate_event_listener_connects_total Connections the event hub made.\n"
		"# TYPE recallgate_event_listener_connects_total counter\n"
		"recallgate_event_listener_connects_total %llu\n"
		"# HELP recallgate_events_sent_total Records sent to event streams.\n"
		"# TYPE recallgate_events_sent_total counter\nrecallgate_events_sent_total %llu\n"
		"# HELP recallgate_event_streams_closed_total Event streams closed by the server.\n"
		"# TYPE recallgate_event_streams_closed_total counter\n"
		"recallgate_event_streams_closed_total{reason=\"slow_reader\"} %llu\n"
		"recallgate_event_streams_closed_total{reason=\"token_deleted\"} %llu\n",
		es.open, es.listening ? 1 : 0, es.reconnects, es.sent, es.slow_closed,
		es.revoked_closed);
	struct pipes_stats pst;
	pipes_get_stats(&pst);
	fprintf(f,
		"# HELP recallgate_pipes_connected Pipelined database connections up.\n"
		"# TYPE recallgate_pipes_connected gauge\nrecallgate_pipes_connected %u\n"
		"# HELP recallgate_pipe_reads_waiting One-statement reads sent on a pipe whose "
		"answer is awaited.\n"
		"# TYPE recallgate_pipe_reads_waiting gauge\nrecallgate_pipe_reads_waiting %u\n"
		"# HELP recallgate_pipe_reads_total One-statement reads sent on a pipe.\n"
		"# TYPE recallgate_pipe_reads_total counter\nrecallgate_pipe_reads_total %llu\n",
		pst.connected, pst.waiting, pst.total);
	render_standbys(f);
	struct ledger_stats lst;
	ledger_get_stats(&lst);
	fprintf(f,
		"# HELP recallgate_content_disclosures_total Content reads recorded in the "
		"disclosure ledger.\n"
		"# TYPE recallgate_content_disclosures_total counter\n"
		"recallgate_content_disclosures_total %llu\n"
		"# HELP recallgate_content_disclosure_commits_total Statements (commits) that "
		"recorded them: concurrent reads share one.\n"
		"# TYPE recallgate_content_disclosure_commits_total counter\n"
		"recallgate_content_disclosure_commits_total %llu\n"
		"# HELP recallgate_context_loads_recorded_total Context loads recorded (their "
		"receipts and disclosures) in the ledger.\n"
		"# TYPE recallgate_context_loads_recorded_total counter\n"
		"recallgate_context_loads_recorded_total %llu\n"
		"# HELP recallgate_context_load_commits_total Statements (commits) that recorded "
		"them: concurrent loads share one.\n"
		"# TYPE recallgate_context_load_commits_total counter\n"
		"recallgate_context_load_commits_total %llu\n"
		"# HELP recallgate_ledger_waiting Requests waiting on the ledger: content reads "
		"and context loads handed over and not answered yet.\n"
		"# TYPE recallgate_ledger_waiting gauge\n"
		"recallgate_ledger_waiting{queue=\"reads\"} %u\n"
		"recallgate_ledger_waiting{queue=\"loads\"} %u\n",
		lst.reads, lst.read_commits, lst.loads, lst.load_commits, lst.reads_waiting,
		lst.loads_waiting);
	fclose(f);
	return buf;
}
