/* JSON log lines on stderr: request id, route template, status, duration; never bodies,
 * queries, tokens or statements. The level is checked before formatting. */
#ifndef RG_SERVER_LOG_H
#define RG_SERVER_LOG_H

#include <stdbool.h>
#include "server/config.h"

void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);
void log_write(enum log_level level, const char *request_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One line per finished request. */
void log_access(const char *request_id, const char *method, const char *route, int status,
		double duration_ms, const char *problem_code, const char *sqlstate,
		const char *db_message);

#define log_error(rid, ...) \
	do { if (log_enabled(LOG_ERROR)) log_write(LOG_ERROR, rid, __VA_ARGS__); } while (0)
#define log_warn(rid, ...) \
	do { if (log_enabled(LOG_WARN)) log_write(LOG_WARN, rid, __VA_ARGS__); } while (0)
#define log_info(rid, ...) \
	do { if (log_enabled(LOG_INFO)) log_write(LOG_INFO, rid, __VA_ARGS__); } while (0)
#define log_debug(rid, ...) \
	do { if (log_enabled(LOG_DEBUG)) log_write(LOG_DEBUG, rid, __VA_ARGS__); } while (0)

#endif
