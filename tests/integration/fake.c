/*
 * fake.c — see fake.h. Runs RG_FAKE_PROVIDER_PATH (compiled in by CMake) and reads its
 * /_last answers with libcurl.
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

#include <sys/prctl.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <curl/curl.h>

#ifndef RG_FAKE_PROVIDER_PATH
#error "RG_FAKE_PROVIDER_PATH (the fake_provider binary) must be defined by the build"
#endif

#define FAKE_START_TIMEOUT_MS 10000
#define FAKE_STOP_TIMEOUT_MS 10000

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* new: environ followed by extra (later entries of the same name are not removed: the
 * fake reads its variables with getenv, which takes the first; so extra goes first) */
static char **env_with(const char *const *extra)
{
	size_t n = 0, k = 0;
	for (char **e = environ; *e; e++)
		n++;
	for (size_t i = 0; extra && extra[i]; i++)
		n++;
	char **envp = calloc(n + 1, sizeof *envp);
	if (!envp)
		return NULL;
	for (size_t i = 0; extra && extra[i]; i++)
		envp[k++] = (char *)extra[i];
	for (char **e = environ; *e; e++)
		envp[k++] = *e;
	envp[k] = NULL;
	return envp;
}

static int decode_status(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return -1;
}

/* -2 while still running after timeout_ms */
static int wait_for(pid_t pid, double timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	for (;;) {
		int ws = 0;
		pid_t r = waitpid(pid, &ws, WNOHANG);
		if (r == pid)
			return decode_status(ws);
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= deadline)
			return -2;
		struct timespec ts = {0, 10000000L};
		nanosleep(&ts, NULL);
	}
}

int it_fake_start(struct it_fake *f, const char *const *extra_env)
{
	memset(f, 0, sizeof *f);
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0) {
		fprintf(stderr, "it_fake_start: pipe: %s\n", strerror(errno));
		return -1;
	}
	char **envp = env_with(extra_env);
	if (!envp) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		char *argv[] = {(char *)RG_FAKE_PROVIDER_PATH, NULL};
		execve(RG_FAKE_PROVIDER_PATH, argv, envp);
		_exit(127);
	}
	free(envp);
	close(out[1]);
	if (pid < 0) {
		fprintf(stderr, "it_fake_start: fork: %s\n", strerror(errno));
		close(out[0]);
		return -1;
	}
	f->pid = pid;

	char line[64];
	size_t len = 0;
	double deadline = now_ms() + FAKE_START_TIMEOUT_MS;
	while (len < sizeof line - 1 && !memchr(line, '\n', len)) {
		double left = deadline - now_ms();
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

int it_fake_stop(struct it_fake *f)
{
	if (f->pid <= 0)
		return 0;
	kill(f->pid, SIGTERM);
	int st = wait_for(f->pid, FAKE_STOP_TIMEOUT_MS);
	if (st == -2) {
		kill(f->pid, SIGKILL);
		(void)wait_for(f->pid, 5000);
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

void it_provider_ready(const struct it_server *s, const char *token, const struct it_fake *f,
		       const char *extension_id, const char *prefix, const char *mode,
		       int timeout_seconds)
{
	char path[160], url[256];
	snprintf(path, sizeof path, "/%s/%s", prefix, mode);
	json_t *body =
	    it_provider_body(extension_id, strcmp(prefix, "sp") == 0 ? IT_PROTO_SP : IT_PROTO_DC,
			     it_fake_url(f, path, url, sizeof url), timeout_seconds);
	struct it_resp r;
	it_request_json(s, "POST", "/v1/providers", token, body, NULL, &r);
	json_decref(body);
	IT_STATUS(&r, 201);
	it_resp_free(&r);
	snprintf(path, sizeof path, "/v1/providers/%s/doctor", extension_id);
	it_request(s, "POST", path, token, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "doctor_ready")),
		 "the doctor of %s (fake /%s/%s) is not ready: %s", extension_id, prefix, mode,
		 r.body);
	it_resp_free(&r);
}
