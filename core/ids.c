#include "core/ids.h"

#include <stdio.h>
#include <string.h>

static bool id_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '-';
}

static bool alnum(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool core_id_valid(const char *s)
{
	if (s == NULL || !alnum(s[0]))
		return false;
	size_t n = 1;
	for (; s[n] != '\0'; n++)
		if (n >= RG_MAX_ID_BYTES || !id_char(s[n]))
			return false;
	return true;
}

bool core_request_id_valid(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return false;
	for (size_t n = 0; s[n] != '\0'; n++)
		if (n >= RG_MAX_REQUEST_ID_BYTES || !id_char(s[n]))
			return false;
	return true;
}

static const char *const scope_names[RG_SCOPE_COUNT] = {
	"admin", "memory:read", "memory:write", "memory:admin", "assent:grant",
	"preferences:read", "preferences:write", "providers:admin", "decision_context.read",
	"semantic_preferences:use", "envelopes:read", "envelopes:write", "audit:read",
	"events:read",
};

unsigned core_scope_from_name(const char *name)
{
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++)
		if (strcmp(name, scope_names[i]) == 0)
			return 1u << i;
	return RG_SCOPE_NONE;
}

const char *core_scope_name(unsigned i)
{
	return i < RG_SCOPE_COUNT ? scope_names[i] : NULL;
}

bool core_scopes_parse_csv(const char *csv, unsigned *mask, struct core_scope_csv_error *bad)
{
	char name[64];
	unsigned m = 0;
	const char *p = csv;
	struct core_scope_csv_error scratch;
	if (bad == NULL)
		bad = &scratch;
	*bad = (struct core_scope_csv_error){0, 0, false};
	if (csv == NULL)
		return false;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		*bad = (struct core_scope_csv_error){(size_t)(p - csv), n, false};
		if (n == 0 || n >= sizeof name)
			return false;
		memcpy(name, p, n);
		name[n] = '\0';
		unsigned bit = core_scope_from_name(name);
		if (bit == RG_SCOPE_NONE)
			return false;
		if (m & bit) {
			bad->repeated = true;
			return false;
		}
		m |= bit;
		if (!end)
			break;
		p = end + 1;
	}
	*mask = m;
	return true;
}

bool core_scope_allows(unsigned held, unsigned needed)
{
	if (held & RG_SCOPE_ADMIN)
		return true;
	return (held & needed) == needed;
}

void core_scope_needed_detail(unsigned needed, char *out, size_t size)
{
	char names[RG_SCOPE_COUNT * 32] = "";
	unsigned named = 0;
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++) {
		if (!(needed & (1u << i)))
			continue;
		if (named++)
			strcat(names, ", ");
		strcat(names, scope_names[i]); /* ≤ 24 bytes each: names cannot overflow */
	}
	int n = snprintf(out, size, "This endpoint needs the scope%s %s%s", named > 1 ? "s" : "",
			 names, needed & RG_SCOPE_ADMIN ? "." : " (admin implies every scope).");
	if (n < 0 && size > 0)
		out[0] = '\0';
}
