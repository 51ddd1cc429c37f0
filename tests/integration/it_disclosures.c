/*
 * it_disclosures — the disclosure ledger (openapi/openapi.yaml "Disclosures";
 * docs/disclosures.md): every item a context load delivers is recorded with its receipt,
 * before the answer; the lists filter, page and stay in their tenant; readback counts the
 * deliveries of a source and its derivatives, and none after its revocation, even with loads
 * racing the revocation. Helpers: memory_helpers.h; each test has its own tenant.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "memory_helpers.h"

#define AUDIT "audit:read"

/* GET a record's content */
static void get_content(const char *token, const char *id, struct it_resp *r)
{
	char path[160];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", id);
	get(path, token, r);
}

/* new: GET path with token, 200 expected, the answer's JSON */
static json_t *get_ok(const char *token, const char *path)
{
	struct it_resp r;
	get(path, token, &r);
	IT_STATUS(&r, 200);
	json_t *j = json_incref(r.json);
	it_resp_free(&r);
	return j;
}

/* new: one context load of query (thread may be NULL); its receipt id into receipt */
static json_t *load(const char *token, const char *query, const char *thread,
		    char receipt[ID_MAX])
{
	json_t *cx = context_ok(token, query, thread);
	if (receipt)
		it_copy_str(receipt, ID_MAX, it_json_str(json_object_get(cx, "load_receipt"),
							 "receipt_id"));
	return cx;
}

/* A source and a summary derivative of it, both matching `word`. */
static void source_and_summary(const struct tenant *t, const char *word, char src[ID_MAX],
			       char drv[ID_MAX])
{
	char text[160];
	snprintf(text, sizeof text, "Ledger note %s: the reviewer signs the release.", word);
	note(t->admin, text, "active", NULL, src, NULL);
	snprintf(text, sizeof text, "Summary %s: releases need a reviewer.", word);
	derive(t->admin, "summary", df(src, 1), text, drv);
}

static void test_a_load_is_recorded_per_item(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-rec");
	char src[ID_MAX], drv[ID_MAX], receipt[ID_MAX];
	source_and_summary(&t, "qzledgerone", src, drv);
	char *reader = token_for(&t, "memory:read", "reader");
	char *auditor = token_for(&t, AUDIT, "auditor");
	json_t *cx = load(reader, "qzledgerone", "thr-ledger-1", receipt);
	IT_CHECK(json_array_size(items_of(cx)) == 2, "the load delivered 2 items");

	json_t *page = get_ok(auditor, "/v1/disclosures");
	const json_t *items = json_object_get(page, "items");
	char *raw = json_dumps(page, JSON_COMPACT);
	IT_CHECK(json_array_size(items) == 2, "2 disclosures: %s", raw);
	IT_CHECK(!contains(raw, "qzledgerone") && !contains(raw, "reviewer"),
		 "a disclosure holds no content and no query: %s", raw);
	for (size_t i = 0; i < 2; i++) {
		const json_t *d = json_array_get(items, i);
		const char *id = it_json_str(d, "record_id");
		const json_t *delivered = item_by(items_of(cx), "record_id", id);
		IT_CHECK(delivered != NULL, "disclosure of an undelivered record: %s", raw);
		IT_CHECK(it_has_prefix_hex(it_json_str(d, "disclosure_id"), "dsc_"),
			 "disclosure_id: %s", raw);
		IT_CHECK(it_is_timestamp_ms(it_json_str(d, "at")), "at: %s", raw);
		IT_CHECK(it_json_str_is(d, "record_kind",
					strcmp(id, src) == 0 ? "source" : "derivative"),
			 "record_kind: %s", raw);
		IT_CHECK(it_json_int(d, "revision", -1) == it_json_int(delivered, "revision", -2),
			 "revision: %s", raw);
		IT_CHECK(it_is_sha256_ref(it_json_str(d, "delivered_hash")), "hash: %s", raw);
		IT_CHECK(it_json_str_is(d, "thread_id", "thr-ledger-1") &&
			     it_json_str_is(d, "surface", "context") &&
			     it_json_str_is(d, "via", "rest") &&
			     it_json_str_is(d, "receipt_id", receipt),
			 "thread, surface, via, receipt: %s", raw);
		IT_CHECK(it_json_str(d, "token_id") && it_json_str(d, "request_id"),
			 "token_id and request_id: %s", raw);
	}
	/* The receipt's loaded inputs carry the same hashes. */
	char path[160];
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", receipt);
	json_t *rc = get_ok(reader, path);
	const json_t *loaded = json_object_get(rc, "loaded_inputs");
	for (size_t i = 0; i < json_array_size(loaded); i++) {
		const json_t *l = json_array_get(loaded, i);
		const json_t *d = item_by(items, "record_id", it_json_str(l, "record_id"));
		IT_CHECK(d && strcmp(it_json_str(d, "delivered_hash"),
				     it_json_str(l, "delivered_hash")) == 0,
			 "delivered_hash differs from the receipt's: %s", raw);
	}
	free(raw);
	json_decref(rc);
	json_decref(page);
	json_decref(cx);
	free(reader);
	free(auditor);
	tenant_free(&t);
}

