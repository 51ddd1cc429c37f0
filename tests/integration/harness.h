/*
 * harness.h — integration-test helpers: the real recallgate binary on a free port, driven
 * with libcurl, against the PostgreSQL named by DATABASE_URL.
 *
 * Every test executable uses its own server (its own port) and its own tenants (it_unique),
 * so the files can run in parallel (ctest -j2) against one database without any reset.
 * A test that cannot reach its database FAILS; nothing here ever skips.
 *
 * Ownership: functions documented "new" return memory the caller frees (free(), or the
 * matching it_*_free); "borrowed" results live as long as the object they came from.
 *
 * The library it_harness implements this header in one file per "====" heading below;
 * harness_internal.h holds the little they share.
 */
#ifndef RG_IT_HARNESS_H
#define RG_IT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>
#include <libpq-fe.h>

#if defined(__GNUC__)
#define IT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IT_PRINTF(a, b)
#endif

/* ================================================================ harness_server.c */

/* ---------------------------------------------------------------- process setup */

/* Call first in main(): initialises libcurl and jansson's hash seed and checks that
 * DATABASE_URL is set. Returns false (after printing one clear line) when it is not:
 * main() must then return 1 so that the test FAILS. */
bool it_init(void);
/* Call last in main(). */
void it_cleanup(void);

/* ---------------------------------------------------------------- the server */

struct it_server {
	pid_t pid; /* the server's; 0 when not running */
	int port;
	char base_url[64];   /* "http://127.0.0.1:<port>" (or the host it_server_start_on named) */
	char log_path[1024]; /* server stdout+stderr */
	/* scripts/rg-launch, which started the server and reports its exit (harness_server.c) */
	pid_t launcher;
	int to_launcher, from_launcher;
	char out_buf[512];
	size_t out_len;
};

/* `RG_BIN_PATH serve` started by scripts/rg-launch (RG_LAUNCH_PATH) with the current
 * environment plus extra_env (NULL-terminated "NAME=value" entries that override; an entry
 * "NAME" without '=' removes NAME) plus RECALLGATE_ADDR=127.0.0.1:<free port>. Waits up to
 * 10 s for GET /healthz 200. Returns 0, or -1 after printing why (the log tail included). */
int it_server_start(struct it_server *s, const char *const *extra_env);
/* The same, listening on host (RECALLGATE_ADDR's form: "[::1]", "[::]", "0.0.0.0"); base_url
 * reaches a wildcard address through loopback ([::1] or 127.0.0.1). */
int it_server_start_on(struct it_server *s, const char *host, const char *const *extra_env);

/* SIGTERM, wait up to `timeout_s` seconds; returns the exit status (0..255), 128+signal if
 * it died of a signal, or -1 when it had to be killed (did not exit in time). */
int it_server_stop_within(struct it_server *s, int timeout_s);
/* it_server_stop_within(s, 20) */
int it_server_stop(struct it_server *s);

/* Send one signal without waiting (0 ok, -1 not running). */
int it_server_signal(const struct it_server *s, int sig);
/* Wait up to timeout_s for the server to exit: the status as it_server_stop_within, or -2
 * when it is still running (it is left running). */
int it_server_wait(struct it_server *s, int timeout_s);

/* new: the whole server log, NUL-terminated (length in *len if len). NULL if unreadable. */
char *it_log_read(const struct it_server *s, size_t *len);
bool it_log_contains(const struct it_server *s, const char *needle);

/* ---------------------------------------------------------------- child processes */

struct it_proc {
	int status; /* exit status, 128+signal, or -1 (timeout: killed) */
	char *out;  /* new: stdout, NUL-terminated */
	size_t out_len;
	char *err; /* new: stderr, NUL-terminated */
	size_t err_len;
};

/* Run RG_BIN_PATH with args (NULL-terminated, without argv[0]) and environment = current
 * + env_changes (same rules as it_server_start). Kills it after timeout_s. Returns 0 when
 * it ran (status in p->status), -1 when it could not be started. */
int it_run(const char *const *args, const char *const *env_changes, int timeout_s,
	   struct it_proc *p);
void it_proc_free(struct it_proc *p);

