/*
 * it_memory_retrieval — memory retrieval end to end: the seed's acceptance tests 1, 2, 3 and 6
 * (active and cold sources, explain of a cold source, stale classification and its
 * compensation, threads), one cmocka test each, with the seed's wording.
 * openapi/openapi.yaml "Conventions", "Memory sources", "Retrieval"; docs/memory-contract.md;
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

/* new: explain items sorted by record_id (explain's order is not part of the contract) */
static json_t *sorted_items(const json_t *ex)
{
	json_t *items = json_deep_copy(items_of(ex));
	size_t n = json_array_size(items);
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0; j--) {
			const char *a = it_json_str(json_array_get(items, j - 1), "record_id");
			const char *b = it_json_str(json_array_get(items, j), "record_id");
			if (!a || !b || strcmp(a, b) <= 0)
				break;
			json_t *x = json_incref(json_array_get(items, j - 1));
			json_array_set(items, j - 1, json_array_get(items, j));
			json_array_set_new(items, j, x);
		}
	}
	return items;
}

static void expect_same_explain(const json_t *a, const json_t *b, const char *what)
{
	json_t *sa = sorted_items(a), *sb = sorted_items(b);
	char *ta = json_dumps(sa, JSON_COMPACT), *tb = json_dumps(sb, JSON_COMPACT);
	IT_CHECK(json_equal(sa, sb) && it_json_str_is(a, "query_sha256", it_json_str(b, "query_sha256")),
		 "%s: explanations differ:\n  before: %s\n  after:  %s", what, ta ? ta : "?",
		 tb ? tb : "?");
	free(ta);
	free(tb);
	json_decref(sa);
	json_decref(sb);
}

static void put_thread_mode(const char *token, const char *thread, long long expected,
			    const char *mode, const char *previous)
{
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "mode", json_string(mode));
	send_json("PUT", path, token, b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", mode) &&
		     it_json_str_is(r.json, "previous_mode", previous) &&
		     it_json_int(r.json, "revision", -1) == expected + 1,
		 "memory-mode %s → %s: %s", previous, mode, r.body);
	it_resp_free(&r);
}

/* ================================================================ acceptance 1 */

/*
 * Seed acceptance test 1: "Two native sources, one active and one cold, remain stored while
 * matching retrieval selects and injects only the active source."
 */