static void test_lists_need_audit_read_and_stay_in_their_tenant(void **state)
{
	(void)state;
	struct tenant t, other;
	tenant_new(&t, "dsc-own");
	tenant_new(&other, "dsc-oth");
	char src[ID_MAX], drv[ID_MAX];
	source_and_summary(&t, "qzledgertwo", src, drv);
	json_decref(load(t.admin, "qzledgertwo", NULL, NULL));
	char *reader = token_for(&t, "memory:read", "reader");
	static const char *const paths[] = {"/v1/disclosures", "/v1/context/load-receipts", NULL};
	for (const char *const *p = paths; *p; p++) {
		struct it_resp r;
		get(*p, reader, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		json_t *mine = get_ok(t.admin, *p), *theirs = get_ok(other.admin, *p);
		IT_CHECK(json_array_size(json_object_get(mine, "items")) > 0, "%s: own rows", *p);
		IT_CHECK(json_array_size(json_object_get(theirs, "items")) == 0,
			 "%s: another tenant's rows", *p);
		json_decref(mine);
		json_decref(theirs);
	}
	char path[160];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures", src);
	struct it_resp r;
	get(path, other.admin, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	free(reader);
	tenant_free(&t);
	tenant_free(&other);
}

/* Walks /v1/disclosures?<query>&limit=<limit> to its end; the number of rows. When want is
 * not NULL, the rows must be its items, in its order (no row twice, none left out). */
static size_t walk(const char *token, const char *query, int limit, const json_t *want)
{
	char path[512];
	size_t n = 0;
	char cursor[32] = "";
	for (int pages = 0; pages < 100; pages++) {
		snprintf(path, sizeof path, "/v1/disclosures?%s%slimit=%d%s%s", query,
			 *query ? "&" : "", limit, *cursor ? "&after=" : "", cursor);
		json_t *page = get_ok(token, path);
		const json_t *items = json_object_get(page, "items");
		IT_CHECK(json_array_size(items) <= (size_t)limit, "a page over its limit");
		for (size_t i = 0; want && i < json_array_size(items); i++)
			IT_CHECK(strcmp(it_json_str(json_array_get(items, i), "disclosure_id"),
					it_json_str(json_array_get(want, n + i), "disclosure_id")) == 0,
				 "row %zu differs from the one-page list", n + i);
		n += json_array_size(items);
		const char *next = it_json_str(page, "next_cursor");
		if (next == NULL) {
			json_decref(page);
			return n;
		}
		it_copy_str(cursor, sizeof cursor, next);
		json_decref(page);
	}
	fail_msg("the cursor never ended");
	return n;
}

static void test_filters_pages_and_limits(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-flt");
	char a[ID_MAX], a_drv[ID_MAX], b[ID_MAX], b_drv[ID_MAX];
	source_and_summary(&t, "qzledgerthree", a, a_drv);
	source_and_summary(&t, "qzledgerfour", b, b_drv);
	long long before = it_now_ms();
	char since[IT_TIME_LEN];
	it_rfc3339_ms(before - 1, since);
	struct it_resp cr;
	for (int i = 0; i < 3; i++) {
		json_decref(load(t.admin, "qzledgerthree", "thr-a", NULL));
		get_content(t.admin, a, &cr); /* content reads between the loads */
		IT_STATUS(&cr, 200);
		it_resp_free(&cr);
	}
	json_decref(load(t.admin, "qzledgerfour", "thr-b", NULL));
	json_decref(load(t.admin, "qzledgerfour", NULL, NULL));

	/* 10 load items and 3 content reads, in one order whatever the page size */
	json_t *all = get_ok(t.admin, "/v1/disclosures?limit=1000");
	IT_CHECK(json_array_size(json_object_get(all, "items")) == 13, "13 rows");
	for (int limit = 1; limit <= 4; limit++)
		IT_CHECK(walk(t.admin, "", limit, json_object_get(all, "items")) == 13,
			 "13 rows in the same order, %d per page", limit);
	char q[200];
	snprintf(q, sizeof q, "record_id=%s", a);
	IT_CHECK(walk(t.admin, q, 2, NULL) == 6, "3 loads and 3 reads of a");
	IT_CHECK(walk(t.admin, "thread_id=thr-b", 100, NULL) == 2, "2 deliveries to thr-b");
	IT_CHECK(walk(t.admin, "thread_id=thr-none", 100, NULL) == 0, "none to an unknown thread");
	snprintf(q, sizeof q, "since=%s", since);
	IT_CHECK(walk(t.admin, q, 100, NULL) == 13, "all since before the loads");
	IT_CHECK(walk(t.admin, "since=" FAR_FUTURE, 100, NULL) == 0, "none since the far future");
	snprintf(q, sizeof q, "until=%s", since);
	IT_CHECK(walk(t.admin, q, 100, NULL) == 0, "none until before the loads (exclusive)");

	/* Newest first: the last load (no thread), then the one to thr-b, then a content read. */
	const json_t *items = json_object_get(all, "items");
	IT_CHECK(json_is_null(json_object_get(json_array_get(items, 0), "thread_id")) &&
		     it_json_str_is(json_array_get(items, 4), "surface", "content"),
		 "newest first across loads and reads");
	json_decref(all);

	static const struct {
		const char *query, *field;
	} bad[] = {
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"after=x", "after"},
		{"since=yesterday", "since"},
		{"until=2026-13-01T00:00:00Z", "until"},
		{"record_id=%20bad", "record_id"},
		{"thread_id=-x", "thread_id"},
		{"token_id=a%2Fb", "token_id"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char path[200];
		snprintf(path, sizeof path, "/v1/disclosures?%s", bad[i].query);
		struct it_resp r;
		get(path, t.admin, &r);
		expect_422(&r, "validation_failed", bad[i].field, true, bad[i].query);
		it_resp_free(&r);
	}
	tenant_free(&t);
}

static void test_a_source_list_and_its_derivatives(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-src");
	char src[ID_MAX], drv[ID_MAX];
	source_and_summary(&t, "qzledgerfive", src, drv);
	json_decref(load(t.admin, "qzledgerfive", "thr-5", NULL));
	json_decref(load(t.admin, "qzledgerfive", "thr-6", NULL));
	char path[200];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures", src);
	json_t *own = get_ok(t.admin, path);
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures?include_derivatives=false",
		 src);
	json_t *own_too = get_ok(t.admin, path);
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures?include_derivatives=true",
		 src);
	json_t *all = get_ok(t.admin, path);
	IT_CHECK(json_array_size(json_object_get(own, "items")) == 2 &&
		     json_array_size(json_object_get(own_too, "items")) == 2,
		 "the source's own 2 rows");
	IT_CHECK(json_array_size(json_object_get(all, "items")) == 4, "with its derivative: 4");
	IT_CHECK(array_has_id(json_object_get(all, "items"), "record_id", drv),
		 "the derivative's rows are there");
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures?include_derivatives=yes",
		 src);
	struct it_resp r;
	get(path, t.admin, &r);
	expect_422(&r, "validation_failed", "include_derivatives", true, "include_derivatives");
	it_resp_free(&r);
	get("/v1/memory/sources/src_00000000000000000000000000000000/disclosures", t.admin, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* Readback sums the source and its derivatives. */
	json_t *rb = readback(t.admin, src);
	const json_t *d = json_object_get(rb, "disclosures");
	IT_CHECK(it_json_int(d, "count", -1) == 4 && it_json_int(d, "threads", -1) == 2 &&
		     it_json_int(d, "tokens", -1) == 1 && it_json_int(d, "after_revocation", -1) == 0,
		 "readback disclosures: count 4, threads 2, tokens 1, after_revocation 0");
	IT_CHECK(it_is_timestamp_ms(it_json_str(d, "first_at")) &&
		     it_is_timestamp_ms(it_json_str(d, "last_at")),
		 "first_at and last_at");
	json_decref(rb);
	json_decref(own);
	json_decref(own_too);
	json_decref(all);
	tenant_free(&t);
}

