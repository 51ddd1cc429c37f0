/* The provider registry (permissions, URLs, resolution) and the doctor answer
 * (openapi/openapi.yaml "Providers"). The contracts of the two protocols: core/provider_dc.c
 * and core/provider_sp.c. */
#include "core/provider.h"

#include <string.h>

#include "core/provider_internal.h"

/* ---- registry ------------------------------------------------------------------- */

const char *core_provider_permission(const char *protocol)
{
	if (protocol == NULL)
		return NULL;
	if (strcmp(protocol, RG_PROTO_DC) == 0)
		return RG_PERM_DC;
	if (strcmp(protocol, RG_PROTO_SP) == 0)
		return RG_PERM_SP;
	return NULL;
}

bool core_provider_url_valid(const char *url)
{
	size_t len, skip;
	if (url == NULL || (len = strlen(url)) > RG_PROVIDER_URL_MAX)
		return false;
	if (pv_starts_with_ci(url, len, "http://"))
		skip = 7;
	else if (pv_starts_with_ci(url, len, "https://"))
		skip = 8;
	else
		return false;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '#')
			return false;
	const char *authority = url + skip;
	size_t authority_len = strcspn(authority, "/");
	if (memchr(authority, '@', authority_len) != NULL)
		return false;
	return strcspn(authority, "/?:") > 0;
}

bool core_provider_doctor_url(const char *endpoint_url, const char *doctor_url, char *out,
			      size_t n)
{
	if (doctor_url != NULL)
		return pv_write_joined(out, n, doctor_url, strlen(doctor_url), "");
	size_t len = strlen(endpoint_url);
	if (len > 0 && endpoint_url[len - 1] == '/')
		len--;
	return pv_write_joined(out, n, endpoint_url, len, "/doctor");
}

enum core_resolve core_provider_resolve(const struct core_provider_cand *cands, size_t n,
					const char *protocol, const char *explicit_id,
					size_t *chosen)
{
	size_t found = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct core_provider_cand *c = &cands[i];
		if (strcmp(c->protocol, protocol) != 0)
			continue;
		if (explicit_id != NULL && strcmp(c->extension_id, explicit_id) == 0) {
			if (!c->enabled)
				return CORE_RESOLVE_DISABLED;
			if (!c->ready)
				return CORE_RESOLVE_NOT_READY;
			found = i;
			count = 1;
			break; /* extension ids are unique in a tenant */
		}
		if (explicit_id == NULL && c->enabled && c->ready && count++ == 0)
			found = i;
	}
	if (count == 0)
		return CORE_RESOLVE_MISSING;
	if (count > 1)
		return CORE_RESOLVE_AMBIGUOUS;
	if (chosen)
		*chosen = found;
	return CORE_RESOLVE_OK;
}

const char *core_resolve_reason(enum core_resolve r)
{
	switch (r) {
	case CORE_RESOLVE_OK:
		return NULL;
	case CORE_RESOLVE_MISSING:
		return "provider_missing";
	case CORE_RESOLVE_AMBIGUOUS:
		return "provider_ambiguous";
	case CORE_RESOLVE_DISABLED:
		return "provider_disabled";
	case CORE_RESOLVE_NOT_READY:
		return "provider_not_ready";
	}
	return NULL;
}

/* ---- doctor ---------------------------------------------------------------------- */

enum core_doctor core_doctor_check(const json_t *answer, const char *protocol)
{
	const json_t *proto = json_object_get(answer, "protocol");
	if (!json_is_object(answer) || !json_is_true(json_object_get(answer, "ok")) ||
	    !json_is_string(proto))
		return CORE_DOCTOR_INVALID;
	return protocol && pv_str_is(proto, protocol) ? CORE_DOCTOR_OK : CORE_DOCTOR_MISMATCH;
}
