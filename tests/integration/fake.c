/*
 * fake.c — see fake.h. Runs RG_FAKE_PROVIDER_PATH (compiled in by CMake) with the harness's
 * it_spawn and reads its /_last answers with libcurl; then the helpers the provider test
 * files share.
 */
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <curl/curl.h>

#ifndef RG_FAKE_PROVIDER_PATH
#error "RG_FAKE_PROVIDER_PATH (the fake_provider binary) must be defined by the build"
#endif

#define FAKE_START_TIMEOUT_MS 10000
#define FAKE_STOP_TIMEOUT_MS 10000
#define FAKE_KILL_WAIT_MS 5000
#define STR_(x) #x
#define STR(x) STR_(x)

int it_fake_start(struct it_fake *f, const char *const *extra_env)
{
	memset(f, 0, sizeof *f);
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0) {
		fprintf(stderr, "it_fake_start: pipe: %s\n", strerror(errno));
		return -1;
	}
	char *argv[] = {(char *)RG_FAKE_PROVIDER_PATH, NULL};
	pid_t pid = it_spawn(RG_FAKE_PROVIDER_PATH, argv, extra_env, out[1], STDERR_FILENO);
	int spawn_errno = errno;
	close(out[1]);
	if (pid < 0) {
		fprintf(stderr, "it_fake_start: fork: %s\n", strerror(spawn_errno));
		close(out[0]);
		return -1;
	}
	f->pid = pid;

	char line[64];
	size_t len = 0;
	double deadline = it_now_s() * 1000.0 + FAKE_START_TIMEOUT_MS;
	while (len < sizeof line - 1 && !memchr(line, '\n', len)) {
		double left = deadline - it_now_s() * 1000.0;
		if (left <= 0)
			break;
		struct pollfd p = {out[0], POLLIN, 0};
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t n = read(out[0], line + len, sizeof line - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(out[0]);
	line[len] = '\0';
	int port = 0;
	char nl = 0;
	if (sscanf(line, "PORT %d%c", &port, &nl) != 2 || nl != '\n' || port <= 0 || port > 65535) {
		fprintf(stderr,
			"it_fake_start: %s printed no PORT line within %d ms (got \"%s\")\n",
			RG_FAKE_PROVIDER_PATH, FAKE_START_TIMEOUT_MS, line);
		(void)it_fake_stop(f);
		return -1;
	}
	f->port = port;
	snprintf(f->base_url, sizeof f->base_url, "http://127.0.0.1:%d", port);
	return 0;
}

char *it_fake_url(const struct it_fake *f, const char *path, char *out, size_t n)
{
	snprintf(out, n, "%s%s", f->base_url, path);
	return out;
}

const char *it_fake_path_url(const struct it_fake *f, const char *path)
{
	static char ring[32][256];
	static unsigned next;
	char *out = ring[next++ % 32];
	return it_fake_url(f, path, out, sizeof ring[0]);
}

struct sink {
	char *data;
	size_t len;
};

static size_t sink_write(char *src, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;
	char *p = realloc(s->data, s->len + n + 1);
	if (!p)
		return 0;
	memcpy(p + s->len, src, n);
	s->data = p;
	s->len += n;
	s->data[s->len] = '\0';
	return n;
}

json_t *it_fake_last(const struct it_fake *f, const char *prefix, const char *mode)
{
	char url[256];
	snprintf(url, sizeof url, "%s/_last/%s/%s", f->base_url, prefix, mode);
	CURL *c = curl_easy_init();
	if (!c)
		return NULL;
	struct sink body = {NULL, 0};
	long status = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	CURLcode cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		fprintf(stderr, "it_fake_last: GET %s: %s\n", url, curl_easy_strerror(cc));
	curl_easy_cleanup(c);
	json_t *j = NULL;
	if (status == 200 && body.data)
		j = json_loadb(body.data, body.len, 0, NULL);
	free(body.data);
	return j;
}

long it_fake_count(const struct it_fake *f, const char *prefix, const char *mode)
{
	json_t *j = it_fake_last(f, prefix, mode);
	json_t *n = json_object_get(j, "count");
	long count = json_is_integer(n) ? (long)json_integer_value(n) : 0;
	json_decref(j);
	return count;
}

json_t *it_fake_expect_request(const struct it_fake *f, const char *prefix, const char *mode,
			       long before, json_t **last)
{
	json_t *rec = it_fake_last(f, prefix, mode);
	IT_CHECK(rec != NULL, "the fake saw no POST to /%s/%s", prefix, mode);
	IT_CHECK(it_json_int(rec, "count", -1) == before + 1,
		 "the provider was called %lld times, expected once",
		 it_json_int(rec, "count", -1) - before);
	const char *ct = it_json_str(rec, "content_type");
	IT_CHECK(ct && strncmp(ct, "application/json", 16) == 0,
		 "the provider request's Content-Type is %s", ct ? ct : "absent");
	json_t *body = json_loads(it_json_str(rec, "body"), JSON_REJECT_DUPLICATES, NULL);
	IT_CHECK(body != NULL, "the provider request is not JSON: %s", it_json_str(rec, "body"));
	if (last)
		*last = rec;
	else
		json_decref(rec);
	return body;
}

int it_fake_stop(struct it_fake *f)
{
	if (f->pid <= 0)
		return 0;
	kill(f->pid, SIGTERM);
	int st = it_wait_pid(f->pid, FAKE_STOP_TIMEOUT_MS);
	if (st == -2) {
		kill(f->pid, SIGKILL);
		(void)it_wait_pid(f->pid, FAKE_KILL_WAIT_MS);
		st = -1;
	}
	f->pid = 0;
	return st;
}

/* ================================================================ providers at the fake */

json_t *it_provider_body(const char *extension_id, const char *protocol, const char *endpoint_url,
			 int timeout_seconds)
{
	const char *perm = strcmp(protocol, IT_PROTO_SP) == 0 ? IT_PERM_SP : IT_PERM_DC;
	return json_pack("{s:s, s:s, s:s, s:i, s:[s], s:b}", "extension_id", extension_id,
			 "protocol", protocol, "endpoint_url", endpoint_url, "timeout_seconds",
			 timeout_seconds, "permissions", perm, "enabled", 1);
}

void it_provider_register(const struct it_server *s, const char *token, const char *extension_id,
			  const char *protocol, const char *endpoint_url, const char *doctor_url,
			  int timeout_seconds)
{
	json_t *body = it_provider_body(extension_id, protocol, endpoint_url, timeout_seconds);
	if (body && doctor_url)
		json_object_set_new(body, "doctor_url", json_string(doctor_url));
	struct it_resp r;
	it_send_json(s, "POST", "/v1/providers", token, body, NULL, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);
}

/* `method` /v1/providers/<extension_id><suffix> with body (text; NULL: none), expecting 200;
 * *r holds the answer (free it with it_resp_free) */
static void provider_call(const struct it_server *s, const char *token, const char *method,
			  const char *extension_id, const char *suffix, const char *body,
			  struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/providers/%s%s", extension_id, suffix);
	it_request(s, method, path, token, body, NULL, r);
	IT_STATUS(r, 200);
}

/* the doctor of extension_id passes; `at` (may be "") says where its endpoint is */
static void doctor_ok(const struct it_server *s, const char *token, const char *extension_id,
		      const char *at)
{
	struct it_resp r;
	provider_call(s, token, "POST", extension_id, "/doctor", NULL, &r);
	IT_CHECK(json_is_true(json_object_get(r.json, "doctor_ready")),
		 "the doctor of %s%s is not ready: %s", extension_id, at, r.body);
	it_resp_free(&r);
}

void it_provider_doctor_ok(const struct it_server *s, const char *token,
			   const char *extension_id)
{
	doctor_ok(s, token, extension_id, "");
}

/* the protocol a fake prefix serves */
static const char *prefix_protocol(const char *prefix)
{
	return strcmp(prefix, "sp") == 0 ? IT_PROTO_SP : IT_PROTO_DC;
}

void it_provider_ready(const struct it_server *s, const char *token, const struct it_fake *f,
		       const char *extension_id, const char *prefix, const char *mode,
		       int timeout_seconds)
{
	char path[160], url[256], at[200];
	snprintf(path, sizeof path, "/%s/%s", prefix, mode);
	it_provider_register(s, token, extension_id, prefix_protocol(prefix),
			     it_fake_url(f, path, url, sizeof url), NULL, timeout_seconds);
	snprintf(at, sizeof at, " (fake %s)", path);
	doctor_ok(s, token, extension_id, at);
}

void it_provider_unreachable(const struct it_server *s, const char *token,
			     const struct it_fake *f, const char *extension_id,
			     const char *prefix)
{
	int dead = it_free_port();
	IT_CHECK(dead > 0, "no free port");
	char dead_url[128], path[64], doctor[256];
	snprintf(dead_url, sizeof dead_url, "http://127.0.0.1:%d/%s/good", dead, prefix);
	snprintf(path, sizeof path, "/%s/good/doctor", prefix);
	it_provider_register(s, token, extension_id, prefix_protocol(prefix), dead_url,
			     it_fake_url(f, path, doctor, sizeof doctor), 5);
	doctor_ok(s, token, extension_id, " (an endpoint that refuses connections)");
}

void it_provider_patch(const struct it_server *s, const char *token, const char *extension_id,
		       const char *json_body)
{
	struct it_resp r;
	provider_call(s, token, "PATCH", extension_id, "", json_body, &r);
	it_resp_free(&r);
}

char *it_mode_id(const char *prefix, const char *mode, char *out, size_t n)
{
	snprintf(out, n, "%s-%s", prefix, mode);
	for (char *p = out; *p; p++) {
		if (*p == '_')
			*p = '-';
	}
	return out;
}

/* ================================================================ group setup */

/* the group of this process's it_group_main */
static const struct it_group *current_group;

static int group_setup(void **state)
{
	(void)state;
	const struct it_group *g = current_group;
	static const char *const fake_env[] = {"FAKE_SLOW_MS=" STR(IT_FAKE_SLOW_MS), NULL};
	if (it_fake_start(g->fake, fake_env) != 0)
		return -1;
	if (it_server_start(g->srv, NULL) != 0)
		return -1;
	*g->tenant = it_unique(g->tenant_prefix);
	int rc = 0;
	for (size_t i = 0; i < IT_GROUP_MAX_TOKENS && g->tokens[i].token; i++) {
		const struct it_group_token *t = &g->tokens[i];
		*t->token = it_token(*g->tenant, t->scopes, t->name);
		if (!*t->token)
			rc = -1;
	}
	return rc;
}

static int group_teardown(void **state)
{
	(void)state;
	const struct it_group *g = current_group;
	int rc = 0;
	if (g->srv->pid > 0 && it_server_stop(g->srv) != 0)
		rc = -1;
	if (g->fake->pid > 0 && it_fake_stop(g->fake) != 0)
		rc = -1;
	free(*g->tenant);
	*g->tenant = NULL;
	for (size_t i = 0; i < IT_GROUP_MAX_TOKENS && g->tokens[i].token; i++) {
		free(*g->tokens[i].token);
		*g->tokens[i].token = NULL;
	}
	return rc;
}

int it_group_main(const char *name, const struct CMUnitTest *tests, size_t n,
		  const struct it_group *g)
{
	if (!it_init())
		return 1;
	current_group = g;
	int rc = _cmocka_run_group_tests(name, tests, n, group_setup, group_teardown);
	it_cleanup();
	return rc;
}

/* ================================================================ small helpers */

static void *hung_thread(void *arg)
{
	struct it_hung *h = ((void **)arg)[0];
	struct it_hung_call *c = ((void **)arg)[1];
	free(arg);
	it_request(c->s, "POST", c->path, c->token, c->body, c->headers, &c->resp);
	atomic_fetch_add(&h->done, 1);
	return NULL;
}

long it_hung_start(struct it_hung *h, const struct it_fake *f, const char *prefix,
		   const char *mode)
{
	long before = it_fake_count(f, prefix, mode);
	atomic_store(&h->done, 0);
	h->threads = calloc(h->n, sizeof *h->threads);
	IT_CHECK(h->threads != NULL, "out of memory");
	for (size_t i = 0; i < h->n; i++) {
		void **arg = malloc(2 * sizeof *arg);
		IT_CHECK(arg != NULL, "out of memory");
		arg[0] = h;
		arg[1] = &h->calls[i];
		IT_CHECK(pthread_create(&h->threads[i], NULL, hung_thread, arg) == 0,
			 "pthread_create");
	}
	/* every call is at the provider once the fake counted it (it sleeps before answering) */
	double until = it_now_s() + IT_FAKE_SLOW_MS / 1000.0;
	while (it_fake_count(f, prefix, mode) < before + (long)h->n && it_now_s() < until)
		it_sleep_ms(10);
	return it_fake_count(f, prefix, mode) - before;
}

void it_hung_join(struct it_hung *h)
{
	for (size_t i = 0; i < h->n; i++)
		pthread_join(h->threads[i], NULL);
	free(h->threads);
	h->threads = NULL;
}

double it_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *it_filled(const char *prefix, size_t n, char fill)
{
	size_t p = strlen(prefix);
	char *s = malloc(n + 1);
	assert_non_null(s);
	memcpy(s, prefix, p < n ? p : n);
	for (size_t i = p; i < n; i++)
		s[i] = fill;
	s[n] = '\0';
	return s;
}

bool it_is_exactly(const json_t *obj, const char *const *keys)
{
	size_t n = 0;
	for (; keys[n]; n++) {
		if (!json_object_get(obj, keys[n]))
			return false;
	}
	return json_is_object(obj) && json_object_size(obj) == n;
}

char *it_token_for(const char *tenant, const char *scopes, const char *name)
{
	char *tok = it_token(tenant, scopes, name);
	IT_CHECK(tok != NULL, "cannot create a %s token for %s", scopes, tenant);
	return tok;
}

void it_send_json(const struct it_server *s, const char *method, const char *path,
		  const char *token, json_t *body, const char *const *headers, struct it_resp *r)
{
	IT_CHECK(body != NULL, "a request body could not be built");
	it_request_json(s, method, path, token, body, headers, r);
	json_decref(body);
}

void it_expect_absent(const char *text, size_t len, const char *const *needles, size_t n,
		      const char *where)
{
	for (size_t i = 0; i < n; i++) {
		const char *hit = memmem(text, len, needles[i], strlen(needles[i]));
		if (hit) {
			const char *from = hit - text > 200 ? hit - 200 : text;
			fprintf(stderr, "  excerpt of %s: %.400s\n", where, from);
		}
		IT_CHECK(hit == NULL, "%s contains \"%s\"", where, needles[i]);
	}
}

char *it_server_stop_log(struct it_server *s, size_t *len)
{
	int st = it_server_stop(s);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);
	char *log = it_log_read(s, len);
	IT_CHECK(log != NULL && *len > 0, "no server log at %s", s->log_path);
	return log;
}
