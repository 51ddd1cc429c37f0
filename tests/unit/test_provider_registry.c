/* core/provider: the provider registry (openapi/openapi.yaml "Providers",
 * docs/providers-contract.md) — the read permission of each protocol, endpoint and doctor URLs,
 * resolving the provider a call uses, and the doctor answer. */
#include "unit.h"

#include <jansson.h>

#include "core/provider.h"
#include "provider_helpers.h"

/* ---- registry ---------------------------------------------------------------------- */

static void test_permission(void **state)
{
	(void)state;
	assert_string_equal(core_provider_permission(RG_PROTO_DC), "decision_context.read");
	assert_string_equal(core_provider_permission(RG_PROTO_SP), "semantic_preference.read");
	assert_null(core_provider_permission("decision_context_advisory_provider_v1"));
	assert_null(core_provider_permission(""));
	assert_null(core_provider_permission(NULL));
}

static void test_url_valid(void **state)
{
	(void)state;
	static const struct {
		const char *url;
		bool valid;
	} rows[] = {
		{"http://a", true},
		{"https://example.com/x?y=1", true},
		{"HTTP://A", true},
		{"HtTpS://h:8080/p", true},
		{"http://127.0.0.1:9/dc/good", true},
		{"http://[::1]:8080/", true},
		{"http://h/a@b", true},            /* '@' after the first '/' is a path byte */
		{"http://h/%20x", true},
		{"http://h?q=1", true},
		{"", false},
		{"ftp://h/", false},
		{"file:///etc/passwd", false},
		{"http:/h", false},
		{"http//h", false},
		{"httpx://h", false},
		{" http://h", false},
		{"http://", false},                /* empty host */
		{"http:///x", false},
		{"http://:80/", false},
		{"http://?q=1", false},
		{"http://u@h/", false},            /* userinfo */
		{"http://u:p@h:80/x", false},
		{"http://h@/", false},
		{"http://h?x=a@b", false},         /* '@' before the first '/' */
		{"http://h/#frag", false},
		{"http://h#", false},
		{"http://h /", false},
		{"http://h/\t", false},
		{"http://h/\x01", false},
		{"http://h/\x1f", false},
		{"http://h/\x7f", false},
		{"http://h/\xc3\xa9", false},      /* ≥ 0x80 */
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++)
		if (core_provider_url_valid(rows[i].url) != rows[i].valid)
			fail_msg("url %s: want %s", rows[i].url, rows[i].valid ? "valid" : "invalid");
	assert_false(core_provider_url_valid(NULL));

	/* exactly RG_PROVIDER_URL_MAX bytes passes, one more fails */
	char *url = xstr(RG_PROVIDER_URL_MAX + 1);
	memcpy(url, "http://h/", 9);
	assert_false(core_provider_url_valid(url));
	url[RG_PROVIDER_URL_MAX] = '\0';
	assert_int_equal(strlen(url), RG_PROVIDER_URL_MAX);
	assert_true(core_provider_url_valid(url));
	free(url);
}

