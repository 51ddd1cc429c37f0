/*
 * harness.c — see harness.h. Runs the real recallgate binary (RG_BIN_PATH, compiled in by
 * CMake) and talks to it with libcurl. Meant to be linked into cmocka test executables.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>
#include "core/problem.h"
#include <curl/curl.h>

#ifndef RG_BIN_PATH
#error "RG_BIN_PATH (the recallgate binary) must be defined by the build"
#endif
#ifndef IT_LOG_DIR
#define IT_LOG_DIR "."
#endif

extern char **environ;

#define IT_START_TIMEOUT_MS 10000
#define IT_REQUEST_TIMEOUT_MS 60000L

/* ================================================================ small utilities */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void it_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "it: out of memory\n");
		abort();
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static void buf_append(struct buf *b, const void *src, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p) {
			fprintf(stderr, "it: out of memory\n");
			abort();
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* new: the buffer's data, never NULL */
static char *buf_take(struct buf *b, size_t *len)
{
	if (!b->data)
		buf_append(b, "", 0);
	if (len)
		*len = b->len;
	char *d = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

/* ================================================================ process setup */

bool it_init(void)
{
	const char *db = getenv("DATABASE_URL");
	signal(SIGPIPE, SIG_IGN);
	if (!db || !*db) {
		fprintf(
		    stderr,
		    "FAIL: DATABASE_URL is not set: integration tests need a migrated PostgreSQL "
		    "database (run them through ./scripts/test)\n");
		return false;
	}
	json_object_seed(0);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "FAIL: curl_global_init failed\n");
		return false;
	}
	return true;
}

void it_cleanup(void)
{
	curl_global_cleanup();
}

/* ================================================================ environment, spawning */

static size_t env_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool same_name(const char *a, const char *b)
{
	size_t n = env_name_len(a);
	return env_name_len(b) == n && strncmp(a, b, n) == 0;
}

/* new: environ, then the changes in order (each replaces or, without '=', removes the
 * variable; a later change of the same name wins), then `extra` (wins over everything).
 * The strings are borrowed from environ / changes / extra; free only the array. */
static char **build_env(const char *const *changes, const char *extra)
{
	size_t n = 0, k = 0;
	for (char **e = environ; *e; e++)
		n++;
	for (size_t i = 0; changes && changes[i]; i++)
		n++;
	const char *const *all[] = {(const char *const *)environ, changes};
	char **envp = xmalloc((n + 2) * sizeof *envp);
	for (size_t list = 0; list < 2; list++) {
		for (size_t i = 0; all[list] && all[list][i]; i++) {
			const char *entry = all[list][i];
			bool superseded = !strchr(entry, '=') || (extra && same_name(entry, extra));
			for (size_t j = list == 0 ? 0 : i + 1; !superseded && changes && changes[j];
			     j++)
				superseded = same_name(entry, changes[j]);
			if (!superseded)
				envp[k++] = (char *)entry;
		}
	}
	if (extra)
		envp[k++] = (char *)extra;
	envp[k] = NULL;
	return envp;
}

/* fork + exec path; the child's stdout/stderr go to out_fd/err_fd (-1: /dev/null).
 * The child gets SIGTERM when this process dies, so no server outlives a crashed test. */
static pid_t spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		   int err_fd)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid = fork();
	if (pid < 0) {
		if (devnull >= 0)
			close(devnull);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (dup2(devnull, 0) < 0 || dup2(out_fd >= 0 ? out_fd : devnull, 1) < 0 ||
		    dup2(err_fd >= 0 ? err_fd : devnull, 2) < 0)
			_exit(127);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		signal(SIGPIPE, SIG_DFL);
		execve(path, argv, envp);
		_exit(127);
	}
	if (devnull >= 0)
		close(devnull);
	return pid;
}

static int decode_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return -1;
}

