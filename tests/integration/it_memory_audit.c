/*
 * it_memory_audit — audit records for every memory mutation, without content, URIs or labels.
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

/* ================================================================ audit */

/* new: the audit records of one resource, after checking the chain and verify */
static json_t *audit_of(const char *token, const char *type, const char *id)
{
	char path[512];
	snprintf(path, sizeof path, "/v1/audit?resource_type=%s&resource_id=%s", type, id);
	json_t *recs = list_all(token, path);
	size_t i;
	json_t *rec;
	const char *prev = NULL;
	json_array_foreach (recs, i, rec) {
		IT_CHECK(it_json_str_is(rec, "resource_type", type) &&
			     it_json_str_is(rec, "resource_id", id),
			 "audit record of another resource");
		IT_CHECK(i == 0 ? it_json_has_null(rec, "prev_hash")
				: it_json_str_is(rec, "prev_hash", prev),
			 "%s %s record %zu: prev_hash breaks the chain", type, id, i);
		prev = it_json_str(rec, "hash");
		IT_CHECK(it_is_sha256_ref(prev), "hash is malformed");
		IT_CHECK(json_is_object(json_object_get(rec, "details")), "details is not an object");
	}
	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=%s&resource_id=%s", type, id);
	struct it_resp r;
	get(path, token, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == (long long)json_array_size(recs),
		 "%s: %s", path, r.body);
	it_resp_free(&r);
	return recs;
}

static void expect_action(const json_t *recs, size_t i, const char *action, long long before,
			  long long after)
{
	const json_t *rec = json_array_get(recs, i);
	char *text = json_dumps(recs, JSON_COMPACT);
	IT_CHECK(it_json_str_is(rec, "action", action), "record %zu is not %s: %s", i, action,
		 text);
	if (before >= 0)
		IT_CHECK(it_json_int(rec, "revision_before", -1) == before &&
			     it_json_int(rec, "revision_after", -1) == after,
			 "record %zu (%s): revisions are not %lld → %lld: %s", i, action, before,
			 after, text);
	else
		IT_CHECK(it_json_int(rec, "revision_after", -1) == after,
			 "record %zu (%s): revision_after is not %lld: %s", i, action, after, text);
	IT_CHECK(it_json_str(rec, "actor_token_id") &&
		     strncmp(it_json_str(rec, "actor_token_id"), "tok_", 4) == 0,
		 "record %zu: actor_token_id: %s", i, text);
	free(text);
}

