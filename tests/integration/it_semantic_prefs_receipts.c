/*
 * it_semantic_prefs_receipts — the stateless application and maintenance receipts end to end
 * (openapi/openapi.yaml "Conventions", "Semantic preferences"; docs/providers-contract.md
 * "Semantic preferences"): 16-hex digests sorted and de-duplicated, corpus_ids sorted and
 * unique, their limits; receipts and recalls neither stored nor audited; the scopes of every
 * semantic-preference endpoint.
 *
 * The server log is checked for preference refs after the last test (log_privacy_teardown),
 * as it_semantic_prefs_recall checks its own. Helpers: semantic_prefs_helpers.h.
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
#include <openssl/evp.h>

#include "semantic_prefs_helpers.h"

#define APP_SCHEMA "semantic_preference_application_receipt_v0"
#define MAINT_SCHEMA "semantic_preference_maintenance_receipt_v0"

/* ================================================================ small helpers */

/* the first 16 hex digits of SHA-256(ref) */
static void digest16(const char *ref, char out[17])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(ref, strlen(ref), md, &mdlen, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* new: the JSON array of the sorted, unique strings of list[0..n) (digested when digest) */
static json_t *sorted_unique(const char *const *list, size_t n, bool digest)
{
	char(*d)[17] = calloc(n ? n : 1, sizeof *d);
	const char **v = calloc(n ? n : 1, sizeof *v);
	assert_non_null(d);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		if (digest) {
			digest16(list[i], d[i]);
			v[i] = d[i];
		} else {
			v[i] = list[i];
		}
	}
	qsort(v, n, sizeof *v, cmp_str);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			json_array_append_new(a, json_string(v[i]));
	}
	free(v);
	free(d);
	return a;
}

/* ================================================================ receipts */

/* new: ["<prefix>0", "<prefix>1", ...] (n strings, the number zero-padded to width) */
static json_t *numbered(const char *prefix, int n, int width)
{
	json_t *list = json_array();
	for (int i = 0; i < n; i++) {
		char one[64];
		snprintf(one, sizeof one, "%s%0*d", prefix, width, i);
		json_array_append_new(list, json_string(one));
	}
	return list;
}

/* a receipt body with one member changed */
struct member_case {
	const char *what, *member;
	json_t *value; /* stolen; NULL: delete the member */
	bool ok;       /* 200; else 422 `code` naming a field under `field` */
	const char *field;
	const char *code; /* NULL: validation_failed */
};

/* each case: a copy of base with the case's member changed, POSTed to path as sp_a */
static void run_member_cases(const char *path, const json_t *base,
			     const struct member_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct member_case *c = &cases[i];
		json_t *b = json_deep_copy(base);
		if (c->value)
			json_object_set_new(b, c->member, c->value);
		else
			json_object_del(b, c->member);
		struct it_resp r;
		it_send_json(&srv, "POST", path, sp_a, b, NULL, &r);
		if (c->ok) {
			if (r.status != 200)
				fprintf(stderr, "  case: %s\n", c->what);
			IT_STATUS(&r, 200);
		} else {
			IT_422(&r, c->code ? c->code : "validation_failed", c->field, false,
			       c->what);
		}
		it_resp_free(&r);
	}
}