/* Fork+exec `path` with argv (NULL-terminated, argv[0] included) and environment = current +
 * env_changes (same rules as it_server_start). The child's stdin is /dev/null; its stdout and
 * stderr go to out_fd and err_fd (-1: /dev/null; STDERR_FILENO: this process's stderr); every
 * other descriptor is closed; it gets SIGTERM when this process dies. Returns its pid, or -1
 * (errno set) when it could not be forked. Reap it with it_wait_pid. */
pid_t it_spawn(const char *path, char *const argv[], const char *const *env_changes, int out_fd,
	       int err_fd);

/* Wait up to timeout_ms for the child pid: its exit status (0..255), 128+signal, -1 when
 * waitpid failed, or -2 when it is still running (it is left running; 0 ms: just a poll). */
int it_wait_pid(pid_t pid, double timeout_ms);

/* a TCP port on 127.0.0.1 that was free a moment ago (`rg-launch port`), or -1 */
int it_free_port(void);

/* ================================================================ harness_http.c */

/* ---------------------------------------------------------------- HTTP */

/* new: s percent-encoded for a query string */
char *it_url_escape(const char *s);

struct it_header {
	char *name;
	char *value;
};

struct it_resp {
	long status;   /* 0 when the transfer failed */
	int curl_code; /* CURLcode */
	char curl_error[256];
	char *body; /* NUL-terminated copy; body_len excludes the NUL */
	size_t body_len;
	json_t *json; /* parsed when the body is JSON (any *json content type) */
	struct it_header *headers;
	size_t nheaders;
	char desc[300]; /* "PUT /v1/threads/x/memory-mode" for messages */
};

struct it_req {
	const char *method;
	const char *path;	    /* with query string */
	const char *token;	    /* adds "Authorization: Bearer <token>" when not NULL */
	const char *body;	    /* NULL: no body */
	size_t body_len;	    /* used when body != NULL; 0 with body "" = empty body */
	const char *const *headers; /* NULL-terminated "Name: value"; "Name:" removes a default */
	bool chunked;		    /* send the body with Transfer-Encoding: chunked */
	bool no_default_ct;	    /* don't add Content-Type: application/json */
};

/* Performs the request. Returns 0 when an HTTP answer arrived, -1 otherwise (out->status
 * is then 0 and out->curl_error says why). out must be freed with it_resp_free either way. */
int it_send(const struct it_server *s, const struct it_req *rq, struct it_resp *out);

/* it_send with body = strlen-terminated text (or NULL). When a body is given,
 * Content-Type: application/json is sent unless extra_headers sets one. */
int it_request(const struct it_server *s, const char *method, const char *path, const char *token,
	       const char *body, const char *const *extra_headers, struct it_resp *out);

/* it_request with body (borrowed) sent as compact JSON. */
int it_request_json(const struct it_server *s, const char *method, const char *path,
		    const char *token, const json_t *body, const char *const *extra_headers,
		    struct it_resp *out);
/* new: every item of a list endpoint (path may carry a query), walking next_cursor 200 at a
 * time; fails the test on a malformed page or more than 100 pages. */
json_t *it_list_all(const struct it_server *s, const char *token, const char *path);

/* borrowed: the value of the last header with this name (case-insensitive), or NULL. */
const char *it_resp_header(const struct it_resp *r, const char *name);
void it_resp_free(struct it_resp *r);

/* ---------------------------------------------------------------- answer checks (cmocka) */

/* Does errors[] of a problem contain an entry whose field equals `field`? */
bool it_problem_has_field(const struct it_resp *r, const char *field);

/* errors[] names a field that starts with prefix. */
bool it_problem_has_field_prefix(const struct it_resp *r, const char *prefix);
/* A 422 `code` whose errors[] names `field` exactly (exact) or a field under it (!exact);
 * field NULL: any; `what` names the case in the failure message. */
void it_expect_422_at(const struct it_resp *r, const char *code, const char *field, bool exact,
		      const char *what, const char *file, int line);
#define IT_422(r, code, field, exact, what) \
	it_expect_422_at((r), (code), (field), (exact), (what), __FILE__, __LINE__)

/* These print the request, the expectation and the answer, then fail the current cmocka
 * test (they never return on failure). Only call them from the test's own thread. */
