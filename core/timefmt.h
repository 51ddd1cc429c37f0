/* RFC 3339 timestamps: UTC, milliseconds, "Z". */
#ifndef RG_CORE_TIMEFMT_H
#define RG_CORE_TIMEFMT_H

#include <stdbool.h>
#include <stdint.h>

#define RG_TIME_SIZE 25 /* "2026-11-29T21:07:22.123Z" + NUL */
/* "No time" (an absent expiry): no instant core_time_parse accepts is this far before the
 * epoch, so 1970-01-01T00:00:00Z (0) stays a real instant. */
#define RG_TIME_NONE INT64_MIN

/* Formats milliseconds since the epoch. */
void core_time_format(int64_t epoch_ms, char out[RG_TIME_SIZE]);
/* Parses "YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)" into epoch ms; rejects impossible dates
 * such as 2030-02-30. */
bool core_time_parse(const char *s, int64_t *epoch_ms);

#endif
