/* core/prefs: the preference journal rules of openapi/openapi.yaml "Preferences", without a
 * database. */
#include "unit.h"

#include <jansson.h>

#include "core/prefs.h"
#include "core/timefmt.h"

#define NOW 1800000000000LL /* 2027-01-15T08:00:00Z */

static struct pref_request remember(const char *key, const char *statement, const char *ref,
				    const char *quote, const char *op, int64_t expected)
{
	struct pref_request r = {PREF_REMEMBER, key, statement, ref, quote, op, NULL, RG_TIME_NONE,
				 expected};
	return r;
}

static struct pref_request retire(const char *key, const char *ref, const char *quote,
				  const char *op, int64_t expected)
{
	struct pref_request r = {PREF_RETIRE, key, NULL, ref, quote, op, NULL, RG_TIME_NONE, expected};
	return r;
}

static void apply(struct pref_journal *j, const struct pref_request *r)
{
	const char *pred;
	assert_int_equal(core_pref_check(j, r), PREF_OK);
	core_pref_apply(j, r, NOW, &pred);
}

/* The view as written, parsed back (a new reference). */
static json_t *view_of(const struct pref_journal *j, int64_t now_ms)
{
	struct jsonw w;
	size_t len;
	jsonw_init(&w);
	core_pref_view(&w, j, now_ms);
	char *text = jsonw_finish(&w, &len);
	assert_non_null(text);
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	assert_non_null(v);
	return v;
}

static void test_key_pattern(void **state)
{
	(void)state;
	char k128[129], k129[130];
	memset(k128, 'a', 128);
	k128[128] = '\0';
	memset(k129, 'a', 129);
	k129[129] = '\0';
	assert_true(core_pref_key_valid("review.collaboration"));
	assert_true(core_pref_key_valid("0a_b-c.d"));
	assert_true(core_pref_key_valid(k128));
	assert_false(core_pref_key_valid(k129));
	assert_false(core_pref_key_valid(""));
	assert_false(core_pref_key_valid("Review"));
	assert_false(core_pref_key_valid(".review"));
	assert_false(core_pref_key_valid("_review"));
	assert_false(core_pref_key_valid("review:x"));
	assert_false(core_pref_key_valid(NULL));
}

static void test_intent_hash(void **state)
{
	(void)state;
	char a[RG_SHA256_TAGGED_SIZE], b[RG_SHA256_TAGGED_SIZE], c[RG_SHA256_TAGGED_SIZE];
	struct pref_request r = remember("k", "s", "ref", "q", "op-1", 0);
	assert_true(core_pref_intent_hash(&r, a));
	assert_true(core_pref_intent_hash(&r, b));
	assert_string_equal(a, b);
	/* The exact compact, sorted JSON of the contract, absent members as null. */
	const char *canonical = "{\"action\":\"remember\",\"expected_revision\":null,"
				"\"expires_at\":null,\"key\":\"k\",\"operation_id\":\"op-1\","
				"\"source_quote\":\"q\",\"source_ref\":\"ref\",\"statement\":\"s\"}";
	core_sha256_tagged(canonical, strlen(canonical), c);
	assert_string_equal(a, c);
	r.expected_revision = 3;
	assert_true(core_pref_intent_hash(&r, b));
	assert_string_not_equal(a, b);
	struct pref_request t = retire("k", "ref", "q", "op-1", 0);
	assert_true(core_pref_intent_hash(&t, c));
	assert_string_not_equal(a, c);
}

static void test_first_write_and_stale(void **state)
{
	(void)state;
	struct pref_journal j = {0};
	struct pref_request r = remember("k", "s", "ref", "q", "op-1", 1);
	assert_int_equal(core_pref_check(&j, &r), PREF_STALE); /* never written: null expected */
	r.expected_revision = 0;
	apply(&j, &r);
	assert_int_equal(j.revision, 1);
	assert_int_equal(j.n, 1);
	assert_int_equal(j.entries[0].entry_revision, 1);
	struct pref_request again = remember("k", "s2", "ref2", "q2", "op-2", 0);
	assert_int_equal(core_pref_check(&j, &again), PREF_STALE);
}