static void test_acceptance1_active_and_cold(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc1");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *ca = "qzacconeword zebraquokka alpha note that stays active";
	const char *cc = "qzacconeword zebraquokka bravo note that is kept cold";
	char a[ID_MAX], c[ID_MAX], ha[REF_LEN], hc[REF_LEN];
	note(t.admin, ca, NULL, NULL, a, ha);
	note(t.admin, cc, "cold", NULL, c, hc);

	/* both remain stored: metadata and bytes */
	expect_state(reader, a, "eligible", "", 1);
	expect_state(reader, c, "ineligible", "classification_cold", 1);
	json_t *m = source_meta(reader, c);
	IT_CHECK(it_json_str_is(m, "classification", "cold") &&
		     it_json_str_is(m, "content_hash", hc) &&
		     it_json_str_is(m, "source_kind", "note") && it_json_has_null(m, "provenance"),
		 "metadata of the cold source");
	IT_CHECK(!json_object_get(m, "content"), "metadata carries content");
	json_decref(m);
	expect_content(reader, a, ca);
	expect_content(reader, c, cc);

	json_t *all = list_all(reader, "/v1/memory/sources");
	expect_id_set(all, "source_id", "list", a, c, NULL);
	char *text = json_dumps(all, JSON_COMPACT);
	IT_CHECK(!contains(text, "zebraquokka"), "the list carries content: %s", text);
	free(text);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?classification=cold");
	expect_id_set(all, "source_id", "list classification=cold", c, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?classification=active");
	expect_id_set(all, "source_id", "list classification=active", a, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?state=eligible");
	expect_id_set(all, "source_id", "list state=eligible", a, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(all, "source_id", "list state=ineligible", c, NULL);
	json_decref(all);

	/* search selects only the active one */
	json_t *s = search_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(s), "record_id", "search", a, NULL);
	IT_CHECK(it_json_str_is(json_array_get(items_of(s), 0), "content_hash", ha) &&
		     it_json_str_is(json_array_get(items_of(s), 0), "record_kind", "source") &&
		     it_json_int(json_array_get(items_of(s), 0), "revision", -1) == 1,
		 "search item of the active source");
	json_decref(s);
	/* a query that only the cold source matches finds nothing */
	s = search_ok(reader, "zebraquokka bravo", NULL);
	expect_id_set(items_of(s), "record_id", "search matching only the cold source", NULL);
	json_decref(s);

	/* context assembly injects only the active one */
	json_t *cx = context_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(cx), "record_id", "context", a, NULL);
	IT_CHECK(it_json_str_is(json_array_get(items_of(cx), 0), "content", ca),
		 "the injected content is not the active source's bytes");
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "candidate_count", -1) == 1 &&
		     it_json_int(rc, "delivered_count", -1) == 1,
		 "receipt counts: one candidate, one delivered");
	text = json_dumps(cx, JSON_COMPACT);
	IT_CHECK(!contains(text, c), "the context answer mentions the cold source: %s", text);
	free(text);
	json_decref(cx);
	cx = context_ok(reader, "zebraquokka bravo", NULL);
	expect_id_set(items_of(cx), "record_id", "context matching only the cold source", NULL);
	json_decref(cx);

	/* explain: both, the active one selected */
	json_t *ex = explain_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(ex), "record_id", "explain", a, c, NULL);
	expect_ex(ex, a, true, "selected", "active", 1);
	expect_ex(ex, c, false, "classification_cold", "cold", 1);
	json_decref(ex);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 2 */

/*
 * Seed acceptance test 2: "Retrieval explanation reports the cold source as filtered with
 * source ID, revision, classification, and reason, without raw source content by default."
 */
