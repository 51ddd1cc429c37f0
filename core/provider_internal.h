/* Private to core/provider*.c: the character classes and JSON checks the registry, the
 * decision-context contract and the semantic-preference contract share. Defined in
 * core/provider_checks.c (the inline ones here). */
#ifndef RG_CORE_PROVIDER_INTERNAL_H
#define RG_CORE_PROVIDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <jansson.h>

static inline bool pv_is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static inline bool pv_is_alpha(char c)
{
	return pv_is_lower(c) || (c >= 'A' && c <= 'Z');
}

static inline bool pv_is_alnum(char c)
{
	return pv_is_alpha(c) || (c >= '0' && c <= '9');
}

/* ASCII whitespace: what separates summary words and what a reason_code may not hold. */
static inline bool pv_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool pv_in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Case-insensitive (ASCII) "w[0..n) starts with prefix". */
bool pv_starts_with_ci(const char *w, size_t n, const char *prefix);

/* needle occurs in w[0..n). */
bool pv_contains(const char *w, size_t n, const char *needle);

/* out[n] = a[0..alen) + b; on overflow out is "" (when n > 0) and the answer false. */
bool pv_write_joined(char *out, size_t n, const char *a, size_t alen, const char *b);

/* A JSON string of min..max bytes. */
bool pv_str_bytes(const json_t *v, size_t min, size_t max);

/* A JSON string equal to want. */
bool pv_str_is(const json_t *v, const char *want);

/* A JSON string from the NULL-terminated set. */
bool pv_str_in(const json_t *v, const char *const *set);

/* What pv_shape_problem says about one level of a document. */
struct pv_shape_whys {
	const char *not_object, *unknown, *missing;
};

/* NULL when o is an object whose members are exactly names[0..n_required) plus any of the
 * rest of names (NULL-terminated); else the matching why. Unknown members are reported
 * before missing ones. */
const char *pv_shape_problem(const json_t *o, const char *const *names, size_t n_required,
			     const struct pv_shape_whys *whys);

/* Inserts s[0..len) into the bytewise-sorted array of strings `arr` unless already there
 * (a new string; arr borrowed). Arrays here hold at most a few dozen strings
 * (openapi/openapi.yaml "Semantic preferences" bounds): a linear scan is enough. */
void pv_insert_sorted_unique(json_t *arr, const char *s, size_t len);

#endif
