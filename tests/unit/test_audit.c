/* core/audit: the canonical form of jsonb text, the record hash (a vector computed by the
 * database's audit_hash()), and the verify cursor's binding to tenant and filters. */
#include "unit.h"

#include "core/audit.h"

static const struct {
	const char *in, *want;
} canonical[] = {
	{"{}", "{}"},
	{"[]", "[]"},
	{"null", "null"},
	{"\"a\"", "\"a\""},
	{"{\"b\": 1, \"aa\": 2}", "{\"aa\":2,\"b\":1}"},
	{"{\"mode\": \"disabled\"}", "{\"mode\":\"disabled\"}"},
	{"[1.50, -1, 1e3, true, false, null]", "[1.50,-1,1e3,true,false,null]"},
	{"{\"z\": {\"b\": [], \"a\": {}}, \"Z\": [{\"y\": 1, \"x\": 2}]}",
	 "{\"Z\":[{\"x\":2,\"y\":1}],\"z\":{\"a\":{},\"b\":[]}}"},
	/* escaped keys sort by the bytes they stand for: "\u0001" < "\t" (0x09) < "a" */
	{"{\"a\": 1, \"\\t\": 2, \"\\u0001\": 3}", "{\"\\u0001\":3,\"\\t\":2,\"a\":1}"},
	/* "\"" (0x22) sorts before "#" (0x23) though its escape starts with 0x5c */
	{"{\"#\": 1, \"\\\"\": 2}", "{\"\\\"\":2,\"#\":1}"},
	/* UTF-8 bytes sort after ASCII; a shorter key before a longer one with its prefix */
	{"{\"é\": 1, \"z\": 2, \"zz\": 3}", "{\"z\":2,\"zz\":3,\"é\":1}"},
	{"{\"a\": \"x, y: \\\"z\\\"\"}", "{\"a\":\"x, y: \\\"z\\\"\"}"},
};

static const char *const malformed[] = {
	"", "{", "[1,", "{\"a\" 1}", "{\"a\": }", "\"open", "{1: 2}", "[1] 2", "{\"a\": 1,}x",
};

static void test_canonical_jsonb(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(canonical); i++) {
		char *out = NULL;
		size_t len = 0;
		assert_true(core_canonical_jsonb(canonical[i].in, &out, &len));
		assert_string_equal(out, canonical[i].want);
		assert_int_equal(len, strlen(canonical[i].want));
		free(out);
	}
	for (size_t i = 0; i < N_ELEMS(malformed); i++) {
		char *out = NULL;
		size_t len = 0;
		if (core_canonical_jsonb(malformed[i], &out, &len))
			fail_msg("accepted malformed %s as %s", malformed[i], out);
	}
}

static void test_record_hash_matches_the_database(void **state)
{
	(void)state;
	/* INSERT INTO audit_log (...) VALUES ('unit', 'tok_1', 'thread.memory_mode.updated',
	 * 'thread', 't1', 0, 1, 'req-1', '{"mode": "disabled", "b": [1.50, {"y": 1, "x": 2}]}')
	 * RETURNING seq, at, details::text, hash — on PostgreSQL 15 with migration 0003 */
	struct core_audit_record r = {
	    .seq = 1100002,
	    .actor_token_id = "tok_1",
	    .action = "thread.memory_mode.updated",
	    .resource_type = "thread",
	    .resource_id = "t1",
	    .revision_before = 0,
	    .revision_after = 1,
	    .request_id = "req-1",
	    .details = "{\"b\": [1.50, {\"x\": 2, \"y\": 1}], \"mode\": \"disabled\"}"};
	const char *at = "2026-12-01T13:58:59.135Z";
	char hash[RG_SHA256_TAGGED_SIZE];
	assert_true(core_audit_hash(&r, at, hash));
	assert_string_equal(
	    hash, "sha256:78242da224c2b421e5998b266b026815e858da465fac2e01b09c8e61b81719fe");
	r.no_revision_before = true; /* any change moves the hash */
	assert_true(core_audit_hash(&r, at, hash));
	assert_string_not_equal(
	    hash, "sha256:78242da224c2b421e5998b266b026815e858da465fac2e01b09c8e61b81719fe");
}

/* The one renderer: every field of the API's record, in its order, nulls where SQL NULL. */
static void test_record_json(void **state)
{
	(void)state;
	struct core_audit_record r = {.seq = 7,
				      .at_ms = 1764597539135,
				      .tenant_id = "t",
				      .action = "token.deleted",
				      .resource_type = "token",
				      .resource_id = "tok_x",
				      .revision_before = 1,
				      .no_revision_after = true,
				      .details = "{\"a\": [1, 2]}",
				      .hash = "sha256:ab"};
	json_t *j = core_audit_record_json(&r);
	char *text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(
	    text, "{\"seq\":7,\"at\":\"2025-12-01T13:58:59.135Z\",\"actor_token_id\":null,"
		  "\"action\":\"token.deleted\",\"resource_type\":\"token\",\"resource_id\":"
		  "\"tok_x\",\"revision_before\":1,\"revision_after\":null,\"request_id\":null,"
		  "\"details\":{\"a\":[1,2]},\"prev_hash\":null,\"hash\":\"sha256:ab\"}");
	free(text);
	json_decref(j);
}

static void test_cursor(void **state)
{
	(void)state;
	char c[RG_AUDIT_CURSOR_SIZE];
	int64_t seq = 0;
	core_audit_cursor_encode("t1", NULL, NULL, 123456789, c);
	assert_int_equal(strlen(c), 40);
	assert_true(core_audit_cursor_decode("t1", NULL, NULL, c, &seq));
	assert_int_equal(seq, 123456789);
	/* bound to the tenant and to each filter, NULL and "" told apart */
	assert_false(core_audit_cursor_decode("t2", NULL, NULL, c, &seq));
	assert_false(core_audit_cursor_decode("t1", "thread", NULL, c, &seq));
	assert_false(core_audit_cursor_decode("t1", NULL, "x", c, &seq));
	assert_false(core_audit_cursor_decode("t1", "", NULL, c, &seq));
	core_audit_cursor_encode("t1", "thread", "x", INT64_MAX, c);
	assert_true(core_audit_cursor_decode("t1", "thread", "x", c, &seq));
	assert_true(seq == INT64_MAX);
	assert_false(core_audit_cursor_decode("t1", "threadx", "", c, &seq));
	/* every single-digit edit is refused; so are other shapes */
	for (size_t i = 0; i < 40; i++) {
		char e[RG_AUDIT_CURSOR_SIZE];
		memcpy(e, c, sizeof e);
		e[i] = e[i] == 'a' ? 'b' : 'a';
		assert_false(core_audit_cursor_decode("t1", "thread", "x", e, &seq));
	}
	static const char *const bad[] = {"", "12", "0000000000000000000000000000000000000000",
					  "ZZ00000000000000000000000000000000000000"};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		assert_false(core_audit_cursor_decode("t1", NULL, NULL, bad[i], &seq));
	char upper[RG_AUDIT_CURSOR_SIZE];
	core_audit_cursor_encode("t1", NULL, NULL, 0xabcdef, upper);
	for (char *p = upper; *p; p++)
		*p = *p >= 'a' && *p <= 'f' ? (char)(*p - 32) : *p;
	assert_false(core_audit_cursor_decode("t1", NULL, NULL, upper, &seq));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_canonical_jsonb),
	    cmocka_unit_test(test_record_hash_matches_the_database),
	    cmocka_unit_test(test_record_json),
	    cmocka_unit_test(test_cursor),
	};
	return cmocka_run_group_tests_name("unit_audit", tests, NULL, NULL);
}