pid_t it_spawn(const char *path, char *const argv[], const char *const *env_changes, int out_fd,
	       int err_fd)
{
	char **envp = build_env(env_changes, NULL);
	pid_t pid = spawn(path, argv, envp, out_fd, err_fd);
	int saved = errno;
	free(envp);
	errno = saved;
	return pid;
}

int it_wait_pid(pid_t pid, double timeout_ms)
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
		it_sleep_ms(10);
	}
}

int it_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0;
	socklen_t len = sizeof a;
	int port = -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* ================================================================ the server */

static void print_log_tail(const struct it_server *s)
{
	size_t len = 0;
	char *log = it_log_read(s, &len);
	if (!log) {
		fprintf(stderr, "  (no server log at %s)\n", s->log_path);
		return;
	}
	size_t from = len > 4000 ? len - 4000 : 0;
	fprintf(stderr, "  --- server log %s (tail) ---\n%s\n  --- end of log ---\n", s->log_path,
		log + from);
	free(log);
}

static bool healthz_ok(const struct it_server *s)
{
	struct it_resp r;
	int rc = it_request(s, "GET", "/healthz", NULL, NULL, NULL, &r);
	bool ok = rc == 0 && r.status == 200;
	it_resp_free(&r);
	return ok;
}

static int start_once(struct it_server *s, const char *listen_host, const char *const *extra_env,
		      int attempt)
{
	static atomic_uint log_counter;
	char addr[64];
	int port = it_free_port();
	if (port <= 0) {
		fprintf(stderr, "it_server_start: no free port: %s\n", strerror(errno));
		return -1;
	}
	memset(s, 0, sizeof *s);
	s->port = port;
	/* the wildcard addresses are reached through loopback */
	const char *client_host = strcmp(listen_host, "[::]") == 0	 ? "[::1]"
				  : strcmp(listen_host, "0.0.0.0") == 0 ? "127.0.0.1"
									 : listen_host;
	snprintf(s->base_url, sizeof s->base_url, "http://%s:%d", client_host, port);
	snprintf(addr, sizeof addr, "RECALLGATE_ADDR=%s:%d", listen_host, port);
	/* one file per server of this executable, overwritten by the next run */
	snprintf(s->log_path, sizeof s->log_path, "%s/%s-server%u.log", IT_LOG_DIR,
		 program_invocation_short_name, atomic_fetch_add(&log_counter, 1u));

	int log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "it_server_start: cannot open %s: %s\n", s->log_path,
			strerror(errno));
		return -1;
	}
	char **envp = build_env(extra_env, addr);
	char *argv[] = {(char *)RG_BIN_PATH, (char *)"serve", NULL};
	pid_t pid = spawn(RG_BIN_PATH, argv, envp, log_fd, log_fd);
	free(envp);
	close(log_fd);
	if (pid < 0) {
		fprintf(stderr, "it_server_start: fork failed: %s\n", strerror(errno));
		return -1;
	}
	s->pid = pid;

	double deadline = now_ms() + IT_START_TIMEOUT_MS;
	while (now_ms() < deadline) {
		int st = it_wait_pid(pid, 0);
		if (st != -2) {
			s->pid = 0;
			fprintf(stderr,
				"it_server_start: %s serve exited with status %d before answering "
				"/healthz (attempt %d, port %d)\n",
				RG_BIN_PATH, st, attempt, port);
			print_log_tail(s);
			return -2; /* maybe the port was taken meanwhile: the caller retries */
		}
		if (healthz_ok(s))
			return 0;
		it_sleep_ms(50);
	}
	fprintf(stderr, "it_server_start: GET /healthz did not answer 200 within %d ms (port %d)\n",
		IT_START_TIMEOUT_MS, port);
	print_log_tail(s);
	(void)it_server_stop_within(s, 5);
	return -1;
}

int it_server_start(struct it_server *s, const char *const *extra_env)
{
	return it_server_start_on(s, "127.0.0.1", extra_env);
}