static void test_doctor_url(void **state)
{
	(void)state;
	char out[64];
	assert_true(core_provider_doctor_url("http://h/dc/good", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/dc/good/doctor");
	assert_true(core_provider_doctor_url("http://h/dc/good/", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/dc/good/doctor");
	assert_true(core_provider_doctor_url("http://h", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/doctor");
	/* only one trailing '/' is dropped */
	assert_true(core_provider_doctor_url("http://h/x//", NULL, out, sizeof out));
	assert_string_equal(out, "http://h/x//doctor");
	/* an explicit doctor_url is used as it is */
	assert_true(core_provider_doctor_url("http://h/dc", "http://h/ready/", out, sizeof out));
	assert_string_equal(out, "http://h/ready/");
	assert_true(core_provider_doctor_url("http://h/dc", "", out, sizeof out));
	assert_string_equal(out, "");

	/* "http://h/dc/doctor" is 18 bytes: 19 with the NUL fits, 18 does not */
	char small[19];
	assert_true(core_provider_doctor_url("http://h/dc/", NULL, small, 19));
	assert_string_equal(small, "http://h/dc/doctor");
	assert_false(core_provider_doctor_url("http://h/dc/", NULL, small, 18));
	assert_string_equal(small, "");
	assert_false(core_provider_doctor_url("http://h/dc", NULL, small, 1));
	assert_string_equal(small, "");
	strcpy(small, "untouched");
	assert_false(core_provider_doctor_url("http://h/dc", NULL, small, 0));
	assert_string_equal(small, "untouched");
	/* an explicit one that does not fit */
	assert_true(core_provider_doctor_url("http://h", "http://h/012345678", small, 19));
	assert_string_equal(small, "http://h/012345678");
	assert_false(core_provider_doctor_url("http://h", "http://h/0123456789", small, 19));
	assert_string_equal(small, "");
}

/* ---- resolution -------------------------------------------------------------------- */

static const struct core_provider_cand cands[] = {
	{"dc-a", RG_PROTO_DC, true, true},    /* 0: the only dispatchable dc provider */
	{"dc-off", RG_PROTO_DC, false, true}, /* 1 */
	{"dc-new", RG_PROTO_DC, true, false}, /* 2 */
	{"sp-a", RG_PROTO_SP, true, true},    /* 3 */
	{"dc-both", RG_PROTO_DC, false, false}, /* 4: disabled and not ready */
};

#define UNTOUCHED ((size_t)999)

static void expect_resolve(const struct core_provider_cand *c, size_t n, const char *protocol,
			   const char *id, enum core_resolve want, size_t want_index)
{
	size_t chosen = UNTOUCHED;
	enum core_resolve got = core_provider_resolve(c, n, protocol, id, &chosen);
	if (got != want)
		fail_msg("resolve %s/%s: got %d, want %d", protocol, id ? id : "(implicit)", got,
			 want);
	assert_int_equal(chosen, want == CORE_RESOLVE_OK ? want_index : UNTOUCHED);
}

static void test_resolve_explicit(void **state)
{
	(void)state;
	size_t n = N_ELEMS(cands);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-a", CORE_RESOLVE_OK, 0);
	expect_resolve(cands, n, RG_PROTO_SP, "sp-a", CORE_RESOLVE_OK, 3);
	expect_resolve(cands, n, RG_PROTO_DC, "nope", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "sp-a", CORE_RESOLVE_MISSING, 0); /* other protocol */
	expect_resolve(cands, n, RG_PROTO_SP, "dc-a", CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-off", CORE_RESOLVE_DISABLED, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-new", CORE_RESOLVE_NOT_READY, 0);
	expect_resolve(cands, n, RG_PROTO_DC, "dc-both", CORE_RESOLVE_DISABLED, 0);
	expect_resolve(cands, 0, RG_PROTO_DC, "dc-a", CORE_RESOLVE_MISSING, 0);
	/* an explicit id is chosen even when several others are dispatchable */
	const struct core_provider_cand two[] = {
		{"dc-1", RG_PROTO_DC, true, true},
		{"dc-2", RG_PROTO_DC, true, true},
	};
	expect_resolve(two, 2, RG_PROTO_DC, "dc-2", CORE_RESOLVE_OK, 1);
	/* chosen may be NULL */
	assert_int_equal(core_provider_resolve(cands, n, RG_PROTO_DC, "dc-a", NULL),
			 CORE_RESOLVE_OK);
}

static void test_resolve_implicit(void **state)
{
	(void)state;
	expect_resolve(cands, 0, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(NULL, 0, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, N_ELEMS(cands), RG_PROTO_DC, NULL, CORE_RESOLVE_OK, 0);
	expect_resolve(cands, N_ELEMS(cands), RG_PROTO_SP, NULL, CORE_RESOLVE_OK, 3);
	/* only disabled / not ready / other-protocol candidates */
	expect_resolve(cands + 1, 2, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands + 4, 1, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands + 3, 1, RG_PROTO_DC, NULL, CORE_RESOLVE_MISSING, 0);
	expect_resolve(cands, 3, RG_PROTO_SP, NULL, CORE_RESOLVE_MISSING, 0);
	const struct core_provider_cand several[] = {
		{"dc-off", RG_PROTO_DC, false, true},
		{"dc-1", RG_PROTO_DC, true, true},
		{"sp-a", RG_PROTO_SP, true, true},
		{"dc-2", RG_PROTO_DC, true, true},
	};
	expect_resolve(several, 4, RG_PROTO_DC, NULL, CORE_RESOLVE_AMBIGUOUS, 0);
	expect_resolve(several, 3, RG_PROTO_DC, NULL, CORE_RESOLVE_OK, 1);
	expect_resolve(several, 4, RG_PROTO_SP, NULL, CORE_RESOLVE_OK, 2);
}

static void test_resolve_reason(void **state)
{
	(void)state;
	assert_null(core_resolve_reason(CORE_RESOLVE_OK));
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_MISSING), "provider_missing");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_AMBIGUOUS), "provider_ambiguous");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_DISABLED), "provider_disabled");
	assert_string_equal(core_resolve_reason(CORE_RESOLVE_NOT_READY), "provider_not_ready");
}

/* ---- doctor ------------------------------------------------------------------------ */

static void test_doctor_check(void **state)
{
	(void)state;
	static const struct {
		const char *answer;
		enum core_doctor want;
	} rows[] = {
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_OK},
		{"{\"protocol\": \"" RG_PROTO_DC "\", \"ok\": true, \"version\": \"1\", \"x\": null}",
		 CORE_DOCTOR_OK},
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_SP "\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": true, \"protocol\": \"\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": true, \"protocol\": \"" RG_PROTO_DC "x\"}", CORE_DOCTOR_MISMATCH},
		{"{\"ok\": false, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": 1, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": \"true\", \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": null, \"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"protocol\": \"" RG_PROTO_DC "\"}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": null}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": 5}", CORE_DOCTOR_INVALID},
		{"{\"ok\": true, \"protocol\": [\"" RG_PROTO_DC "\"]}", CORE_DOCTOR_INVALID},
		{"{}", CORE_DOCTOR_INVALID},
		{"[]", CORE_DOCTOR_INVALID},
		{"\"" RG_PROTO_DC "\"", CORE_DOCTOR_INVALID},
		{"true", CORE_DOCTOR_INVALID},
	};
	for (size_t i = 0; i < N_ELEMS(rows); i++) {
		json_t *a = parse(rows[i].answer);
		enum core_doctor got = core_doctor_check(a, RG_PROTO_DC);
		if (got != rows[i].want)
			fail_msg("doctor %s: got %d, want %d", rows[i].answer, got, rows[i].want);
		json_decref(a);
	}
	assert_int_equal(core_doctor_check(NULL, RG_PROTO_DC), CORE_DOCTOR_INVALID);
	json_t *sp = parse("{\"ok\": true, \"protocol\": \"" RG_PROTO_SP "\"}");
	assert_int_equal(core_doctor_check(sp, RG_PROTO_SP), CORE_DOCTOR_OK);
	assert_int_equal(core_doctor_check(sp, RG_PROTO_DC), CORE_DOCTOR_MISMATCH);
	json_decref(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permission),
		cmocka_unit_test(test_url_valid),
		cmocka_unit_test(test_doctor_url),
		cmocka_unit_test(test_resolve_explicit),
		cmocka_unit_test(test_resolve_implicit),
		cmocka_unit_test(test_resolve_reason),
		cmocka_unit_test(test_doctor_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