_Noreturn void it_fail_at(const char *file, int line, const char *fmt, ...) IT_PRINTF(3, 4);
void it_expect_status_at(const struct it_resp *r, long status, const char *file, int line);
/* status + application/problem+json + type urn:recallgate:problem:<code> + status member +
 * code + title + request_id equal to the X-Request-Id header */
void it_expect_problem_at(const struct it_resp *r, long status, const char *code, const char *file,
			  int line);
void it_expect_field_at(const struct it_resp *r, const char *field, const char *file, int line);

#define IT_FAIL(...) it_fail_at(__FILE__, __LINE__, __VA_ARGS__)
/* The branch is the caller's, so that the message's arguments are evaluated only on failure
 * and the compiler knows that a failed check does not continue (it_fail_at never returns). */
#define IT_CHECK(cond, ...)                                                                    \
	do {                                                                                   \
		if (!(cond))                                                                   \
			it_fail_at(__FILE__, __LINE__, __VA_ARGS__);                           \
	} while (0)
#define IT_STATUS(r, st) it_expect_status_at((r), (st), __FILE__, __LINE__)
#define IT_PROBLEM(r, st, code) it_expect_problem_at((r), (st), (code), __FILE__, __LINE__)
#define IT_FIELD(r, field) it_expect_field_at((r), (field), __FILE__, __LINE__)

/* ================================================================ harness_values.c */

/* ---------------------------------------------------------------- tokens and names */

/* new: `recallgate token create --tenant .. --scopes .. --name ..` (name NULL: "cli"), run
 * by scripts/rg-launch --token → the token string, or NULL after printing why. */
char *it_token(const char *tenant, const char *scopes, const char *name);

/* new: "<prefix>-<pid>-<unix time>-<counter>", valid as tenant, thread id and token name. */
char *it_unique(const char *prefix);
/* new: exactly n bytes of text: prefix (cut at n), then filler words. */
char *it_text_of(const char *prefix, size_t n);
/* new: "/v1/threads/<thread>/memory-mode" */
char *it_mode_path(const char *thread);
/* Copies src into dst[n]; fails the running test when src is NULL or does not fit. */
void it_copy_str(char *dst, size_t n, const char *src);
/* id is prefix followed by exactly 32 lowercase hex digits. */
bool it_has_prefix_hex(const char *id, const char *prefix);

/* ---------------------------------------------------------------- JSON members */

/* borrowed helpers over r->json (NULL / -1 / false when missing or of another type) */
const char *it_json_str(const json_t *obj, const char *key);
long long it_json_int(const json_t *obj, const char *key, long long dflt);
bool it_json_has_null(const json_t *obj, const char *key);
/* obj[key] is a string equal to want (false when either is missing) */
bool it_json_str_is(const json_t *obj, const char *key, const char *want);

/* ---------------------------------------------------------------- time, shapes, metrics */

/* Wall-clock milliseconds since the epoch. */
long long it_now_ms(void);
/* Sleep ms milliseconds (through EINTR), or until the wall clock reaches `when`. */
void it_sleep_ms(long ms);
void it_sleep_until_ms(long long when);
/* RFC 3339 UTC with milliseconds and Z for years 1970..9999: 2026-11-29T21:07:22.123Z */
#define IT_TIME_LEN sizeof "YYYY-MM-DDTHH:MM:SS.mmmZ"
void it_rfc3339_ms(long long epoch_ms, char out[IT_TIME_LEN]);

/* The value of the /metrics sample whose line starts with exactly `series` + ' ' (labels
 * included, e.g. "recallgate_rate_limited_total"), or -1 when there is none. */
double it_metric_value(const char *text, const char *series);

/* "sha256:" + 64 lowercase hex */
bool it_is_sha256_ref(const char *s);
/* RFC 3339 UTC with milliseconds and Z: 2026-11-29T21:07:22.123Z */
bool it_is_timestamp_ms(const char *s);

/* ================================================================ harness_db.c */

/* new: a session of the test's own (DATABASE_URL) holding `table` locked in `mode` ("EXCLUSIVE",
 * "ACCESS EXCLUSIVE") in an open transaction, so that the server's statements on it wait
 * until it_db_unlock. Fails the current test when it cannot. */
PGconn *it_db_lock(const char *table, const char *mode);
/* Rolls the lock's transaction back and closes the session. */
void it_db_unlock(PGconn *locker);

#endif
