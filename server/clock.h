/* The monotonic clock in milliseconds: deadlines, timeouts and cache ages in server/. */
#ifndef RG_SERVER_CLOCK_H
#define RG_SERVER_CLOCK_H

#include <time.h>

static inline long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