static void test_acceptance2_explain_cold(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc2");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *uri = "https://qzuriacctwohost.example/private/qzuripathsecret";
	char phash[REF_LEN];
	sha256_str("qzacctwo pointed-to bytes", phash);

	char a[ID_MAX], c[ID_MAX], p[ID_MAX], d[ID_MAX];
	json_t *b = note_body("qzacctwo qzcontentsecretactive alpha body", NULL, NULL);
	json_t *labels = json_object();
	json_object_set_new(labels, "qzlabelkeyone", json_string("qzlabelvaluesecretone"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, a));
	b = note_body("qzacctwo qzcontentsecretcold bravo body", "cold", NULL);
	labels = json_object();
	json_object_set_new(labels, "qzlabelkeytwo", json_string("qzlabelvaluesecrettwo"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, c));
	json_decref(create_source(t.admin, pointer_body(uri, phash, NULL, NULL), p));
	derive(t.admin, "summary", df(p, 1), "qzacctwo qzcontentsecretsummary of the pointer", d);

	static const char *const secrets[] = {
	    "qzacctwo",		/* the query text (and a content word) */
	    "qzcontentsecret", /* content bytes */
	    "qzuri",		/* the URI */
	    "example/private", "qzlabel", /* label keys and values */
	};
	/* the cold source only, and all matching records */
	const char *queries[] = {"qzacctwo qzcontentsecretcold", "qzacctwo"};
	for (size_t q = 0; q < 2; q++) {
		struct it_resp r;
		retrieve(EXPLAIN, reader, qbody(queries[q], NULL), &r);
		IT_STATUS(&r, 200);
		check_explain_shape(r.json, queries[q], r.body);
		for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
			IT_CHECK(!contains(r.body, secrets[i]),
				 "explain (%s) body contains \"%s\": %s", queries[q], secrets[i],
				 r.body);
		expect_ex(r.json, c, false, "classification_cold", "cold", 1);
		const json_t *it = item_by(items_of(r.json), "record_id", c);
		IT_CHECK(it_json_str_is(it, "record_kind", "source"), "record_kind of the cold one");
		expect_reasons(it, "classification_cold", "explain of the cold source");
		if (q == 0) {
			expect_id_set(items_of(r.json), "record_id", "explain cold-only query", c,
				      NULL);
		} else {
			/* the pointer has no text: never matched; its summary is */
			expect_id_set(items_of(r.json), "record_id", "explain", a, c, d, NULL);
			expect_ex(r.json, a, true, "selected", "active", 1);
			expect_ex(r.json, d, true, "selected", NULL, 1);
			expect_reasons(item_by(items_of(r.json), "record_id", a), "",
				       "explain of the active source");
		}
		IT_CHECK(json_is_false(json_object_get(r.json, "truncated")),
			 "truncated is not false");
		it_resp_free(&r);
	}

	/* metadata surfaces carry no content, URI or labels by default */
	struct it_resp r;
	get("/v1/memory/sources?limit=200", reader, &r);
	IT_STATUS(&r, 200);
	for (size_t i = 1; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(r.body, secrets[i]), "the list contains \"%s\": %s", secrets[i],
			 r.body);
	it_resp_free(&r);
	get("/v1/memory/sources?include=labels&limit=200", reader, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(contains(r.body, "qzlabelvaluesecretone") && !contains(r.body, "qzuri") &&
		     !contains(r.body, "qzcontentsecret"),
		 "include=labels does not show exactly the labels: %s", r.body);
	it_resp_free(&r);
	const char *ids[] = {a, c, p, d};
	for (size_t i = 0; i < 4; i++) {
		char path[256];
		snprintf(path, sizeof path, "/v1/memory/sources/%s", ids[i]);
		get(path, reader, &r);
		IT_STATUS(&r, 200);
		for (size_t k = 1; k < sizeof secrets / sizeof *secrets; k++)
			IT_CHECK(!contains(r.body, secrets[k]), "%s contains \"%s\": %s", path,
				 secrets[k], r.body);
		it_resp_free(&r);
	}
	/* the content surface is the one that shows the pointer */
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", p);
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	const json_t *ptr = json_object_get(r.json, "pointer");
	IT_CHECK(it_json_str_is(ptr, "uri", uri) && it_json_str_is(ptr, "content_hash", phash),
		 "pointer content: %s", r.body);
	it_resp_free(&r);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 3 */

/* new: the context answer's items (without the receipt, whose id and time are new each call) */
static json_t *context_items(const char *token, const char *query, const char *thread)
{
	json_t *cx = context_ok(token, query, thread);
	json_t *items = json_incref(json_object_get(cx, "items"));
	json_decref(cx);
	return items;
}

/*
 * Seed acceptance test 3: "A stale revision fails without changing effective retrieval state;
 * a compensating compare-and-swap restores the exact prior explanation and selection result."
 */
static void test_acceptance3_stale_and_compensate(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc3");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *q = "qzaccthree";
	char a[ID_MAX], b[ID_MAX], c[ID_MAX];
	note(t.admin, "qzaccthree first active record", NULL, NULL, a, NULL);
	note(t.admin, "qzaccthree qzaccthree second active record", NULL, NULL, b, NULL);
	note(t.admin, "qzaccthree third record kept cold", "cold", NULL, c, NULL);

	json_t *s0 = search_ok(reader, q, NULL);
	json_t *e0 = explain_ok(reader, q, NULL);
	json_t *c0 = context_items(reader, q, NULL);
	json_t *l0 = list_all(reader, "/v1/memory/sources");
	expect_id_set(items_of(s0), "record_id", "baseline search", a, b, NULL);
	expect_ex(e0, c, false, "classification_cold", "cold", 1);

	/* stale writes: 409 with current_revision, nothing changes */
	struct it_resp r;
	long long stale[] = {2, 9};
	for (size_t i = 0; i < 2; i++) {
		classify(t.admin, c, stale[i], "active", NULL, &r);
		IT_PROBLEM(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
			 "current_revision is not 1: %s", r.body);
		it_resp_free(&r);
	}
	classify(t.admin, a, 3, "cold", NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	/* If-Match naming another revision: 412 */
	const char *im[] = {"If-Match: \"5\"", NULL};
	classify(t.admin, c, 1, "active", im, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);

	json_t *s1 = search_ok(reader, q, NULL);
	json_t *e1 = explain_ok(reader, q, NULL);
	json_t *c1 = context_items(reader, q, NULL);
	json_t *l1 = list_all(reader, "/v1/memory/sources");
	expect_same_json(s0, s1, "search after stale writes");
	expect_same_explain(e0, e1, "explain after stale writes");
	expect_same_json(c0, c1, "context selection after stale writes");
	expect_same_json(l0, l1, "source metadata after stale writes");
	expect_state(reader, c, "ineligible", "classification_cold", 1);
	IT_CHECK(audit_count(t.admin, "source", c) == 1 && audit_count(t.admin, "source", a) == 1,
		 "a stale write was audited");
	json_decref(s1);
	json_decref(e1);
	json_decref(c1);
	json_decref(l1);

	/* compensating compare-and-swap: cold → active → cold */
	classify_ok(t.admin, c, 1, "active", "cold");
	expect_state(reader, c, "eligible", "", 2);
	json_t *s2 = search_ok(reader, q, NULL);
	expect_id_set(items_of(s2), "record_id", "search with c active", a, b, c, NULL);
	json_decref(s2);
	json_t *e2 = explain_ok(reader, q, NULL);
	expect_ex(e2, c, true, "selected", "active", 2);
	json_decref(e2);
	classify(t.admin, c, 1, "cold", NULL, &r); /* stale again in between */
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	classify_ok(t.admin, c, 2, "cold", "active");
	expect_state(reader, c, "ineligible", "classification_cold", 3);

	/* the exact prior explanation and selection (c's own revision moved: 1 → 3) */
	json_t *s3 = search_ok(reader, q, NULL);
	json_t *e3 = explain_ok(reader, q, NULL);
	json_t *c3 = context_items(reader, q, NULL);
	expect_same_json(s0, s3, "search after the compensating CAS");
	expect_same_json(c0, c3, "context selection after the compensating CAS");
	expect_ex(e3, c, false, "classification_cold", "cold", 3);
	json_t *e0c = json_deep_copy(e0);
	json_t *it = (json_t *)item_by(items_of(e0c), "record_id", c);
	json_object_set_new(it, "revision", json_integer(3));
	expect_same_explain(e0c, e3, "explain after the compensating CAS");
	json_decref(e0c);
	json_decref(s3);
	json_decref(e3);
	json_decref(c3);
	/* a and b were never touched */
	expect_state(reader, a, "eligible", "", 1);
	expect_state(reader, b, "eligible", "", 1);

	json_decref(s0);
	json_decref(e0);
	json_decref(c0);
	json_decref(l0);
	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 6 */

/*
 * Seed acceptance test 6: "Unrelated sources and threads retain baseline behavior;
 * thread-level eligibility changes remain separate from source classification."
 */
static void test_acceptance6_threads(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc6");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char *thread_x = it_unique("thrx");
	char *thread_y = it_unique("thry");
	const char *q = "qzaccsix";
	char s1[ID_MAX], s2[ID_MAX], s3[ID_MAX], d[ID_MAX];
	note(t.admin, "qzaccsix source written in the disabled thread", NULL, thread_x, s1, NULL);
	note(t.admin, "qzaccsix source of another thread", NULL, thread_y, s2, NULL);
	note(t.admin, "qzaccsix cold source of no thread", "cold", NULL, s3, NULL);
	derive(t.admin, "summary", df(s2, 1), "qzaccsix summary of the other thread", d);

	json_t *sn0 = search_ok(reader, q, NULL);
	json_t *sy0 = search_ok(reader, q, thread_y);
	json_t *en0 = explain_ok(reader, q, NULL);
	json_t *ey0 = explain_ok(reader, q, thread_y);
	json_t *cn0 = context_items(reader, q, NULL);
	json_t *cy0 = context_items(reader, q, thread_y);
	json_t *l0 = list_all(reader, "/v1/memory/sources");
	json_t *dl0 = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(items_of(sn0), "record_id", "baseline search", s1, s2, d, NULL);
	expect_same_json(sn0, sy0, "search with thread Y vs no thread (baseline)");
	json_t *sx0 = search_ok(reader, q, thread_x);
	expect_same_json(sn0, sx0, "search with thread X before disabling");
	json_decref(sx0);

	put_thread_mode(t.admin, thread_x, 0, "disabled", "enabled");

	/* thread X receives no memory */
	json_t *sx = search_ok(reader, q, thread_x);
	expect_id_set(items_of(sx), "record_id", "search for the disabled thread", NULL);
	json_decref(sx);
	json_t *ex = explain_ok(reader, q, thread_x);
	expect_id_set(items_of(ex), "record_id", "explain for the disabled thread", s1, s2, s3, d,
		      NULL);
	expect_ex(ex, s1, false, "thread_memory_disabled", "active", 1);
	expect_ex(ex, s2, false, "thread_memory_disabled", "active", 1);
	expect_ex(ex, s3, false, "thread_memory_disabled", "cold", 1);
	expect_ex(ex, d, false, "thread_memory_disabled", NULL, 1);
	json_decref(ex);
	json_t *cx = context_ok(reader, q, thread_x);
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(json_array_size(items_of(cx)) == 0 && it_json_int(rc, "selected_count", -1) == 0 &&
		     it_json_int(rc, "delivered_count", -1) == 0 &&
		     json_array_size(json_object_get(rc, "loaded_inputs")) == 0,
		 "context for the disabled thread selected something");
	json_decref(cx);

	/* other threads (or none) keep their baseline, including thread X's own sources */
	json_t *sn1 = search_ok(reader, q, NULL);
	json_t *sy1 = search_ok(reader, q, thread_y);
	json_t *en1 = explain_ok(reader, q, NULL);
	json_t *ey1 = explain_ok(reader, q, thread_y);
	json_t *cn1 = context_items(reader, q, NULL);
	json_t *cy1 = context_items(reader, q, thread_y);
	expect_same_json(sn0, sn1, "search without thread after disabling X");
	expect_same_json(sy0, sy1, "search with thread Y after disabling X");
	expect_same_explain(en0, en1, "explain without thread after disabling X");
	expect_same_explain(ey0, ey1, "explain with thread Y after disabling X");
	expect_same_json(cn0, cn1, "context without thread after disabling X");
	expect_same_json(cy0, cy1, "context with thread Y after disabling X");
	IT_CHECK(array_has_id(items_of(sy1), "record_id", s1),
		 "the disabled thread's own source is not retrievable from thread Y");
	json_decref(sn1);
	json_decref(sy1);
	json_decref(en1);
	json_decref(ey1);
	json_decref(cn1);
	json_decref(cy1);

	/* the mode change touched no source or derivative */
	json_t *l1 = list_all(reader, "/v1/memory/sources");
	json_t *dl1 = list_all(reader, "/v1/memory/derivatives");
	expect_same_json(l0, l1, "sources after a thread mode change");
	expect_same_json(dl0, dl1, "derivatives after a thread mode change");
	json_decref(l1);
	json_decref(dl1);
	IT_CHECK(audit_count(t.admin, "source", NULL) == 3 &&
		     audit_count(t.admin, "derivative", NULL) == 1,
		 "a thread mode change wrote source or derivative audit records");

	/* a source classification change leaves the thread gate alone and the others as they were */
	classify_ok(t.admin, s3, 1, "active", "cold");
	json_t *sy2 = search_ok(reader, q, thread_y);
	expect_id_set(items_of(sy2), "record_id", "search Y after activating s3", s1, s2, s3, d,
		      NULL);
	size_t i;
	const json_t *it;
	json_array_foreach (items_of(sy0), i, it) {
		const json_t *now = item_by(items_of(sy2), "record_id", it_json_str(it, "record_id"));
		IT_CHECK(now && it_json_int(now, "revision", -1) == it_json_int(it, "revision", -2),
			 "an unrelated record's revision changed");
	}
	json_decref(sy2);
	sx = search_ok(reader, q, thread_x);
	expect_id_set(items_of(sx), "record_id", "search X after activating s3", NULL);
	json_decref(sx);
	char path[256];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread_x);
	struct it_resp r;
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", "disabled") && it_json_int(r.json, "revision", -1) == 1,
		 "a classification change moved the thread mode: %s", r.body);
	it_resp_free(&r);

	/* re-enabled: thread X gets what everyone gets */
	put_thread_mode(t.admin, thread_x, 1, "enabled", "disabled");
	sx = search_ok(reader, q, thread_x);
	json_t *sy3 = search_ok(reader, q, thread_y);
	expect_same_json(sy3, sx, "search X re-enabled vs Y");
	json_decref(sx);
	json_decref(sy3);
	expect_state(reader, s1, "eligible", "", 1);
	expect_state(reader, s2, "eligible", "", 1);
	expect_state(reader, s3, "eligible", "", 2);
	expect_state(reader, d, "eligible", "", 1);

	json_decref(sn0);
	json_decref(sy0);
	json_decref(en0);
	json_decref(ey0);
	json_decref(cn0);
	json_decref(cy0);
	json_decref(l0);
	json_decref(dl0);
	free(thread_x);
	free(thread_y);
	free(reader);
	tenant_free(&t);
}

/* Explain's rank says why a record was beyond the limit: ranks 1..limit are selected, the
 * next eligible ones are beyond_limit with a rank past it, ineligible ones have none. */
static void test_explain_rank_and_limit(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-rank");
	char a[ID_MAX], b[ID_MAX], c[ID_MAX];
	note(t.admin, "qzrankone qzrankone qzrankone", "active", NULL, a, NULL);
	note(t.admin, "qzrankone and more words", "active", NULL, b, NULL);
	note(t.admin, "qzrankone cold", "cold", NULL, c, NULL);
	json_t *body = qbody("qzrankone", NULL);
	json_object_set_new(body, "limit", json_integer(1));
	json_t *ex = retrieve_ok(EXPLAIN, t.admin, body);
	const json_t *items = items_of(ex);
	IT_CHECK(json_array_size(items) == 3, "3 matches");
	const json_t *first = item_by(items, "record_id", a), *second = item_by(items, "record_id", b);
	const json_t *cold = item_by(items, "record_id", c);
	IT_CHECK(it_json_int(first, "rank", -1) == 1 && it_json_str_is(first, "reason", "selected"),
		 "the best match: rank 1, selected");
	IT_CHECK(it_json_int(second, "rank", -1) == 2 &&
		     it_json_str_is(second, "reason", "beyond_limit"),
		 "the second: rank 2 > limit 1, beyond_limit");
	IT_CHECK(json_is_null(json_object_get(cold, "rank")) &&
		     it_json_str_is(cold, "reason", "classification_cold"),
		 "the cold one: no rank");
	json_decref(ex);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_acceptance1_active_and_cold),
	    cmocka_unit_test(test_acceptance2_explain_cold),
	    cmocka_unit_test(test_acceptance3_stale_and_compensate),
	    cmocka_unit_test(test_acceptance6_threads),
	    cmocka_unit_test(test_explain_rank_and_limit),
	};
	int rc = cmocka_run_group_tests_name("it_memory_retrieval", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
