/*
 * it_memory_assents — assents end to end: the seed's acceptance test 4 (foreign sources admitted
 * by assent); assent revoked and assent expired after admission.
 * openapi/openapi.yaml "Conventions", "Assents", "Memory governance"; docs/memory-contract.md;
 * the seed memory-source-policy-proposal.txt; issue 4. Helpers: memory_helpers.h.
 *
 * Every test runs in its own tenant (so lists, searches and audit logs hold only what the test
 * wrote) and uses distinctive marker words (qz…) so that full-text queries are precise and the
 * "no content" assertions on raw bodies mean something.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memory_helpers.h"

#define UNKNOWN_ASN "asn_00000000000000000000000000000000"

/* ================================================================ acceptance 4 */

static void expect_denied(const struct it_resp *r, const char *code, const char *identity)
{
	IT_PROBLEM(r, 403, code);
	IT_CHECK(it_json_str_is(r->json, "source_identity", identity),
		 "the %s 403 does not carry source_identity %s: %s", code, identity, r->body);
}

/*
 * Seed acceptance test 4: "A foreign-source candidate without valid canonical-owner assent
 * creates no derivative; a valid thin pointer can be admitted."
 */
static void test_acceptance4_foreign_assent(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc4");
	char *owner = it_unique("ownerx");
	char *other_owner = it_unique("ownery");
	char *granter = token_for(&t, "assent:grant", owner);
	char *writer = token_for(&t, "memory:write", "it-writer");
	const char *uri = "https://foreign-qzaccfour.example/facts/1";
	char phash[REF_LEN], ident[REF_LEN], other_ident[REF_LEN];
	sha256_str("the foreign fact's bytes (acc4)", phash);
	identity_of(owner, uri, phash, ident);
	identity_of(owner, "https://foreign-qzaccfour.example/facts/2", phash, other_ident);

	/* an assent that will expire while the other cases run */
	char expiring[ID_MAX], when[IT_TIME_LEN];
	long long expires = it_now_ms() + 2000;
	it_rfc3339_ms(expires, when);
	assent_grant(granter, owner, ident, when, expiring);

	json_t *src0 = list_all(t.admin, "/v1/memory/sources");
	json_t *drv0 = list_all(t.admin, "/v1/memory/derivatives");
	size_t audit0 = audit_count(t.admin, "source", NULL);
	IT_CHECK(json_array_size(src0) == 0 && json_array_size(drv0) == 0, "a fresh tenant");
	struct it_resp r;

	/* no assent_id */
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, NULL), NULL,
		  &r);
	expect_denied(&r, "assent_missing", ident);
	it_resp_free(&r);
	/* unknown id */
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, UNKNOWN_ASN), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, "not-an-assent"), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	/* another owner's assent, bound to this very identity */
	char foreign_owned[ID_MAX];
	assent_grant(t.admin, other_owner, ident, FAR_FUTURE, foreign_owned);
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, foreign_owned), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	/* revoked */
	char revoked[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, revoked);
	assent_revoke(granter, revoked, 1, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_is_timestamp_ms(it_json_str(r.json, "revoked_at")) &&
		     it_json_int(r.json, "revision", -1) == 2,
		 "assent revoke answer: %s", r.body);
	it_resp_free(&r);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, revoked),
		  NULL, &r);
	expect_denied(&r, "assent_revoked", ident);
	it_resp_free(&r);
	/* bound to another identity */
	char stale[ID_MAX];
	assent_grant(granter, owner, other_ident, FAR_FUTURE, stale);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, stale),
		  NULL, &r);
	expect_denied(&r, "assent_stale", ident);
	it_resp_free(&r);
	/* expired */
	it_sleep_until_ms(expires + 600);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, expiring),
		  NULL, &r);
	expect_denied(&r, "assent_expired", ident);
	it_resp_free(&r);

	/* nothing was stored: no source, no derivative, no audit record */
	json_t *src1 = list_all(t.admin, "/v1/memory/sources");
	json_t *drv1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(src0, src1, "sources after refused admissions");
	expect_same_json(drv0, drv1, "derivatives after refused admissions");
	IT_CHECK(audit_count(t.admin, "source", NULL) == audit0, "a refused admission was audited");
	json_decref(src1);
	json_decref(drv1);

	/* a live assent with inline content: a thin pointer is required */
	char live[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, live);
	json_t *b = note_body("qzaccfour inline foreign fact", NULL, NULL);
	json_t *f = json_object();
	json_object_set_new(f, "owner", json_string(owner));
	json_object_set_new(f, "assent_id", json_string(live));
	json_object_set_new(b, "foreign", f);
	send_json("POST", "/v1/memory/sources", writer, b, NULL, &r);
	expect_422(&r, "thin_pointer_required", "content", true, "foreign inline content");
	it_resp_free(&r);
	src1 = list_all(t.admin, "/v1/memory/sources");
	expect_same_json(src0, src1, "sources after an inline foreign candidate");
	json_decref(src1);

	/* the valid thin pointer with live assent is admitted */
	char fid[ID_MAX];
	json_t *s = create_source(writer, pointer_body(uri, phash, owner, live), fid);
	IT_CHECK(it_json_str_is(s, "source_identity", ident),
		 "the admitted source's identity is not sha256(owner\\nuri\\ncontent_hash)");
	IT_CHECK(it_json_str_is(s, "content_hash", phash),
		 "a pointer's content_hash is not the pointer's");
	IT_CHECK(it_json_str_is(s, "effective_retrieval_state", "eligible"),
		 "the admitted source is not eligible");
	json_decref(s);
	expect_state(t.admin, fid, "eligible", "", 1);
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", fid);
	get(path, t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(json_object_get(r.json, "pointer"), "uri", uri) &&
		     !json_object_get(r.json, "content"),
		 "content of the admitted pointer: %s", r.body);
	it_resp_free(&r);
	src1 = list_all(t.admin, "/v1/memory/sources");
	expect_id_set(src1, "source_id", "sources after admission", fid, NULL);
	json_decref(src1);
	drv1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(drv0, drv1, "admission creates no derivative");
	json_decref(drv1);

	json_decref(src0);
	json_decref(drv0);
	free(owner);
	free(other_owner);
	free(granter);
	free(writer);
	tenant_free(&t);
}

