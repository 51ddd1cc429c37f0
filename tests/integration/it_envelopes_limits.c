/*
 * it_envelopes_limits — every limit of the snapshot and envelope requests at its edge
 * (openapi/openapi.yaml "Context envelopes"; docs/envelope-contract.md; issue 6):
 *
 *  - snapshots: the 10000-file snapshot built here (and 10001), path, hash and git_head
 *    bounds, types, unknown members, the path parameter;
 *  - envelopes: envelope_id, source refs, claims, claim bytes, claim refs, receipts and the
 *    source ref strings at their edges, wrong types, unknown members, the strict request body,
 *    the body limit; only accepted envelopes are stored and audited.
 *
 * Helpers: envelope_helpers.h. The fixture files come from RG_FIXTURES_DIR (set by CMake).
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
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

#include "envelope_helpers.h"

/* ================================================================ limits: snapshots */

/* a short unique path for file i: all 1-char names, then 2, then 3 (base 62) */
static void short_path(size_t i, char out[8])
{
	static const char al[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t len = 1, span = 62;
	while (i >= span) {
		i -= span;
		len++;
		span *= 62;
	}
	out[len] = '\0';
	for (size_t k = len; k > 0; k--) {
		out[k - 1] = al[i % 62];
		i /= 62;
	}
}

/* new: n files with short unique paths (the happy path's two first, with their hashes) */
static json_t *many_files(size_t n)
{
	json_t *files = happy_files();
	char h[72], p[8];
	hash_of(99, h);
	for (size_t i = 2; i < n; i++) {
		short_path(i, p);
		json_array_append_new(files, json_pack("{ss ss}", "path", p, "content_hash", h));
	}
	return files;
}

static void test_limits_snapshot(void **state)
{
	(void)state;
	char ws[ID_MAX];
	struct it_resp r;

	/* 10000 files pass (the body stays under the default 1 MiB) and serve freshness */
	ws_fresh(ws);
	json_t *b = snap_body(EXP_NULL, happy_root(), happy_head(), many_files(MAX_FILES));
	char *text = dump(b);
	json_decref(b);
	IT_CHECK(strlen(text) < DEFAULT_MAX_BODY, "the 10000-file body is %zu bytes", strlen(text));
	char path[256];
	snap_path(ws, path, sizeof path);
	it_request(&srv, "PUT", path, ta.rw, text, NULL, &r);
	free(text);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), MAX_FILES, false);
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), MAX_FILES, true);
	it_resp_free(&r);
	POST_EXPECT(ws, happy_copy(), "MATCH", NO_CODES, true,
		    "the happy path against a 10000-file snapshot");

	/* 10001 → 422, nothing written */
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	b = snap_body(EXP_NULL, happy_root(), happy_head(), many_files(MAX_FILES + 1));
	text = dump(b);
	json_decref(b);
	IT_CHECK(strlen(text) < DEFAULT_MAX_BODY, "the 10001-file body is %zu bytes", strlen(text));
	it_request(&srv, "PUT", path, ta.rw, text, NULL, &r);
	free(text);
	expect_422(&r, "validation_failed", "files", "10001 files");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* field bounds */
	char *p1024 = it_text_of("src/", 1024), *p1025 = it_text_of("src/", 1025);
	char *g256 = it_text_of("head-", 256), *g257 = it_text_of("head-", 257);
	char h[72];
	hash_of(5, h);
	struct {
		const char *what;
		json_t *files;
		const char *root;
		const char *head;
		const char *field; /* NULL: passes */
	} cases[] = {
	    {"path of 1024 bytes", json_pack("[{ss ss}]", "path", p1024, "content_hash", h),
	     happy_root(), "h", NULL},
	    {"path of 1025 bytes", json_pack("[{ss ss}]", "path", p1025, "content_hash", h),
	     happy_root(), "h", "files[0].path"},
	    {"empty path", json_pack("[{ss ss}]", "path", "", "content_hash", h), happy_root(), "h",
	     "files[0].path"},
	    {"duplicate paths",
	     json_pack("[{ss ss} {ss ss}]", "path", "a.c", "content_hash", h, "path", "a.c",
		       "content_hash", h),
	     happy_root(), "h", "files"},
	    {"content_hash not sha256",
	     json_pack("[{ss ss}]", "path", "a.c", "content_hash", "sha256:abc"), happy_root(), "h",
	     "files[0].content_hash"},
	    {"content_hash upper-case",
	     json_pack("[{ss ss}]", "path", "a.c", "content_hash",
		       "sha256:5E3F5DF0D7D6B4F0B9BDE774C0F94B71A71C8CCF8B7C59E26A4DFAD1B59F5101"),
	     happy_root(), "h", "files[0].content_hash"},
	    {"content_hash missing", json_pack("[{ss}]", "path", "a.c"), happy_root(), "h",
	     "files[0].content_hash"},
	    {"path not a string", json_pack("[{si ss}]", "path", 5, "content_hash", h),
	     happy_root(), "h", "files[0].path"},
	    {"a file is not an object", json_pack("[s]", "a.c"), happy_root(), "h", "files[0]"},
	    {"files not an array", json_pack("{}"), happy_root(), "h", "files"},
	    {"root_hash malformed", json_array(), "sha256:12", "h", "root_hash"},
	    {"git_head of 256 bytes", json_array(), happy_root(), g256, NULL},
	    {"git_head of 257 bytes", json_array(), happy_root(), g257, "git_head"},
	    {"empty git_head", json_array(), happy_root(), "", "git_head"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ws_fresh(ws);
		snap_put(ta.rw, ws,
			 snap_body(EXP_NULL, cases[i].root, cases[i].head, cases[i].files), NULL,
			 &r);
		if (!cases[i].field) {
			if (r.status != 200)
				fprintf(stderr, "  case: %s\n", cases[i].what);
			IT_STATUS(&r, 200);
		} else {
			/* duplicates: the list, or the repeated entry */
			expect_422x(&r, "validation_failed", cases[i].field,
				    strcmp(cases[i].what, "duplicate paths") != 0, cases[i].what);
		}
		it_resp_free(&r);
	}
	free(p1024);
	free(p1025);
	free(g256);
	free(g257);

	/* types, unknown members, the path parameter */
	ws_fresh(ws);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "expected_revision", json_string("1"));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision a string");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "expected_revision", json_integer(0));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision 0");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "colour", json_string("blue"));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "unknown_field", "colour", "an unknown member");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h",
		      json_pack("[{ss ss ss}]", "path", "a", "content_hash", h, "mode", "0644"));
	snap_put(ta.rw, ws, b, NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_del(b, "root_hash");
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "root_hash", "root_hash missing");
	it_resp_free(&r);
	snap_put(ta.rw, "-bad-ws", snap_body(EXP_NULL, happy_root(), "h", json_array()), NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "a workspace_id off its pattern");
	it_resp_free(&r);
	char path2[256];
	snap_path(ws, path2, sizeof path2);
	it_request(&srv, "PUT", path2, ta.rw, "[1]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "PUT", path2, ta.rw, "{\"files\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);
	get(path2, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

/* ================================================================ limits: envelopes */

/* new: a source ref {id, path, range, content_hash, expansion_command} */
static json_t *src_ref(const char *id, const char *path, const char *range, const char *hash,
		       const char *cmd)
{
	return json_pack("{ss ss ss ss ss}", "id", id, "path", path, "range", range, "content_hash",
			 hash, "expansion_command", cmd);
}

/* POST an envelope that must be rejected with 422 naming `field` */
static void expect_rejected(json_t *env, const char *field, const char *what)
{
	struct it_resp r;
	env_post(ta.rw, ws_match, env, &r);
	expect_422(&r, "validation_failed", field, what);
	it_resp_free(&r);
}

static void test_limits_envelope(void **state)
{
	(void)state;
	size_t audit0 = audit_count(ta.admin, "envelope", NULL);
	size_t accepted = 0;
	char h[72], id[160];
	json_t *e, *arr;

	/* envelope_id: required, a string of 1..128 */
	char *id128 = it_text_of("ctxenv_", 128), *id129 = it_text_of("ctxenv_", 129);
	e = happy_copy();
	set_new(e, "envelope_id", json_string(id128));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "envelope_id of 128");
	accepted++;
	e = happy_copy();
	set_new(e, "envelope_id", json_string(id129));
	expect_rejected(e, "envelope.envelope_id", "envelope_id of 129");
	e = happy_copy();
	set_new(e, "envelope_id", json_string(""));
	expect_rejected(e, "envelope.envelope_id", "empty envelope_id");
	e = happy_copy();
	del(e, "envelope_id");
	expect_rejected(e, "envelope.envelope_id", "envelope_id missing");
	e = happy_copy();
	set_new(e, "envelope_id", json_integer(7));
	expect_rejected(e, "envelope.envelope_id", "envelope_id a number");
	free(id128);
	free(id129);

	/* source_refs: 256 pass (unlisted paths: the root matches) / 257 */
	e = happy_copy();
	arr = json_object_get(e, "source_refs");
	for (size_t i = 2; i < MAX_SOURCE_REFS; i++) {
		char p[64];
		snprintf(id, sizeof id, "src_x%03zu", i);
		snprintf(p, sizeof p, "lib/extra/file%03zu.c", i);
		hash_of(1000 + i, h);
		json_array_append_new(arr, src_ref(id, p, "1-2", h, "index context --focus x"));
	}
	json_t *e257 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "256 source refs");
	accepted++;
	hash_of(9999, h);
	json_array_append_new(json_object_get(e257, "source_refs"),
			      src_ref("src_x257", "lib/extra/x257.c", "1-2", h, "cmd"));
	expect_rejected(e257, "envelope.source_refs", "257 source refs");

	/* claims: 256 / 257 */
	e = happy_copy();
	arr = json_object_get(json_object_get(e, "summary"), "claims");
	for (size_t i = 2; i < MAX_CLAIMS; i++)
		json_array_append_new(arr, json_pack("{ss s[s]}", "text", "A short claim.",
						     "source_ref_ids", "src_001"));
	json_t *c257 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "256 claims");
	accepted++;
	json_array_append_new(
	    json_object_get(json_object_get(c257, "summary"), "claims"),
	    json_pack("{ss s[s]}", "text", "One too many.", "source_ref_ids", "src_001"));
	expect_rejected(c257, "envelope.summary.claims", "257 claims");

	/* claim text: 4000 / 4001 bytes, ASCII and two-byte characters */
	char *t4000 = it_text_of("claim ", MAX_CLAIM_BYTES), *t4001 = it_text_of("claim ", 4001);
	char *u4000 = repeat_utf8("é", 2000, ""), *u4001 = repeat_utf8("é", 2000, "x");
	const char *ok_texts[] = {t4000, u4000};
	const char *bad_texts[] = {t4001, u4001};
	for (size_t i = 0; i < 2; i++) {
		e = happy_copy();
		set_new(e, "summary.claims[0].text", json_string(ok_texts[i]));
		POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true,
			    i ? "claim text of 4000 bytes (2000 two-byte characters)"
			      : "claim text of 4000 bytes");
		accepted++;
		e = happy_copy();
		set_new(e, "summary.claims[0].text", json_string(bad_texts[i]));
		expect_rejected(e, "envelope.summary.claims[0].text",
				i ? "claim text of 4001 bytes (2001 characters)"
				  : "claim text of 4001 bytes");
	}
	free(t4000);
	free(t4001);
	free(u4000);
	free(u4001);

	/* source_ref_ids: 32 / 33 */
	e = happy_copy();
	arr = json_object_get(
	    json_array_get(json_object_get(json_object_get(e, "summary"), "claims"), 0),
	    "source_ref_ids");
	for (size_t i = 1; i < MAX_CLAIM_REFS; i++)
		json_array_append_new(arr, json_string(i % 2 ? "src_002" : "src_001"));
	json_t *r33 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "32 source_ref_ids in a claim");
	accepted++;
	json_array_append_new(
	    json_object_get(
		json_array_get(json_object_get(json_object_get(r33, "summary"), "claims"), 0),
		"source_ref_ids"),
	    json_string("src_001"));
	expect_rejected(r33, "envelope.summary.claims[0].source_ref_ids",
			"33 source_ref_ids in a claim");

	/* receipt_chain: 64 / 65 */
	e = happy_copy();
	arr = json_object_get(e, "receipt_chain");
	for (size_t i = 3; i < MAX_RECEIPTS; i++) {
		hash_of(5000 + i, h);
		json_array_append_new(arr, json_pack("{ss ss ss}", "tool", "crucible", "action",
						     "assess", "receipt_hash", h));
	}
	json_t *rc65 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "64 receipts");
	accepted++;
	hash_of(6000, h);
	json_array_append_new(json_object_get(rc65, "receipt_chain"),
			      json_pack("{ss ss}", "tool", "crucible", "receipt_hash", h));
	expect_rejected(rc65, "envelope.receipt_chain", "65 receipts");

	/* source ref strings at their edges: an extra, uncited, unlisted ref (root matches) */
	char *s128 = it_text_of("src_", 128), *s129 = it_text_of("src_", 129);
	char *p1024 = it_text_of("lib/", 1024), *p1025 = it_text_of("lib/", 1025);
	char *r64 = it_text_of("1-", 64), *r65 = it_text_of("1-", 65);
	char *x1024 = it_text_of("index context --focus ", 1024),
	     *x1025 = it_text_of("index context --focus ", 1025);
	char *h80 = it_text_of("sha256:", 80), *h81 = it_text_of("sha256:", 81);
	hash_of(77, h);
	struct {
		const char *what;
		const char *id, *path, *range, *hash, *cmd;
		const char *field; /* NULL: passes */
	} refs[] = {
	    {"id of 128", s128, "lib/a.c", "1-2", h, "cmd", NULL},
	    {"id of 129", s129, "lib/a.c", "1-2", h, "cmd", "envelope.source_refs[2].id"},
	    {"path of 1024", "src_e1", p1024, "1-2", h, "cmd", NULL},
	    {"path of 1025", "src_e2", p1025, "1-2", h, "cmd", "envelope.source_refs[2].path"},
	    {"range of 64", "src_e3", "lib/a.c", r64, h, "cmd", NULL},
	    {"range of 65", "src_e4", "lib/a.c", r65, h, "cmd", "envelope.source_refs[2].range"},
	    {"expansion_command of 1024", "src_e5", "lib/a.c", "1-2", h, x1024, NULL},
	    {"expansion_command of 1025", "src_e6", "lib/a.c", "1-2", h, x1025,
	     "envelope.source_refs[2].expansion_command"},
	    {"content_hash of 81", "src_e8", "lib/a.c", "1-2", h81, "cmd",
	     "envelope.source_refs[2].content_hash"},
	};
	for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
		e = happy_copy();
		json_array_append_new(
		    json_object_get(e, "source_refs"),
		    src_ref(refs[i].id, refs[i].path, refs[i].range, refs[i].hash, refs[i].cmd));
		if (!refs[i].field) {
			POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, refs[i].what);
			accepted++;
		} else {
			expect_rejected(e, refs[i].field, refs[i].what);
		}
	}
	/* an 80-byte content_hash is well-formed but not a sha256 ref: a finding */
	e = happy_copy();
	json_array_append_new(json_object_get(e, "source_refs"),
			      src_ref("src_e7", "lib/a.c", "1-2", h80, "cmd"));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE", CODES("stale_context"), true,
		    "content_hash of 80 bytes that is no sha256 ref");
	accepted++;
	free(s128);
	free(s129);
	free(p1024);
	free(p1025);
	free(r64);
	free(r65);
	free(x1024);
	free(x1025);
	free(h80);
	free(h81);

	/* wrong types → 422 */
	struct {
		const char *path;
		const char *value; /* JSON */
		const char *field; /* errors[] names it; NULL: envelope.<path> */
	} wrong[] = {
	    {"source_refs", "{}", NULL},
	    {"source_refs", "\"src_001\"", NULL},
	    {"source_refs[0]", "\"src_001\"", NULL},
	    {"source_refs[0].path", "5", NULL},
	    {"source_refs[0].content_hash", "null", NULL},
	    {"source_refs[1].expansion_command", "[\"index\"]", NULL},
	    {"context_budget.max_input_tokens", "\"200000\"", NULL},
	    {"context_budget.target_packet_tokens", "4000.5", NULL},
	    {"context_budget.reserved_response_tokens", "null", NULL},
	    {"context_budget", "[]", NULL},
	    {"workspace", "\"ws\"", NULL},
	    {"compression", "[]", NULL},
	    {"summary.claims", "{}", NULL},
	    {"summary.claims[0]", "\"claim\"", NULL},
	    {"summary.claims[0].text", "5", NULL},
	    {"summary.claims[0].source_ref_ids", "\"src_001\"", NULL},
	    {"summary.claims[0].source_ref_ids", "[1]",
	     "envelope.summary.claims[0].source_ref_ids[0]"},
	    {"receipt_chain", "{}", NULL},
	    {"receipt_chain[0]", "\"index\"", NULL},
	    {"receipt_chain[0].tool", "5", NULL},
	    {"quality_gates", "[]", NULL},
	    {"quality_gates.readability", "true", "envelope.quality_gates[0]"}, /* by position */
	    {"failure_code", "5", NULL},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		e = happy_copy();
		json_error_t err;
		json_t *v = json_loads(wrong[i].value, JSON_DECODE_ANY, &err);
		IT_CHECK(v != NULL, "bad test value %s", wrong[i].value);
		set_new(e, wrong[i].path, v);
		char what[200], field[200];
		snprintf(what, sizeof what, "%s = %s", wrong[i].path, wrong[i].value);
		snprintf(field, sizeof field, "envelope.%s", wrong[i].path);
		expect_rejected(e, wrong[i].field ? wrong[i].field : field, what);
	}

	/* unknown members inside the envelope are the producer's business: accepted */
	e = happy_copy();
	set_new(e, "x_producer", json_pack("{ss}", "note", "anything"));
	set_new(e, "workspace.branch", json_string("main"));
	set_new(e, "source_refs[0].language", json_string("typescript"));
	set_new(e, "summary.claims[0].confidence", json_real(0.9));
	set_new(e, "receipt_chain[0].at", json_string("2026-06-28T12:00:00Z"));
	set_new(e, "quality_gates.security", json_string("MATCH"));
	set_new(e, "context_budget.note", json_string("not an integer, but unknown"));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "unknown members inside the envelope");
	accepted++;

	/* the request body itself is strict */
	struct it_resp r;
	json_t *b = env_body(ws_match, happy_copy());
	json_object_set_new(b, "colour", json_string("blue"));
	send_json("POST", "/v1/envelopes", ta.rw, b, NULL, &r);
	expect_422(&r, "unknown_field", "colour", "an unknown member of the request");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, json_pack("{ss}", "workspace_id", ws_match), NULL,
		  &r);
	expect_422(&r, "validation_failed", "envelope", "envelope missing");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, json_pack("{s[i]}", "envelope", 1), NULL, &r);
	expect_422(&r, "validation_failed", "envelope", "envelope an array");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, env_body("-bad-ws", happy_copy()), NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "workspace_id off its pattern");
	it_resp_free(&r);
	b = env_body(NULL, happy_copy());
	json_object_set_new(b, "workspace_id", json_integer(5));
	send_json("POST", "/v1/envelopes", ta.rw, b, NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "workspace_id a number");
	it_resp_free(&r);
	/* an envelope over the body limit (1 MiB by default) → 413 */
	e = happy_copy();
	char *big = it_text_of("claim ", MAX_CLAIM_BYTES);
	arr = json_object_get(json_object_get(e, "summary"), "claims");
	for (size_t i = 0; i < 270; i++)
		json_array_append_new(
		    arr, json_pack("{ss s[s]}", "text", big, "source_ref_ids", "src_001"));
	free(big);
	char *huge = dump_new(env_body(ws_match, e));
	IT_CHECK(strlen(huge) > DEFAULT_MAX_BODY, "the oversized body is only %zu bytes",
		 strlen(huge));
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, huge, NULL, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	free(huge);
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, "[1]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, "{\"envelope\": {", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* only the accepted ones were stored and audited */
	IT_CHECK(audit_count(ta.admin, "envelope", NULL) == audit0 + accepted,
		 "expected %zu new envelope audit records", accepted);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_limits_snapshot),
	    cmocka_unit_test(test_limits_envelope),
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_limits", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