static void test_audit(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-audit");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	const char *uri = "https://qzaudituri.example/secret/path";
	char s[ID_MAX], p[ID_MAX], d[ID_MAX], asn[ID_MAX], asn2[ID_MAX], f[ID_MAX];
	char shash[REF_LEN], phash[REF_LEN], ident[REF_LEN], ident2[REF_LEN];
	const char *content = "qzaudit qzauditcontentsecret words of the source";
	json_t *b = note_body(content, NULL, NULL);
	json_t *labels = json_object();
	json_object_set_new(labels, "qzauditlabelkey", json_string("qzauditlabelvalue"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, s));
	sha256_str(content, shash);
	sha256_str("qzaudit pointed bytes", phash);
	json_decref(create_source(t.admin, pointer_body(uri, phash, NULL, NULL), p));
	derive(t.admin, "summary", df(s, 1), "qzaudit qzauditderivsecret summary", d);
	classify_ok(t.admin, s, 1, "cold", "active");
	classify_ok(t.admin, s, 2, "active", "cold");
	struct it_resp r;
	classify(t.admin, s, 1, "cold", NULL, &r); /* stale: no record */
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	revoke_source(t.admin, s, 3, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	identity_of(owner, uri, phash, ident);
	identity_of(owner, "https://qzaudituri.example/other", phash, ident2);
	assent_grant(granter, owner, ident2, FAR_FUTURE, asn);
	assent_revoke(granter, asn, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	assent_grant(granter, owner, ident, FAR_FUTURE, asn2);
	json_decref(create_source(t.admin, pointer_body(uri, phash, owner, asn2), f));
	/* refused mutations: no record */
	send_json("POST", "/v1/memory/sources", t.admin, pointer_body(uri, phash, owner, asn), NULL,
		  &r);
	IT_PROBLEM(&r, 403, "assent_revoked");
	it_resp_free(&r);
	post_derivative(t.admin, "summary", df(s, 4), "qzaudit qzauditderivsecret late", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);

	/* the source: created, classification ×2, revoked */
	json_t *recs = audit_of(t.admin, "source", s);
	IT_CHECK(json_array_size(recs) == 4, "source %s: %zu records, expected 4", s,
		 json_array_size(recs));
	expect_action(recs, 0, "source.created", -1, 1);
	expect_action(recs, 1, "source.classification.updated", 1, 2);
	expect_action(recs, 2, "source.classification.updated", 2, 3);
	expect_action(recs, 3, "source.revoked", 3, 4);
	const json_t *det = json_object_get(json_array_get(recs, 0), "details");
	IT_CHECK(it_json_str_is(det, "content_hash", shash) &&
		     it_json_str_is(det, "source_identity", shash) &&
		     it_json_str_is(det, "classification", "active") &&
		     it_json_str_is(det, "source_kind", "note") &&
		     json_is_false(json_object_get(det, "foreign")),
		 "source.created details");
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 1), "details"),
				"classification", "cold") &&
		     it_json_str_is(json_object_get(json_array_get(recs, 2), "details"),
				    "classification", "active"),
		 "classification details");
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 3), "details"), "reason_code",
				"owner_request"),
		 "source.revoked details");
	json_decref(recs);
	recs = audit_of(t.admin, "source", p);
	IT_CHECK(json_array_size(recs) == 1, "pointer source: one record");
	expect_action(recs, 0, "source.created", -1, 1);
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 0), "details"),
				"content_hash", phash),
		 "pointer source.created details");
	json_decref(recs);
	recs = audit_of(t.admin, "source", f);
	IT_CHECK(json_array_size(recs) == 1, "foreign source: one record");
	expect_action(recs, 0, "source.created", -1, 1);
	det = json_object_get(json_array_get(recs, 0), "details");
	IT_CHECK(json_is_true(json_object_get(det, "foreign")) &&
		     it_json_str_is(det, "source_identity", ident),
		 "foreign source.created details");
	json_decref(recs);
	recs = audit_of(t.admin, "derivative", d);
	IT_CHECK(json_array_size(recs) == 1, "derivative: one record");
	expect_action(recs, 0, "derivative.created", -1, 1);
	det = json_object_get(json_array_get(recs, 0), "details");
	json_t *prov = df(s, 1);
	char dhash[REF_LEN];
	sha256_str("qzaudit qzauditderivsecret summary", dhash);
	IT_CHECK(it_json_str_is(det, "kind", "summary") && it_json_str_is(det, "content_hash", dhash) &&
		     json_equal(json_object_get(det, "provenance"), prov),
		 "derivative.created details");
	json_decref(prov);
	json_decref(recs);
	recs = audit_of(t.admin, "assent", asn);
	IT_CHECK(json_array_size(recs) == 2, "assent: two records");
	expect_action(recs, 0, "assent.granted", -1, 1);
	expect_action(recs, 1, "assent.revoked", 1, 2);
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 0), "details"),
				"source_identity", ident2),
		 "assent.granted details");
	json_decref(recs);
	recs = audit_of(t.admin, "assent", asn2);
	IT_CHECK(json_array_size(recs) == 1, "live assent: one record");
	expect_action(recs, 0, "assent.granted", -1, 1);
	json_decref(recs);
	IT_CHECK(audit_count(t.admin, "source", NULL) == 6 &&
		     audit_count(t.admin, "derivative", NULL) == 1 &&
		     audit_count(t.admin, "assent", NULL) == 3,
		 "record counts per resource type (6 source, 1 derivative, 3 assent)");

	/* no content, URI or label in any record */
	static const char *const secrets[] = {"qzaudit",	  "qzauditcontentsecret",
					      "qzauditderivsecret", "qzaudituri",
					      "secret/path",	  "qzauditlabelkey",
					      "qzauditlabelvalue"};
	json_t *all = list_all(t.admin, "/v1/audit");
	char *text = json_dumps(all, JSON_COMPACT);
	for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(text, secrets[i]), "the audit log contains \"%s\": %s",
			 secrets[i], text);
	free(text);
	json_decref(all);
	get("/v1/audit?limit=200", t.admin, &r);
	IT_STATUS(&r, 200);
	for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(r.body, secrets[i]), "the raw audit body contains \"%s\"",
			 secrets[i]);
	it_resp_free(&r);

	free(owner);
	free(granter);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_audit),
	};
	int rc = cmocka_run_group_tests_name("it_memory_audit", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
