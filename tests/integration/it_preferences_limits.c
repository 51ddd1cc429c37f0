/*
 * it_preferences_limits — how much a journal and a request may hold: capacity (64 keys, and
 * 32 KiB of latest statements and quotes at the byte, retirements included) and every field
 * bound at its edge (statement, source_ref, source_quote, operation_id, key, path ids; bytes,
 * not characters; required members, types, unknown members). openapi/openapi.yaml
 * "Preferences", docs/preferences-contract.md. Helpers: preferences_helpers.h.
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

#include "preferences_helpers.h"

#define MAX_KEYS 64
#define MAX_BYTES 32768

/* new: prefix followed by `count` copies of the UTF-8 sequence `unit` */
static char *repeat_utf8(const char *prefix, const char *unit, size_t count)
{
	size_t p = strlen(prefix), u = strlen(unit);
	char *s = malloc(p + u * count + 1);
	assert_non_null(s);
	memcpy(s, prefix, p);
	for (size_t i = 0; i < count; i++)
		memcpy(s + p + i * u, unit, u);
	s[p + u * count] = '\0';
	return s;
}

/* ================================================================ capacity */

static void test_capacity_keys(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char key[32], stmt[64], op[32];
	for (int i = 0; i < MAX_KEYS; i++) {
		snprintf(key, sizeof key, "key.%02d", i);
		snprintf(stmt, sizeof stmt, M_STMT "-cap-%02d", i);
		snprintf(op, sizeof op, "op-k%02d", i);
		remember_ok(&j, key, stmt, M_SREF "-cap", M_QUOTE "-cap", i == 0 ? EXP_NULL : i, op,
			    NULL);
	}
	struct snap s;
	snap_take(&j, &s);
	IT_CHECK(entry_count(s.view) == MAX_KEYS && rev_of(s.view) == MAX_KEYS,
		 "64 writes: %zu entries at revision %lld", entry_count(s.view), rev_of(s.view));

	/* the 65th key, preview and execute */
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {M_STMT "-cap-64", M_SREF "-cap", M_QUOTE "-cap", MAX_KEYS,
			       "op-k64",         NULL,          exec == 1};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "key.64", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a known operation id is decided before capacity: retrying key.10's write replays */
	{
		struct pw w = {
		    M_STMT "-cap-10", M_SREF "-cap", M_QUOTE "-cap", 10, "op-k10", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "key.10", &w, NULL, &r);
		IT_STATUS(&r, 200);
		check_write_answer(&r, "replayed");
		check_receipt(json_object_get(r.json, "receipt"), REMEMBER, "key.10", &w, 11, NULL);
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after the 65th key");
	for (int i = 0; i < MAX_KEYS; i++) {
		snprintf(key, sizeof key, "key.%02d", i);
		snprintf(stmt, sizeof stmt, M_STMT "-cap-%02d", i);
		const json_t *e = entry_of(s.view, key);
		IT_CHECK(e && it_json_str_is(e, "state", "active") &&
			     it_json_str_is(e, "statement", stmt),
			 "%s is not intact", key);
	}
	snap_free(&s);

	/* a correction of an existing key does not add a key; a retired key still counts */
	remember_ok(&j, "key.00", M_STMT "-cap-00b", M_SREF "-cap-b", M_QUOTE "-cap-b", MAX_KEYS,
		    "op-k00b", "op-k00");
	retire_ok(&j, "key.01", M_SREF "-cap-r", M_QUOTE "-cap-r", MAX_KEYS + 1, "op-k01r",
		  "op-k01");
	struct pw w = {
	    M_STMT "-cap-65", M_SREF "-cap", M_QUOTE "-cap", MAX_KEYS + 2, "op-k65", NULL, true};
	struct it_resp r;
	pref_send(rw_a, &j, REMEMBER, "key.65", &w, NULL, &r);
	expect_problem_private(&r, 422, "capacity_exceeded");
	it_resp_free(&r);
	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == MAX_KEYS && rev_of(v) == MAX_KEYS + 2,
		 "after correction + retire: %zu entries at revision %lld", entry_count(v),
		 rev_of(v));
	json_decref(v);

	/* the default history page is 20 items */
	size_t pages = 0;
	json_t *h = history_walk(rw_a, &j, 0, &pages);
	IT_CHECK(json_array_size(h) == MAX_KEYS + 2 && pages == 4,
		 "default-limit walk: %zu items in %zu pages (expected 66 in 4)",
		 json_array_size(h), pages);
	json_decref(h);
}