int it_server_start_on(struct it_server *s, const char *host, const char *const *extra_env)
{
	int rc = -1;
	for (int attempt = 1; attempt <= 3; attempt++) {
		rc = start_once(s, host, extra_env, attempt);
		if (rc != -2)
			break;
	}
	return rc == 0 ? 0 : -1;
}

int it_server_stop_within(struct it_server *s, int timeout_s)
{
	if (!s || s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	int st = it_wait_pid(s->pid, (double)timeout_s * 1000.0);
	if (st == -2) {
		fprintf(stderr,
			"it_server_stop: server (pid %ld) did not exit within %d s of SIGTERM\n",
			(long)s->pid, timeout_s);
		kill(s->pid, SIGKILL);
		(void)it_wait_pid(s->pid, 5000);
		st = -1;
	}
	if (st != 0) {
		fprintf(stderr, "it_server_stop: exit status %d\n", st);
		print_log_tail(s);
	}
	s->pid = 0;
	return st;
}

int it_server_stop(struct it_server *s)
{
	return it_server_stop_within(s, 20);
}

int it_server_signal(const struct it_server *s, int sig)
{
	if (!s || s->pid <= 0)
		return -1;
	return kill(s->pid, sig) == 0 ? 0 : -1;
}

int it_server_wait(struct it_server *s, int timeout_s)
{
	if (!s || s->pid <= 0)
		return -1;
	int st = it_wait_pid(s->pid, (double)timeout_s * 1000.0);
	if (st == -2)
		return -2;
	if (st != 0) {
		fprintf(stderr, "it_server_wait: exit status %d\n", st);
		print_log_tail(s);
	}
	s->pid = 0;
	return st;
}

char *it_log_read(const struct it_server *s, size_t *len)
{
	FILE *f = fopen(s->log_path, "rb");
	if (!f)
		return NULL;
	struct buf b = {0};
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return buf_take(&b, len);
}

bool it_log_contains(const struct it_server *s, const char *needle)
{
	size_t len = 0;
	char *log = it_log_read(s, &len);
	if (!log)
		return false;
	bool found = memmem(log, len, needle, strlen(needle)) != NULL;
	free(log);
	return found;
}

/* ================================================================ child processes */

int it_run(const char *const *args, const char *const *env_changes, int timeout_s,
	   struct it_proc *p)
{
	memset(p, 0, sizeof *p);
	p->status = -1;
	size_t nargs = 0;
	while (args && args[nargs])
		nargs++;
	char **argv = xmalloc((nargs + 2) * sizeof *argv);
	argv[0] = (char *)RG_BIN_PATH;
	for (size_t i = 0; i < nargs; i++)
		argv[i + 1] = (char *)args[i];
	argv[nargs + 1] = NULL;

	int out_pipe[2], err_pipe[2];
	if (pipe2(out_pipe, O_CLOEXEC) != 0) {
		free(argv);
		return -1;
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		close(out_pipe[0]);
		close(out_pipe[1]);
		free(argv);
		return -1;
	}
	pid_t pid = it_spawn(RG_BIN_PATH, argv, env_changes, out_pipe[1], err_pipe[1]);
	free(argv);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (pid < 0) {
		close(out_pipe[0]);
		close(err_pipe[0]);
		return -1;
	}

	struct buf out = {0}, err = {0};
	struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
	int open_fds = 2;
	double deadline = now_ms() + (double)timeout_s * 1000.0;
	bool killed = false;
	while (open_fds > 0) {
		double left = deadline - now_ms();
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		int r = poll(fds, 2, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[4096];
			ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
			if (n > 0) {
				buf_append(i == 0 ? &out : &err, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++) {
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	}
	double wait_ms = killed ? 5000 : (deadline - now_ms() > 1000 ? deadline - now_ms() : 1000);
	int st = it_wait_pid(pid, wait_ms);
	if (st == -2) {
		kill(pid, SIGKILL);
		(void)it_wait_pid(pid, 5000);
		killed = true;
	}
	p->status = killed ? -1 : st;
	p->out = buf_take(&out, &p->out_len);
	p->err = buf_take(&err, &p->err_len);
	return 0;
}

void it_proc_free(struct it_proc *p)
{
	if (!p)
		return;
	free(p->out);
	free(p->err);
	p->out = p->err = NULL;
}

char *it_token(const char *tenant, const char *scopes, const char *name)
{
	const char *args[] = {
	    "token", "create", "--tenant", tenant, "--scopes", scopes, name ? "--name" : NULL,
	    name,    NULL};
	struct it_proc p;
	if (it_run(args, NULL, 30, &p) != 0) {
		fprintf(stderr, "it_token: could not run %s\n", RG_BIN_PATH);
		return NULL;
	}
	char *tok = NULL;
	if (p.status != 0 || p.out_len < 2 || p.out[p.out_len - 1] != '\n' ||
	    memchr(p.out, '\n', p.out_len - 1) != NULL) {
		fprintf(stderr,
			"it_token: `recallgate token create --tenant %s --scopes %s` exit %d\n"
			"  stdout: %s\n  stderr: %s\n",
			tenant, scopes, p.status, p.out, p.err);
	} else {
		p.out[p.out_len - 1] = '\0';
		tok = xstrdup(p.out);
	}
	it_proc_free(&p);
	return tok;
}

char *it_unique(const char *prefix)
{
	static atomic_uint counter;
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s-%ld-%lld-%u", prefix, (long)getpid(), (long long)time(NULL),
		 atomic_fetch_add(&counter, 1u));
	return xstrdup(tmp);
}

/* ================================================================ HTTP */

char *it_url_escape(const char *s)
{
	CURL *c = curl_easy_init();
	char *e = c ? curl_easy_escape(c, s, 0) : NULL;
	char *out = xstrdup(e ? e : "");
	curl_free(e);
	if (c)
		curl_easy_cleanup(c);
	return out;
}

struct upload {
	const char *data;
	size_t len;
	size_t pos;
};

static size_t read_cb(char *dst, size_t size, size_t nmemb, void *ud)
{
	struct upload *u = ud;
	size_t room = size * nmemb;
	size_t left = u->len - u->pos;
	/* small pieces, so that a chunked upload really is many chunks */
	size_t n = left < room ? left : room;
	if (n > 16384)
		n = 16384;
	memcpy(dst, u->data + u->pos, n);
	u->pos += n;
	return n;
}

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	buf_append(ud, src, size * nmemb);
	return size * nmemb;
}

static size_t header_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct it_resp *r = ud;
	size_t n = size * nmemb;
	if (n >= 5 && strncmp(src, "HTTP/", 5) == 0) {
		/* a new status line (after 100 Continue, say): forget earlier headers */
		for (size_t i = 0; i < r->nheaders; i++) {
			free(r->headers[i].name);
			free(r->headers[i].value);
		}
		free(r->headers);
		r->headers = NULL;
		r->nheaders = 0;
		return n;
	}
	const char *colon = memchr(src, ':', n);
	if (!colon)
		return n;
	size_t name_len = (size_t)(colon - src);
	const char *v = colon + 1;
	const char *end = src + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	struct it_header *h = realloc(r->headers, (r->nheaders + 1) * sizeof *h);
	if (!h)
		return 0;
	r->headers = h;
	char *name = xmalloc(name_len + 1);
	memcpy(name, src, name_len);
	name[name_len] = '\0';
	char *value = xmalloc((size_t)(end - v) + 1);
	memcpy(value, v, (size_t)(end - v));
	value[end - v] = '\0';
	r->headers[r->nheaders].name = name;
	r->headers[r->nheaders].value = value;
	r->nheaders++;
	return n;
}

static bool header_given(const char *const *headers, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; headers && headers[i]; i++) {
		if (strncasecmp(headers[i], name, n) == 0 && headers[i][n] == ':')
			return true;
	}
	return false;
}

