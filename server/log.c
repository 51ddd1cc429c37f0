#include "server/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/timefmt.h"

static atomic_int current_level = LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
	atomic_store(&current_level, (int)level);
}

bool log_enabled(enum log_level level)
{
	return (int)level <= atomic_load(&current_level);
}

/* Appends s as a JSON string body (without quotes) to out. */
static size_t escape(char *out, size_t pos, size_t size, const char *s)
{
	for (; s && *s && pos + 7 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[pos++] = '\\';
			out[pos++] = (char)c;
		} else if (c < 0x20) {
			pos += (size_t)snprintf(out + pos, size - pos, "\\u%04x", c);
		} else {
			out[pos++] = (char)c;
		}
	}
	out[pos] = '\0';
	return pos;
}

static size_t start(char *line, size_t size, enum log_level level, const char *rid)
{
	struct timespec ts;
	char when[RG_TIME_SIZE];
	clock_gettime(CLOCK_REALTIME, &ts);
	core_time_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, when);
	size_t pos = (size_t)snprintf(line, size, "{\"ts\":\"%s\",\"level\":\"%s\",\"request_id\":\"",
				      when, level_names[level]);
	pos = escape(line, pos, size, rid ? rid : "");
	return pos;
}

static void emit(char *line, size_t pos, size_t size)
{
	if (pos + 3 > size)
		pos = size - 3;
	line[pos++] = '}';
	line[pos++] = '\n';
	fwrite(line, 1, pos, stderr);
}

void log_write(enum log_level level, const char *rid, const char *fmt, ...)
{
	char line[2048], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t pos = start(line, sizeof line, level, rid);
	pos += (size_t)snprintf(line + pos, sizeof line - pos, "\",\"msg\":\"");
	pos = escape(line, pos, sizeof line, msg);
	pos += (size_t)snprintf(line + pos, sizeof line - pos, "\"");
	emit(line, pos, sizeof line);
}

void log_access(const char *rid, const char *method, const char *route, int status,
		double duration_ms, const char *problem_code, const char *sqlstate,
		const char *db_message)
{
	enum log_level level = status >= 500 ? LOG_ERROR : LOG_INFO;
	char line[2048];
	if (!log_enabled(level))
		return;
	size_t pos = start(line, sizeof line, level, rid);
	pos += (size_t)snprintf(line + pos, sizeof line - pos, "\",\"msg\":\"request\",\"method\":\"");
	pos = escape(line, pos, sizeof line, method); /* the method is the client's text */
	pos += (size_t)snprintf(line + pos, sizeof line - pos, "\",\"route\":\"");
	pos = escape(line, pos, sizeof line, route);
	pos += (size_t)snprintf(line + pos, sizeof line - pos, "\",\"status\":%d,\"duration_ms\":%.3f",
				status, duration_ms);
	if (problem_code)
		pos += (size_t)snprintf(line + pos, sizeof line - pos, ",\"code\":\"%s\"", problem_code);
	/* SQLSTATE and db/'s error text are for operators; db/ keeps request values out of the
	 * text (see set_error in db/pool.c). */
	if (sqlstate && sqlstate[0]) {
		pos += (size_t)snprintf(line + pos, sizeof line - pos, ",\"sqlstate\":\"%s\"", sqlstate);
	}
	if (db_message && db_message[0]) {
		pos += (size_t)snprintf(line + pos, sizeof line - pos, ",\"db_error\":\"");
		pos = escape(line, pos, sizeof line, db_message);
		pos += (size_t)snprintf(line + pos, sizeof line - pos, "\"");
	}
	emit(line, pos, sizeof line);
}
