/*
 * it_memory_derivatives — derivatives end to end: the seed's acceptance test 5 (revocation
 * and its readback over derivatives); two-level derivative chains following their root (cold →
 * active → cold), revisions that never move on recomputation; derivative creation errors
 * (stale upstream, ineligible upstream, unknown upstream) that store nothing.
 * openapi/openapi.yaml "Revisions and If-Match", "Derivatives", "Memory governance";
 * docs/memory-contract.md; the seed memory-source-policy-proposal.txt; issue 4. Helpers:
 * memory_helpers.h.
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

#define UNKNOWN_SRC "src_00000000000000000000000000000000"
#define UNKNOWN_DRV "drv_00000000000000000000000000000000"

/* ================================================================ acceptance 5 */

static void expect_readback(const json_t *rb, const char *id, bool revoked, long long residual,
			    const char *d1, const char *d1_state, const char *d2,
			    const char *d2_state)
{
	char *text = json_dumps(rb, JSON_COMPACT);
	IT_CHECK(it_json_str_is(rb, "source_id", id), "readback source_id: %s", text);
	IT_CHECK(json_is_boolean(json_object_get(rb, "revoked")) &&
		     json_is_true(json_object_get(rb, "revoked")) == revoked,
		 "readback revoked is not %s: %s", revoked ? "true" : "false", text);
	IT_CHECK(it_json_int(rb, "residual_eligible", -1) == residual,
		 "residual_eligible is not %lld: %s", residual, text);
	IT_CHECK(json_is_boolean(json_object_get(rb, "clean")) &&
		     json_is_true(json_object_get(rb, "clean")) == (residual == 0),
		 "clean is not residual_eligible == 0: %s", text);
	const json_t *ds = json_object_get(rb, "derivatives");
	IT_CHECK(json_is_array(ds) && json_array_size(ds) == 2, "readback derivatives: %s", text);
	const json_t *e1 = item_by(ds, "derivative_id", d1);
	const json_t *e2 = item_by(ds, "derivative_id", d2);
	IT_CHECK(e1 && e2, "readback does not list both derivatives: %s", text);
	IT_CHECK(it_json_str_is(e1, "effective_retrieval_state", d1_state) &&
		     it_json_str_is(e2, "effective_retrieval_state", d2_state) &&
		     it_json_str_is(e1, "kind", "summary") && it_json_str_is(e2, "kind", "summary"),
		 "readback derivative states/kinds: %s", text);
	/* oldest first */
	IT_CHECK(it_json_str_is(json_array_get(ds, 0), "derivative_id", d1),
		 "readback derivatives are not oldest first: %s", text);
	free(text);
}

/*
 * Seed acceptance test 5: "Revocation prevents future native query and prompt use, and
 * readback shows no residual derivative eligible for retrieval."
 */
