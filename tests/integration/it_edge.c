/*
 * it_edge — the production edge (issue 10, openapi/openapi.yaml "HTTP framing and the edge",
 * DESIGN.md "Concurrency"): blocking work runs on lanes behind epoll I/O threads, so
 *   - 300 provider calls hung at a provider hold no worker: /healthz and a database GET are
 *     answered while every one of them is still waiting;
 *   - readiness reports the database, not a busy pool;
 *   - behind a gateway, one forwarded client's requests in flight are limited;
 *   - a drain answers every committed write: a ledger of acknowledged writes from kept-alive
 *     clients matches the database after SIGTERM, every answer from then on closes its
 *     connection, /readyz says shutting_down, and the process exits 0 within its drain;
 *   - a provider call in flight is cut by the drain and fails open.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>

#include "fake.h"
#include "harness.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define HUNG_CALLS 300
#define WRITERS 8

static struct it_fake fake;     /* FAKE_SLOW_MS = IT_FAKE_SLOW_MS */
static struct it_fake slowfake; /* FAKE_SLOW_MS = 30 s: a provider that hangs past any drain */
static char *tenant, *admin;

static int group_setup(void **state)
{
	(void)state;
	const char *env[] = {"FAKE_SLOW_MS=" STR(IT_FAKE_SLOW_MS), NULL};
	const char *hang[] = {"FAKE_SLOW_MS=30000", NULL};
	if (it_fake_start(&fake, env) != 0 || it_fake_start(&slowfake, hang) != 0)
		return -1;
	tenant = it_unique("edge");
	admin = it_token(tenant, "admin", "it-edge");
	return admin ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	int a = it_fake_stop(&fake), b = it_fake_stop(&slowfake);
	free(admin);
	free(tenant);
	return a == 0 && b == 0 ? 0 : -1;
}

static json_t *retrieve_body(const char *ext, int timeout_seconds)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s}", "extension_id", ext,
			 "namespace", "it-edge", "scope_ref", "edge-scope", "query", "edge query",
			 "query_summary", "edge check", "max_results", 3, "timeout_seconds",
			 timeout_seconds, "observed_at", "2026-11-29T21:07:22.123Z");
}

/* ================================================================ hung providers */