static void test_capacity_bytes(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	char key[32], op[32], prefix[64];
	/* 11 keys of 1200 + 1600 bytes = 30800, then 368 + 1600 = 1968: exactly 32768 */
	for (int i = 0; i < 12; i++) {
		snprintf(key, sizeof key, "cap.%02d", i);
		snprintf(op, sizeof op, "op-b%02d", i);
		snprintf(prefix, sizeof prefix, M_STMT "-bytes-%02d-", i);
		char *stmt = text_of(prefix, i < 11 ? 1200 : 368, 's');
		snprintf(prefix, sizeof prefix, M_QUOTE "-bytes-%02d-", i);
		char *quote = text_of(prefix, 1600, 'q');
		remember_ok(&j, key, stmt, M_SREF "-bytes", quote, i == 0 ? EXP_NULL : i, op, NULL);
		free(stmt);
		free(quote);
	}
	long long rev = 12;
	struct snap s;
	snap_take(&j, &s);

	/* one byte more: correct cap.11 with a statement of 369 bytes (preview and execute) */
	char *quote11 = text_of(M_QUOTE "-bytes-11-", 1600, 'q');
	char *stmt369 = text_of(M_STMT "-bytes-11b-", 369, 't');
	for (int exec = 0; exec < 2; exec++) {
		struct pw w = {stmt369, M_SREF "-bytes", quote11, rev, "op-b11-over",
			       NULL,    exec == 1};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.11", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a new key of two bytes is over, too */
	{
		struct pw w = {"s", M_SREF "-bytes", "q", rev, "op-b12-over", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.12", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	snap_expect_same(&j, &s, "after writes beyond 32 KiB");
	snap_free(&s);

	/* the latest statement counts, not the history: another 368-byte statement fits */
	char *stmt368 = text_of(M_STMT "-bytes-11c-", 368, 'u');
	remember_ok(&j, "cap.11", stmt368, M_SREF "-bytes", quote11, rev, "op-b11c", "op-b11");
	rev++;

	/* retire cap.01 with a 1600-byte quote: it now counts 1600 instead of 2800 */
	char *rquote = text_of(M_QUOTE "-bytes-retire-01-", 1600, 'r');
	retire_ok(&j, "cap.01", M_SREF "-bytes-retire", rquote, rev, "op-b01r", "op-b01");
	rev++;
	/* 31568 + 600 + 600 = 32768 exactly */
	char *s12 = text_of(M_STMT "-bytes-12-", 600, 's');
	char *q12 = text_of(M_QUOTE "-bytes-12-", 600, 'q');
	remember_ok(&j, "cap.12", s12, M_SREF "-bytes", q12, rev, "op-b12", NULL);
	rev++;
	{
		struct pw w = {"s", M_SREF "-bytes", "q", rev, "op-b13-over", NULL, true};
		struct it_resp r;
		pref_send(rw_a, &j, REMEMBER, "cap.13", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* a retirement is a write too: retiring cap.12 (1200 bytes) with a 1600-byte quote
	 * would make 33168 */
	{
		struct pw w = {NULL, M_SREF "-bytes-retire-12", rquote, rev, "op-b12r-over", NULL,
			       true};
		struct it_resp r;
		pref_send(rw_a, &j, RETIRE, "cap.12", &w, NULL, &r);
		expect_problem_private(&r, 422, "capacity_exceeded");
		it_resp_free(&r);
	}
	/* with a 1199-byte quote it makes 32767 */
	char *rquote12 = text_of(M_QUOTE "-bytes-retire-12-", 1199, 'r');
	retire_ok(&j, "cap.12", M_SREF "-bytes-retire-12", rquote12, rev, "op-b12r", "op-b12");
	rev++;

	json_t *v = view_now(&j);
	IT_CHECK(entry_count(v) == 13 && rev_of(v) == rev,
		 "32 KiB journal: %zu entries at revision %lld (expected 13 at %lld)",
		 entry_count(v), rev_of(v), rev);
	const json_t *e = entry_of(v, "cap.05");
	IT_CHECK(e && it_json_str_is(e, "state", "active"), "cap.05 is not intact");
	json_decref(v);

	free(quote11);
	free(stmt369);
	free(stmt368);
	free(rquote);
	free(s12);
	free(q12);
	free(rquote12);
}

/* ================================================================ field bounds */

/* sends body (json) as a remember (PUT) or retire (POST) of key */
static void send_raw(const struct journal *j, enum action act, const char *key, const json_t *body,
		     struct it_resp *r)
{
	char path[1024];
	key_path(j, key, act, path, sizeof path);
	send_json(act == REMEMBER ? "PUT" : "POST", path, rw_a, body, NULL, r);
}

static void expect_rejected(const struct journal *j, enum action act, const char *key,
			    const json_t *body, const char *code, const char *field)
{
	struct it_resp r;
	send_raw(j, act, key, body, &r);
	if (r.status != 422 || !it_problem_has_field(&r, field)) {
		char *text = json_dumps(body, JSON_COMPACT);
		fprintf(stderr, "  body sent: %.300s%s\n", text, strlen(text) > 300 ? " ..." : "");
		free(text);
	}
	expect_problem_private(&r, 422, code);
	IT_FIELD(&r, field);
	it_resp_free(&r);
}

static void test_field_bounds(void **state)
{
	(void)state;
	struct journal j;
	journal_fresh(&j);
	long long rev = EXP_NULL;
	int opn = 0;
	char op[160];
	struct it_resp r;
#define NEXT_OP() (snprintf(op, sizeof op, "op-fb-%d", ++opn), op)
#define APPLY(act, key, w, sup)                                                                    \
	(json_decref(apply_op(rw_a, &j, (act), (key), (w), (sup))),                                \
	 rev = rev == EXP_NULL ? 1 : rev + 1)

	char *s1200 = text_of(M_STMT "-fb-", 1200, 's');
	char *s1201 = text_of(M_STMT "-fb-", 1201, 's');
	char *r1024 = text_of(M_SREF "-fb-", 1024, 'r');
	char *r1025 = text_of(M_SREF "-fb-", 1025, 'r');
	char *q1600 = text_of(M_QUOTE "-fb-", 1600, 'q');
	char *q1601 = text_of(M_QUOTE "-fb-", 1601, 'q');
	char *o128 = text_of("op-fb-long-", 128, 'o');
	char *o129 = text_of("op-fb-long-", 129, 'o');
	char *k128 = text_of("k", 128, 'a');
	char *k129 = text_of("k", 129, 'a');
	/* bytes, not characters: U+00E9 is two bytes. mb1200: 1200 bytes in 609 characters;
	 * mb1201: 1201 bytes in 610 characters (far below 1200 characters) */
	const char *mb_prefix = M_STMT "-fb-mb-";
	char *mb1200 = repeat_utf8(mb_prefix, "\xc3\xa9", (1200 - strlen(mb_prefix)) / 2);
	assert_int_equal(strlen(mb1200), 1200);
	char *mb1201 = malloc(1202);
	assert_non_null(mb1201);
	memcpy(mb1201, mb1200, 1200);
	mb1201[1200] = 'x';
	mb1201[1201] = '\0';

	/* passes at the edges */
	struct pw base = {
	    M_STMT "-fb-base", M_SREF "-fb-base", M_QUOTE "-fb-base", EXP_NULL, NULL, NULL, true};
	struct pw w = base;
	w.statement = s1200;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.statement", &w, NULL);
	w = base;
	w.statement = mb1200;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.statement.mb", &w, NULL);
	w = base;
	w.source_ref = r1024;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.source-ref", &w, NULL);
	w = base;
	w.source_quote = q1600;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, "bound.source_quote", &w, NULL);
	w = base;
	w.operation_id = o128;
	w.expected = rev;
	APPLY(REMEMBER, "bound.operation-id", &w, NULL);
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(REMEMBER, k128, &w, NULL);
	w = base;
	w.statement = "s";
	w.source_ref = "r";
	w.source_quote = "q";
	w.operation_id = "o";
	w.expected = rev;
	APPLY(REMEMBER, "0", &w, NULL);
	/* retire at the edges */
	w = base;
	w.source_ref = r1024;
	w.source_quote = q1600;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	APPLY(RETIRE, "bound.statement", &w, "op-fb-1");

	long long passes = rev;
	struct snap s;
	snap_take(&j, &s);

	/* one past each edge (and empty strings) → 422 naming the field */
	struct {
		const char *field;
		const char *value;
	} over[] = {
	    {"statement", s1201},  {"statement", mb1201},  {"statement", ""},
	    {"source_ref", r1025}, {"source_ref", ""},     {"source_quote", q1601},
	    {"source_quote", ""},  {"operation_id", o129}, {"operation_id", ""},
	};
	for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_set_new(b, over[i].field, json_string(over[i].value));
		expect_rejected(&j, REMEMBER, "bound.over", b, "validation_failed", over[i].field);
		json_decref(b);
		if (strcmp(over[i].field, "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_set_new(b, over[i].field, json_string(over[i].value));
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					over[i].field);
			json_decref(b);
		}
	}

	/* the key: 129 characters, upper case, a bad first character */
	const char *bad_keys[] = {
	    k129,      "Review.collaboration", "review.Collab", "-review", ".review", "_review",
	    "review:x"};
	for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		expect_rejected(&j, REMEMBER, bad_keys[i], b, "validation_failed", "key");
		json_decref(b);
		b = pw_body(RETIRE, &w);
		expect_rejected(&j, RETIRE, bad_keys[i], b, "validation_failed", "key");
		json_decref(b);
	}

	/* required members, types, expected_revision 0 */
	const char *required[] = {"statement",         "source_ref",   "source_quote",
				  "expected_revision", "operation_id", "execute"};
	for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_del(b, required[i]);
		expect_rejected(&j, REMEMBER, "bound.missing", b, "validation_failed", required[i]);
		json_decref(b);
		if (strcmp(required[i], "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_del(b, required[i]);
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					required[i]);
			json_decref(b);
		}
	}
	struct {
		const char *field;
		json_t *value;
	} wrong[] = {
	    {"expected_revision", json_integer(0)},
	    {"expected_revision", json_integer(-1)},
	    {"expected_revision", json_string("1")},
	    {"expected_revision", json_real(1.5)},
	    {"execute", json_string("true")},
	    {"execute", json_null()},
	    {"execute", json_integer(1)},
	    {"statement", json_integer(5)},
	    {"statement", json_null()},
	    {"source_ref", json_null()},
	    {"operation_id", json_integer(7)},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		w = base;
		w.operation_id = NEXT_OP();
		w.expected = rev;
		json_t *b = pw_body(REMEMBER, &w);
		json_object_set(b, wrong[i].field, wrong[i].value);
		expect_rejected(&j, REMEMBER, "bound.type", b, "validation_failed", wrong[i].field);
		json_decref(b);
		if (strcmp(wrong[i].field, "statement") != 0) {
			b = pw_body(RETIRE, &w);
			json_object_set(b, wrong[i].field, wrong[i].value);
			expect_rejected(&j, RETIRE, "bound.source-ref", b, "validation_failed",
					wrong[i].field);
			json_decref(b);
		}
		json_decref(wrong[i].value);
	}

	/* unknown members → unknown_field naming them (a statement in a retirement, too) */
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	json_t *b = pw_body(REMEMBER, &w);
	json_object_set_new(b, "colour", json_string("blue"));
	expect_rejected(&j, REMEMBER, "bound.unknown", b, "unknown_field", "colour");
	json_decref(b);
	b = pw_body(RETIRE, &w);
	json_object_set_new(b, "statement", json_string(M_STMT "-fb-retire"));
	expect_rejected(&j, RETIRE, "bound.source-ref", b, "unknown_field", "statement");
	json_decref(b);
	b = pw_body(RETIRE, &w);
	json_object_set_new(b, "expires_at", json_string("2031-01-01T00:00:00Z"));
	expect_rejected(&j, RETIRE, "bound.source-ref", b, "unknown_field", "expires_at");
	json_decref(b);

	/* not an object → 422; not JSON → 400 */
	char path[1024];
	key_path(&j, "bound.shape", REMEMBER, path, sizeof path);
	it_request(&srv, "PUT", path, rw_a, "[1,2]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "PUT", path, rw_a, "{\"statement\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* caller-chosen ids in the path */
	struct journal badj = j;
	snprintf(badj.goal, sizeof badj.goal, "-bad-goal");
	w = base;
	w.operation_id = NEXT_OP();
	w.expected = rev;
	pref_send(rw_a, &badj, REMEMBER, "bound.path", &w, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "goal_id");
	it_resp_free(&r);
	badj = j;
	snprintf(badj.agent, sizeof badj.agent, "-bad-agent");
	pref_send(rw_a, &badj, REMEMBER, "bound.path", &w, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "agent_id");
	it_resp_free(&r);
	char vp[512];
	view_path(&badj, vp, sizeof vp);
	it_request(&srv, "GET", vp, rw_a, NULL, NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_FIELD(&r, "agent_id");
	it_resp_free(&r);

	snap_expect_same(&j, &s, "after the rejected bodies");
	IT_CHECK((long long)s.history == passes, "%zu history items for %lld passes", s.history,
		 passes);
	snap_free(&s);

	free(s1200);
	free(s1201);
	free(r1024);
	free(r1025);
	free(q1600);
	free(q1601);
	free(o128);
	free(o129);
	free(k128);
	free(k129);
	free(mb1200);
	free(mb1201);
#undef NEXT_OP
#undef APPLY
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capacity_keys),
	    cmocka_unit_test(test_capacity_bytes),
	    cmocka_unit_test(test_field_bounds),
	};
	int rc = cmocka_run_group_tests_name("it_preferences_limits", tests, group_setup,
					     group_teardown_privacy);
	it_cleanup();
	return prefs_exit_status(rc);
}