static void test_application_receipt(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "schema_version", "surface", "application_id", "outcome", "preference_ref_digests",
	    "artifact_ref",   NULL};
	const char *refs[] = {"fake-pref-ref-b", "fake-pref-ref-a", "fake-pref-ref-b",
			      "provider://private/ref"};
	struct it_resp r;
	json_t *b = json_pack("{s:s, s:s, s:s, s:[s, s, s, s], s:s}", "surface", S_DEFAULT,
			      "application_id", "app-1", "outcome", "applied", "preference_refs",
			      refs[0], refs[1], refs[2], refs[3], "artifact_ref", "pr:42");
	it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *want = sorted_unique(refs, 4, true);
	IT_CHECK(it_is_exactly(r.json, keys) &&
		     it_json_str_is(r.json, "schema_version", APP_SCHEMA) &&
		     it_json_str_is(r.json, "surface", S_DEFAULT) &&
		     it_json_str_is(r.json, "application_id", "app-1") &&
		     it_json_str_is(r.json, "outcome", "applied") &&
		     it_json_str_is(r.json, "artifact_ref", "pr:42"),
		 "the application receipt: %s", r.body);
	IT_CHECK(json_array_size(want) == 3 &&
		     json_equal(json_object_get(r.json, "preference_ref_digests"), want),
		 "preference_ref_digests are not the sorted unique 16-hex digests: %s", r.body);
	IT_CHECK(!strstr(r.body, "fake-pref-ref") && !strstr(r.body, "provider://"),
		 "the receipt holds a provider reference: %s", r.body);
	json_decref(want);
	it_resp_free(&r);

	/* artifact_ref absent / null → null; no refs → [] */
	const char *outcomes[] = {"ignored", "failed"};
	for (size_t i = 0; i < 2; i++) {
		b = json_pack("{s:s, s:s, s:s, s:[]}", "surface", "a.b", "application_id", "app-2",
			      "outcome", outcomes[i], "preference_refs");
		if (i == 1)
			json_object_set_new(b, "artifact_ref", json_null());
		it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_is_exactly(r.json, keys) && it_json_has_null(r.json, "artifact_ref") &&
			     json_is_array(json_object_get(r.json, "preference_ref_digests")) &&
			     json_array_size(json_object_get(r.json, "preference_ref_digests")) ==
				 0,
			 "an application receipt without refs and artifact: %s", r.body);
		it_resp_free(&r);
	}

	/* limits: 20 refs, a 512-byte ref pass; 21, 513, "" fail */
	b = json_pack("{s:s, s:s, s:s, s:o}", "surface", "a.b", "application_id", "app-3",
		      "outcome", "applied", "preference_refs", numbered("ref-", 20, 1));
	it_send_json(&srv, "POST", APP_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "preference_ref_digests")) == 20,
		 "20 refs: %s", r.body);
	it_resp_free(&r);
	char *r512 = it_filled("ref-", 512, 'r'), *r513 = it_filled("ref-", 513, 'r');
	char *a512 = it_filled("art-", 512, 'a'), *a513 = it_filled("art-", 513, 'a');
	const struct member_case cases[] = {
	    {"21 refs", "preference_refs", numbered("ref-", 21, 1), false, "preference_refs", NULL},
	    {"a 512-byte ref", "preference_refs", json_pack("[s]", r512), true, NULL, NULL},
	    {"a 513-byte ref", "preference_refs", json_pack("[s]", r513), false, "preference_refs",
	     NULL},
	    {"an empty ref", "preference_refs", json_pack("[s]", ""), false, "preference_refs",
	     NULL},
	    {"a ref not a string", "preference_refs", json_pack("[i]", 5), false, "preference_refs",
	     NULL},
	    {"preference_refs missing", "preference_refs", NULL, false, "preference_refs", NULL},
	    {"a 512-byte artifact_ref", "artifact_ref", json_string(a512), true, NULL, NULL},
	    {"a 513-byte artifact_ref", "artifact_ref", json_string(a513), false, "artifact_ref",
	     NULL},
	    {"an empty artifact_ref", "artifact_ref", json_string(""), false, "artifact_ref", NULL},
	    {"outcome unknown", "outcome", json_string("verified"), false, "outcome", NULL},
	    {"application_id bad", "application_id", json_string("bad id"), false, "application_id",
	     NULL},
	    {"application_id missing", "application_id", NULL, false, "application_id", NULL},
	    {"surface bad", "surface", json_string("NoDot"), false, "surface", NULL},
	    {"surface missing", "surface", NULL, false, "surface", NULL},
	    {"an unknown member", "colour", json_string("red"), false, "colour", "unknown_field"},
	};
	json_t *base = json_pack("{s:s, s:s, s:s, s:[s]}", "surface", "a.b", "application_id",
				 "app-4", "outcome", "applied", "preference_refs", "ref-1");
	run_member_cases(APP_PATH, base, cases, sizeof cases / sizeof *cases);
	json_decref(base);
	free(r512);
	free(r513);
	free(a512);
	free(a513);
}

