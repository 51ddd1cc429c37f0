/* core/jwt: the claim checks of an OAuth access token at their edges (exp and nbf exactly at
 * the 60 s leeway pass, one second past fails), the audience forms, the tenant claim, scope
 * parsing and the jwt_ actor id (which never holds the subject). */
#include "unit.h"

#include "core/hash.h"
#include "core/ids.h"
#include "core/jwt.h"

#define ISS "https://as.example"
#define RES "https://rg.example/mcp"
#define NOW 1800000000LL

static const struct jwt_policy policy = {.issuer = ISS, .resource = RES, .tenant_claim = "tenant"};

#define BASE "\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"sub\":\"c1\",\"tenant\":\"t1\""
#define NONE 0x7fffffffLL /* an offset that leaves the claim out */

/* One case: the claims without exp and nbf, which are set from their offsets to NOW (exp as
 * exp_kind says: 'i' an integer, 'r' that + 0.9, 's' a string), and the verdict. */
static const struct {
	const char *name;
	const char *claims;
	long long exp_off, nbf_off;
	char exp_kind;
	enum jwt_verdict want;
} cases[] = {
	{"valid", "{" BASE "}", 300, -10, 'i', JWT_OK},
	{"exp exactly at the leeway", "{" BASE "}", -RG_JWT_LEEWAY_S, -600, 'i', JWT_OK},
	{"exp one second past the leeway", "{" BASE "}", -RG_JWT_LEEWAY_S - 1, -600, 'i',
	 JWT_EXPIRED},
	{"nbf exactly at the leeway", "{" BASE "}", 600, RG_JWT_LEEWAY_S, 'i', JWT_OK},
	{"nbf one second before the leeway", "{" BASE "}", 600, RG_JWT_LEEWAY_S + 1, 'i',
	 JWT_NOT_YET_VALID},
	{"exp as a fraction", "{" BASE "}", -RG_JWT_LEEWAY_S, NONE, 'r', JWT_OK},
	{"no exp", "{" BASE "}", NONE, NONE, 'i', JWT_EXPIRED},
	{"exp a string", "{" BASE "}", 300, NONE, 's', JWT_EXPIRED},
	{"audience in an array", "{\"iss\":\"" ISS "\",\"aud\":[\"other\",\"" RES "\"],"
	 "\"sub\":\"c1\",\"tenant\":\"t1\"}", 300, NONE, 'i', JWT_OK},
	{"another audience", "{\"iss\":\"" ISS "\",\"aud\":\"https://rg.example/mcp/\","
	 "\"sub\":\"c1\",\"tenant\":\"t1\"}", 300, NONE, 'i', JWT_WRONG_AUDIENCE},
	{"no audience", "{\"iss\":\"" ISS "\",\"sub\":\"c1\",\"tenant\":\"t1\"}", 300, NONE, 'i',
	 JWT_WRONG_AUDIENCE},
	{"another issuer", "{\"iss\":\"" ISS "/\",\"aud\":\"" RES "\",\"sub\":\"c1\","
	 "\"tenant\":\"t1\"}", 300, NONE, 'i', JWT_WRONG_ISSUER},
	{"no issuer", "{\"aud\":\"" RES "\",\"sub\":\"c1\",\"tenant\":\"t1\"}", 300, NONE, 'i',
	 JWT_WRONG_ISSUER},
	{"no tenant", "{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"sub\":\"c1\"}", 300, NONE, 'i',
	 JWT_NO_TENANT},
	{"a tenant that is no id", "{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"sub\":\"c1\","
	 "\"tenant\":\"a b\"}", 300, NONE, 'i', JWT_NO_TENANT},
	{"a tenant that is a number", "{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"sub\":\"c1\","
	 "\"tenant\":7}", 300, NONE, 'i', JWT_NO_TENANT},
	{"no subject", "{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"tenant\":\"t1\"}", 300, NONE,
	 'i', JWT_MALFORMED},
	{"scope not a string", "{" BASE ",\"scope\":[\"admin\"]}", 300, NONE, 'i', JWT_MALFORMED},
};

