/*
 * it_disclosures_reads — content reads in the disclosure ledger (docs/disclosures.md): each is
 * recorded before it is sent, concurrent ones share commits, one that cannot be recorded
 * sends nothing; and no context delivery is recorded at or after a revocation, with loads
 * racing it. Helpers: memory_helpers.h (the disclosure helpers too); each test has its own
 * tenant.
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
	int max; /* loads at most */
	int loads, delivered, with_lsn;
	long failed;
};

static void *run_loader(void *arg)
{
	struct loader *l = arg;
	char body[160];
	snprintf(body, sizeof body, "{\"query\":\"%s\",\"thread_id\":\"thr-race\"}", l->query);
	while (!*l->stop && l->loads < l->max) {
		struct it_resp r;
		it_request(&srv, "POST", "/v1/memory/context", l->token, body, NULL, &r);
		if (r.status == 200)
			l->delivered += (int)json_array_size(json_object_get(r.json, "items"));
		else
			l->failed = r.status;
		l->with_lsn += it_resp_header(&r, "Recallgate-Commit-LSN") != NULL;
		l->loads++;
		it_resp_free(&r);
	}
	return NULL;
}

/* Concurrent context loads are each recorded, each answer with its commit's LSN, and they
 * share commits. */
static void test_concurrent_loads_share_commits(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "dsc-lgrp");
	char src[ID_MAX];
	note(t.admin, "Ledger note qzloadgroup.", "active", NULL, src, NULL);
	double rec0 = metric("recallgate_context_loads_recorded_total");
	double com0 = metric("recallgate_context_load_commits_total");
	volatile int stop = 0;
	struct loader ls[LOADERS];
	pthread_t th[LOADERS];
	for (int i = 0; i < LOADERS; i++) {
		ls[i] = (struct loader){.token = t.admin, .query = "qzloadgroup", .stop = &stop,
					.max = 30};
		pthread_create(&th[i], NULL, run_loader, &ls[i]);
	}
	int loads = 0, delivered = 0, with_lsn = 0;
	for (int i = 0; i < LOADERS; i++) {
		pthread_join(th[i], NULL);
		IT_CHECK(ls[i].failed == 0, "a load failed with %ld", ls[i].failed);
		loads += ls[i].loads;
		delivered += ls[i].delivered;
		with_lsn += ls[i].with_lsn;
	}
	IT_CHECK(delivered == loads, "%d loads delivered %d items, one each", loads, delivered);
	IT_CHECK(with_lsn == loads, "%d of %d answers carry Recallgate-Commit-LSN", with_lsn,
		 loads);
	json_t *all = list_all(t.admin, "/v1/context/load-receipts");
	IT_CHECK(json_array_size(all) == (size_t)loads, "%zu receipts for %d loads",
		 json_array_size(all), loads);
	json_decref(all);
	char path[200];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/disclosures", src);
	all = list_all(t.admin, path);
	IT_CHECK(json_array_size(all) == (size_t)loads, "%zu disclosures for %d loads",
		 json_array_size(all), loads);
	json_decref(all);
	double rec = metric("recallgate_context_loads_recorded_total") - rec0;
	double com = metric("recallgate_context_load_commits_total") - com0;
	IT_CHECK(rec == loads && com >= 1 && com < rec,
		 "%g loads recorded in %g commits: concurrent loads share commits", rec, com);
	tenant_free(&t);
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
			ls[i] = (struct loader){.token = t.admin, .query = word, .stop = &stop,
						.max = 400};
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
		cmocka_unit_test(test_a_content_read_is_recorded_and_is_not_retrieval),
		cmocka_unit_test(test_concurrent_content_reads_share_commits),
		cmocka_unit_test(test_an_unrecorded_read_sends_nothing),
		cmocka_unit_test(test_concurrent_loads_share_commits),
		cmocka_unit_test(test_no_delivery_after_revocation_under_racing_loads),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
