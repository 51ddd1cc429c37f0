/*
 * it_memory_isolation — tenant isolation on every memory endpoint, and the scopes each
 * endpoint requires.
 * openapi/openapi.yaml "Conventions", "Memory sources", "Memory governance";
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

/* ================================================================ tenant isolation */

static void expect_404(const char *method, const char *path, const char *token, json_t *body)
{
	struct it_resp r;
	if (body)
		send_json(method, path, token, body, NULL, &r);
	else
		it_request(&srv, method, path, token, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

static json_t *exp_body(long long rev)
{
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(rev));
	return b;
}

static void test_tenant_isolation(void **state)
{
	(void)state;
	struct tenant a, b;
	tenant_new(&a, "mem-iso-a");
	tenant_new(&b, "mem-iso-b");
	char *owner = it_unique("owner");
	char *granter_a = token_for(&a, "assent:grant", owner);
	char s[ID_MAX], cold[ID_MAX], d[ID_MAX], asn[ID_MAX], f[ID_MAX], sb[ID_MAX];
	note(a.admin, "qziso tenant a source qzisoasecret", NULL, NULL, s, NULL);
	note(a.admin, "qziso tenant a cold source", "cold", NULL, cold, NULL);
	derive(a.admin, "summary", df(s, 1), "qziso tenant a summary", d);
	const char *uri = "https://qziso.example/fact";
	char phash[REF_LEN], ident[REF_LEN];
	sha256_str("qziso fact", phash);
	identity_of(owner, uri, phash, ident);
	assent_grant(granter_a, owner, ident, FAR_FUTURE, asn);
	json_decref(create_source(a.admin, pointer_body(uri, phash, owner, asn), f));
	json_t *cx = context_ok(a.admin, "qziso", NULL);
	char lrc[ID_MAX];
	it_copy_str(lrc, sizeof lrc, it_json_str(json_object_get(cx, "load_receipt"), "receipt_id"));
	json_decref(cx);

	/* B gets 404 for every one of A's resources */
	char path[256];
	const char *ids[] = {s, cold, d, f};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "/v1/memory/sources/%s", ids[i]);
		expect_404("GET", path, b.admin, NULL);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/content", ids[i]);
		expect_404("GET", path, b.admin, NULL);
	}
	const char *srcs[] = {s, cold, f};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "/v1/memory/sources/%s/readback", srcs[i]);
		expect_404("GET", path, b.admin, NULL);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", srcs[i]);
		json_t *body = exp_body(1);
		json_object_set_new(body, "classification", json_string("cold"));
		expect_404("PUT", path, b.admin, body);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", srcs[i]);
		body = exp_body(1);
		json_object_set_new(body, "reason_code", json_string("owner_request"));
		expect_404("POST", path, b.admin, body);
	}
	snprintf(path, sizeof path, "/v1/memory/derivatives/%s", d);
	expect_404("GET", path, b.admin, NULL);
	snprintf(path, sizeof path, "/v1/assents/%s/revoke", asn);
	expect_404("POST", path, b.admin, exp_body(1));
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", lrc);
	expect_404("GET", path, b.admin, NULL);
	expect_404("POST", "/v1/memory/derivatives", b.admin,
		   derivative_body("summary", df(s, 1), "qziso b's summary of a's source"));
	expect_404("POST", "/v1/memory/derivatives", b.admin,
		   derivative_body("summary", df(d, 1), "qziso b's summary of a's derivative"));
	/* A's assent is no assent for B (same owner name, same identity) */
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", b.admin, pointer_body(uri, phash, owner, asn), NULL,
		  &r);
	IT_PROBLEM(&r, 403, "assent_invalid");
	IT_CHECK(it_json_str_is(r.json, "source_identity", ident), "source_identity: %s", r.body);
	it_resp_free(&r);

	/* B's own records only, in every list and retrieval */
	note(b.admin, "qziso tenant b source", NULL, NULL, sb, NULL);
	const char *a_ids[] = {s, cold, d, f, asn, lrc};
	const char *b_paths[] = {"/v1/memory/sources?limit=200", "/v1/memory/derivatives?limit=200",
				 "/v1/memory/sources?state=ineligible&limit=200",
				 "/v1/audit?limit=200"};
	for (size_t i = 0; i < sizeof b_paths / sizeof *b_paths; i++) {
		get(b_paths[i], b.admin, &r);
		IT_STATUS(&r, 200);
		for (size_t k = 0; k < 6; k++)
			IT_CHECK(!contains(r.body, a_ids[k]), "%s (tenant B) mentions %s: %s",
				 b_paths[i], a_ids[k], r.body);
		it_resp_free(&r);
	}
	json_t *l = list_all(b.admin, "/v1/memory/sources");
	expect_id_set(l, "source_id", "tenant B's sources", sb, NULL);
	json_decref(l);
	l = list_all(b.admin, "/v1/memory/derivatives");
	expect_id_set(l, "derivative_id", "tenant B's derivatives", NULL);
	json_decref(l);
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	for (size_t i = 0; i < 3; i++) {
		retrieve(eps[i], b.admin, qbody("qziso", NULL), &r);
		IT_STATUS(&r, 200);
		for (size_t k = 0; k < 6; k++)
			IT_CHECK(!contains(r.body, a_ids[k]), "%s (tenant B) mentions %s: %s",
				 endpoint_path(eps[i]), a_ids[k], r.body);
		IT_CHECK(!contains(r.body, "qzisoasecret"), "tenant B sees A's content");
		expect_id_set(items_of(r.json), "record_id", endpoint_path(eps[i]), sb, NULL);
		it_resp_free(&r);
	}
	snprintf(path, sizeof path, "/v1/audit?resource_type=source&resource_id=%s", s);
	l = list_all(b.admin, path);
	IT_CHECK(json_array_size(l) == 0, "tenant B reads A's audit records");
	json_decref(l);

	/* A's records are as they were */
	expect_state(a.admin, s, "eligible", "", 1);
	expect_state(a.admin, cold, "ineligible", "classification_cold", 1);
	expect_state(a.admin, d, "eligible", "", 1);
	expect_state(a.admin, f, "eligible", "", 1);
	json_t *sa = search_ok(a.admin, "qziso", NULL);
	expect_id_set(items_of(sa), "record_id", "tenant A's search", s, d, NULL);
	json_decref(sa);
	IT_CHECK(audit_count(a.admin, "source", s) == 1 && audit_count(a.admin, "assent", asn) == 1,
		 "B's refused writes were audited in A");

	free(owner);
	free(granter_a);
	tenant_free(&a);
	tenant_free(&b);
}

