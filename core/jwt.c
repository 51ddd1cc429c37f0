#include "core/jwt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"

/* A NumericDate (RFC 7519 §2): a JSON number of seconds; a fraction counts as the whole
 * second before it. */
static bool numeric_date(const json_t *v, int64_t *out)
{
	if (!json_is_number(v))
		return false;
	double d = json_number_value(v);
	if (!isfinite(d) || d < -9.0e15 || d > 9.0e15)
		return false;
	int64_t whole = (int64_t)d; /* toward zero: one less below zero (floor, without libm) */
	*out = (double)whole > d ? whole - 1 : whole;
	return true;
}

static bool audience_has(const json_t *aud, const char *resource)
{
	if (json_is_string(aud))
		return strcmp(json_string_value(aud), resource) == 0;
	if (!json_is_array(aud))
		return false;
	size_t i;
	const json_t *v;
	json_array_foreach(aud, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), resource) == 0)
			return true;
	}
	return false;
}

enum jwt_verdict core_jwt_check(const json_t *claims, const struct jwt_policy *p, int64_t now_s,
				struct jwt_subject *out)
{
	if (!json_is_object(claims))
		return JWT_MALFORMED;
	const json_t *iss = json_object_get(claims, "iss"), *sub = json_object_get(claims, "sub"),
		     *scope = json_object_get(claims, "scope"),
		     *tenant = json_object_get(claims, p->tenant_claim),
		     *exp = json_object_get(claims, "exp"), *nbf = json_object_get(claims, "nbf");
	if (!json_is_string(iss) || strcmp(json_string_value(iss), p->issuer) != 0)
		return JWT_WRONG_ISSUER;
	if (!audience_has(json_object_get(claims, "aud"), p->resource))
		return JWT_WRONG_AUDIENCE;
	int64_t exp_s, nbf_s;
	if (!numeric_date(exp, &exp_s) || now_s > exp_s + RG_JWT_LEEWAY_S)
		return JWT_EXPIRED;
	if (nbf != NULL && (!numeric_date(nbf, &nbf_s) || now_s < nbf_s - RG_JWT_LEEWAY_S))
		return JWT_NOT_YET_VALID;
	if (!json_is_string(sub) || json_string_length(sub) == 0 ||
	    (scope != NULL && !json_is_string(scope)))
		return JWT_MALFORMED;
	if (!json_is_string(tenant) || !core_id_valid(json_string_value(tenant)))
		return JWT_NO_TENANT;
	memset(out, 0, sizeof *out);
	snprintf(out->tenant_id, sizeof out->tenant_id, "%s", json_string_value(tenant));
	core_jwt_actor_id(json_string_value(iss), json_string_value(sub), out->actor_id);
	out->scopes = core_jwt_scopes(json_string_value(scope));
	return JWT_OK;
}

unsigned core_jwt_scopes(const char *scope)
{
	unsigned mask = 0;
	char name[64];
	for (const char *s = scope; s && *s;) {
		size_t n = strcspn(s, " ");
		if (n > 0 && n < sizeof name) {
			memcpy(name, s, n);
			name[n] = '\0';
			mask |= core_scope_from_name(name);
		}
		s += n;
		while (*s == ' ')
			s++;
	}
	return mask;
}

void core_jwt_actor_id(const char *iss, const char *sub, char out[RG_JWT_ACTOR_SIZE])
{
	char hex[RG_SHA256_HEX_LEN + 1];
	size_t ni = strlen(iss), ns = strlen(sub);
	char *joined = malloc(ni + 1 + ns);
	if (joined == NULL) {
		/* no memory: an id that is no subject's, never the subject itself */
		snprintf(out, RG_JWT_ACTOR_SIZE, "jwt_%032d", 0);
		return;
	}
	memcpy(joined, iss, ni);
	joined[ni] = '\n';
	memcpy(joined + ni + 1, sub, ns);
	core_sha256_hex(joined, ni + 1 + ns, hex);
	free(joined);
	snprintf(out, RG_JWT_ACTOR_SIZE, "jwt_%.32s", hex);
}

const char *core_jwt_verdict_name(enum jwt_verdict v)
{
	switch (v) {
	case JWT_OK:
		return "ok";
	case JWT_MALFORMED:
		return "malformed";
	case JWT_WRONG_ISSUER:
		return "wrong_issuer";
	case JWT_WRONG_AUDIENCE:
		return "wrong_audience";
	case JWT_EXPIRED:
		return "expired";
	case JWT_NOT_YET_VALID:
		return "not_yet_valid";
	case JWT_NO_TENANT:
		return "no_tenant";
	}
	return "malformed";
}
