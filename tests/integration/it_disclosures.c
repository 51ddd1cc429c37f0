/*
 * it_disclosures — the disclosure ledger (openapi/openapi.yaml "Disclosures";
 * docs/disclosures.md): every item a context load delivers is recorded with its receipt,
 * before the answer; the lists filter, page and stay in their tenant; readback counts the
 * deliveries of a source and its derivatives, and none after its revocation, even with loads
 * racing the revocation. Helpers: memory_helpers.h; each test has its own tenant.
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
#include <libpq-fe.h>

#include "memory_helpers.h"

#define AUDIT "audit:read"

static void test_a_load_is_recorded_per_item(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-rec");
	char src[ID_MAX], drv[ID_MAX], receipt[ID_MAX];
	source_and_summary(&t, "qzledgerone", src, drv);
	char *reader = token_for(&t, "memory:read", "reader");
	char *auditor = token_for(&t, AUDIT, "auditor");
	json_t *cx = load_context(reader, "qzledgerone", "thr-ledger-1", receipt);
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
	json_decref(load_context(t.admin, "qzledgertwo", NULL, NULL));
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
		json_decref(load_context(t.admin, "qzledgerthree", "thr-a", NULL));
		get_content(t.admin, a, &cr); /* content reads between the loads */
		IT_STATUS(&cr, 200);
		it_resp_free(&cr);
	}
	json_decref(load_context(t.admin, "qzledgerfour", "thr-b", NULL));
	json_decref(load_context(t.admin, "qzledgerfour", NULL, NULL));

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
	json_decref(load_context(t.admin, "qzledgerfive", "thr-5", NULL));
	json_decref(load_context(t.admin, "qzledgerfive", "thr-6", NULL));
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
	json_decref(load_context(t.admin, "qzledgersix", "thr-r", r1));
	json_decref(load_context(t.admin, "qzledgersix", NULL, r2));
	json_decref(load_context(t.admin, "qzledgernothing", "thr-r", r3)); /* nothing delivered */
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
	json_decref(load_context(t.admin, "qzledgereight", NULL, NULL)); /* a load's row */
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
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
