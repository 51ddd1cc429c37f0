#include "core/jsonx.h"

#include <string.h>

size_t core_json_depth(const char *buf, size_t len)
{
	size_t depth = 0, max = 0;
	int in_string = 0, escaped = 0;
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (in_string) {
			if (escaped)
				escaped = 0;
			else if (c == '\\')
				escaped = 1;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > max)
				max = depth;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return max;
}

json_t *core_json_parse_strict(const char *buf, size_t len)
{
	json_error_t err;
	if (buf == NULL || core_json_depth(buf, len) > RG_MAX_JSON_DEPTH)
		return NULL;
	/* A raw NUL is never valid JSON, but jansson skips one that follows a number or a
	 * literal: refuse it here. */
	if (memchr(buf, '\0', len) != NULL)
		return NULL;
	/* Without JSON_ALLOW_NUL jansson refuses "\u0000"; it always validates UTF-8. */
	return json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
}