static void test_load_receipts_list(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-lrc");
	char src[ID_MAX], drv[ID_MAX], r1[ID_MAX], r2[ID_MAX], r3[ID_MAX];
	source_and_summary(&t, "qzledgersix", src, drv);
	json_decref(load(t.admin, "qzledgersix", "thr-r", r1));
	json_decref(load(t.admin, "qzledgersix", NULL, r2));
	json_decref(load(t.admin, "qzledgernothing", "thr-r", r3)); /* nothing delivered */
	json_t *all = get_ok(t.admin, "/v1/context/load-receipts");
	const json_t *items = json_object_get(all, "items");
	IT_CHECK(json_array_size(items) == 3, "3 receipts");
	IT_CHECK(it_json_str_is(json_array_get(items, 0), "receipt_id", r3) &&
		     it_json_str_is(json_array_get(items, 2), "receipt_id", r1),
		 "newest first");
	char path[160];
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", r1);
	json_t *one = get_ok(t.admin, path);
	expect_same_json(json_array_get(items, 2), one, "a listed receipt is the stored one");
	json_t *thr = get_ok(t.admin, "/v1/context/load-receipts?thread_id=thr-r&limit=1");
	IT_CHECK(json_array_size(json_object_get(thr, "items")) == 1 &&
		     it_json_str(thr, "next_cursor") != NULL,
		 "a page of one, and a cursor");
	json_t *none = get_ok(t.admin, "/v1/context/load-receipts?since=" FAR_FUTURE);
	IT_CHECK(json_array_size(json_object_get(none, "items")) == 0, "none since the future");
	json_decref(all);
	json_decref(one);
	json_decref(thr);
	json_decref(none);
	tenant_free(&t);
}