int it_send(const struct it_server *s, const struct it_req *rq, struct it_resp *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->desc, sizeof out->desc, "%s %.250s", rq->method, rq->path);

	CURL *c = curl_easy_init();
	if (!c) {
		snprintf(out->curl_error, sizeof out->curl_error, "curl_easy_init failed");
		return -1;
	}
	size_t url_len = strlen(s->base_url) + strlen(rq->path) + 1;
	char *url = xmalloc(url_len);
	snprintf(url, url_len, "%s%s", s->base_url, rq->path);

	struct curl_slist *hl = NULL;
	char *auth = NULL;
	if (rq->token) {
		size_t n = strlen(rq->token) + 32;
		auth = xmalloc(n);
		snprintf(auth, n, "Authorization: Bearer %s", rq->token);
		hl = curl_slist_append(hl, auth);
	}
	if (rq->body && !rq->no_default_ct && !header_given(rq->headers, "Content-Type"))
		hl = curl_slist_append(hl, "Content-Type: application/json");
	if (rq->chunked)
		hl = curl_slist_append(hl, "Transfer-Encoding: chunked");
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		hl = curl_slist_append(hl, rq->headers[i]);

	struct buf body = {0};
	struct upload up = {rq->body, rq->body_len, 0};
	char errbuf[CURL_ERROR_SIZE] = "";

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, IT_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
	if (strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (rq->body) {
		if (rq->chunked) {
			curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
			curl_easy_setopt(c, CURLOPT_READDATA, &up);
		} else {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body);
		}
	}
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

	CURLcode cc = curl_easy_perform(c);
	out->curl_code = (int)cc;
	if (cc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	} else {
		out->status = 0;
		snprintf(out->curl_error, sizeof out->curl_error, "%.100s: %.150s",
			 curl_easy_strerror(cc), errbuf);
	}
	out->body = buf_take(&body, &out->body_len);
	const char *ct = it_resp_header(out, "Content-Type");
	if (out->body_len > 0 && ct && strstr(ct, "json")) {
		json_error_t jerr;
		out->json = json_loadb(out->body, out->body_len, JSON_DECODE_ANY, &jerr);
	}
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	free(auth);
	free(url);
	return cc == CURLE_OK ? 0 : -1;
}