static void test_correction_and_predecessor(void **state)
{
	(void)state;
	struct pref_journal j = {0};
	const char *pred = "x";
	struct pref_request r1 = remember("review", "Ask the reviewer", "m1", "q1", "op-1", 0);
	core_pref_apply(&j, &r1, NOW, &pred);
	assert_null(pred);
	struct pref_request r2 = remember("review", "Do not ask a reviewer", "m2", "q2", "op-2", 1);
	assert_int_equal(core_pref_check(&j, &r2), PREF_OK);
	core_pref_apply(&j, &r2, NOW, &pred);
	assert_string_equal(pred, "op-1");
	assert_int_equal(j.n, 1);
	assert_string_equal(j.entries[0].statement, "Do not ask a reviewer");
	assert_int_equal(j.entries[0].entry_revision, 2);
}

static void test_retire_rules(void **state)
{
	(void)state;
	struct pref_journal j = {0};
	struct pref_request unknown = retire("k", "m", "q", "op-0", 0);
	assert_int_equal(core_pref_check(&j, &unknown), PREF_UNKNOWN_KEY);
	struct pref_request r1 = remember("k", "s", "m1", "q1", "op-1", 0);
	apply(&j, &r1);
	struct pref_request r2 = retire("k", "m2", "forget it", "op-2", 1);
	apply(&j, &r2);
	assert_true(j.entries[0].retired);
	assert_null(j.entries[0].statement);
	/* Re-remembering needs a source other than the retirement's. */
	struct pref_request same = remember("k", "s", "m2", "q", "op-3", 2);
	assert_int_equal(core_pref_check(&j, &same), PREF_SOURCE_REUSED);
	struct pref_request fresh = remember("k", "s", "m3", "q", "op-3", 2);
	assert_int_equal(core_pref_check(&j, &fresh), PREF_OK);
}

static void test_capacity_keys(void **state)
{
	(void)state;
	static char keys[RG_PREF_MAX_KEYS + 1][8], ops[RG_PREF_MAX_KEYS + 1][8];
	struct pref_journal j = {0};
	static struct pref_request reqs[RG_PREF_MAX_KEYS + 1];
	for (int i = 0; i <= RG_PREF_MAX_KEYS; i++) {
		snprintf(keys[i], sizeof keys[i], "k%02d", i);
		snprintf(ops[i], sizeof ops[i], "op%02d", i);
		reqs[i] = remember(keys[i], "s", "r", "q", ops[i], j.revision);
		if (i < RG_PREF_MAX_KEYS)
			apply(&j, &reqs[i]);
	}
	assert_int_equal(j.n, RG_PREF_MAX_KEYS);
	assert_int_equal(core_pref_check(&j, &reqs[RG_PREF_MAX_KEYS]), PREF_CAPACITY);
	/* A correction of an existing key is not a new key. */
	struct pref_request fix = remember("k00", "s2", "r2", "q2", "op-fix", j.revision);
	assert_int_equal(core_pref_check(&j, &fix), PREF_OK);
}

