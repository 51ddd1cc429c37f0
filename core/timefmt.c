#include "core/timefmt.h"

#include <stdio.h>
#include <string.h>

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	const unsigned doe = (unsigned)(z - era * 146097);
	const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	const unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* n decimal digits of v, zero-padded, at out */
static char *put_digits(char *out, unsigned v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		out[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return out + n;
}

/* Written digit by digit, not with snprintf: every timestamp of every answer passes here. */
void core_time_format(int64_t ms, char out[RG_TIME_SIZE])
{
	int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
	int64_t rem = ms - days * 86400000;
	int64_t y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		y = y < 0 ? 0 : 9999; /* outside RFC 3339's range: clamp rather than overflow */
	char *p = put_digits(out, (unsigned)y, 4);
	*p++ = '-';
	p = put_digits(p, m, 2);
	*p++ = '-';
	p = put_digits(p, d, 2);
	*p++ = 'T';
	p = put_digits(p, (unsigned)(rem / 3600000), 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)(rem / 60000 % 60), 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)(rem / 1000 % 60), 2);
	*p++ = '.';
	p = put_digits(p, (unsigned)(rem % 1000), 3);
	*p++ = 'Z';
	*p = '\0';
}

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool core_time_parse(const char *s, int64_t *epoch_ms)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, se, ms = 0;
	if (s == NULL || strlen(s) < 20)
		return false;
	if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59)
		return false;
	if (d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return false;
	const char *p = s + 19;
	if (*p == '.') {
		int nd = 0;
		p++;
		while (*p >= '0' && *p <= '9') {
			if (nd < 3)
				ms = ms * 10 + (*p - '0');
			nd++;
			p++;
		}
		if (nd == 0)
			return false;
		for (; nd < 3; nd++)
			ms *= 10;
	}
	int offset_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return false;
		offset_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return false;
	}
	if (*p != '\0')
		return false;
	int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
	*epoch_ms = ((days * 86400 + h * 3600 + mi * 60 + se) - (int64_t)offset_min * 60) * 1000 + ms;
	return true;
}
