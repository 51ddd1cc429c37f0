/* The checks the provider contracts share (core/provider_internal.h says what each does). */
#include "core/provider_internal.h"

#include <string.h>

bool pv_starts_with_ci(const char *w, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	if (n < k)
		return false;
	for (size_t i = 0; i < k; i++) {
		char a = w[i], b = prefix[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

bool pv_contains(const char *w, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(w + i, needle, k) == 0)
			return true;
	return false;
}

bool pv_write_joined(char *out, size_t n, const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	if (alen >= n || blen >= n - alen) {
		if (n > 0)
			out[0] = '\0';
		return false;
	}
	memmove(out, a, alen);
	memcpy(out + alen, b, blen + 1);
	return true;
}

bool pv_str_bytes(const json_t *v, size_t min, size_t max)
{
	if (!json_is_string(v))
		return false;
	size_t n = json_string_length(v);
	return n >= min && n <= max;
}

bool pv_str_is(const json_t *v, const char *want)
{
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

bool pv_str_in(const json_t *v, const char *const *set)
{
	for (; *set; set++)
		if (pv_str_is(v, *set))
			return true;
	return false;
}

const char *pv_shape_problem(const json_t *o, const char *const *names, size_t n_required,
			     const struct pv_shape_whys *whys)
{
	size_t present = 0;
	bool missing = false;
	if (!json_is_object(o))
		return whys->not_object;
	for (size_t i = 0; names[i]; i++) {
		if (json_object_get(o, names[i]))
			present++;
		else if (i < n_required)
			missing = true;
	}
	if (json_object_size(o) > present)
		return whys->unknown;
	return missing ? whys->missing : NULL;
}

void pv_insert_sorted_unique(json_t *arr, const char *s, size_t len)
{
	size_t i;
	if (s == NULL)
		return;
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		size_t elen = json_string_length(e);
		int c = memcmp(json_string_value(e), s, elen < len ? elen : len);
		if (c == 0 && elen == len)
			return;
		if (c > 0 || (c == 0 && elen > len))
			break;
	}
	json_array_insert_new(arr, i, json_stringn(s, len));
}