static void test_capacity_bytes(void **state)
{
	(void)state;
	/* Two keys: 1200 + 1600 bytes each plus a third filling exactly to 32768. */
	static char big_s[RG_PREF_STATEMENT_MAX + 1], big_q[RG_PREF_SOURCE_QUOTE_MAX + 1];
	memset(big_s, 's', RG_PREF_STATEMENT_MAX);
	memset(big_q, 'q', RG_PREF_SOURCE_QUOTE_MAX);
	struct pref_journal j = {0};
	static char keys[16][8], ops[16][8];
	size_t used = 0;
	int i = 0;
	static struct pref_request reqs[16];
	for (; used + 2800 <= RG_PREF_MAX_BYTES; i++, used += 2800) {
		snprintf(keys[i], sizeof keys[i], "k%02d", i);
		snprintf(ops[i], sizeof ops[i], "op%02d", i);
		reqs[i] = remember(keys[i], big_s, "r", big_q, ops[i], j.revision);
		apply(&j, &reqs[i]);
	}
	/* 11 × 2800 = 30800; 1968 bytes are left. */
	size_t left = RG_PREF_MAX_BYTES - used;
	static char fill_s[2000], over_s[2001];
	memset(fill_s, 'f', left - 1);
	fill_s[left - 1] = '\0';
	memset(over_s, 'f', left);
	over_s[left] = '\0';
	struct pref_request exact = remember("last", fill_s, "r", "q", "op-last", j.revision);
	assert_int_equal(core_pref_check(&j, &exact), PREF_OK);
	struct pref_request over = remember("last", over_s, "r", "q", "op-last", j.revision);
	assert_int_equal(core_pref_check(&j, &over), PREF_CAPACITY);
	/* A retirement counts its own quote, not the statement it retires. */
	struct pref_request ret = retire("k00", "r9", "q", "op-ret", j.revision);
	apply(&j, &ret);
	over.expected_revision = j.revision;
	assert_int_equal(core_pref_check(&j, &over), PREF_OK);
}

static void test_view(void **state)
{
	(void)state;
	struct pref_journal j = {0};
	json_t *v = view_of(&j, NOW);
	assert_true(json_is_null(json_object_get(v, "revision")));
	assert_string_equal(json_string_value(json_object_get(v, "authority")), "advisory_only");
	assert_int_equal(json_array_size(json_object_get(v, "entries")), 0);
	json_decref(v);

	struct pref_request b = remember("b.later", "B", "rb", "qb", "op-b", 0);
	apply(&j, &b);
	struct pref_request a = remember("a.soon", "A", "ra", "qa", "op-a", 1);
	a.expires_at = "2027-01-15T08:00:01Z";
	a.expires_ms = NOW + 1000;
	apply(&j, &a);
	struct pref_request c = remember("c.gone", "C", "rc", "qc", "op-c", 2);
	apply(&j, &c);
	struct pref_request cr = retire("c.gone", "rc2", "forget", "op-cr", 3);
	apply(&j, &cr);

	v = view_of(&j, NOW);
	json_t *e = json_object_get(v, "entries");
	assert_int_equal(json_integer_value(json_object_get(v, "revision")), 4);
	assert_int_equal(json_array_size(e), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "key")), "a.soon");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "state")), "active");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "statement")), "A");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "expires_at")),
			    "2027-01-15T08:00:01.000Z");
	/* no expiry is null, and never expires */
	assert_true(json_is_null(json_object_get(json_array_get(e, 1), "expires_at")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 1), "state")), "active");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 2), "state")), "retired");
	assert_true(json_is_null(json_object_get(json_array_get(e, 2), "statement")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 2), "source_ref")), "rc2");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 2), "operation_id")), "op-cr");
	json_decref(v);

	/* At the expiry instant the entry reads expired, its statement withheld. */
	v = view_of(&j, NOW + 1000);
	e = json_object_get(v, "entries");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "state")), "expired");
	assert_true(json_is_null(json_object_get(json_array_get(e, 0), "statement")));
	json_decref(v);

	/* The epoch is a real instant, not "no expiry": it is past, shown as itself. */
	struct pref_request z = remember("z.epoch", "Z", "rz", "qz", "op-z", 4);
	z.expires_at = "1970-01-01T00:00:00Z";
	z.expires_ms = 0;
	apply(&j, &z);
	v = view_of(&j, NOW);
	e = json_object_get(v, "entries");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 3), "key")), "z.epoch");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 3), "state")), "expired");
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 3), "expires_at")),
			    "1970-01-01T00:00:00.000Z");
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_pattern),
		cmocka_unit_test(test_intent_hash),
		cmocka_unit_test(test_first_write_and_stale),
		cmocka_unit_test(test_correction_and_predecessor),
		cmocka_unit_test(test_retire_rules),
		cmocka_unit_test(test_capacity_keys),
		cmocka_unit_test(test_capacity_bytes),
		cmocka_unit_test(test_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
