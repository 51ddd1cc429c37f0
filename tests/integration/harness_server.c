/*
 * harness_server.c — see harness.h: the recallgate binary under test (RG_BIN_PATH, compiled
 * in by CMake). Process setup, the environment and spawning of children, the server on a
 * free port through scripts/rg-launch (RG_LAUNCH_PATH: start, stop, signals, its log) and
 * one-shot runs of the CLI.
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

#include <sys/prctl.h>
#include <sys/wait.h>

#include <curl/curl.h>

#include "harness_internal.h"

#ifndef RG_LAUNCH_PATH
#error "RG_LAUNCH_PATH (scripts/rg-launch) must be defined by the build"
#endif

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

/* fork + exec path; the child's stdin/stdout/stderr are in_fd/out_fd/err_fd (-1:
 * /dev/null). The child gets SIGTERM when this process dies, so no server outlives a crashed
 * test. */
static pid_t spawn(const char *path, char *const argv[], char *const envp[], int in_fd,
		   int out_fd, int err_fd)
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
		if (dup2(in_fd >= 0 ? in_fd : devnull, 0) < 0 ||
		    dup2(out_fd >= 0 ? out_fd : devnull, 1) < 0 ||
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
	pid_t pid = spawn(path, argv, envp, -1, out_fd, err_fd);
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

/* ================================================================ the launcher */

/* The launcher's next line (NUL-terminated, without its '\n') into line: 1, 0 when none came
 * within timeout_ms, -1 when it closed its output first. */
static int launcher_line(struct it_server *s, char *line, size_t cap, double timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	for (;;) {
		char *nl = memchr(s->out_buf, '\n', s->out_len);
		if (nl) {
			size_t n = (size_t)(nl - s->out_buf);
			snprintf(line, cap, "%.*s", (int)n, s->out_buf);
			s->out_len -= n + 1;
			memmove(s->out_buf, nl + 1, s->out_len);
			return 1;
		}
		double left = deadline - now_ms();
		if (left < 0)
			return 0;
		struct pollfd pfd = {s->from_launcher, POLLIN, 0};
		int r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? 0 : -1;
		if (s->out_len == sizeof s->out_buf)
			return -1; /* a line longer than any the launcher prints */
		ssize_t got = read(s->from_launcher, s->out_buf + s->out_len,
				   sizeof s->out_buf - s->out_len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		s->out_len += (size_t)got;
	}
}

/* Closes the pipes to the launcher and reaps it (it ends once the server has). */
static void launcher_end(struct it_server *s)
{
	if (s->to_launcher >= 0)
		close(s->to_launcher);
	if (s->launcher > 0 && it_wait_pid(s->launcher, 30000) == -2) {
		kill(s->launcher, SIGKILL);
		(void)it_wait_pid(s->launcher, 5000);
	}
	if (s->from_launcher >= 0)
		close(s->from_launcher);
	s->to_launcher = s->from_launcher = -1;
	s->launcher = 0;
	s->pid = 0;
}

/* The server's exit status from the launcher's {"exit":N} line (N: 0..255, 128+signal), -1
 * when the launcher ended without one, -2 when none came within timeout_ms. */
static int launcher_exit(struct it_server *s, double timeout_ms)
{
	char line[256];
	int got = launcher_line(s, line, sizeof line, timeout_ms);
	if (got == 0)
		return -2;
	int st = -1;
	json_t *doc = got > 0 ? json_loads(line, 0, NULL) : NULL;
	if (doc && json_is_integer(json_object_get(doc, "exit")))
		st = (int)json_integer_value(json_object_get(doc, "exit"));
	json_decref(doc);
	launcher_end(s);
	return st;
}

int it_free_port(void)
{
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0)
		return -1;
	char *argv[] = {(char *)RG_LAUNCH_PATH, (char *)"port", NULL};
	pid_t pid = it_spawn(RG_LAUNCH_PATH, argv, NULL, out[1], STDERR_FILENO);
	close(out[1]);
	char text[32] = "";
	size_t len = 0;
	ssize_t n;
	while (pid > 0 && len < sizeof text - 1 &&
	       (n = read(out[0], text + len, sizeof text - 1 - len)) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		len += n > 0 ? (size_t)n : 0;
	}
	text[len] = '\0';
	close(out[0]);
	if (pid < 0 || it_wait_pid(pid, 30000) != 0)
		return -1;
	int port = atoi(text);
	return port > 0 ? port : -1;
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

int it_server_start(struct it_server *s, const char *const *extra_env)
{
	return it_server_start_on(s, "127.0.0.1", extra_env);
}

/* scripts/rg-launch picks the port (another one when the server exits before it is ready:
 * the port was taken meanwhile), waits for /healthz and prints one line of JSON; its stdin
 * is a pipe from here, so it stops the server when this process ends. */
int it_server_start_on(struct it_server *s, const char *host, const char *const *extra_env)
{
	static atomic_uint log_counter;
	memset(s, 0, sizeof *s);
	s->to_launcher = s->from_launcher = -1;
	/* one file per server of this executable, overwritten by the next run */
	snprintf(s->log_path, sizeof s->log_path, "%s/%s-server%u.log", IT_LOG_DIR,
		 program_invocation_short_name, atomic_fetch_add(&log_counter, 1u));
	int log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "it_server_start: cannot open %s: %s\n", s->log_path,
			strerror(errno));
		return -1;
	}
	close(log_fd);

	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	char ready_timeout[16];
	snprintf(ready_timeout, sizeof ready_timeout, "%d", IT_START_TIMEOUT_MS / 1000);
	char *argv[] = {(char *)RG_LAUNCH_PATH, (char *)"--bin",  (char *)RG_BIN_PATH,
			(char *)"--host",	(char *)host,	  (char *)"--log",
			s->log_path,		(char *)"--ready-timeout", ready_timeout,
			NULL};
	char **envp = build_env(extra_env, NULL);
	pid_t pid = spawn(RG_LAUNCH_PATH, argv, envp, in[0], out[1], STDERR_FILENO);
	free(envp);
	close(in[0]);
	close(out[1]);
	s->launcher = pid > 0 ? pid : 0;
	s->to_launcher = in[1];
	s->from_launcher = out[0];
	if (pid < 0) {
		fprintf(stderr, "it_server_start: fork failed: %s\n", strerror(errno));
		launcher_end(s);
		return -1;
	}

	char line[2048];
	int got = launcher_line(s, line, sizeof line, IT_START_TIMEOUT_MS * 3.0 + 30000);
	json_t *doc = got > 0 ? json_loads(line, 0, NULL) : NULL;
	json_t *spid = json_object_get(doc, "pid"), *port = json_object_get(doc, "port");
	const char *url = json_string_value(json_object_get(doc, "url"));
	if (!json_is_integer(spid) || !json_is_integer(port) || !url ||
	    strlen(url) >= sizeof s->base_url) {
		fprintf(stderr, "it_server_start: %s did not start a server (its reason above)\n",
			RG_LAUNCH_PATH);
		json_decref(doc);
		launcher_end(s);
		return -1;
	}
	s->pid = (pid_t)json_integer_value(spid);
	s->port = (int)json_integer_value(port);
	snprintf(s->base_url, sizeof s->base_url, "%s", url);
	json_decref(doc);
	return 0;
}

int it_server_stop_within(struct it_server *s, int timeout_s)
{
	if (!s || s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	int st = launcher_exit(s, (double)timeout_s * 1000.0);
	if (st == -2) {
		fprintf(stderr,
			"it_server_stop: server (pid %ld) did not exit within %d s of SIGTERM\n",
			(long)s->pid, timeout_s);
		kill(s->pid, SIGKILL);
		(void)launcher_exit(s, 5000);
		launcher_end(s);
		st = -1;
	}
	if (st != 0) {
		fprintf(stderr, "it_server_stop: exit status %d\n", st);
		print_log_tail(s);
	}
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
	int st = launcher_exit(s, (double)timeout_s * 1000.0);
	if (st == -2)
		return -2;
	if (st != 0) {
		fprintf(stderr, "it_server_wait: exit status %d\n", st);
		print_log_tail(s);
	}
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
