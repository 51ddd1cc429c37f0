#include "core/lsn.h"

#include <stdio.h>

/* 1 to 8 hexadecimal digits up to `stop`; the position after them, or NULL. */
static const char *hex32(const char *s, char stop, uint32_t *out)
{
	uint32_t v = 0;
	int n = 0;
	for (; *s != stop; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return NULL;
		if (n == 8)
			return NULL;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return n == 0 ? NULL : s;
}

bool core_lsn_parse(const char *s, uint64_t *out)
{
	uint32_t hi, lo;
	const char *p = s ? hex32(s, '/', &hi) : NULL;
	if (p == NULL || hex32(p + 1, '\0', &lo) == NULL)
		return false;
	*out = (uint64_t)hi << 32 | lo;
	return true;
}

void core_lsn_format(uint64_t lsn, char out[RG_LSN_SIZE])
{
	snprintf(out, RG_LSN_SIZE, "%X/%X", (unsigned)(lsn >> 32), (unsigned)(lsn & 0xffffffffu));
}
