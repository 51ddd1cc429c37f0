/*
 * it_memory_limits — every memory limit at its edge.
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

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* ================================================================ limits */

static void post_source_raw(const char *token, const char *body, struct it_resp *r)
{
	it_request(&srv, "POST", "/v1/memory/sources", token, body, NULL, r);
}

struct raw_case {
	const char *body;
	const char *code;  /* 422 code */
	const char *field; /* errors[].field prefix, NULL: not checked */
};

static void test_limits(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-lim");
	const char *tok = t.admin;
	struct it_resp r;
	size_t created = 0;
	char id[ID_MAX];

	/* ---- content: 1..65536 bytes */
	char *c = it_text_of("qzlimbig", 65536);
	note(tok, c, NULL, NULL, id, NULL);
	created++;
	expect_content(tok, id, c);
	free(c);
	c = it_text_of("qzlimbig", 65537);
	send_json("POST", "/v1/memory/sources", tok, note_body(c, NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	/* bytes, not characters: 21845 × "é " + "a" = 65536 bytes */
	c = repeat_text("", "é ", 21845, "a");
	IT_CHECK(strlen(c) == 65536, "multi-byte content size");
	note(tok, c, NULL, NULL, id, NULL);
	created++;
	free(c);
	c = repeat_text("", "é ", 21845, "ab");
	send_json("POST", "/v1/memory/sources", tok, note_body(c, NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "multi-byte content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	send_json("POST", "/v1/memory/sources", tok, note_body("", NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "empty content");
	it_resp_free(&r);

	/* ---- labels: ≤ 32 members, values 1..256 bytes */
	for (int n = 32; n <= 33; n++) {
		json_t *b = note_body("qzlimlabels", NULL, NULL);
		json_t *l = json_object();
		for (int k = 0; k < n; k++) {
			char key[16];
			snprintf(key, sizeof key, "k%02d", k);
			json_object_set_new(l, key, json_string("v"));
		}
		json_object_set_new(b, "labels", l);
		if (n == 32) {
			json_decref(create_source(tok, b, id));
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok, b, NULL, &r);
			expect_422(&r, "validation_failed", "labels", false, "33 labels");
			it_resp_free(&r);
		}
	}
	for (size_t n = 256; n <= 257; n++) {
		char *v = it_text_of("qzlabelval", n);
		json_t *b = note_body("qzlimlabelvalue", NULL, NULL);
		json_t *l = json_object();
		json_object_set_new(l, "team", json_string(v));
		json_object_set_new(b, "labels", l);
		if (n == 256) {
			json_decref(create_source(tok, b, id));
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok, b, NULL, &r);
			expect_422(&r, "validation_failed", "labels", false,
				   "a label value of 257 bytes");
			it_resp_free(&r);
		}
		free(v);
	}

	/* ---- pointer uri: 1..2048 bytes */
	char hash[REF_LEN];
	sha256_str("qzlim pointer", hash);
	for (size_t n = 2048; n <= 2049; n++) {
		char *uri = it_text_of("https://qzlim.example/", n);
		for (size_t k = 22; k < n; k++) {
			if (uri[k] == ' ')
				uri[k] = '_';
		}
		if (n == 2048) {
			char want[REF_LEN];
			json_t *s = create_source(tok, pointer_body(uri, hash, NULL, NULL), id);
			identity_of("", uri, hash, want);
			IT_CHECK(it_json_str_is(s, "source_identity", want),
				 "a non-foreign pointer's identity is not sha256(\"\\n\"+uri+\"\\n\"+"
				 "hash)");
			IT_CHECK(it_json_str_is(s, "content_hash", hash),
				 "a pointer's content_hash");
			json_decref(s);
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok,
				  pointer_body(uri, hash, NULL, NULL), NULL, &r);
			expect_422(&r, "validation_failed", "pointer", false, "uri of 2049 bytes");
			it_resp_free(&r);
		}
		free(uri);
	}

	/* ---- table of small bodies that must fail */
	static const struct raw_case cases[] = {
	    {"{\"source_kind\":\"note\"}", "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"pointer\":{\"uri\":\"https://a.example/"
	     "\",\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"colour\":\"red\"}", "unknown_field",
	     NULL},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "\",\"extra\":1}}",
	     "unknown_field", NULL},
	    {"{\"source_kind\":\"memo\",\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"source_kind\":7,\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"classification\":\"warm\"}",
	     "validation_failed", "classification"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"thread_id\":\"-bad\"}",
	     "validation_failed", "thread_id"},
	    {"{\"source_kind\":\"note\",\"content\":7}", "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"Bad Key\":\"v\"}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":\"\"}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":7}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":[]}", "validation_failed",
	     "labels"},
	    /* content_hash formats */
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	     "abcde\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789"
	     "abcdef\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"md5:0123456789abcdef0123456789abcdef\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "0\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"no scheme\","
	     "\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"\","
	     "\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "\"},\"foreign\":{\"owner\":\"-bad owner\"}}",
	     "validation_failed", "foreign"},
	    {"[]", "validation_failed", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		post_source_raw(tok, cases[i].body, &r);
		expect_422(&r, cases[i].code, cases[i].field, false, cases[i].body);
		it_resp_free(&r);
	}
	post_source_raw(tok, "{\"source_kind\":", &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* ---- a label name is private: errors name a label by its position as sent, and no
	 * label name reaches the answer or the log */
	post_source_raw(tok,
			"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":\"a\","
			"\"qzsecretlabelname\":\"\",\"Qz Secret Label\":\"v\",\"qzsecretother\":7}}",
			&r);
	expect_422(&r, "validation_failed", "labels[1]", true, "an empty label value");
	IT_CHECK(it_problem_has_field(&r, "labels[2]"), "bad label key not by position: %s", r.body);
	IT_CHECK(it_problem_has_field(&r, "labels[3]"), "bad label value not by position: %s",
		 r.body);
	IT_CHECK(strstr(r.body, "qzsecret") == NULL && strstr(r.body, "Qz Secret") == NULL,
		 "a label name in the 422: %s", r.body);
	it_resp_free(&r);
	IT_CHECK(!it_log_contains(&srv, "qzsecret") && !it_log_contains(&srv, "Qz Secret"),
		 "a label name in the log");
	json_t *all = list_all(tok, "/v1/memory/sources");
	IT_CHECK(json_array_size(all) == created, "%zu sources stored, expected %zu",
		 json_array_size(all), created);
	json_decref(all);

	/* ---- query 1..1000 bytes, search/explain limit 1..50, context bounds */
	char *q1000 = it_text_of("qzlimquery", 1000);
	char *q1001 = it_text_of("qzlimquery", 1001);
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	for (size_t k = 0; k < 3; k++) {
		json_decref(retrieve_ok(eps[k], tok, qbody(q1000, NULL)));
		retrieve(eps[k], tok, qbody(q1001, NULL), &r);
		expect_422(&r, "validation_failed", "query", true, "query of 1001 bytes");
		it_resp_free(&r);
		retrieve(eps[k], tok, qbody("", NULL), &r);
		expect_422(&r, "validation_failed", "query", true, "empty query");
		it_resp_free(&r);
		retrieve(eps[k], tok, json_object(), &r);
		expect_422(&r, "validation_failed", "query", true, "no query");
		it_resp_free(&r);
		retrieve(eps[k], tok, qbody("qzlim", "-bad"), &r);
		expect_422(&r, "validation_failed", "thread_id", true, "bad thread_id");
		it_resp_free(&r);
		json_t *b = qbody("qzlim", NULL);
		json_object_set_new(b, "colour", json_string("red"));
		retrieve(eps[k], tok, b, &r);
		expect_422(&r, "unknown_field", NULL, false, "unknown retrieval field");
		it_resp_free(&r);
	}
	free(q1000);
	free(q1001);

	struct {
		enum endpoint ep;
		const char *field;
		long long lo, hi;
	} ranges[] = {
	    {SEARCH, "limit", 1, 50},
	    {EXPLAIN, "limit", 1, 50},
	    {CONTEXT, "max_items", 1, 20},
	    {CONTEXT, "budget_tokens", 1, 32000},
	};
	for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
		long long ok[] = {ranges[k].lo, ranges[k].hi};
		long long bad[] = {ranges[k].lo - 1, ranges[k].hi + 1};
		for (size_t j = 0; j < 2; j++) {
			json_t *b = qbody("qzlimbig", NULL);
			json_object_set_new(b, ranges[k].field, json_integer(ok[j]));
			json_decref(retrieve_ok(ranges[k].ep, tok, b));
			b = qbody("qzlimbig", NULL);
			json_object_set_new(b, ranges[k].field, json_integer(bad[j]));
			retrieve(ranges[k].ep, tok, b, &r);
			char what[96];
			snprintf(what, sizeof what, "%s = %lld", ranges[k].field, bad[j]);
			expect_422(&r, "validation_failed", ranges[k].field, true, what);
			it_resp_free(&r);
		}
		json_t *b = qbody("qzlimbig", NULL);
		json_object_set_new(b, ranges[k].field, json_real(1.5));
		retrieve(ranges[k].ep, tok, b, &r);
		expect_422(&r, "validation_failed", ranges[k].field, true, "a fractional count");
		it_resp_free(&r);
		b = qbody("qzlimbig", NULL);
		json_object_set_new(b, ranges[k].field, json_string("5"));
		retrieve(ranges[k].ep, tok, b, &r);
		expect_422(&r, "validation_failed", ranges[k].field, true, "a string count");
		it_resp_free(&r);
	}
	/* kinds: 1..2 unique of source|derivative */
	const char *bad_kinds[] = {"[]", "[\"source\",\"source\"]", "[\"thing\"]", "\"source\""};
	for (size_t k = 0; k < sizeof bad_kinds / sizeof *bad_kinds; k++) {
		json_t *b = qbody("qzlimbig", NULL);
		json_object_set_new(b, "kinds", json_loads(bad_kinds[k], JSON_DECODE_ANY, NULL));
		retrieve(SEARCH, tok, b, &r);
		expect_422(&r, "validation_failed", "kinds", false, bad_kinds[k]);
		it_resp_free(&r);
	}
	char src_id[ID_MAX], drv_id[ID_MAX];
	note(tok, "qzlimkinds source", NULL, NULL, src_id, NULL);
	created++;
	derive(tok, "index", df(src_id, 1), "qzlimkinds derivative", drv_id);
	json_t *b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"derivative\"]", 0, NULL));
	json_t *s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [derivative]", drv_id, NULL);
	json_decref(s);
	b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"source\"]", 0, NULL));
	s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [source]", src_id, NULL);
	json_decref(s);
	b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"derivative\",\"source\"]", 0, NULL));
	s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [both]", src_id, drv_id, NULL);
	json_decref(s);

	/* ---- derivatives: derived_from 1..32 unique, content 1..65536, kind */
	json_t *roots = json_array();
	for (int k = 0; k < 33; k++) {
		char content[64], rid[ID_MAX];
		snprintf(content, sizeof content, "qzlimroot number %d", k);
		note(tok, content, NULL, NULL, rid, NULL);
		created++;
		df_add(roots, rid, 1);
	}
	json_t *from32 = json_deep_copy(roots);
	json_array_remove(from32, 32);
	char d32[ID_MAX];
	derive(tok, "index", from32, "qzlimderived from thirty-two", d32);
	json_t *dl0 = list_all(tok, "/v1/memory/derivatives");
	post_derivative(tok, "index", json_deep_copy(roots), "qzlimderived from 33", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "derived_from of 33");
	it_resp_free(&r);
	post_derivative(tok, "index", json_array(), "qzlimderived from none", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "empty derived_from");
	it_resp_free(&r);
	json_t *dup = df_add(df(src_id, 1), src_id, 1);
	post_derivative(tok, "index", dup, "qzlimderived twice", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "duplicate upstream");
	it_resp_free(&r);
	post_derivative(tok, "essay", df(src_id, 1), "qzlim essay", &r);
	expect_422(&r, "validation_failed", "kind", true, "kind essay");
	it_resp_free(&r);
	c = it_text_of("qzlimderived", 65537);
	post_derivative(tok, "index", df(src_id, 1), c, &r);
	expect_422(&r, "validation_failed", "content", true, "derivative content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	c = it_text_of("qzlimderived", 65536);
	char d64[ID_MAX];
	derive(tok, "index", df(src_id, 1), c, d64);
	free(c);
	post_derivative(tok, "index", df(src_id, 1), "", &r);
	expect_422(&r, "validation_failed", "content", true, "empty derivative content");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/memory/derivatives", tok,
		   "{\"kind\":\"index\",\"derived_from\":[{\"source_id\":\"x\"}],\"content\":\"a\"}",
		   NULL, &r);
	expect_422(&r, "validation_failed", "derived_from", false, "an upstream without revision");
	it_resp_free(&r);
	json_t *ub = derivative_body("index", df(src_id, 1), "qzlimderived unknown");
	json_object_set_new(ub, "x", json_integer(1));
	send_json("POST", "/v1/memory/derivatives", tok, ub, NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	json_t *dl1 = list_all(tok, "/v1/memory/derivatives");
	IT_CHECK(json_array_size(dl1) == json_array_size(dl0) + 1 &&
		     array_has_id(dl1, "derivative_id", d64),
		 "refused derivatives were stored");
	size_t di;
	const json_t *de;
	json_array_foreach (dl0, di, de) {
		const json_t *now = item_by(dl1, "derivative_id", it_json_str(de, "derivative_id"));
		IT_CHECK(now && json_equal(now, de), "a listed derivative changed");
	}
	json_decref(dl0);
	json_decref(dl1);
	json_decref(roots);

	/* ---- classification, revocation, assents */
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", src_id);
	const char *cls_bad[] = {
	    "{\"expected_revision\":0,\"classification\":\"cold\"}",
	    "{\"expected_revision\":1,\"classification\":\"warm\"}",
	    "{\"classification\":\"cold\"}",
	    "{\"expected_revision\":1}",
	    "{\"expected_revision\":\"1\",\"classification\":\"cold\"}",
	};
	const char *cls_field[] = {"expected_revision", "classification", "expected_revision",
				   "classification", "expected_revision"};
	for (size_t k = 0; k < 5; k++) {
		it_request(&srv, "PUT", path, tok, cls_bad[k], NULL, &r);
		expect_422(&r, "validation_failed", cls_field[k], true, cls_bad[k]);
		it_resp_free(&r);
	}
	it_request(&srv, "PUT", path, tok,
		   "{\"expected_revision\":1,\"classification\":\"cold\",\"why\":\"x\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", src_id);
	const char *rev_bad[] = {
	    "{\"expected_revision\":1,\"reason_code\":\"bad code!\"}",
	    "{\"expected_revision\":1}",
	    "{\"expected_revision\":1,\"reason_code\":\"\"}",
	};
	for (size_t k = 0; k < 3; k++) {
		it_request(&srv, "POST", path, tok, rev_bad[k], NULL, &r);
		expect_422(&r, "validation_failed", "reason_code", true, rev_bad[k]);
		it_resp_free(&r);
	}
	expect_state(tok, src_id, "eligible", "", 1);
	char past[IT_TIME_LEN];
	it_rfc3339_ms(it_now_ms() - 60000, past);
	char ident[REF_LEN];
	sha256_str("qzlim identity", ident);
	struct {
		const char *owner, *identity, *expires, *field, *what;
	} asn_bad[] = {
	    {"owner-a", ident, past, "expires_at", "assent expires_at in the past"},
	    {"owner-a", ident, "tomorrow", "expires_at", "assent expires_at not a time"},
	    {"owner-a", ident, "2099-02-30T00:00:00.000Z", "expires_at", "assent on 30 February"},
	    {"owner-a", "abc", FAR_FUTURE, "source_identity", "assent identity abc"},
	    {"owner-a", "sha256:ABCDEF", FAR_FUTURE, "source_identity", "assent identity short"},
	    {"-owner", ident, FAR_FUTURE, "owner", "assent owner -owner"},
	};
	for (size_t k = 0; k < sizeof asn_bad / sizeof *asn_bad; k++) {
		assent_post(tok, asn_bad[k].owner, asn_bad[k].identity, asn_bad[k].expires, &r);
		expect_422(&r, "validation_failed", asn_bad[k].field, true, asn_bad[k].what);
		it_resp_free(&r);
	}
	it_request(&srv, "POST", "/v1/assents", tok,
		   "{\"owner\":\"owner-a\",\"source_identity\":\"sha256:" HEX64
		   "\",\"expires_at\":\"" FAR_FUTURE "\",\"scope\":\"all\"}",
		   NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);

	/* ---- list query parameters */
	const char *bad_lists[] = {
	    "/v1/memory/sources?limit=0",	    "/v1/memory/sources?limit=201",
	    "/v1/memory/sources?state=maybe",	    "/v1/memory/sources?classification=warm",
	    "/v1/memory/sources?source_kind=memo", "/v1/memory/derivatives?limit=0",
	    "/v1/memory/derivatives?limit=201",
	};
	for (size_t k = 0; k < sizeof bad_lists / sizeof *bad_lists; k++) {
		get(bad_lists[k], tok, &r);
		if (r.status != 422)
			fprintf(stderr, "  list: %s\n", bad_lists[k]);
		IT_PROBLEM(&r, 422, "validation_failed");
		it_resp_free(&r);
	}
	get("/v1/memory/sources?limit=1", tok, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "items")) == 1 &&
		     json_is_string(json_object_get(r.json, "next_cursor")),
		 "limit=1 page: %s", r.body);
	it_resp_free(&r);
	all = list_all(tok, "/v1/memory/sources");
	IT_CHECK(json_array_size(all) == created, "%zu sources stored, expected %zu",
		 json_array_size(all), created);
	json_decref(all);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits),
	};
	int rc = cmocka_run_group_tests_name("it_memory_limits", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