int it_request(const struct it_server *s, const char *method, const char *path, const char *token,
	       const char *body, const char *const *extra_headers, struct it_resp *out)
{
	struct it_req rq = {
	    .method = method,
	    .path = path,
	    .token = token,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .headers = extra_headers,
	};
	return it_send(s, &rq, out);
}

const char *it_resp_header(const struct it_resp *r, const char *name)
{
	for (size_t i = r->nheaders; i > 0; i--) {
		if (strcasecmp(r->headers[i - 1].name, name) == 0)
			return r->headers[i - 1].value;
	}
	return NULL;
}

void it_resp_free(struct it_resp *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof *r);
}

const char *it_json_str(const json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_string_value(json_object_get(obj, key)) : NULL;
}

long long it_json_int(const json_t *obj, const char *key, long long dflt)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

bool it_json_has_null(const json_t *obj, const char *key)
{
	return json_is_object(obj) && json_is_null(json_object_get(obj, key));
}

bool it_json_str_is(const json_t *obj, const char *key, const char *want)
{
	const char *v = it_json_str(obj, key);
	return v && want && strcmp(v, want) == 0;
}

bool it_problem_has_field(const struct it_resp *r, const char *field)
{
	const json_t *errs = json_is_object(r->json) ? json_object_get(r->json, "errors") : NULL;
	size_t i;
	const json_t *e;
	if (!json_is_array(errs))
		return false;
	json_array_foreach (errs, i, e) {
		const char *f = it_json_str(e, "field");
		if (f && strcmp(f, field) == 0)
			return true;
	}
	return false;
}