static void test_hung_providers_hold_no_worker(void **state)
{
	(void)state;
	/* Two workers: before the lanes, any two hung calls took every one of them. Behind a
	 * gateway (RECALLGATE_TRUST_PROXY=1) all 300 come from one address, as here. */
	const char *env[] = {"RECALLGATE_DB_POOL=2", "RECALLGATE_TRUST_PROXY=1", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	it_provider_ready(&s, admin, &fake, "edge-slow", "dc", "slow", 20);

	static struct it_hung_call calls[HUNG_CALLS];
	static struct it_hung hung = {.calls = calls, .n = HUNG_CALLS};
	json_t *body = retrieve_body("edge-slow", 20);
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	for (int i = 0; i < HUNG_CALLS; i++)
		calls[i] = (struct it_hung_call){.s = &s, .path = "/v1/decision-context/retrieve",
						 .token = admin, .body = text};
	long at_provider = it_hung_start(&hung, &fake, "dc", "slow");

	struct it_resp h, m;
	it_request(&s, "GET", "/healthz", NULL, NULL, NULL, &h);
	it_request(&s, "GET", "/v1/threads/edge-t/memory-mode", admin, NULL, NULL, &m);
	int done_when_answered = atomic_load(&hung.done);
	IT_CHECK(at_provider == HUNG_CALLS, "only %ld of %d calls reached the provider", at_provider,
		 HUNG_CALLS);
	IT_STATUS(&h, 200);
	IT_STATUS(&m, 200);
	IT_CHECK(done_when_answered == 0,
		 "%d provider calls had finished before /healthz and the GET were answered",
		 done_when_answered);
	it_resp_free(&h);
	it_resp_free(&m);

	it_hung_join(&hung);
	free(text);
	for (int i = 0; i < HUNG_CALLS; i++) {
		IT_STATUS(&calls[i].resp, 200);
		const json_t *rc = json_object_get(calls[i].resp.json, "receipt");
		IT_CHECK(it_json_str_is(rc, "status", "completed"), "hung call %d: %s", i,
			 calls[i].resp.body);
		it_resp_free(&calls[i].resp);
	}
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* One tenant may have RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT requests waiting on providers
 * at once: at the limit (2 hung at the provider) its next one is 429 rate_limited with
 * Retry-After: 1 at once, another tenant's call still reaches the provider, and a slot is
 * free again when a call ends. */
static void test_provider_calls_per_tenant(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=2", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	char *tenant2 = it_unique("edge2");
	char *admin2 = it_token(tenant2, "admin", "it-edge-2");
	it_provider_ready(&s, admin, &fake, "edge-quota", "dc", "slow", 20);
	it_provider_ready(&s, admin, &fake, "edge-quick", "dc", "good", 20);
	it_provider_ready(&s, admin2, &fake, "edge-quota", "dc", "slow", 20);
	json_t *body = retrieve_body("edge-quota", 20);
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	struct it_hung_call calls[3];
	for (int i = 0; i < 3; i++)
		calls[i] = (struct it_hung_call){.s = &s, .path = "/v1/decision-context/retrieve",
						 .token = i < 2 ? admin : admin2, .body = text};
	struct it_hung mine = {.calls = calls, .n = 2};
	IT_CHECK(it_hung_start(&mine, &fake, "dc", "slow") == 2, "2 calls did not reach the provider");
	struct it_resp r;
	it_request(&s, "POST", "/v1/decision-context/retrieve", admin, text, NULL, &r);
	IT_PROBLEM(&r, 429, "rate_limited");
	const char *ra = it_resp_header(&r, "Retry-After");
	IT_CHECK(ra && strcmp(ra, "1") == 0, "no Retry-After: 1 on the tenant's third call");
	it_resp_free(&r);
	struct it_hung other = {.calls = calls + 2, .n = 1};
	IT_CHECK(it_hung_start(&other, &fake, "dc", "slow") == 1,
		 "another tenant's call did not reach the provider beside them");
	it_hung_join(&mine);
	it_hung_join(&other);
	for (int i = 0; i < 3; i++) {
		IT_STATUS(&calls[i].resp, 200);
		it_resp_free(&calls[i].resp);
	}
	body = retrieve_body("edge-quick", 20);
	it_request_json(&s, "POST", "/v1/decision-context/retrieve", admin, body, NULL, &r);
	json_decref(body);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(text);
	free(admin2);
	free(tenant2);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* ================================================================ readiness */

/* A connection holding an open transaction that locks audit_log against writes: every
 * audited write waits on it (with the connection it borrowed) until PQfinish. */
static PGconn *lock_audit_log(void)
{
	return it_db_lock("audit_log", "EXCLUSIVE");
}

/* A child that makes the first write of the memory mode at path; it exits 0 on a 200. */
static pid_t fork_first_write(const struct it_server *s, const char *path)
{
	pid_t writer = fork();
	IT_CHECK(writer >= 0, "fork");
	if (writer == 0) {
		struct it_resp w;
		it_request(s, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
			   NULL, &w);
		_exit(w.status == 200 ? 0 : 1);
	}
	return writer;
}

static void test_busy_pool_is_ready(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DB_POOL=1", "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=300", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	struct it_resp r;
	it_request(&s, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* a write waits on a lock while it holds the pool's only connection */
	PGconn *locker = lock_audit_log();
	pid_t writer = fork_first_write(&s, "/v1/threads/edge-busy/memory-mode");
	it_sleep_ms(500);
	/* the pool is busy, the database is fine: ready */
	it_request(&s, "GET", "/readyz", NULL, NULL, NULL, &r);
	long busy_status = r.status;
	const char *reason = it_json_str(r.json, "reason");
	char seen[64];
	snprintf(seen, sizeof seen, "%s", reason ? reason : "-");
	it_resp_free(&r);
	it_db_unlock(locker);
	int wst = it_wait_pid(writer, 10000);
	IT_CHECK(busy_status == 200, "/readyz with a busy pool answered %ld (%s)", busy_status,
		 seen);
	IT_CHECK(wst == 0, "the waiting write did not succeed once the lock went (%d)", wst);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* ================================================================ per-client limit */

/* Behind a gateway every connection is the gateway's: the limit counts the requests in flight
 * of one forwarded client (the last X-Forwarded-For entry). */
static void test_forwarded_client_limit(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_TRUST_PROXY=1", "RECALLGATE_MAX_CLIENT_CONNECTIONS=2",
			     NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	static const char *const client_a[] = {"X-Forwarded-For: 198.51.100.9, 203.0.113.7", NULL};
	static const char *const client_b[] = {"X-Forwarded-For: 203.0.113.8", NULL};
	struct it_resp r;
	it_request(&s, "GET", "/v1/threads/edge-fc/memory-mode", admin, NULL, client_a, &r);
	IT_STATUS(&r, 200); /* warms the token cache */
	it_resp_free(&r);

	/* two writes of client A wait on a lock: its two requests in flight */
	PGconn *locker = lock_audit_log();
	pid_t writers[2];
	for (int i = 0; i < 2; i++) {
		writers[i] = fork();
		IT_CHECK(writers[i] >= 0, "fork");
		if (writers[i] == 0) {
			char path[96];
			snprintf(path, sizeof path, "/v1/threads/edge-fc-%d/memory-mode", i);
			struct it_resp w;
			it_request(&s, "PUT", path, admin,
				   "{\"expected_revision\":0,\"mode\":\"disabled\"}", client_a, &w);
			_exit(w.status == 200 ? 0 : 1);
		}
	}
	it_sleep_ms(500);
	struct it_resp over, other;
	it_request(&s, "GET", "/v1/threads/edge-fc/memory-mode", admin, NULL, client_a, &over);
	it_request(&s, "GET", "/v1/threads/edge-fc/memory-mode", admin, NULL, client_b, &other);
	it_db_unlock(locker);
	int w0 = it_wait_pid(writers[0], 10000), w1 = it_wait_pid(writers[1], 10000);
	IT_PROBLEM(&over, 429, "rate_limited");
	const char *retry = it_resp_header(&over, "Retry-After");
	IT_CHECK(retry && strcmp(retry, "1") == 0, "Retry-After is %s", retry ? retry : "(none)");
	IT_STATUS(&other, 200);
	it_resp_free(&over);
	it_resp_free(&other);
	IT_CHECK(w0 == 0 && w1 == 0, "the waiting writes did not succeed (%d, %d)", w0, w1);

	/* they finished: client A is admitted again; the refusal was counted */
	it_request(&s, "GET", "/v1/threads/edge-fc/memory-mode", admin, NULL, client_a, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&s, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_CHECK(it_metric_value(r.body, "recallgate_client_limit_refused_total") == 1,
		 "recallgate_client_limit_refused_total is not 1");
	IT_CHECK(strstr(r.body, "203.0.113") == NULL, "/metrics names a client address");
	it_resp_free(&r);
	IT_CHECK(!it_log_contains(&s, "203.0.113"), "the log names a client address");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit");
}

/* ================================================================ drain */

/* One kept-alive client: PUTs its thread's memory mode revision after revision on one
 * connection until the server refuses or closes. The ledger is its last acknowledged
 * revision. */
struct writer {
	struct it_server *s;
	char thread_id[96];
	long long acked;     /* last revision answered 200 */
	long refusal;        /* the status that ended it (0: the connection went) */
	bool last_closed;    /* its last answer carried Connection: close */
};
static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static size_t note_close(char *p, size_t size, size_t n, void *arg)
{
	bool *close = arg;
	if (n * size >= 17 && strncasecmp(p, "Connection: close", 17) == 0)
		*close = true;
	return size * n;
}

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	CURL *h = curl_easy_init();
	char url[256], auth[256], body[96];
	snprintf(url, sizeof url, "%s/v1/threads/%s/memory-mode", w->s->base_url, w->thread_id);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", admin);
	struct curl_slist *hdr = curl_slist_append(NULL, auth);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	for (long long rev = 0;; rev++) {
		bool close = false;
		snprintf(body, sizeof body, "{\"expected_revision\":%lld,\"mode\":\"%s\"}", rev,
			 rev % 2 ? "enabled" : "disabled");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, note_close);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, &close);
		long status = 0;
		CURLcode rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (rc == CURLE_OK)
			w->last_closed = close;
		if (rc != CURLE_OK || status != 200) {
			w->refusal = rc == CURLE_OK ? status : 0;
			break;
		}
		w->acked = rev + 1;
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

static void test_drain_answers_every_committed_write(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DRAIN_TIMEOUT=3", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	static struct writer ws[WRITERS];
	pthread_t th[WRITERS];
	char *base = it_unique("drain");
	for (int i = 0; i < WRITERS; i++) {
		memset(&ws[i], 0, sizeof ws[i]);
		ws[i].s = &s;
		snprintf(ws[i].thread_id, sizeof ws[i].thread_id, "%s-%d", base, i);
	}
	free(base);
	/* a kept-alive connection that asks for readiness after SIGTERM */
	CURL *probe = curl_easy_init();
	char ready_url[128];
	snprintf(ready_url, sizeof ready_url, "%s/readyz", s.base_url);
	curl_easy_setopt(probe, CURLOPT_URL, ready_url);
	curl_easy_setopt(probe, CURLOPT_WRITEFUNCTION, discard);
	long ready = 0;
	IT_CHECK(curl_easy_perform(probe) == CURLE_OK, "/readyz before SIGTERM");
	curl_easy_getinfo(probe, CURLINFO_RESPONSE_CODE, &ready);
	IT_CHECK(ready == 200, "/readyz before SIGTERM answered %ld", ready);

	for (int i = 0; i < WRITERS; i++)
		IT_CHECK(pthread_create(&th[i], NULL, writer_thread, &ws[i]) == 0, "pthread_create");
	it_sleep_ms(1000); /* under load */
	double t0 = it_now_s();
	IT_CHECK(it_server_signal(&s, SIGTERM) == 0, "kill");

	/* Until the signal is handled the answer is still 200, on the same connection. Then it
	 * is 503; or, for a probe that arrived just before and is answered just after, 200 with
	 * Connection: close (every answer of a draining server closes its connection), after
	 * which there is no connection left to ask on. */
	long ready_after = 0, connects = 0;
	bool closed = false;
	CURLcode prc = CURLE_OK;
	curl_easy_setopt(probe, CURLOPT_HEADERFUNCTION, note_close);
	curl_easy_setopt(probe, CURLOPT_HEADERDATA, &closed);
	for (int i = 0; i < 100 && prc == CURLE_OK && ready_after != 503 && !closed &&
			connects == 0;
	     i++) {
		if (i)
			it_sleep_ms(10);
		prc = curl_easy_perform(probe);
		curl_easy_getinfo(probe, CURLINFO_RESPONSE_CODE, &ready_after);
		curl_easy_getinfo(probe, CURLINFO_NUM_CONNECTS, &connects);
	}
	curl_easy_cleanup(probe);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	int st = it_server_wait(&s, 3 + 5);
	double took = it_now_s() - t0;
	IT_CHECK(prc == CURLE_OK && (ready_after == 503 || (ready_after == 200 && closed)) &&
			 connects == 0,
		 "/readyz on a kept-alive connection after SIGTERM: curl %d, status %ld%s, new "
		 "connections %ld",
		 prc, ready_after, closed ? " (Connection: close)" : "", connects);
	IT_CHECK(st == 0, "exit status %d after the drain (-2: still running)", st);
	/* the budget is the drain time + 1 s; sanitizers and a loaded machine get 2 s more */
	IT_CHECK(took < 3 + 1 + 2, "the process exited %.2f s after SIGTERM", took);

	/* the ledger against the database, through a fresh server */
	struct it_server check;
	IT_CHECK(it_server_start(&check, NULL) == 0, "the checking server did not start");
	long long total = 0;
	int closed_seen = 0;
	for (int i = 0; i < WRITERS; i++) {
		char path[160];
		snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", ws[i].thread_id);
		struct it_resp r;
		it_request(&check, "GET", path, admin, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		long long stored = it_json_int(r.json, "revision", -1);
		it_resp_free(&r);
		IT_CHECK(stored == ws[i].acked,
			 "writer %d: the database holds revision %lld, the client was answered for "
			 "%lld (ended by status %ld): %s",
			 i, stored, ws[i].acked, ws[i].refusal,
			 stored > ws[i].acked ? "a committed write went unanswered"
					      : "an answered write is missing");
		IT_CHECK(ws[i].refusal == 0 || ws[i].refusal == 503,
			 "writer %d ended with status %ld", i, ws[i].refusal);
		total += ws[i].acked;
		closed_seen += ws[i].last_closed;
	}
	IT_CHECK(total > WRITERS, "the writers made only %lld writes: no load", total);
	/* a kept-alive connection is never closed under a client it answered without saying so */
	IT_CHECK(closed_seen == WRITERS,
		 "only %d of %d writers' last answers carried Connection: close", closed_seen,
		 WRITERS);
	IT_CHECK(it_server_stop(&check) == 0, "no clean exit");
}

static void test_drain_cuts_provider_calls(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DRAIN_TIMEOUT=3", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	it_provider_ready(&s, admin, &slowfake, "edge-hang", "dc", "slow", 30);
	long before = it_fake_count(&slowfake, "dc", "slow");
	pid_t caller = fork();
	IT_CHECK(caller >= 0, "fork");
	if (caller == 0) {
		json_t *body = retrieve_body("edge-hang", 30);
		struct it_resp r;
		it_request_json(&s, "POST", "/v1/decision-context/retrieve", admin, body, NULL, &r);
		const json_t *rc = json_object_get(r.json, "receipt");
		_exit(r.status == 200 && it_json_str_is(rc, "status", "unavailable") &&
			      it_json_str_is(rc, "reason_code", "provider_timeout")
			  ? 0
			  : 1);
	}
	double until = it_now_s() + 5;
	while (it_fake_count(&slowfake, "dc", "slow") == before && it_now_s() < until)
		it_sleep_ms(10);
	IT_CHECK(it_fake_count(&slowfake, "dc", "slow") == before + 1, "the call never arrived");
	double t0 = it_now_s();
	IT_CHECK(it_server_signal(&s, SIGTERM) == 0, "kill");
	int cst = it_wait_pid(caller, 15000);
	int st = it_server_wait(&s, 10);
	double took = it_now_s() - t0;
	IT_CHECK(cst == 0, "the retrieve in flight did not fail open as provider_timeout (%d)",
		 cst);
	IT_CHECK(st == 0, "exit status %d after the drain", st);
	IT_CHECK(took < 3 + 1 + 2, "the process exited %.2f s after SIGTERM with a 30 s provider "
				   "call in flight (drain 3 s)", took);
}

/* A request still queued on its lane when the drain ends is answered 503 shutting_down, and
 * that answer goes out before the daemon stops (the last wait for answers once returned at
 * once, and such an answer could be lost). */
/* At the drain's deadline (1 s) the only worker still waits on a lock with a write, and a read
 * is queued behind it. The write's statement is cancelled: it rolled back, so it is answered
 * 503 shutting_down and nothing of it is written; the read never starts (503
 * shutting_down); and the process exits within the drain time + 1 s although the lock is
 * held for 3 s (before, the exit waited for the lock, and the write then committed). */
static pid_t fork_refused_write(const struct it_server *s, const char *path)
{
	pid_t writer = fork();
	IT_CHECK(writer >= 0, "fork");
	if (writer == 0) {
		struct it_resp w;
		it_request(s, "PUT", path, admin, "{\"expected_revision\":0,\"mode\":\"disabled\"}",
			   NULL, &w);
		_exit(w.status == 503 && it_json_str_is(w.json, "code", "shutting_down") ? 0
		      : w.status == 0						     ? 2
										     : 1);
	}
	return writer;
}

static void test_drain_answers_queued_work(void **state)
{
	(void)state;
	const char *env[] = {"RECALLGATE_DRAIN_TIMEOUT=1", "RECALLGATE_DB_POOL=1",
			     "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=10000", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "the server did not start");
	/* the only worker waits on the lock with a write; a read queues behind it */
	PGconn *locker = lock_audit_log();
	pid_t writer = fork_refused_write(&s, "/v1/threads/edge-queued/memory-mode");
	it_sleep_ms(300);
	pid_t reader = fork();
	IT_CHECK(reader >= 0, "fork");
	if (reader == 0) { /* a read the workers run (GET memory-mode would go on a pipe) */
		struct it_resp r;
		it_request(&s, "GET", "/v1/tokens", admin, NULL, NULL, &r);
		_exit(r.status == 503 && it_json_str_is(r.json, "code", "shutting_down") ? 0
			  : r.status == 0					   ? 2
										   : 1);
	}
	it_sleep_ms(300);
	long long t0 = it_now_ms();
	IT_CHECK(it_server_signal(&s, SIGTERM) == 0, "SIGTERM");
	int st = it_server_wait(&s, 3); /* the lock is still held */
	long long exited = it_now_ms() - t0;
	int wst = it_wait_pid(writer, 10000), rst = it_wait_pid(reader, 10000);
	/* nothing of the cancelled write is there, and its tenant's audit holds nothing of it */
	PGresult *res = PQexecParams(
	    locker,
	    "SELECT (SELECT count(*) FROM thread_memory_modes WHERE tenant_id = $1 AND "
	    "thread_id = 'edge-queued') + (SELECT count(*) FROM audit_log WHERE tenant_id = $1 "
	    "AND resource_id = 'edge-queued')",
	    1, NULL, (const char *const[]){tenant}, NULL, NULL, 0);
	long long rows = PQresultStatus(res) == PGRES_TUPLES_OK ? atoll(PQgetvalue(res, 0, 0)) : -1;
	PQclear(res);
	it_db_unlock(locker);
	if (st == -2)
		(void)it_server_stop(&s);
	IT_CHECK(st == 0, "exit status %d after the drain (-2: still running 3 s after SIGTERM)",
		 st);
	IT_CHECK(exited <= 2000 + 500, "exited %lld ms after SIGTERM (drain 1 s + 1 s)", exited);
	IT_CHECK(wst == 0, "the write cancelled at the deadline was not answered 503 shutting_down "
			   "(%s)",
		 wst == 2 ? "no answer" : "another answer");
	IT_CHECK(rows == 0, "the cancelled write left %lld rows", rows);
	IT_CHECK(rst == 0, "the queued read was not answered 503 shutting_down (%s)",
		 rst == 2 ? "no answer" : "another answer");
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hung_providers_hold_no_worker),
	    cmocka_unit_test(test_provider_calls_per_tenant),
	    cmocka_unit_test(test_busy_pool_is_ready),
	    cmocka_unit_test(test_forwarded_client_limit),
	    cmocka_unit_test(test_drain_answers_every_committed_write),
	    cmocka_unit_test(test_drain_cuts_provider_calls),
	    cmocka_unit_test(test_drain_answers_queued_work),
	};
	int rc = cmocka_run_group_tests_name("it_edge", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