/* ================================================================ assent after admission */

struct admitted {
	char assent[ID_MAX];
	char source[ID_MAX];
	char derivative[ID_MAX];
	char identity[REF_LEN];
};

static void admit(const char *granter, const char *writer, const char *owner, const char *uri,
		  const char *expires_at, const char *summary, struct admitted *a)
{
	char phash[REF_LEN];
	sha256_str(uri, phash);
	identity_of(owner, uri, phash, a->identity);
	assent_grant(granter, owner, a->identity, expires_at, a->assent);
	json_t *s = create_source(writer, pointer_body(uri, phash, owner, a->assent), a->source);
	IT_CHECK(it_json_str_is(s, "source_identity", a->identity) &&
		     it_json_str_is(s, "effective_retrieval_state", "eligible"),
		 "admission of %s", uri);
	json_decref(s);
	derive(writer, "summary", df(a->source, 1), summary, a->derivative);
}

static void test_assent_revoked_after_admission(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-asnrev");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	char *writer = token_for(&t, "memory:write", "it-writer");
	char *reader = token_for(&t, "memory:read", "it-reader");
	struct admitted a, keep;
	admit(granter, writer, owner, "https://asnrev.example/one", FAR_FUTURE,
	      "qzasnrev summary of a foreign fact", &a);
	admit(granter, writer, owner, "https://asnrev.example/two", FAR_FUTURE,
	      "qzasnkeep summary of another foreign fact", &keep);
	json_t *s = search_ok(reader, "qzasnrev", NULL);
	expect_id_set(items_of(s), "record_id", "search before the assent is revoked",
		      a.derivative, NULL);
	json_decref(s);

	struct it_resp r;
	assent_revoke(granter, a.assent, 2, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	expect_state(reader, a.source, "eligible", "", 1);
	assent_revoke(granter, a.assent, 1, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "assent_id", a.assent) &&
		     it_json_str_is(r.json, "owner", owner) &&
		     it_json_str_is(r.json, "source_identity", a.identity) &&
		     it_json_int(r.json, "revision", -1) == 2 &&
		     it_is_timestamp_ms(it_json_str(r.json, "revoked_at")),
		 "assent revoke answer: %s", r.body);
	it_resp_free(&r);
	assent_revoke(granter, a.assent, 2, &r);
	IT_PROBLEM(&r, 409, "already_revoked");
	it_resp_free(&r);

	/* at once: the source and its derivative */
	expect_state(reader, a.source, "ineligible", "assent_revoked", 1);
	expect_state(reader, a.derivative, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzasnrev", "after the assent was revoked");
	json_t *ex = explain_ok(reader, "qzasnrev", NULL);
	expect_ex(ex, a.derivative, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	json_t *l = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(l, "source_id", "ineligible sources", a.source, NULL);
	json_decref(l);
	json_t *rb = readback(reader, a.source);
	IT_CHECK(json_is_false(json_object_get(rb, "revoked")) &&
		     it_json_int(rb, "residual_eligible", -1) == 0 &&
		     json_is_true(json_object_get(rb, "clean")) &&
		     it_json_str_is(json_array_get(json_object_get(rb, "derivatives"), 0),
				    "effective_retrieval_state", "ineligible"),
		 "readback after the assent was revoked");
	json_decref(rb);
	/* the other admission (another assent) is untouched */
	expect_state(reader, keep.source, "eligible", "", 1);
	s = search_ok(reader, "qzasnkeep", NULL);
	expect_id_set(items_of(s), "record_id", "the other foreign summary", keep.derivative, NULL);
	json_decref(s);

	free(owner);
	free(granter);
	free(writer);
	free(reader);
	tenant_free(&t);
}

static void test_assent_expired_after_admission(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-asnexp");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	char *reader = token_for(&t, "memory:read", "it-reader");
	struct admitted a;
	char when[IT_TIME_LEN];
	long long expires = it_now_ms() + 3000;
	it_rfc3339_ms(expires, when);
	admit(granter, t.admin, owner, "https://asnexp.example/one", when,
	      "qzasnexp summary of a foreign fact", &a);
	json_t *s = search_ok(reader, "qzasnexp", NULL);
	IT_CHECK(it_now_ms() < expires, "the test was too slow to see the live assent");
	expect_id_set(items_of(s), "record_id", "search before expiry", a.derivative, NULL);
	json_decref(s);
	expect_state(reader, a.source, "eligible", "", 1);

	it_sleep_until_ms(expires + 600);
	expect_state(reader, a.source, "ineligible", "assent_expired", 1);
	expect_state(reader, a.derivative, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzasnexp", "after the assent expired");
	json_t *ex = explain_ok(reader, "qzasnexp", NULL);
	expect_ex(ex, a.derivative, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	json_t *l = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(l, "source_id", "ineligible sources after expiry", a.source, NULL);
	json_decref(l);
	l = list_all(reader, "/v1/memory/sources?state=eligible");
	expect_id_set(l, "source_id", "eligible sources after expiry", NULL);
	json_decref(l);
	/* a derivative of it can no longer be made */
	struct it_resp r;
	post_derivative(t.admin, "summary", df(a.source, 1), "qzasnexp late summary", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);

	free(owner);
	free(granter);
	free(reader);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_acceptance4_foreign_assent),
	    cmocka_unit_test(test_assent_revoked_after_admission),
	    cmocka_unit_test(test_assent_expired_after_admission),
	};
	int rc = cmocka_run_group_tests_name("it_memory_assents", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