static bool is_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return true;
}

bool it_is_sha256_ref(const char *s)
{
	return s && strlen(s) == 71 && strncmp(s, "sha256:", 7) == 0 && is_lower_hex(s + 7, 64);
}

bool it_is_timestamp_ms(const char *s)
{
	/* 2026-11-29T21:07:22.123Z */
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	if (!s || strlen(s) != sizeof shape - 1)
		return false;
	for (size_t i = 0; i < sizeof shape - 1; i++) {
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return false;
	}
	return true;
}

/* ================================================================ assertions */

static void describe(const struct it_resp *r)
{
	if (!r)
		return;
	if (r->status == 0) {
		fprintf(stderr, "  request: %s\n  transfer failed: %s\n", r->desc, r->curl_error);
		return;
	}
	fprintf(stderr, "  request: %s\n  answer:  %ld\n", r->desc, r->status);
	for (size_t i = 0; i < r->nheaders; i++)
		fprintf(stderr, "    %s: %s\n", r->headers[i].name, r->headers[i].value);
	if (r->body_len > 0)
		fprintf(stderr, "  body: %.2000s%s\n", r->body, r->body_len > 2000 ? " ..." : "");
}

_Noreturn static void fail_now(const char *file, int line)
{
	fflush(stderr);
	_fail(file, line);
	abort(); /* _fail longjmps back into the cmocka runner */
}

_Noreturn void it_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fail_now(file, line);
}

void it_expect_status_at(const struct it_resp *r, long status, const char *file, int line)
{
	if (r->status == status)
		return;
	fprintf(stderr, "%s:%d: expected status %ld\n", file, line, status);
	describe(r);
	fail_now(file, line);
}

static void problem_fail(const struct it_resp *r, const char *file, int line, const char *what,
			 long status, const char *code)
{
	fprintf(stderr, "%s:%d: expected a %ld %s problem: %s\n", file, line, status, code, what);
	describe(r);
	fail_now(file, line);
}

void it_expect_problem_at(const struct it_resp *r, long status, const char *code, const char *file,
			  int line)
{
	char type[160];
	if (r->status != status)
		problem_fail(r, file, line, "wrong status", status, code);
	const char *ct = it_resp_header(r, "Content-Type");
	if (!ct || strncasecmp(ct, "application/problem+json", 24) != 0)
		problem_fail(r, file, line, "Content-Type is not application/problem+json", status,
			     code);
	if (!json_is_object(r->json))
		problem_fail(r, file, line, "body is not a JSON object", status, code);
	snprintf(type, sizeof type, "urn:recallgate:problem:%s", code);
	const char *t = it_json_str(r->json, "type");
	if (!t || strcmp(t, type) != 0)
		problem_fail(r, file, line, "wrong or missing `type`", status, code);
	if (it_json_int(r->json, "status", -1) != status)
		problem_fail(r, file, line, "wrong or missing `status` member", status, code);
	const char *c = it_json_str(r->json, "code");
	if (!c || strcmp(c, code) != 0)
		problem_fail(r, file, line, "wrong or missing `code`", status, code);
	const char *title = it_json_str(r->json, "title");
	const char *want_title = core_problem_title(core_problem_from_code(code));
	if (!title || !want_title || strcmp(title, want_title) != 0)
		problem_fail(r, file, line, "`title` is not the code's own title", status, code);
	const char *detail = it_json_str(r->json, "detail");
	if (!detail || !*detail)
		problem_fail(r, file, line, "missing `detail`", status, code);
	const char *rid = it_json_str(r->json, "request_id");
	const char *hrid = it_resp_header(r, "X-Request-Id");
	if (!rid || !*rid)
		problem_fail(r, file, line, "missing `request_id`", status, code);
	if (!hrid || strcmp(hrid, rid) != 0)
		problem_fail(r, file, line, "`request_id` differs from the X-Request-Id header",
			     status, code);
}