static void test_maintenance_receipt(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "schema_version",    "trigger",      "outcome", "corpus_ids",
	    "scope_ref_digests", "evidence_ref", NULL};
	const char *corpora[] = {"zeta_corpus", "alpha_corpus", "zeta_corpus", "Mid.corpus"};
	const char *scopes[] = {"scope://b", "scope://a", "scope://b"};
	struct it_resp r;
	json_t *b = json_pack("{s:s, s:s, s:[s, s, s, s], s:[s, s, s], s:s}", "trigger",
			      "explicit_feedback", "outcome", "verified", "corpus_ids", corpora[0],
			      corpora[1], corpora[2], corpora[3], "scope_refs", scopes[0],
			      scopes[1], scopes[2], "evidence_ref", "evidence:run-7");
	it_send_json(&srv, "POST", MAINT_PATH, sp_a, b, NULL, &r);
	IT_STATUS(&r, 200);
	json_t *want_ids = sorted_unique(corpora, 4, false);
	json_t *want_scopes = sorted_unique(scopes, 3, true);
	IT_CHECK(it_is_exactly(r.json, keys) &&
		     it_json_str_is(r.json, "schema_version", MAINT_SCHEMA) &&
		     it_json_str_is(r.json, "trigger", "explicit_feedback") &&
		     it_json_str_is(r.json, "outcome", "verified") &&
		     it_json_str_is(r.json, "evidence_ref", "evidence:run-7"),
		 "the maintenance receipt: %s", r.body);
	IT_CHECK(json_equal(json_object_get(r.json, "corpus_ids"), want_ids),
		 "corpus_ids are not sorted (bytewise) and unique: %s", r.body);
	IT_CHECK(json_array_size(want_scopes) == 2 &&
		     json_equal(json_object_get(r.json, "scope_ref_digests"), want_scopes),
		 "scope_ref_digests are not the sorted unique 16-hex digests: %s", r.body);
	IT_CHECK(!strstr(r.body, "scope://"), "the receipt holds a scope reference: %s", r.body);
	json_decref(want_ids);
	json_decref(want_scopes);
	it_resp_free(&r);

	/* no scope refs, no evidence; the other trigger and outcomes */
	const char *outcomes[] = {"no_write_rationale", "failed"};
	for (size_t i = 0; i < 2; i++) {
		b = json_pack("{s:s, s:s, s:[s], s:[]}", "trigger", "source_truth_changed",
			      "outcome", outcomes[i], "corpus_ids", "c1", "scope_refs");
		it_send_json(&srv, "POST", MAINT_PATH, sp_a, b, NULL, &r);
		IT_STATUS(&r, 200);
		IT_CHECK(it_is_exactly(r.json, keys) && it_json_has_null(r.json, "evidence_ref") &&
			     json_array_size(json_object_get(r.json, "scope_ref_digests")) == 0,
			 "a maintenance receipt without scopes and evidence: %s", r.body);
		it_resp_free(&r);
	}

	/* corpus_ids 1..20, scope_refs 0..20, evidence_ref up to 512 bytes */
	char *e512 = it_filled("ev-", 512, 'e'), *e513 = it_filled("ev-", 513, 'e');
	char *s513 = it_filled("scope-", 513, 's');
	const struct member_case cases[] = {
	    {"20 corpus_ids", "corpus_ids", numbered("corpus-", 20, 2), true, NULL, NULL},
	    {"21 corpus_ids", "corpus_ids", numbered("corpus-", 21, 2), false, "corpus_ids", NULL},
	    {"corpus_ids empty", "corpus_ids", json_array(), false, "corpus_ids", NULL},
	    {"corpus_ids missing", "corpus_ids", NULL, false, "corpus_ids", NULL},
	    {"a corpus id not an id", "corpus_ids", json_pack("[s]", "bad id"), false, "corpus_ids",
	     NULL},
	    {"20 scope_refs", "scope_refs", numbered("scope-", 20, 1), true, NULL, NULL},
	    {"21 scope_refs", "scope_refs", numbered("scope-", 21, 1), false, "scope_refs", NULL},
	    {"a 513-byte scope_ref", "scope_refs", json_pack("[s]", s513), false, "scope_refs",
	     NULL},
	    {"an empty scope_ref", "scope_refs", json_pack("[s]", ""), false, "scope_refs", NULL},
	    {"a 512-byte evidence_ref", "evidence_ref", json_string(e512), true, NULL, NULL},
	    {"a 513-byte evidence_ref", "evidence_ref", json_string(e513), false, "evidence_ref",
	     NULL},
	    {"trigger unknown", "trigger", json_string("whim"), false, "trigger", NULL},
	    {"trigger missing", "trigger", NULL, false, "trigger", NULL},
	    {"outcome applied", "outcome", json_string("applied"), false, "outcome", NULL},
	    {"an unknown member", "colour", json_string("red"), false, "colour", "unknown_field"},
	};
	json_t *base = json_pack("{s:s, s:s, s:[s], s:[]}", "trigger", "explicit_feedback",
				 "outcome", "verified", "corpus_ids", "c1", "scope_refs");
	run_member_cases(MAINT_PATH, base, cases, sizeof cases / sizeof *cases);
	json_decref(base);
	free(e512);
	free(e513);
	free(s513);
}

