/*
 * it_envelopes_access — who sees what of an envelope (openapi/openapi.yaml "Conventions",
 * "Context envelopes"; docs/envelope-contract.md; issue 6):
 *
 *  - the protocol: wrong methods (405), a text body (415);
 *  - tenant isolation of envelopes and workspaces;
 *  - audit records without claim text, one chain per envelope;
 *  - scopes (envelopes:read, envelopes:write, admin);
 *  - a server log without claim text (last: it stops the server).
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

#define CLAIM_MARKER "CLAIM-MARKER"

/* ================================================================ protocol */

static void test_protocol(void **state)
{
	(void)state;
	struct it_resp r;
	char path[256];
	env_post(ta.rw, ws_match, happy_copy(), &r);
	IT_STATUS(&r, 201);
	snprintf(path, sizeof path, "/v1/envelopes/%s", it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);

	struct {
		const char *method;
		const char *path;
	} wrong[] = {
	    {"DELETE", path},
	    {"PUT", path},
	    {"GET", "/v1/envelopes"},
	    {"GET", "/v1/context/relevance-checks"},
	    {"DELETE", "/v1/workspaces/w1/snapshot"},
	    {"POST", "/v1/workspaces/w1/snapshot"},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		it_request(&srv, wrong[i].method, wrong[i].path, ta.admin,
			   strcmp(wrong[i].method, "GET") == 0 ? NULL : "{}", NULL, &r);
		IT_PROBLEM(&r, 405, "method_not_allowed");
		it_resp_free(&r);
	}
	const char *text_ct[] = {"Content-Type: text/plain", NULL};
	char *body = dump_new(env_body(ws_match, happy_copy()));
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, body, text_ct, &r);
	IT_PROBLEM(&r, 415, "unsupported_media_type");
	it_resp_free(&r);
	free(body);
}

/* ================================================================ isolation */