static void test_an_mcp_load_is_recorded_as_mcp(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-mcp");
	char src[ID_MAX], drv[ID_MAX];
	source_and_summary(&t, "qzledgerseven", src, drv);
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
			   "\"name\":\"memory_context\",\"arguments\":{\"query\":\"qzledgerseven\","
			   "\"thread_id\":\"thr-mcp\"}}}";
	struct it_resp r;
	it_request(&srv, "POST", "/mcp", t.admin, body, NULL, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	json_t *page = get_ok(t.admin, "/v1/disclosures?thread_id=thr-mcp");
	const json_t *items = json_object_get(page, "items");
	IT_CHECK(json_array_size(items) == 2, "the tool's two deliveries are recorded");
	for (size_t i = 0; i < json_array_size(items); i++)
		IT_CHECK(it_json_str_is(json_array_get(items, i), "via", "mcp"), "via mcp");
	json_decref(page);
	tenant_free(&t);
}

static void test_the_ledger_refuses_changes(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-ro");
	char src[ID_MAX], drv[ID_MAX];
	source_and_summary(&t, "qzledgereight", src, drv);
	json_decref(load(t.admin, "qzledgereight", NULL, NULL)); /* a load's row */
	struct it_resp cr;
	get_content(t.admin, src, &cr); /* a content read's row */
	IT_STATUS(&cr, 200);
	it_resp_free(&cr);
	PGconn *db = PQconnectdb(getenv("DATABASE_URL"));
	assert_int_equal(PQstatus(db), CONNECTION_OK);
	static const char *const sql[] = {
		"UPDATE disclosures SET thread_id = 'x' WHERE tenant_id = $1",
		"DELETE FROM disclosures WHERE tenant_id = $1",
		"UPDATE load_receipts SET thread_id = 'x' WHERE tenant_id = $1",
		"DELETE FROM load_receipts WHERE tenant_id = $1",
	};
	for (size_t i = 0; i < 4; i++) {
		const char *params[] = {t.name};
		PGresult *res = PQexecParams(db, sql[i], 1, NULL, params, NULL, NULL, 0);
		IT_CHECK(PQresultStatus(res) == PGRES_FATAL_ERROR &&
			     strcmp(PQresultErrorField(res, PG_DIAG_SQLSTATE), "42501") == 0,
			 "%s was not refused", sql[i]);
		PQclear(res);
	}
	for (int i = 0; i < 2; i++) {
		PGresult *res = PQexec(db, i ? "TRUNCATE load_receipts" : "TRUNCATE disclosures");
		IT_CHECK(PQresultStatus(res) == PGRES_FATAL_ERROR, "TRUNCATE was not refused");
		PQclear(res);
	}
	PQfinish(db);
	json_t *page = get_ok(t.admin, "/v1/disclosures");
	IT_CHECK(json_array_size(json_object_get(page, "items")) == 3, "the rows are unchanged");
	json_decref(page);
	tenant_free(&t);
}


/* ---- content reads ------------------------------------------------------------------- */

static double metric(const char *series)
{
	struct it_resp r;
	it_request(&srv, "GET", "/metrics", NULL, NULL, NULL, &r);
	IT_STATUS(&r, 200);
	double v = it_metric_value(r.body, series);
	it_resp_free(&r);
	return v;
}

static void test_a_content_read_is_recorded_and_is_not_retrieval(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-cnt");
	const char *text = "Ledger note qzcontentone: the reviewer signs.";
	char src[ID_MAX], hash[REF_LEN];
	note(t.admin, text, "active", NULL, src, hash);
	char *reader = token_for(&t, "memory:read", "reader");
	expect_content(reader, src, text);
	json_t *page = get_ok(t.admin, "/v1/disclosures");
	const json_t *d = json_array_get(json_object_get(page, "items"), 0);
	char *raw = json_dumps(page, JSON_COMPACT);
	IT_CHECK(json_array_size(json_object_get(page, "items")) == 1, "one row: %s", raw);
	IT_CHECK(it_json_str_is(d, "record_id", src) && it_json_str_is(d, "surface", "content") &&
		     it_json_str_is(d, "via", "rest") && it_json_str_is(d, "record_kind", "source") &&
		     it_json_int(d, "revision", -1) == 1 &&
		     it_json_str_is(d, "delivered_hash", hash) &&
		     json_is_null(json_object_get(d, "thread_id")) &&
		     json_is_null(json_object_get(d, "receipt_id")),
		 "a content read's row: %s", raw);
	IT_CHECK(!contains(raw, "qzcontentone"), "no content in the row: %s", raw);
	free(raw);
	json_decref(page);

	/* A revoked source's bytes stay readable for audit: listed, never counted as retrieval. */
	struct it_resp r;
	revoke_source(t.admin, src, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	expect_content(reader, src, text);
	json_t *rb = readback(t.admin, src);
	const json_t *sum = json_object_get(rb, "disclosures");
	IT_CHECK(it_json_int(sum, "count", -1) == 2 && it_json_int(sum, "after_revocation", -1) == 0,
		 "2 content reads, none of them retrieval after the revocation");
	json_decref(rb);
	free(reader);
	tenant_free(&t);
}

/* When its disclosure cannot be committed, a content read answers 503 and sends nothing. The
 * failure is made by a trigger that refuses this tenant's rows only (other tests' tenants,
 * and their servers' batches, are untouched). */
static void test_an_unrecorded_read_sends_nothing(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-503");
	const char *text = "Ledger note qzrefusedone: never sent unrecorded.";
	char src[ID_MAX];
	note(t.admin, text, "active", NULL, src, NULL);
	PGconn *db = PQconnectdb(getenv("DATABASE_URL"));
	assert_int_equal(PQstatus(db), CONNECTION_OK);
	char sql[700];
	snprintf(sql, sizeof sql,
		 "CREATE FUNCTION it_refuse_dsc503() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
		 " IF NEW.tenant_id = '%s' THEN RAISE EXCEPTION 'refused by the test'; END IF;"
		 " RETURN NEW; END $$; CREATE TRIGGER it_refuse_dsc503 BEFORE INSERT ON disclosures"
		 " FOR EACH ROW EXECUTE FUNCTION it_refuse_dsc503()",
		 t.name);
	/* left over by an interrupted run: gone first */
	PGresult *res = PQexec(db, "DROP TRIGGER IF EXISTS it_refuse_dsc503 ON disclosures;"
				   " DROP FUNCTION IF EXISTS it_refuse_dsc503()");
	PQclear(res);
	res = PQexec(db, sql);
	IT_CHECK(PQresultStatus(res) == PGRES_COMMAND_OK, "the refusing trigger: %s",
		 PQerrorMessage(db));
	PQclear(res);
	char path[160];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", src);
	struct it_resp r;
	get(path, t.admin, &r);
	IT_PROBLEM(&r, 503, "database_unavailable");
	IT_CHECK(!contains(r.body, "qzrefusedone"), "the content was sent: %s", r.body);
	IT_CHECK(it_resp_header(&r, "Retry-After") && strcmp(it_resp_header(&r, "Retry-After"), "1") == 0,
		 "Retry-After: 1");
	it_resp_free(&r);
	res = PQexec(db, "DROP TRIGGER it_refuse_dsc503 ON disclosures; DROP FUNCTION it_refuse_dsc503()");
	PQclear(res);
	PQfinish(db);
	expect_content(t.admin, src, text); /* recorded this time */
	json_t *page = get_ok(t.admin, "/v1/disclosures");
	IT_CHECK(json_array_size(json_object_get(page, "items")) == 1,
		 "only the read that was sent is recorded");
	json_decref(page);
	tenant_free(&t);
}

#define READERS 8
#define READS 25

struct reader {
	const char *token;
	char path[160];
	int ok;
};

static void *run_reader(void *arg)
{
	struct reader *rd = arg;
	for (int i = 0; i < READS; i++) {
		struct it_resp r;
		it_request(&srv, "GET", rd->path, rd->token, NULL, NULL, &r);
		rd->ok += r.status == 200;
		it_resp_free(&r);
	}
	return NULL;
}

/* Concurrent content reads are each recorded, and share commits. */
static void test_concurrent_content_reads_share_commits(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-grp");
	char src[ID_MAX];
	note(t.admin, "Ledger note qzgroupone.", "active", NULL, src, NULL);
	double rec0 = metric("recallgate_content_disclosures_total");
	double com0 = metric("recallgate_content_disclosure_commits_total");
	struct reader rs[READERS];
	pthread_t th[READERS];
	for (int i = 0; i < READERS; i++) {
		rs[i] = (struct reader){.token = t.admin};
		snprintf(rs[i].path, sizeof rs[i].path, "/v1/memory/sources/%s/content", src);
		pthread_create(&th[i], NULL, run_reader, &rs[i]);
	}
	int ok = 0;
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		ok += rs[i].ok;
	}
	IT_CHECK(ok == READERS * READS, "%d of %d reads answered 200", ok, READERS * READS);
	char path[200];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures", src);
	json_t *all = list_all(t.admin, path);
	IT_CHECK(json_array_size(all) == (size_t)ok, "%zu rows for %d reads", json_array_size(all),
		 ok);
	json_decref(all);
	double rec = metric("recallgate_content_disclosures_total") - rec0;
	double com = metric("recallgate_content_disclosure_commits_total") - com0;
	IT_CHECK(rec == ok && com >= 1 && com < rec,
		 "%g reads recorded in %g commits: concurrent reads share commits", rec, com);
	tenant_free(&t);
}

/* ---- the revocation race ------------------------------------------------------------ */

#define LOADERS 6
#define ROUNDS 6

struct loader {
	const char *token, *query;
	volatile int *stop;
	int loads, delivered;
	long failed;
};

static void *run_loader(void *arg)
{
	struct loader *l = arg;
	char body[160];
	snprintf(body, sizeof body, "{\"query\":\"%s\",\"thread_id\":\"thr-race\"}", l->query);
	while (!*l->stop && l->loads < 400) {
		struct it_resp r;
		it_request(&srv, "POST", "/v1/memory/context", l->token, body, NULL, &r);
		if (r.status == 200)
			l->delivered += (int)json_array_size(json_object_get(r.json, "items"));
		else
			l->failed = r.status;
		l->loads++;
		it_resp_free(&r);
	}
	return NULL;
}

/* Loaders deliver a source and its summary while it is revoked: no context delivery of
 * either is recorded at or after the revocation, and loads delivered it before. */
static void test_no_delivery_after_revocation_under_racing_loads(void **state)
{
	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		struct tenant t;
		tenant_new(&t, "dsc-race");
		char src[ID_MAX], drv[ID_MAX], word[32];
		snprintf(word, sizeof word, "qzrace%c", 'a' + round);
		source_and_summary(&t, word, src, drv);
		volatile int stop = 0;
		struct loader ls[LOADERS];
		pthread_t th[LOADERS];
		for (int i = 0; i < LOADERS; i++) {
			ls[i] = (struct loader){.token = t.admin, .query = word, .stop = &stop};
			pthread_create(&th[i], NULL, run_loader, &ls[i]);
		}
		it_sleep_ms(60 + 20 * round); /* revoke while the loads run */
		struct it_resp r;
		revoke_source(t.admin, src, 1, "owner_request", &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		it_sleep_ms(80);
		stop = 1;
		int loads = 0, delivered = 0;
		for (int i = 0; i < LOADERS; i++) {
			pthread_join(th[i], NULL);
			loads += ls[i].loads;
			delivered += ls[i].delivered;
			IT_CHECK(ls[i].failed == 0, "a load failed with %ld", ls[i].failed);
		}
		json_t *rb = readback(t.admin, src);
		const json_t *d = json_object_get(rb, "disclosures");
		IT_CHECK(it_json_int(d, "after_revocation", -1) == 0,
			 "round %d: %lld context deliveries after the revocation", round,
			 it_json_int(d, "after_revocation", -1));
		IT_CHECK(it_json_int(d, "count", -1) == delivered && delivered > 0,
			 "round %d: %d delivered, %lld recorded", round, delivered,
			 it_json_int(d, "count", -1));
		IT_CHECK(loads > 0, "no load ran");
		json_decref(rb);
		expect_nothing_retrieved(t.admin, word, "after the revocation");
		tenant_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_load_is_recorded_per_item),
		cmocka_unit_test(test_lists_need_audit_read_and_stay_in_their_tenant),
		cmocka_unit_test(test_filters_pages_and_limits),
		cmocka_unit_test(test_a_source_list_and_its_derivatives),
		cmocka_unit_test(test_load_receipts_list),
		cmocka_unit_test(test_an_mcp_load_is_recorded_as_mcp),
		cmocka_unit_test(test_the_ledger_refuses_changes),
		cmocka_unit_test(test_a_content_read_is_recorded_and_is_not_retrieval),
		cmocka_unit_test(test_concurrent_content_reads_share_commits),
		cmocka_unit_test(test_an_unrecorded_read_sends_nothing),
		cmocka_unit_test(test_no_delivery_after_revocation_under_racing_loads),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
