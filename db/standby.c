#define _GNU_SOURCE /* pthread_setname_np */
#include "db/standby.h"
#include "db/pg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/lsn.h"

/* The primary's WAL positions as the monitor saw them change, oldest first: long enough to
 * answer "what had the primary reached max_lag_ms ago" for RECALLGATE_READ_MAX_LAG_MS up to
 * the ring's span (512 probes: 51 s; a longer lag still counts as lagging). */
#define SAMPLES 512

struct sample {
	int64_t at_ms;
	uint64_t lsn;
};

struct standby {
	char name[72];
	char *conninfo;
	struct db_pool *pool;
	PGconn *probe; /* the monitor's own connection: a busy pool cannot blind it */
	atomic_bool usable;
	atomic_llong lag_ms;
	atomic_ullong replay_lsn;
	atomic_ullong reads;
};

struct db_standbys {
	size_t n;
	struct standby s[DB_STANDBYS_MAX];
	char *primary_url;
	PGconn *primary;
	unsigned max_lag_ms;
	struct sample ring[SAMPLES]; /* the monitor thread's alone */
	size_t head, count;
	atomic_uint next; /* round robin */
	atomic_ullong fallbacks[DB_FALLBACK_KINDS];
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- one conninfo per host ---- */

/* Item i of a comma-separated libpq list ("h1,h2"); a list of one applies to every host. */
static void list_item(const char *list, size_t i, char *out, size_t len)
{
	const char *p = list;
	size_t k = 0;
	if (strchr(list, ',') == NULL)
		i = 0;
	for (; k < i && p; k++) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	if (p == NULL) {
		out[0] = '\0';
		return;
	}
	size_t n = strcspn(p, ",");
	snprintf(out, len, "%.*s", (int)n, p);
}

static size_t list_len(const char *list)
{
	size_t n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

/* "key='value'" with libpq's quoting (\\ and \'), appended to buf. */
static bool append_kv(char *buf, size_t len, size_t *at, const char *key, const char *val)
{
	int n = snprintf(buf + *at, len - *at, "%s%s='", *at ? " " : "", key);
	if (n < 0 || (size_t)n >= len - *at)
		return false;
	*at += (size_t)n;
	for (const char *p = val; *p; p++) {
		if (*at + 3 >= len)
			return false;
		if (*p == '\\' || *p == '\'')
			buf[(*at)++] = '\\';
		buf[(*at)++] = *p;
	}
	if (*at + 2 >= len)
		return false;
	buf[(*at)++] = '\'';
	buf[*at] = '\0';
	return true;
}

/* The conninfo of host i of opts: every option as given, host, hostaddr and port reduced to
 * their i-th item; name gets "host:port". */
static char *conninfo_of(const PQconninfoOption *opts, size_t i, char *name, size_t namelen)
{
	size_t len = 4096, at = 0;
	char *buf = calloc(1, len);
	char item[256], host[201] = "", port[16] = "5432";
	if (buf == NULL)
		return NULL;
	for (const PQconninfoOption *o = opts; o->keyword; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		const char *v = o->val;
		bool per_host = strcmp(o->keyword, "host") == 0 ||
				strcmp(o->keyword, "hostaddr") == 0 || strcmp(o->keyword, "port") == 0;
		if (per_host) {
			list_item(o->val, i, item, sizeof item);
			v = item;
			if (strcmp(o->keyword, "port") == 0 && v[0])
				snprintf(port, sizeof port, "%.15s", v);
			else if (v[0] && (host[0] == '\0' || strcmp(o->keyword, "host") == 0))
				snprintf(host, sizeof host, "%.200s", v);
		}
		if (v[0] && !append_kv(buf, len, &at, o->keyword, v)) {
			free(buf);
			return NULL;
		}
	}
	snprintf(name, namelen, "%s:%s", host[0] ? host : "localhost", port);
	return buf;
}

/* The hosts a conninfo names: the longest of its host, hostaddr and port lists. */
static size_t hosts_of(const PQconninfoOption *opts)
{
	size_t n = 1;
	for (const PQconninfoOption *o = opts; o->keyword; o++) {
		bool per_host = strcmp(o->keyword, "host") == 0 ||
				strcmp(o->keyword, "hostaddr") == 0 || strcmp(o->keyword, "port") == 0;
		if (per_host && o->val && o->val[0] && list_len(o->val) > n)
			n = list_len(o->val);
	}
	return n;
}

/* ---- the monitor ---- */

/* One value of a one-row query on pg, or false (the connection is then dropped). */
static bool probe_query(PGconn **pg, const char *sql, char *out, size_t len, bool *flag)
{
	PGresult *res = PQexec(*pg, sql);
	bool ok = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		  !PQgetisnull(res, 0, 0);
	if (ok) {
		snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
		if (flag)
			*flag = PQnfields(res) > 1 && strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	}
	PQclear(res);
	if (!ok) {
		PQfinish(*pg);
		*pg = NULL;
	}
	return ok;
}

static bool probe_connect(PGconn **pg, const char *url)
{
	if (*pg && PQstatus(*pg) != CONNECTION_OK) {
		PQfinish(*pg);
		*pg = NULL;
	}
	if (*pg == NULL)
		*pg = db_connect(url, "recallgate monitor", 1000, NULL);
	return *pg != NULL;
}

/* The primary's position now, kept when it moved. */
static void sample_primary(struct db_standbys *s, int64_t at)
{
	char text[32];
	uint64_t lsn;
	if (!probe_connect(&s->primary, s->primary_url) ||
	    !probe_query(&s->primary, "SELECT pg_current_wal_lsn()::text", text, sizeof text,
			 NULL) ||
	    !core_lsn_parse(text, &lsn))
		return;
	size_t last = (s->head + s->count + SAMPLES - 1) % SAMPLES;
	if (s->count > 0 && s->ring[last].lsn == lsn)
		return;
	if (s->count > 0 && lsn < s->ring[last].lsn) { /* another primary (a failover): anew */
		s->count = 0;
		s->head = 0;
	}
	if (s->count == SAMPLES) {
		s->head = (s->head + 1) % SAMPLES;
		s->count--;
	}
	s->ring[(s->head + s->count) % SAMPLES] = (struct sample){at, lsn};
	s->count++;
}

/* How long ago the primary reached the oldest position past replay (0: none). */
static int64_t lag_of(const struct db_standbys *s, uint64_t replay, int64_t at)
{
	for (size_t k = 0; k < s->count; k++) {
		const struct sample *x = &s->ring[(s->head + k) % SAMPLES];
		if (x->lsn > replay)
			return at - x->at_ms;
	}
	return 0;
}

static void probe_standby(struct db_standbys *s, struct standby *sb, int64_t at)
{
	char text[32];
	bool recovering = false;
	uint64_t replay = 0;
	bool ok = probe_connect(&sb->probe, sb->conninfo) &&
		  probe_query(&sb->probe,
			      "SELECT coalesce(pg_last_wal_replay_lsn(), '0/0')::text, "
			      "pg_is_in_recovery()",
			      text, sizeof text, &recovering) &&
		  core_lsn_parse(text, &replay);
	/* a standby that was promoted is another primary: not ours to read from */
	ok = ok && recovering;
	if (!ok) {
		atomic_store(&sb->usable, false);
		return;
	}
	int64_t lag = lag_of(s, replay, at);
	atomic_store(&sb->replay_lsn, replay);
	atomic_store(&sb->lag_ms, lag);
	atomic_store(&sb->usable, lag <= (int64_t)s->max_lag_ms);
}

static void *monitor(void *arg)
{
	struct db_standbys *s = arg;
	pthread_setname_np(pthread_self(), "rg-standbys");
	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		pthread_mutex_unlock(&s->lock);
		int64_t at = now_ms();
		sample_primary(s, at);
		for (size_t i = 0; i < s->n; i++)
			probe_standby(s, &s->s[i], at);
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += DB_STANDBY_PROBE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&s->lock);
		if (!s->stopping)
			pthread_cond_timedwait(&s->wake, &s->lock, &until);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- open and close ---- */

enum rg_status db_standbys_open(const char *read_url, const char *primary_url,
				unsigned pool_size, unsigned acquire_timeout_ms,
				unsigned max_lag_ms, struct db_standbys **out)
{
	*out = NULL;
	PQconninfoOption *opts = PQconninfoParse(read_url, NULL);
	if (opts == NULL)
		return RG_INVALID;
	size_t n = hosts_of(opts);
	struct db_standbys *s = n <= DB_STANDBYS_MAX ? calloc(1, sizeof *s) : NULL;
	enum rg_status st = n <= DB_STANDBYS_MAX ? RG_NOMEM : RG_INVALID;
	if (s == NULL)
		goto out;
	s->max_lag_ms = max_lag_ms;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->primary_url = strdup(primary_url);
	if (s->primary_url == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct standby *sb = &s->s[i];
		atomic_store(&sb->lag_ms, -1);
		sb->conninfo = conninfo_of(opts, i, sb->name, sizeof sb->name);
		if (sb->conninfo == NULL)
			goto fail;
		s->n++;
		st = db_pool_open(sb->conninfo, pool_size, acquire_timeout_ms, &sb->pool);
		if (st != RG_OK)
			goto fail;
	}
	st = RG_ERROR;
	if (pthread_create(&s->thread, NULL, monitor, s) != 0)
		goto fail;
	s->started = true;
	*out = s;
	st = RG_OK;
	goto out;
fail:
	db_standbys_close(s);
out:
	PQconninfoFree(opts);
	return st;
}

void db_standbys_close(struct db_standbys *s)
{
	if (s == NULL)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->s[i].pool)
			db_pool_close(s->s[i].pool);
		PQfinish(s->s[i].probe);
		free(s->s[i].conninfo);
	}
	PQfinish(s->primary);
	free(s->primary_url);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void db_standbys_cancel_busy(struct db_standbys *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		db_pool_cancel_busy(s->s[i].pool);
}

/* ---- reads ---- */

static const struct db_stmt replay_stmt = {
	.name = "standby_replay_lsn",
	.sql = "SELECT coalesce(pg_last_wal_replay_lsn(), '0/0')::text",
	.nparams = 0,
};

static const struct db_stmt insert_lsn_stmt = {
	.name = "primary_insert_lsn",
	.sql = "SELECT pg_current_wal_insert_lsn()::text",
	.nparams = 0,
};

/* The position of lsn_stmt on c. */
static enum rg_status lsn_on(struct db_conn *c, const struct db_stmt *stmt, uint64_t *lsn,
			     struct db_error *err)
{
	PGresult *res = NULL;
	enum rg_status st = db_exec(c, stmt, NULL, &res, err);
	if (st == RG_OK && (PQntuples(res) != 1 || !core_lsn_parse(db_text(res, 0, 0), lsn))) {
		db_error_set(err, RG_ERROR, "", "no WAL position in the answer");
		st = RG_ERROR;
	}
	PQclear(res);
	return st;
}

/* Whether c's standby replays min_lsn within DB_MIN_LSN_WAIT_MS (asked every few ms). */
static bool wait_replayed(struct standby *sb, struct db_conn *c, uint64_t min_lsn)
{
	int64_t until = now_ms() + DB_MIN_LSN_WAIT_MS;
	for (;;) {
		uint64_t replay = 0;
		if (lsn_on(c, &replay_stmt, &replay, NULL) != RG_OK)
			return false;
		if (replay >= min_lsn) {
			unsigned long long seen = atomic_load(&sb->replay_lsn);
			while (replay > seen &&
			       !atomic_compare_exchange_weak(&sb->replay_lsn, &seen, replay))
				;
			return true;
		}
		if (now_ms() >= until)
			return false;
		nanosleep(&(struct timespec){.tv_nsec = 3 * 1000000L}, NULL);
	}
}

/* The next usable standby after the last one chosen, or NULL. */
static struct standby *pick(struct db_standbys *s)
{
	unsigned start = atomic_fetch_add(&s->next, 1);
	for (size_t k = 0; k < s->n; k++) {
		struct standby *sb = &s->s[(start + k) % s->n];
		if (atomic_load(&sb->usable))
			return sb;
	}
	return NULL;
}

enum rg_status db_read_acquire(struct db_standbys *s, struct db_pool *primary,
			       uint64_t min_lsn, struct db_pool **pool_out, struct db_conn **out,
			       struct db_error *err)
{
	struct standby *sb = s ? pick(s) : NULL;
	enum db_fallback why = DB_FALLBACK_NONE_USABLE;
	if (sb != NULL) {
		why = DB_FALLBACK_UNREACHABLE;
		if (db_acquire(sb->pool, out, NULL) == RG_OK) {
			why = DB_FALLBACK_MIN_LSN;
			if (min_lsn <= atomic_load(&sb->replay_lsn) ||
			    wait_replayed(sb, *out, min_lsn)) {
				atomic_fetch_add(&sb->reads, 1);
				*pool_out = sb->pool;
				return RG_OK;
			}
			db_release(sb->pool, *out);
		}
	}
	if (s != NULL)
		atomic_fetch_add(&s->fallbacks[why], 1);
	*pool_out = primary;
	return db_acquire(primary, out, err);
}

enum rg_status db_commit_lsn(struct db_pool *primary, uint64_t *lsn, struct db_error *err)
{
	struct db_conn *c;
	enum rg_status st = db_acquire(primary, &c, err);
	if (st != RG_OK)
		return st;
	st = lsn_on(c, &insert_lsn_stmt, lsn, err);
	db_release(primary, c);
	return st;
}


/* ---- what the metrics and the pipe see ---- */

size_t db_standbys_count(const struct db_standbys *s)
{
	return s ? s->n : 0;
}

void db_standbys_get(struct db_standbys *s, size_t i, struct db_standby_stats *out)
{
	struct standby *sb = &s->s[i];
	snprintf(out->name, sizeof out->name, "%s", sb->name);
	out->usable = atomic_load(&sb->usable);
	out->lag_ms = atomic_load(&sb->lag_ms);
	out->reads = atomic_load(&sb->reads);
}

uint64_t db_standbys_fallbacks(struct db_standbys *s, enum db_fallback why)
{
	return s ? atomic_load(&s->fallbacks[why]) : 0;
}

bool db_standby_ready(struct db_standbys *s, size_t i, uint64_t min_lsn)
{
	struct standby *sb = &s->s[i];
	return atomic_load(&sb->usable) && min_lsn <= atomic_load(&sb->replay_lsn);
}

void db_standby_served(struct db_standbys *s, size_t i)
{
	atomic_fetch_add(&s->s[i].reads, 1);
}

const char *db_standby_conninfo(const struct db_standbys *s, size_t i)
{
	return s->s[i].conninfo;
}