static void test_isolation(void **state)
{
	(void)state;
	struct tenant tb;
	tenant_new(&tb, "env-b");
	char ws[ID_MAX], id[ID_MAX], path[256];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "tenant A's envelope");
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);

	const char *b_tokens[] = {tb.admin, tb.rw};
	for (size_t i = 0; i < 2; i++) {
		env_get(b_tokens[i], id, &r);
		IT_PROBLEM(&r, 404, "not_found");
		IT_CHECK(!strstr(r.body, "MATCH"), "the 404 reveals the verdict: %s", r.body);
		it_resp_free(&r);
		env_verify(b_tokens[i], id, &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
		snap_path(ws, path, sizeof path);
		get(path, b_tokens[i], &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
		env_post(b_tokens[i], ws, happy_copy(), &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
	}
	/* B's CAS sees a never-written workspace: a number → 409 with null */
	snap_put(tb.rw, ws, snap_body(1, happy_root(), "b", json_array()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "B learns A's revision of the workspace: %s", r.body);
	it_resp_free(&r);
	/* B may use the same id for its own workspace; A's stays as it was */
	char other_root[72];
	hash_of(0xb0b0ULL, other_root);
	snap_ok(tb.rw, ws, EXP_NULL, other_root, "b-head", json_array());
	env_post(tb.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "UNVERIFIABLE", CODES("stale_context"), true,
		   "B's envelope against B's own workspace of the same id");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, true);
	it_resp_free(&r);
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "A's verify after B wrote its own workspace of the same id", __FILE__,
			  __LINE__);
	it_resp_free(&r);
	/* B's audit does not show A's envelope or workspace */
	IT_CHECK(audit_count(tb.admin, "envelope", id) == 0, "B reads A's envelope audit");
	IT_CHECK(audit_count(tb.admin, "workspace", ws) == 1,
		 "B's workspace audit is not exactly its own write");
	tenant_free(&tb);
}

/* ================================================================ audit */

static void test_audit(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-audit");
	char ws[ID_MAX], id[ID_MAX], path[512];
	ws_fresh(ws);
	snap_ok(t.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());

	/* claims carrying a marker; one claim fails (a detail must name it without its text) */
	json_t *e = happy_copy();
	set_new(e, "summary.claims[0].text",
		json_string(CLAIM_MARKER " the router's secret claim"));
	set_new(e, "summary.claims[1].text", json_string(CLAIM_MARKER " an uncited secret claim"));
	set_new(e, "summary.claims[1].source_ref_ids", json_array());
	struct it_resp r;
	env_post(t.rw, ws, e, &r);
	EXPECT_ENV(&r, "UNVERIFIABLE", CODES("lossy_summary"), true, "the audited envelope");
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the verdict repeats claim text: %s", r.body);
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	json_t *codes = json_deep_copy(json_object_get(r.json, "failure_codes"));
	it_resp_free(&r);
	env_verify(t.rw, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the verify answer repeats claim text: %s", r.body);
	it_resp_free(&r);

	/* workspace.snapshot_updated {root_hash, file_count} */
	snprintf(path, sizeof path, "/v1/audit?resource_type=workspace&resource_id=%s", ws);
	json_t *recs = list_all(t.admin, path);
	IT_CHECK(json_array_size(recs) == 1, "workspace audit: %zu records", json_array_size(recs));
	json_t *rec = json_array_get(recs, 0);
	const json_t *d = json_object_get(rec, "details");
	char *text = dump(recs);
	IT_CHECK(it_json_str_is(rec, "action", "workspace.snapshot_updated") &&
		     it_json_str_is(rec, "resource_type", "workspace") &&
		     it_json_int(rec, "revision_after", -1) == 1 &&
		     it_json_has_null(rec, "prev_hash") &&
		     it_is_sha256_ref(it_json_str(rec, "hash")),
		 "workspace audit record: %s", text);
	IT_CHECK(it_json_str_is(d, "root_hash", happy_root()) &&
		     it_json_int(d, "file_count", -1) == 2,
		 "workspace audit details are not {root_hash, file_count}: %s", text);
	IT_CHECK(it_json_str(rec, "actor_token_id") &&
		     strncmp(it_json_str(rec, "actor_token_id"), "tok_", 4) == 0,
		 "actor_token_id: %s", text);
	free(text);
	json_decref(recs);

	/* envelope.submitted {verdict, failure_codes}, envelope.verified: one chain */
	snprintf(path, sizeof path, "/v1/audit?resource_type=envelope&resource_id=%s", id);
	recs = list_all(t.admin, path);
	text = dump(recs);
	IT_CHECK(json_array_size(recs) == 2, "envelope audit: %s", text);
	json_t *sub = json_array_get(recs, 0), *ver = json_array_get(recs, 1);
	IT_CHECK(it_json_str_is(sub, "action", "envelope.submitted") &&
		     it_json_int(sub, "revision_after", -1) == 1 &&
		     it_json_has_null(sub, "prev_hash"),
		 "envelope.submitted record: %s", text);
	d = json_object_get(sub, "details");
	IT_CHECK(it_json_str_is(d, "verdict", "UNVERIFIABLE") &&
		     json_equal(json_object_get(d, "failure_codes"), codes),
		 "envelope.submitted details are not {verdict, failure_codes}: %s", text);
	IT_CHECK(it_json_str_is(ver, "action", "envelope.verified") &&
		     it_json_int(ver, "revision_before", -1) == 1 &&
		     it_json_int(ver, "revision_after", -1) == 2 &&
		     it_json_str_is(ver, "prev_hash", it_json_str(sub, "hash")),
		 "envelope.verified record: %s", text);
	free(text);
	json_decref(recs);
	json_decref(codes);
	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=envelope&resource_id=%s", id);
	get(path, t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == 2,
		 "audit verify: %s", r.body);
	it_resp_free(&r);

	/* no claim text anywhere in the raw audit */
	get("/v1/audit?limit=200", t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the audit holds claim text: %s", r.body);
	it_resp_free(&r);

	/* a rejected submission and a stale snapshot write audit nothing */
	e = happy_copy();
	set_new(e, "summary.claims[0].text", json_integer(5));
	env_post(t.rw, ws, e, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	snap_put(t.rw, ws, snap_body(EXP_NULL, happy_root(), "h", json_array()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	IT_CHECK(audit_count(t.admin, "envelope", NULL) == 2 &&
		     audit_count(t.admin, "workspace", NULL) == 1,
		 "a rejected request was audited");
	tenant_free(&t);
}

/* ================================================================ scopes */

static void test_scopes(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-scope");
	char *writer = token_for(t.name, "envelopes:write", "it-writer");
	char *other =
	    token_for(t.name, "memory:read,memory:write,preferences:read,audit:read", "it-other");
	char ws[ID_MAX], id[ID_MAX], path[256];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct it_resp r;

	/* envelopes:read cannot write */
	snap_put(t.reader, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	snap_put(other, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	snap_put(NULL, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	get(path, t.reader, &r);
	IT_PROBLEM(&r, 404, "not_found"); /* nothing was written */
	it_resp_free(&r);

	/* envelopes:write alone writes */
	snap_ok(writer, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	env_post(t.reader, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_post(other, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_post(NULL, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	IT_CHECK(audit_count(t.admin, "envelope", NULL) == 0, "a refused submission was stored");
	env_post(writer, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "envelopes:write submits");
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	env_verify(t.reader, id, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_verify(other, id, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_verify(writer, id, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* reading needs envelopes:read */
	env_get(t.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2, "the reader does not see revision 2");
	it_resp_free(&r);
	get(path, t.reader, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	const char *no_read[] = {writer, other};
	for (size_t i = 0; i < 2; i++) {
		env_get(no_read[i], id, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		get(path, no_read[i], &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		relevance_doc(no_read[i], relevance_copy(), &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
	}
	env_get(NULL, id, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	relevance_doc(NULL, relevance_copy(), &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	/* the relevance check is a read */
	relevance_doc(t.reader, relevance_copy(), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "envelopes:read checks relevance");
	it_resp_free(&r);
	/* admin implies both */
	env_verify(t.admin, id, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	free(writer);
	free(other);
	tenant_free(&t);
}

/* ================================================================ privacy of the log */

static void test_log_privacy(void **state)
{
	(void)state;
	/* the audit test sent claims with the marker; add a rejected one */
	json_t *e = happy_copy();
	char *big = it_text_of(CLAIM_MARKER " too long ", 4001);
	set_new(e, "summary.claims[0].text", json_string(big));
	free(big);
	struct it_resp r;
	env_post(ta.rw, ws_match, e, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the 422 repeats claim text: %.500s", r.body);
	it_resp_free(&r);

	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);
	size_t len = 0;
	char *log = it_log_read(&srv, &len);
	IT_CHECK(log != NULL && len > 0, "no server log at %s", srv.log_path);
	const char *hit = memmem(log, len, CLAIM_MARKER, strlen(CLAIM_MARKER));
	if (hit) {
		const char *from = hit - log > 200 ? hit - 200 : log;
		fprintf(stderr, "  log excerpt: %.400s\n", from);
	}
	IT_CHECK(hit == NULL, "the server log %s contains claim text", srv.log_path);
	free(log);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_protocol),
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_audit),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server and reads its log */
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_access", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
