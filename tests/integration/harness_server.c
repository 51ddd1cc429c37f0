/*
 * harness_server.c — see harness.h: the recallgate binary under test (RG_BIN_PATH, compiled
 * in by CMake). Process setup, the environment and spawning of children, the server on a
 * free port (start, stop, signals, its log) and one-shot runs of the CLI.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <curl/curl.h>

#include "harness_internal.h"

#ifndef IT_LOG_DIR
#define IT_LOG_DIR "."
#endif

extern char **environ;

#define IT_START_TIMEOUT_MS 10000

/* monotonic milliseconds, for deadlines */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
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
