/*
 * it_memory_operations — idempotent creates (docs/memory-contract.md "Idempotent create";
 * openapi/openapi.yaml CreateOperationId): a source or derivative create with an
 * operation_id, retried with the same body (members in any order), answers 200 with the
 * record it first created, and makes no second record and no second audit record; with
 * another body it is 409 operation_conflict and changes nothing; concurrent retries make one
 * record; the id is checked like every caller-chosen id, and is per tenant and record kind.
 * Helpers: memory_helpers.h; each test has its own tenant.
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

#include "memory_helpers.h"

#define SOURCES "/v1/memory/sources"
#define DERIVATIVES "/v1/memory/derivatives"

/* POSTs text (a JSON body as sent, borrowed) and answers the status; the answer's id member
 * into id (when given). */
static long post_text(const char *path, const char *token, const char *text, const char *key,
		      char id[ID_MAX])
{
	json_t *body = json_loads(text, 0, NULL);
	IT_CHECK(body != NULL, "test body parses: %s", text);
	struct it_resp r;
	send_json("POST", path, token, body, NULL, &r);
	long status = r.status;
	if (id && r.json && it_json_str(r.json, key))
		snprintf(id, ID_MAX, "%s", it_json_str(r.json, key));
	if (status == 409)
		IT_CHECK(it_json_str_is(r.json, "code", "operation_conflict"),
			 "a conflict is operation_conflict");
	it_resp_free(&r);
	return status;
}

static size_t count_items(const char *token, const char *path)
{
	json_t *all = list_all(token, path);
	size_t n = json_array_size(all);
	json_decref(all);
	return n;
}

static void test_source_replay_and_conflict(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "op-src");
	char first[ID_MAX] = "", again[ID_MAX] = "", other[ID_MAX] = "";
	IT_CHECK(post_text(SOURCES, t.admin,
			   "{\"source_kind\":\"note\",\"content\":\"deploys on tuesday\","
			   "\"labels\":{\"b\":\"2\",\"a\":\"1\"},\"operation_id\":\"op-1\"}",
			   "source_id", first) == 201,
		 "the first create is 201");
	/* the same body, members (and a map's members) in another order: a replay */
	IT_CHECK(post_text(SOURCES, t.admin,
			   "{\"operation_id\":\"op-1\",\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
			   "\"content\":\"deploys on tuesday\",\"source_kind\":\"note\"}",
			   "source_id", again) == 200,
		 "the retry is 200");
	IT_CHECK(strcmp(first, again) == 0, "the retry names the first source: %s %s", first, again);
	/* one more byte of content: another request under the same operation */
	IT_CHECK(post_text(SOURCES, t.admin,
			   "{\"source_kind\":\"note\",\"content\":\"deploys on tuesdays\","
			   "\"labels\":{\"b\":\"2\",\"a\":\"1\"},\"operation_id\":\"op-1\"}",
			   NULL, NULL) == 409,
		 "another body under the operation is 409");
	IT_CHECK(count_items(t.admin, SOURCES) == 1, "one source");
	IT_CHECK(audit_count(t.admin, "source", first) == 1, "one audit record");
	/* the replay shows the source as it is now */
	classify_ok(t.admin, first, 1, "cold", "active");
	struct it_resp r;
	send_json("POST", SOURCES, t.admin,
		  json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "source_kind", "note", "content",
			    "deploys on tuesday", "labels", "a", "1", "b", "2", "operation_id",
			    "op-1"),
		  NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "classification", "cold") &&
			 it_json_int(r.json, "revision", -1) == 2 &&
			 it_json_str_is(r.json, "effective_retrieval_state", "ineligible") &&
			 it_json_str_is(r.json, "source_id", first) &&
			 it_is_sha256_ref(it_json_str(r.json, "source_identity")) &&
			 it_is_timestamp_ms(it_json_str(r.json, "created_at")),
		 "the replay is the source now");
	it_resp_free(&r);
	/* without operation_id every create is a new source; other ids are other operations */
	IT_CHECK(post_text(SOURCES, t.admin, "{\"source_kind\":\"note\",\"content\":\"x\"}", NULL,
			   NULL) == 201 &&
			 post_text(SOURCES, t.admin, "{\"source_kind\":\"note\",\"content\":\"x\"}",
				   NULL, NULL) == 201,
		 "creates without operation_id are not replays");
	IT_CHECK(post_text(SOURCES, t.admin,
			   "{\"source_kind\":\"note\",\"content\":\"x\",\"operation_id\":\"op-2\"}",
			   "source_id", other) == 201 && strcmp(other, first) != 0,
		 "another operation_id creates");
	IT_CHECK(count_items(t.admin, SOURCES) == 4, "four sources");
	/* another tenant's operation of the same id is its own */
	struct tenant u;
	tenant_new(&u, "op-src-other");
	IT_CHECK(post_text(SOURCES, u.admin,
			   "{\"source_kind\":\"note\",\"content\":\"deploys on tuesday\","
			   "\"operation_id\":\"op-1\"}",
			   "source_id", again) == 201 && strcmp(again, first) != 0,
		 "operation ids are per tenant");
	tenant_free(&u);
	tenant_free(&t);
}

