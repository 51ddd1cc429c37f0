/* core_json_parse_strict (core/jsonx.c) on arbitrary bytes. Besides the sanitizers, every
 * input is checked against the promises of core/jsonx.h, each computed here independently:
 *   accepted → the bytes are strict UTF-8 with no NUL, the value nests at most 32 deep,
 *     no object lost a member to a duplicate key, no string or key holds a NUL, the value
 *     equals what plain jansson reads, and it re-serialises to text that parses back
 *     (strictly) to an equal value and serialises to the same text again;
 *   refused → plain jansson refuses it too, or it breaks one of those rules (the strict
 *     parser refuses nothing else). */
#include <stdbool.h>
#include <string.h>

#include "core/jsonx.h"
#include "fuzz.h"

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t more;
		uint8_t lo = 0x80, hi = 0xBF;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			more = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			more = 2;
			if (c == 0xE0)
				lo = 0xA0;
			if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			more = 3;
			if (c == 0xF0)
				lo = 0x90;
			if (c == 0xF4)
				hi = 0x8F;
		} else {
			return false;
		}
		if (n - i - 1 < more)
			return false;
		for (size_t k = 1; k <= more; k++) {
			uint8_t b = s[i + k];
			if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
				return false;
		}
		i += more + 1;
	}
	return true;
}

/* Object members written in the text: in JSON a ':' outside strings only ever separates a
 * key from its value. Meaningful for text that jansson accepted. */
static size_t text_members(const uint8_t *s, size_t n)
{
	size_t count = 0;
	bool in_string = false, escaped = false;
	for (size_t i = 0; i < n; i++) {
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (s[i] == '\\')
				escaped = true;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"') {
			in_string = true;
		} else if (s[i] == ':') {
			count++;
		}
	}
	return count;
}

struct shape {
	size_t depth;   /* arrays and objects on the deepest path; a scalar is 0 */
	size_t members; /* object members in the whole value */
	bool clean;     /* every string and key is NUL-free, valid UTF-8 */
};

static void measure(const json_t *v, size_t level, struct shape *sh)
{
	const char *key;
	json_t *child;
	size_t i;
	if (json_is_string(v) &&
	    (strlen(json_string_value(v)) != json_string_length(v) ||
	     !utf8_valid((const uint8_t *)json_string_value(v), json_string_length(v))))
		sh->clean = false;
	if (!json_is_object(v) && !json_is_array(v))
		return;
	if (level + 1 > sh->depth)
		sh->depth = level + 1;
	if (json_is_array(v)) {
		json_array_foreach(v, i, child)
			measure(child, level + 1, sh);
		return;
	}
	sh->members += json_object_size(v);
	json_object_foreach((json_t *)v, key, child) {
		if (!utf8_valid((const uint8_t *)key, strlen(key)))
			sh->clean = false;
		measure(child, level + 1, sh);
	}
}

static void check_round_trip(const json_t *v)
{
	const size_t flags = JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS;
	char *text = json_dumps(v, flags);
	FUZZ_ASSERT(text != NULL);
	json_t *again = core_json_parse_strict(text, strlen(text));
	FUZZ_ASSERT(again != NULL);
	FUZZ_ASSERT(json_equal(v, again));
	char *text2 = json_dumps(again, flags);
	FUZZ_ASSERT(text2 != NULL && strcmp(text, text2) == 0);
	free(text2);
	free(text);
	json_decref(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *strict = core_json_parse_strict((const char *)data, size);
	json_t *loose = json_loadb((const char *)data, size, JSON_DECODE_ANY, &err);
	bool has_nul = memchr(data, '\0', size) != NULL;

	if (strict) {
		struct shape sh = {0, 0, true};
		measure(strict, 0, &sh);
		FUZZ_ASSERT(!has_nul);
		FUZZ_ASSERT(utf8_valid(data, size));
		FUZZ_ASSERT(sh.depth <= RG_MAX_JSON_DEPTH);
		FUZZ_ASSERT(sh.depth == core_json_depth((const char *)data, size));
		FUZZ_ASSERT(sh.clean);
		FUZZ_ASSERT(sh.members == text_members(data, size)); /* no duplicate key */
		FUZZ_ASSERT(loose != NULL && json_equal(strict, loose));
		check_round_trip(strict);
	} else if (loose && !has_nul) {
		/* Plain jansson read it: it must break a strict rule. */
		struct shape sh = {0, 0, true};
		measure(loose, 0, &sh);
		FUZZ_ASSERT(sh.depth > RG_MAX_JSON_DEPTH || sh.members != text_members(data, size) ||
			    !sh.clean);
	}
	json_decref(strict);
	json_decref(loose);
	return 0;
}
