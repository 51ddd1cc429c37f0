/*
 * harness_values.c — see harness.h: what the tests make and read besides requests: tokens
 * (scripts/rg-launch, RG_LAUNCH_PATH) and unique names for tenants and threads, JSON members, wall-clock time and
 * RFC 3339 stamps, the shape of hashes and timestamps, /metrics samples.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness_internal.h"

/* ================================================================ tokens and names */

/* `rg-launch --no-server --token NAME:TENANT:SCOPES` (scripts/rg-launch, which also checks
 * that `token create` printed the token alone) and its JSON's tokens.NAME */
char *it_token(const char *tenant, const char *scopes, const char *name)
{
	const char *tname = name ? name : "cli"; /* the CLI's default name */
	size_t spec_len = strlen(tname) + strlen(tenant) + strlen(scopes) + 3;
	char *spec = xmalloc(spec_len);
	snprintf(spec, spec_len, "%s:%s:%s", tname, tenant, scopes);
	char *argv[] = {(char *)RG_LAUNCH_PATH, (char *)"--no-server", (char *)"--bin",
			(char *)RG_BIN_PATH,	 (char *)"--token",	    spec,
			NULL};
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0) {
		free(spec);
		return NULL;
	}
	pid_t pid = it_spawn(RG_LAUNCH_PATH, argv, NULL, out[1], STDERR_FILENO);
	close(out[1]);
	struct buf b = {0};
	char chunk[1024];
	ssize_t n;
	while (pid > 0 && (n = read(out[0], chunk, sizeof chunk)) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			buf_append(&b, chunk, (size_t)n);
	}
	close(out[0]);
	int status = pid > 0 ? it_wait_pid(pid, 60000) : -1;
	char *text = buf_take(&b, NULL);
	json_t *doc = status == 0 ? json_loads(text, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	const char *tok = json_string_value(json_object_get(json_object_get(doc, "tokens"), tname));
	char *copy = tok ? xstrdup(tok) : NULL;
	if (!copy)
		fprintf(stderr, "it_token: `rg-launch --token %s` exit %d: %s\n", spec, status, text);
	json_decref(doc);
	free(text);
	free(spec);
	return copy;
}

char *it_unique(const char *prefix)
{
	static atomic_uint counter;
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s-%ld-%lld-%u", prefix, (long)getpid(), (long long)time(NULL),
		 atomic_fetch_add(&counter, 1u));
	return xstrdup(tmp);
}

/* ================================================================ JSON members */

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

/* ================================================================ shapes of values */

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

/* ================================================================ time */

long long it_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
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

/* ================================================================ /metrics */

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

char *it_text_of(const char *prefix, size_t n)
{
	static const char filler[] = " lorem ipsum dolor sit amet";
	size_t p = strlen(prefix);
	char *s = xmalloc(n + 1);
	if (p > n)
		p = n;
	memcpy(s, prefix, p);
	for (size_t i = p; i < n; i++)
		s[i] = filler[(i - p) % (sizeof filler - 1)];
	s[n] = '\0';
	return s;
}

void it_copy_str(char *dst, size_t n, const char *src)
{
	IT_CHECK(src != NULL, "a string member is missing");
	IT_CHECK(strlen(src) < n, "a string member is too long for the test's buffer");
	snprintf(dst, n, "%s", src);
}

bool it_has_prefix_hex(const char *id, const char *prefix)
{
	size_t p = strlen(prefix);
	if (!id || strlen(id) != p + 32 || strncmp(id, prefix, p) != 0)
		return false;
	for (size_t i = p; i < p + 32; i++) {
		char ch = id[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return true;
}

char *it_mode_path(const char *thread)
{
	char buf[512];
	snprintf(buf, sizeof buf, "/v1/threads/%s/memory-mode", thread);
	return xstrdup(buf);
}
