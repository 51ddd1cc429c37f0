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

/* The CLOCK_REALTIME instant ms from now: the deadline pthread_cond_timedwait and
 * pthread_timedjoin_np take (condition variables without a clock attribute). */
static inline struct timespec realtime_in_ms(long long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