/* receipts and recalls are not stored or audited */
static void test_stateless(void **state)
{
	(void)state;
	char *t = it_unique("sp-stateless");
	char *tok = token_for(t, "semantic_preferences:use,audit:read");
	struct it_resp r;
	it_request(&srv, "POST", APP_PATH, tok,
		   "{\"surface\":\"a.b\",\"application_id\":\"x\",\"outcome\":\"applied\","
		   "\"preference_refs\":[\"r\"]}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	it_request(&srv, "POST", MAINT_PATH, tok,
		   "{\"trigger\":\"explicit_feedback\",\"outcome\":\"verified\","
		   "\"corpus_ids\":[\"c\"],\"scope_refs\":[]}",
		   NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	recall(tok, S_DEFAULT, NULL, &r);
	expect_disabled(&r, "stateless tenant");
	it_resp_free(&r);
	it_request(&srv, "GET", "/v1/audit?limit=200", tok, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	size_t i;
	const json_t *rec;
	json_array_foreach (json_object_get(r.json, "items"), i, rec) {
		/* the tenant's only records are its tokens' creation */
		IT_CHECK(it_json_str_is(rec, "action", "token.created"),
			 "receipts or recalls were audited: %s", r.body);
	}
	it_resp_free(&r);
	free(tok);
	free(t);
}

static void test_scopes(void **state)
{
	(void)state;
	char *prov_only = token_for(tenant_a, "providers:admin");
	struct it_resp r;
	const struct {
		const char *method, *path, *body;
	} calls[] = {
	    {"GET", "/v1/semantic-preferences/config", NULL},
	    {"PUT", "/v1/semantic-preferences/config",
	     "{\"expected_revision\":null,\"config\":{\"enabled\":false,\"provider\":{},"
	     "\"surfaces\":{}}}"},
	    {"POST", "/v1/semantic-preferences/recall", "{\"surface\":\"" S_DEFAULT "\"}"},
	    {"POST", APP_PATH,
	     "{\"surface\":\"a.b\",\"application_id\":\"x\",\"outcome\":\"applied\","
	     "\"preference_refs\":[]}"},
	    {"POST", MAINT_PATH,
	     "{\"trigger\":\"explicit_feedback\",\"outcome\":\"verified\",\"corpus_ids\":[\"c\"],"
	     "\"scope_refs\":[]}"},
	};
	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		it_request(&srv, calls[i].method, calls[i].path, prov_only, calls[i].body, NULL,
			   &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		it_request(&srv, calls[i].method, calls[i].path, NULL, calls[i].body, NULL, &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
	}
	/* admin implies semantic_preferences:use */
	it_request(&srv, "GET", "/v1/semantic-preferences/config", admin_a, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	free(prov_only);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_application_receipt),
	    cmocka_unit_test(test_maintenance_receipt),
	    cmocka_unit_test(test_stateless),
	    /* last: the privacy of the server log; stops the server */
	    cmocka_unit_test_teardown(test_scopes, log_privacy_teardown),
	};
	return SEMANTIC_PREFS_MAIN("it_semantic_prefs_receipts", tests);
}