static void test_claim_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		json_t *claims = json_loads(cases[i].claims, 0, NULL);
		assert_non_null(claims);
		long long exp = NOW + cases[i].exp_off, nbf = NOW + cases[i].nbf_off;
		char text[24];
		snprintf(text, sizeof text, "%lld", exp);
		if (cases[i].exp_off != NONE)
			json_object_set_new(claims, "exp",
					    cases[i].exp_kind == 's'   ? json_string(text)
					    : cases[i].exp_kind == 'r' ? json_real((double)exp + 0.9)
								       : json_integer(exp));
		if (cases[i].nbf_off != NONE)
			json_object_set_new(claims, "nbf", json_integer(nbf));
		struct jwt_subject who;
		enum jwt_verdict got = core_jwt_check(claims, &policy, NOW, &who);
		if (got != cases[i].want)
			print_error("case \"%s\": got %s, want %s\n", cases[i].name,
				    core_jwt_verdict_name(got), core_jwt_verdict_name(cases[i].want));
		assert_int_equal(got, cases[i].want);
		json_decref(claims);
	}
	assert_int_equal(core_jwt_check(NULL, &policy, NOW, &(struct jwt_subject){0}),
			 JWT_MALFORMED);
}

static void test_subject_filled(void **state)
{
	(void)state;
	json_t *claims = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "iss", ISS, "aud", RES, "sub",
				   "agent-7", "org", "acme", "scope", "memory:read  memory:write",
				   "exp", (json_int_t)(NOW + 60));
	struct jwt_policy org = policy;
	org.tenant_claim = "org";
	struct jwt_subject who;
	assert_int_equal(core_jwt_check(claims, &org, NOW, &who), JWT_OK);
	assert_string_equal(who.tenant_id, "acme");
	assert_int_equal(who.scopes, RG_SCOPE_MEMORY_READ | RG_SCOPE_MEMORY_WRITE);
	char want[RG_JWT_ACTOR_SIZE];
	core_jwt_actor_id(ISS, "agent-7", want);
	assert_string_equal(who.actor_id, want);
	json_decref(claims);
}

static void test_scopes(void **state)
{
	(void)state;
	assert_int_equal(core_jwt_scopes(NULL), 0);
	assert_int_equal(core_jwt_scopes(""), 0);
	assert_int_equal(core_jwt_scopes("   "), 0);
	assert_int_equal(core_jwt_scopes("admin"), RG_SCOPE_ADMIN);
	assert_int_equal(core_jwt_scopes(" audit:read  events:read "),
			 RG_SCOPE_AUDIT_READ | RG_SCOPE_EVENTS_READ);
	/* OAuth's own and unknown names grant nothing; a comma is no separator */
	assert_int_equal(core_jwt_scopes("openid offline_access memory:read,memory:write"), 0);
	assert_int_equal(core_jwt_scopes("memory:read memory:read"), RG_SCOPE_MEMORY_READ);
	/* a name longer than any scope is skipped, not cut to one */
	assert_int_equal(core_jwt_scopes("memory:readxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
					 "xxxxxxxxxxxx admin"),
			 RG_SCOPE_ADMIN);
}

static void test_actor_id(void **state)
{
	(void)state;
	char id[RG_JWT_ACTOR_SIZE], hex[RG_SHA256_HEX_LEN + 1];
	core_jwt_actor_id("https://as.example", "alice", id);
	core_sha256_hex("https://as.example\nalice", strlen("https://as.example\nalice"), hex);
	assert_int_equal(strlen(id), 36);
	assert_memory_equal(id, "jwt_", 4);
	assert_memory_equal(id + 4, hex, 32);
	assert_null(strstr(id, "alice"));
	/* the issuer is part of it: one subject at two issuers is two actors */
	char other[RG_JWT_ACTOR_SIZE];
	core_jwt_actor_id("https://as2.example", "alice", other);
	assert_string_not_equal(id, other);
	/* the separator keeps where the issuer ends: ("ab", "c") and ("a", "bc") differ */
	char ab_c[RG_JWT_ACTOR_SIZE], a_bc[RG_JWT_ACTOR_SIZE];
	core_jwt_actor_id("ab", "c", ab_c);
	core_jwt_actor_id("a", "bc", a_bc);
	assert_string_not_equal(ab_c, a_bc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_cases),
		cmocka_unit_test(test_subject_filled),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_actor_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