void it_expect_field_at(const struct it_resp *r, const char *field, const char *file, int line)
{
	if (it_problem_has_field(r, field))
		return;
	fprintf(stderr, "%s:%d: expected errors[] to name field \"%s\"\n", file, line, field);
	describe(r);
	fail_now(file, line);
}

int it_request_json(const struct it_server *s, const char *method, const char *path,
		    const char *token, const json_t *body, const char *const *extra_headers,
		    struct it_resp *out)
{
	char *text = json_dumps(body, JSON_COMPACT);
	if (text == NULL)
		it_fail_at(__FILE__, __LINE__, "cannot serialise a request body");
	int rc = it_request(s, method, path, token, text, extra_headers, out);
	free(text);
	return rc;
}

bool it_problem_has_field_prefix(const struct it_resp *r, const char *prefix)
{
	const json_t *errs = json_is_object(r->json) ? json_object_get(r->json, "errors") : NULL;
	size_t i;
	const json_t *e;
	json_array_foreach (errs, i, e) {
		const char *f = it_json_str(e, "field");
		if (f && strncmp(f, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

void it_expect_422_at(const struct it_resp *r, const char *code, const char *field, bool exact,
		      const char *what, const char *file, int line)
{
	if (r->status != 422)
		fprintf(stderr, "  case: %s\n", what);
	it_expect_problem_at(r, 422, code, file, line);
	if (!field)
		return;
	if (exact && !it_problem_has_field(r, field))
		it_fail_at(file, line, "%s: errors[] does not name \"%s\": %s", what, field,
			   r->body);
	if (!exact && !it_problem_has_field_prefix(r, field))
		it_fail_at(file, line, "%s: errors[] names no field under \"%s\": %s", what, field,
			   r->body);
}

long long it_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep_until_ms(long long when)
{
	long long left;
	while ((left = when - it_now_ms()) > 0)
		it_sleep_ms((long)left);
}

void it_rfc3339_ms(long long epoch_ms, char out[IT_TIME_LEN])
{
	time_t s = (time_t)(epoch_ms / 1000);
	struct tm tm;
	if (epoch_ms < 0 || !gmtime_r(&s, &tm))
		it_fail_at(__FILE__, __LINE__, "no RFC 3339 form for epoch ms %lld", epoch_ms);
	int n = snprintf(out, IT_TIME_LEN, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)(epoch_ms % 1000));
	if (n < 0 || (size_t)n >= IT_TIME_LEN)
		it_fail_at(__FILE__, __LINE__, "epoch ms %lld is past year 9999", epoch_ms);
}

double it_metric_value(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *line = text; line && *line;) {
		if (strncmp(line, series, n) == 0 && line[n] == ' ')
			return strtod(line + n + 1, NULL);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}

json_t *it_list_all(const struct it_server *s, const char *token, const char *path)
{
	json_t *all = json_array();
	char *cursor = NULL;
	const char *sep = strchr(path, '?') ? "&" : "?";
	for (int page = 0;; page++) {
		char p[1024];
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(p, sizeof p, "%s%slimit=200&after=%s", path, sep, esc);
			free(esc);
		} else {
			snprintf(p, sizeof p, "%s%slimit=200", path, sep);
		}
		struct it_resp r;
		it_request(s, "GET", p, token, NULL, NULL, &r);
		IT_STATUS(&r, 200);
		json_t *items = json_object_get(r.json, "items");
		json_t *next = json_object_get(r.json, "next_cursor");
		IT_CHECK(json_is_array(items), "%s: items is not an array: %s", p, r.body);
		IT_CHECK(json_is_string(next) || json_is_null(next),
			 "%s: next_cursor is not string|null: %s", p, r.body);
		json_array_extend(all, items);
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
		IT_CHECK(page < 100, "%s: pagination does not end", path);
	}
	return all;
}