static void test_operation_id_checked(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "op-bad");
	char at_limit[ID_MAX * 2], over[ID_MAX * 2], id[ID_MAX];
	memset(at_limit, 'o', 128);
	at_limit[128] = '\0';
	memset(over, 'o', 129);
	over[129] = '\0';
	const char *bad[] = {"", "-starts-with-dash", "has space", over};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct it_resp r;
		send_json("POST", SOURCES, t.admin,
			  json_pack("{s:s, s:s, s:s}", "source_kind", "note", "content", "x",
				    "operation_id", bad[i]),
			  NULL, &r);
		expect_422(&r, "validation_failed", "operation_id", true, "a bad operation_id");
		it_resp_free(&r);
		send_json("POST", DERIVATIVES, t.admin,
			  json_pack("{s:s, s:[{s:s, s:i}], s:s, s:s}", "kind", "summary",
				    "derived_from", "source_id", "src_00000000000000000000000000000000",
				    "revision", 1, "content", "x", "operation_id", bad[i]),
			  NULL, &r);
		expect_422(&r, "validation_failed", "operation_id", true, "a bad operation_id");
		it_resp_free(&r);
	}
	struct it_resp r;
	send_json("POST", SOURCES, t.admin,
		  json_pack("{s:s, s:s, s:i}", "source_kind", "note", "content", "x",
			    "operation_id", 7),
		  NULL, &r);
	expect_422(&r, "validation_failed", "operation_id", true, "a number");
	it_resp_free(&r);
	IT_CHECK(count_items(t.admin, SOURCES) == 0, "nothing stored");
	json_t *b = json_pack("{s:s, s:s, s:s}", "source_kind", "note", "content", "x",
			      "operation_id", at_limit);
	char *text = json_dumps(b, JSON_COMPACT);
	IT_CHECK(post_text(SOURCES, t.admin, text, "source_id", id) == 201 &&
			 post_text(SOURCES, t.admin, text, "source_id", id) == 200,
		 "a 128-byte operation_id creates, then replays");
	free(text);
	json_decref(b);
	tenant_free(&t);
}

static void test_derivative_replay(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "op-drv");
	char src[ID_MAX], d1[ID_MAX] = "", d2[ID_MAX] = "";
	note(t.admin, "the release train leaves on tuesday", NULL, NULL, src, NULL);
	char body[512];
	snprintf(body, sizeof body,
		 "{\"kind\":\"summary\",\"derived_from\":[{\"source_id\":\"%s\",\"revision\":1}],"
		 "\"content\":\"release tuesday\",\"operation_id\":\"sum-1\"}",
		 src);
	IT_CHECK(post_text(DERIVATIVES, t.admin, body, "derivative_id", d1) == 201, "created");
	/* the upstream moves on: a retry still answers the derivative it made */
	classify_ok(t.admin, src, 1, "cold", "active");
	IT_CHECK(post_text(DERIVATIVES, t.admin, body, "derivative_id", d2) == 200 &&
			 strcmp(d1, d2) == 0,
		 "the retry is the first derivative: %s %s", d1, d2);
	json_t *again = get_ok(t.admin, "/v1/memory/derivatives?limit=200");
	IT_CHECK(json_array_size(json_object_get(again, "items")) == 1, "one derivative");
	json_decref(again);
	IT_CHECK(audit_count(t.admin, "derivative", d1) == 1, "one audit record");
	/* a source's operation id and a derivative's are apart */
	char s2[ID_MAX];
	IT_CHECK(post_text(SOURCES, t.admin,
			   "{\"source_kind\":\"note\",\"content\":\"x\",\"operation_id\":\"sum-1\"}",
			   "source_id", s2) == 201,
		 "operation ids are per record kind");
	snprintf(body, sizeof body,
		 "{\"kind\":\"summary\",\"derived_from\":[{\"source_id\":\"%s\",\"revision\":1}],"
		 "\"content\":\"release wednesday\",\"operation_id\":\"sum-1\"}",
		 src);
	IT_CHECK(post_text(DERIVATIVES, t.admin, body, NULL, NULL) == 409, "another body: 409");
	tenant_free(&t);
}

struct racer {
	const char *token;
	char id[ID_MAX];
	long status;
};

static void *race_create(void *arg)
{
	struct racer *r = arg;
	r->status = post_text(SOURCES, r->token,
			      "{\"source_kind\":\"note\",\"content\":\"raced\","
			      "\"operation_id\":\"race-1\"}",
			      "source_id", r->id);
	return NULL;
}

/* Retries in flight at once (a client and its gateway both retrying): one source. */
static void test_concurrent_retries(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "op-race");
	struct racer rs[8];
	pthread_t th[8];
	for (size_t i = 0; i < 8; i++) {
		rs[i] = (struct racer){.token = t.admin};
		pthread_create(&th[i], NULL, race_create, &rs[i]);
	}
	for (size_t i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	size_t created = 0;
	for (size_t i = 0; i < 8; i++) {
		IT_CHECK(rs[i].status == 201 || rs[i].status == 200, "racer %zu: %ld", i,
			 rs[i].status);
		created += rs[i].status == 201;
		IT_CHECK(strcmp(rs[i].id, rs[0].id) == 0, "every racer names one source");
	}
	IT_CHECK(created == 1, "one 201, the others replays: %zu", created);
	IT_CHECK(count_items(t.admin, SOURCES) == 1, "one source");
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_source_replay_and_conflict),
	    cmocka_unit_test(test_operation_id_checked),
	    cmocka_unit_test(test_derivative_replay),
	    cmocka_unit_test(test_concurrent_retries),
	};
	int rc = cmocka_run_group_tests_name("it_memory_operations", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