static void test_acceptance5_revocation(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc5");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char s[ID_MAX], d1[ID_MAX], d2[ID_MAX], u[ID_MAX];
	const char *cs = "qzaccfive root source qzrootword to be revoked";
	note(t.admin, cs, NULL, NULL, s, NULL);
	derive(t.admin, "summary", df(s, 1), "qzaccfive summary of the root", d1);
	derive(t.admin, "summary", df(d1, 1), "qzaccfive second level summary", d2);
	note(t.admin, "qzunrelatedfive other source", NULL, NULL, u, NULL);

	json_t *sr = search_ok(reader, "qzaccfive", NULL);
	expect_id_set(items_of(sr), "record_id", "search before revocation", s, d1, d2, NULL);
	json_decref(sr);
	json_t *rb = readback(reader, s);
	expect_readback(rb, s, false, 2, d1, "eligible", d2, "eligible");
	json_decref(rb);

	struct it_resp r;
	revoke_source(t.admin, s, 2, "owner_request", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	revoke_source(t.admin, s, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "source_id", s) && it_json_int(r.json, "revision", -1) == 2 &&
		     it_is_timestamp_ms(it_json_str(r.json, "revoked_at")),
		 "revoke answer: %s", r.body);
	expect_readback(json_object_get(r.json, "readback"), s, true, 0, d1, "ineligible", d2,
			"ineligible");
	it_resp_free(&r);

	rb = readback(reader, s);
	expect_readback(rb, s, true, 0, d1, "ineligible", d2, "ineligible");
	json_decref(rb);
	expect_state(reader, s, "ineligible", "revoked", 2);
	expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzaccfive", "after revocation");
	expect_nothing_retrieved(reader, "qzrootword", "after revocation (root-only word)");
	json_t *ex = explain_ok(reader, "qzaccfive", NULL);
	expect_id_set(items_of(ex), "record_id", "explain after revocation", s, d1, d2, NULL);
	expect_ex(ex, s, false, "revoked", "active", 2);
	expect_ex(ex, d1, false, "upstream_ineligible", NULL, 1);
	expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	/* the bytes stay */
	expect_content(reader, s, cs);
	/* an unrelated source is untouched */
	sr = search_ok(reader, "qzunrelatedfive", NULL);
	expect_id_set(items_of(sr), "record_id", "unrelated search", u, NULL);
	json_decref(sr);

	/* revocation is final, whatever the classification later */
	revoke_source(t.admin, s, 2, "owner_request", &r);
	IT_PROBLEM(&r, 409, "already_revoked");
	it_resp_free(&r);
	classify_ok(t.admin, s, 2, "cold", "active");
	expect_state(reader, s, "ineligible", "revoked,classification_cold", 3);
	classify_ok(t.admin, s, 3, "active", "cold");
	expect_state(reader, s, "ineligible", "revoked", 4);
	expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzaccfive", "after revocation and re-activation");
	ex = explain_ok(reader, "qzaccfive", NULL);
	expect_ex(ex, s, false, "revoked", "active", 4);
	expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	rb = readback(reader, s);
	expect_readback(rb, s, true, 0, d1, "ineligible", d2, "ineligible");
	json_decref(rb);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ derivative chains */

static void test_derivative_chain(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-chain");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char root[ID_MAX], root2[ID_MAX], d1[ID_MAX], d2[ID_MAX], d3[ID_MAX];
	note(t.admin, "qzchainroot original text", NULL, NULL, root, NULL);
	note(t.admin, "qzchainother second root", NULL, NULL, root2, NULL);
	derive(t.admin, "summary", df(root, 1), "qzchainone first level summary", d1);
	derive(t.admin, "cache", df(d1, 1), "qzchaintwo second level cache", d2);
	derive(t.admin, "transclusion", df_add(df(root, 1), root2, 1),
	       "qzchainthree transclusion of both roots", d3);

	/* metadata of a derivative */
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/derivatives/%s", d2);
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	json_t *want = df(d1, 1);
	IT_CHECK(it_json_str_is(r.json, "kind", "cache") &&
		     json_equal(json_object_get(r.json, "provenance"), want) &&
		     it_is_timestamp_ms(it_json_str(r.json, "created_at")),
		 "GET derivative: %s", r.body);
	json_decref(want);
	it_resp_free(&r);
	json_t *m = source_meta(reader, d1);
	want = df(root, 1);
	IT_CHECK(it_json_str_is(m, "source_id", d1) && it_json_has_null(m, "classification") &&
		     it_json_has_null(m, "source_kind") && it_json_str_is(m, "kind", "summary") &&
		     json_equal(json_object_get(m, "provenance"), want),
		 "GET /v1/memory/sources/{drv}: source_id, classification null, source_kind null, "
		 "kind, provenance");
	json_decref(want);
	json_decref(m);
	/* a derivative has no classification to set */
	classify(t.admin, d1, 1, "cold", NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	json_t *dl = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(dl, "derivative_id", "derivative list", d1, d2, d3, NULL);
	json_decref(dl);

	for (int round = 0; round < 2; round++) {
		long long rev = 1 + 2 * round;
		classify_ok(t.admin, root, rev, "cold", "active");
		expect_state(reader, root, "ineligible", "classification_cold", rev + 1);
		expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
		expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
		expect_state(reader, d3, "ineligible", "upstream_ineligible", 1);
		json_t *s;
		const char *qs[] = {"qzchainroot", "qzchainone", "qzchaintwo", "qzchainthree"};
		for (size_t i = 0; i < 4; i++) {
			s = search_ok(reader, qs[i], NULL);
			expect_id_set(items_of(s), "record_id", qs[i], NULL);
			json_decref(s);
		}
		json_t *ex = explain_ok(reader, "qzchaintwo", NULL);
		expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
		expect_reasons(item_by(items_of(ex), "record_id", d2), "upstream_ineligible",
			       "explain of the second level");
		json_decref(ex);
		s = search_ok(reader, "qzchainother", NULL);
		expect_id_set(items_of(s), "record_id", "the other root stays", root2, NULL);
		json_decref(s);

		classify_ok(t.admin, root, rev + 1, "active", "cold");
		expect_state(reader, root, "eligible", "", rev + 2);
		expect_state(reader, d1, "eligible", "", 1);
		expect_state(reader, d2, "eligible", "", 1);
		expect_state(reader, d3, "eligible", "", 1);
		for (size_t i = 0; i < 4; i++) {
			s = search_ok(reader, qs[i], NULL);
			IT_CHECK(json_array_size(items_of(s)) == 1, "%s after re-activation: %zu",
				 qs[i], json_array_size(items_of(s)));
			json_decref(s);
		}
		ex = explain_ok(reader, "qzchaintwo", NULL);
		expect_ex(ex, d2, true, "selected", NULL, 1);
		json_decref(ex);
	}
	/* any upstream ineligible excludes the derivative */
	classify_ok(t.admin, root2, 1, "cold", "active");
	expect_state(reader, d3, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d1, "eligible", "", 1);
	json_t *s = search_ok(reader, "qzchainthree", NULL);
	expect_id_set(items_of(s), "record_id", "d3 with one cold root", NULL);
	json_decref(s);
	/* readback of the root lists every transitive descendant */
	json_t *rb = readback(reader, root);
	IT_CHECK(json_is_false(json_object_get(rb, "revoked")) &&
		     json_array_size(json_object_get(rb, "derivatives")) == 3 &&
		     it_json_int(rb, "residual_eligible", -1) == 2 &&
		     json_is_false(json_object_get(rb, "clean")),
		 "readback of the root (d1, d2 eligible; d3 not)");
	json_decref(rb);
	/* derivatives were never rewritten: one audit record each */
	IT_CHECK(audit_count(t.admin, "derivative", d1) == 1 &&
		     audit_count(t.admin, "derivative", d2) == 1 &&
		     audit_count(t.admin, "derivative", d3) == 1,
		 "a recomputation wrote a derivative audit record");
	free(reader);
	tenant_free(&t);
}

/* ================================================================ derivative errors */

static void test_derivative_errors(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-drverr");
	char *writer = token_for(&t, "memory:write", "it-writer");
	char r1[ID_MAX], r2[ID_MAX], r3[ID_MAX], cold[ID_MAX], gone[ID_MAX], e[ID_MAX],
	    de[ID_MAX];
	note(t.admin, "qzdrverr root one", NULL, NULL, r1, NULL);
	note(t.admin, "qzdrverr root two", NULL, NULL, r2, NULL);
	note(t.admin, "qzdrverr root three", NULL, NULL, r3, NULL);
	note(t.admin, "qzdrverr cold root", "cold", NULL, cold, NULL);
	note(t.admin, "qzdrverr revoked root", NULL, NULL, gone, NULL);
	note(t.admin, "qzdrverr root that turns cold", NULL, NULL, e, NULL);
	derive(writer, "index", df(e, 1), "qzdrverr index of e", de);
	classify_ok(t.admin, r1, 1, "active", "active"); /* same again: revision 2 */
	classify_ok(t.admin, r3, 1, "cold", "active");
	classify_ok(t.admin, r3, 2, "active", "cold"); /* revision 3 */
	classify_ok(t.admin, e, 1, "cold", "active");
	struct it_resp r;
	revoke_source(t.admin, gone, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	json_t *dl0 = list_all(t.admin, "/v1/memory/derivatives");
	size_t audit0 = audit_count(t.admin, "derivative", NULL);
	expect_id_set(dl0, "derivative_id", "derivatives before", de, NULL);

	/* stale */
	post_derivative(writer, "summary", df(r1, 1), "qzdrverr stale one", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	post_derivative(writer, "summary", df(r1, 3), "qzdrverr stale future", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	/* the first stale upstream's current_revision */
	post_derivative(writer, "summary", df_add(df_add(df(r2, 1), r3, 1), r1, 1),
			"qzdrverr stale among several", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 3,
		 "current_revision is not the first stale upstream's (3): %s", r.body);
	it_resp_free(&r);
	/* ineligible: cold, revoked, a derivative of a now-cold root */
	post_derivative(writer, "summary", df(cold, 1), "qzdrverr of a cold root", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(gone, 2), "qzdrverr of a revoked root", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(de, 1), "qzdrverr of an ineligible derivative", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "prompt", df_add(df(r2, 1), cold, 1),
			"qzdrverr one eligible, one cold", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	/* unknown */
	post_derivative(writer, "summary", df(UNKNOWN_SRC, 1), "qzdrverr of nothing", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(UNKNOWN_DRV, 1), "qzdrverr of no derivative", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	post_derivative(writer, "summary", df_add(df(r2, 1), UNKNOWN_SRC, 1),
			"qzdrverr one known, one unknown", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	json_t *dl1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(dl0, dl1, "derivatives after refused creations");
	json_decref(dl1);
	IT_CHECK(audit_count(t.admin, "derivative", NULL) == audit0,
		 "a refused derivative was audited");
	json_t *s = search_ok(t.admin, "qzdrverr", NULL);
	expect_id_set(items_of(s), "record_id", "search after refused derivatives", r1, r2, r3,
		      NULL);
	json_decref(s);
	/* the readback of each refused upstream lists no derivative */
	const char *ups[] = {r1, r2, r3, cold, gone};
	for (size_t i = 0; i < 5; i++) {
		json_t *rb = readback(t.admin, ups[i]);
		IT_CHECK(json_array_size(json_object_get(rb, "derivatives")) == 0,
			 "readback of %s lists a derivative", ups[i]);
		json_decref(rb);
	}

	/* with current revisions it works */
	char ok[ID_MAX];
	derive(writer, "summary", df_add(df_add(df(r2, 1), r3, 3), r1, 2),
	       "qzdrverr fresh summary", ok);
	dl1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_id_set(dl1, "derivative_id", "derivatives after one good creation", de, ok, NULL);
	json_decref(dl1);

	json_decref(dl0);
	free(writer);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_acceptance5_revocation),
	    cmocka_unit_test(test_derivative_chain),
	    cmocka_unit_test(test_derivative_errors),
	};
	int rc = cmocka_run_group_tests_name("it_memory_derivatives", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