/* ================================================================ scopes */

static void expect_forbidden(struct it_resp *r, const char *what)
{
	if (r->status != 403)
		fprintf(stderr, "  case: %s\n", what);
	IT_PROBLEM(r, 403, "forbidden");
	it_resp_free(r);
}

static void test_scopes(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-scope");
	char *owner = it_unique("owner");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char *writer = token_for(&t, "memory:write", "it-writer");
	char *madmin = token_for(&t, "memory:admin", "it-madmin");
	char *granter = token_for(&t, "assent:grant", owner);
	char *stranger = token_for(&t, "assent:grant", "somebody-else");
	char *other = token_for(&t, "audit:read,events:read,preferences:read", "it-other");
	struct it_resp r;
	char s[ID_MAX], s2[ID_MAX], d[ID_MAX];
	note(writer, "qzscope source by the writer", NULL, NULL, s, NULL);
	note(writer, "qzscope second source", NULL, NULL, s2, NULL);

	/* memory:read cannot create; a bad body is 422 before the scope */
	send_json("POST", "/v1/memory/sources", reader, note_body("qzscope by reader", NULL, NULL),
		  NULL, &r);
	expect_forbidden(&r, "memory:read creates a source");
	json_t *bad = note_body("qzscope bad", NULL, NULL);
	json_object_set_new(bad, "source_kind", json_string("memo"));
	send_json("POST", "/v1/memory/sources", reader, bad, NULL, &r);
	expect_422(&r, "validation_failed", "source_kind", true, "bad body, no scope");
	it_resp_free(&r);
	post_derivative(reader, "summary", df(s, 1), "qzscope reader summary", &r);
	expect_forbidden(&r, "memory:read creates a derivative");
	send_json("POST", "/v1/memory/sources", other, note_body("qzscope by other", NULL, NULL),
		  NULL, &r);
	expect_forbidden(&r, "no memory scope creates a source");
	derive(writer, "summary", df(s, 1), "qzscope writer summary", d);

	/* memory:write cannot classify, revoke, set a thread mode, or read */
	classify(writer, s, 1, "cold", NULL, &r);
	expect_forbidden(&r, "memory:write classifies");
	classify(reader, s, 1, "cold", NULL, &r);
	expect_forbidden(&r, "memory:read classifies");
	revoke_source(writer, s2, 1, "owner_request", &r);
	expect_forbidden(&r, "memory:write revokes");
	revoke_source(reader, s2, 1, "owner_request", &r);
	expect_forbidden(&r, "memory:read revokes");
	json_t *mb = json_object();
	json_object_set_new(mb, "expected_revision", json_integer(0));
	json_object_set_new(mb, "mode", json_string("disabled"));
	send_json("PUT", "/v1/threads/qzscope-thread/memory-mode", writer, mb, NULL, &r);
	expect_forbidden(&r, "memory:write sets a thread mode");
	char path[256];
	const char *reads[] = {"/v1/memory/sources", "/v1/memory/derivatives", NULL, NULL, NULL,
			       NULL};
	char p1[256], p2[256], p3[256], p4[256];
	snprintf(p1, sizeof p1, "/v1/memory/sources/%s", s);
	snprintf(p2, sizeof p2, "/v1/memory/sources/%s/content", s);
	snprintf(p3, sizeof p3, "/v1/memory/sources/%s/readback", s);
	snprintf(p4, sizeof p4, "/v1/memory/derivatives/%s", d);
	reads[2] = p1;
	reads[3] = p2;
	reads[4] = p3;
	reads[5] = p4;
	for (size_t i = 0; i < 6; i++) {
		get(reads[i], writer, &r);
		expect_forbidden(&r, reads[i]);
		get(reads[i], other, &r);
		expect_forbidden(&r, reads[i]);
		get(reads[i], reader, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		get(reads[i], NULL, &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
	}
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	char lrc[ID_MAX] = "";
	for (size_t i = 0; i < 3; i++) {
		retrieve(eps[i], writer, qbody("qzscope", NULL), &r);
		expect_forbidden(&r, endpoint_path(eps[i]));
		retrieve(eps[i], NULL, qbody("qzscope", NULL), &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
		json_t *ok = retrieve_ok(eps[i], reader, qbody("qzscope", NULL));
		if (eps[i] == CONTEXT)
			it_copy_str(lrc, sizeof lrc,
				 it_json_str(json_object_get(ok, "load_receipt"), "receipt_id"));
		json_decref(ok);
	}
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", lrc);
	get(path, writer, &r);
	expect_forbidden(&r, "memory:write reads a load receipt");
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* nothing refused was written */
	expect_state(reader, s, "eligible", "", 1);
	expect_state(reader, s2, "eligible", "", 1);
	json_t *l = list_all(reader, "/v1/memory/sources");
	expect_id_set(l, "source_id", "sources after refused writes", s, s2, NULL);
	json_decref(l);
	l = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(l, "derivative_id", "derivatives after refused writes", d, NULL);
	json_decref(l);

	/* memory:admin classifies and revokes */
	classify_ok(madmin, s, 1, "cold", "active");
	revoke_source(madmin, s2, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* assents: assent:grant, and only for the token's own name unless admin */
	const char *uri = "https://qzscope.example/fact";
	char phash[REF_LEN], ident[REF_LEN];
	sha256_str("qzscope fact", phash);
	identity_of(owner, uri, phash, ident);
	assent_post(writer, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "memory:write grants");
	assent_post(reader, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "memory:read grants");
	assent_post(stranger, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "assent:grant for another owner");
	assent_post(granter, "somebody-else-entirely", ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "assent:grant (owner) for a third owner");
	assent_post(NULL, owner, ident, FAR_FUTURE, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	char asn[ID_MAX], asn_admin[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, asn);
	assent_grant(t.admin, owner, ident, FAR_FUTURE, asn_admin);
	assent_revoke(stranger, asn, 1, &r);
	expect_forbidden(&r, "another owner's assent:grant token revokes");
	assent_revoke(writer, asn, 1, &r);
	expect_forbidden(&r, "memory:write revokes an assent");
	/* body before scope before assent */
	send_json("POST", "/v1/memory/sources", reader, pointer_body(uri, phash, owner, NULL), NULL,
		  &r);
	expect_forbidden(&r, "memory:read with a foreign candidate (scope before assent)");
	json_t *inl = note_body("qzscope inline foreign", NULL, NULL);
	json_t *fo = json_object();
	json_object_set_new(fo, "owner", json_string(owner));
	json_object_set_new(inl, "foreign", fo);
	send_json("POST", "/v1/memory/sources", reader, inl, NULL, &r);
	expect_422(&r, "thin_pointer_required", "content", true,
		   "inline foreign by a reader (body before scope)");
	it_resp_free(&r);
	char f[ID_MAX];
	json_decref(create_source(writer, pointer_body(uri, phash, owner, asn), f));
	assent_revoke(granter, asn, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	expect_state(reader, f, "ineligible", "assent_revoked", 1);
	assent_revoke(t.admin, asn_admin, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	free(owner);
	free(reader);
	free(writer);
	free(madmin);
	free(granter);
	free(stranger);
	free(other);
	tenant_free(&t);
}

/* The sources list: newest first by default (oldest on request), and ?label=k:v filters,
 * repeatable, all must match; a malformed label → 422 naming `label`, never echoing it. */
static void test_source_list_order_and_labels(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-lbl");
	char ids[3][ID_MAX];
	static const char *const labels[3][2] = {
		{"team", "red"}, {"team", "blue"}, {"team", "red"}};
	for (int i = 0; i < 3; i++) {
		json_t *b = note_body(i == 2 ? "qzlbl third" : i ? "qzlbl second" : "qzlbl first",
				      NULL, NULL);
		json_t *l = json_object();
		json_object_set_new(l, labels[i][0], json_string(labels[i][1]));
		if (i == 2)
			json_object_set_new(l, "zone", json_string("eu:west"));
		json_object_set_new(b, "labels", l);
		json_decref(create_source(t.admin, b, ids[i]));
	}
	struct it_resp r;
	get("/v1/memory/sources", t.admin, &r);
	IT_STATUS(&r, 200);
	const json_t *items = json_object_get(r.json, "items");
	IT_CHECK(json_array_size(items) == 3 &&
		     it_json_str_is(json_array_get(items, 0), "source_id", ids[2]) &&
		     it_json_str_is(json_array_get(items, 2), "source_id", ids[0]),
		 "newest first by default: %s", r.body);
	it_resp_free(&r);
	get("/v1/memory/sources?order=oldest&limit=1", t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(json_array_get(json_object_get(r.json, "items"), 0), "source_id",
				ids[0]) &&
		     it_json_str(r.json, "next_cursor") != NULL,
		 "oldest first on request: %s", r.body);
	it_resp_free(&r);
	json_t *red = list_all(t.admin, "/v1/memory/sources?label=team:red");
	IT_CHECK(json_array_size(red) == 2, "two red");
	json_decref(red);
	json_t *both = list_all(t.admin, "/v1/memory/sources?label=team:red&label=zone:eu:west");
	IT_CHECK(json_array_size(both) == 1 && it_json_str_is(json_array_get(both, 0), "source_id",
							      ids[2]),
		 "all labels must match (a value may hold a colon)");
	json_decref(both);
	json_t *none = list_all(t.admin, "/v1/memory/sources?label=team:green");
	IT_CHECK(json_array_size(none) == 0, "no green");
	json_decref(none);
	static const char *const bad[] = {"label=qzsecretkey", "label=:v", "label=Bad:v",
					  "order=random"};
	for (size_t i = 0; i < 4; i++) {
		char path[120];
		snprintf(path, sizeof path, "/v1/memory/sources?%s", bad[i]);
		get(path, t.admin, &r);
		expect_422(&r, "validation_failed", i < 3 ? "label" : "order", true, bad[i]);
		IT_CHECK(!contains(r.body, "qzsecretkey"), "the label is echoed: %s", r.body);
		it_resp_free(&r);
	}
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tenant_isolation),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_source_list_order_and_labels),
	};
	int rc = cmocka_run_group_tests_name("it_memory_isolation", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
