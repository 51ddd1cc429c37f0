/* core/envelope: the ten checks of docs/envelope-contract.md, one cmocka test per row of the
 * envelope case table (envelope_cases.c): the seed's happy_path with a few mutations and a
 * workspace snapshot, checked for its per-check results, failure codes and verdict, an
 * unchanged envelope, and details that never quote a claim. */
#include "unit.h"

#include <jansson.h>

#include "core/envelope.h"
#include "envelope_helpers.h"

/* ---- envelope cases ----------------------------------------------------------------- */

static const char *const env_checks[] = {
	"claims_cite_refs", "refs_exist",    "refs_expandable", "hashes", "freshness",
	"receipt_chain",    "quality_gates", "readability",     "budget", "declared_failure",
};

/* The workspace snapshot of a row, built from the unmutated happy path. */
struct snap_holder {
	struct env_snapshot s;
	json_t *files;
	bool present;
};

static void make_snapshot(enum snap_kind kind, struct snap_holder *h)
{
	const json_t *refs = json_object_get(happy_path(), "source_refs");
	bool only0 = kind == SNAP_MATCH_ONLY_REF0 || kind == SNAP_OTHER_ONLY_REF0 ||
		     kind == SNAP_NULL_ROOT_ONLY_REF0;
	bool empty = kind == SNAP_MATCH_EMPTY || kind == SNAP_OTHER_EMPTY;
	bool other = kind == SNAP_OTHER_ROOT || kind == SNAP_OTHER_ONLY_REF0 || kind == SNAP_OTHER_EMPTY;
	size_t i;
	json_t *r;
	memset(h, 0, sizeof *h);
	if (kind == SNAP_NONE)
		return;
	h->present = true;
	h->s.root_hash = ROOT;
	if (kind == SNAP_NO_FILES)
		return;
	assert_string_equal(json_string_value(json_object_get(json_object_get(happy_path(), "workspace"),
							      "root_hash")),
			    ROOT);
	h->files = json_object();
	json_array_foreach(refs, i, r) {
		if (empty || (only0 && i > 0))
			break;
		json_object_set(h->files, json_string_value(json_object_get(r, "path")),
				json_object_get(r, "content_hash"));
	}
	if (kind == SNAP_REF0_MOVED)
		json_object_set_new(h->files, "src/router/context.ts", json_string(HASH0_MOVED));
	h->s.root_hash = other ? OTHER_ROOT : kind == SNAP_NULL_ROOT_ONLY_REF0 ? NULL : ROOT;
	h->s.files = h->files;
}

static const char *detail_of(const struct env_verdict *v, const char *check)
{
	size_t i;
	json_t *c;
	json_array_foreach(v->checks, i, c)
		if (strcmp(json_string_value(json_object_get(c, "check")), check) == 0)
			return json_string_value(json_object_get(c, "detail"));
	return NULL;
}

static bool snapshot_absent(enum snap_kind k)
{
	return k == SNAP_NONE || k == SNAP_NO_FILES;
}

static void run_env_case(void **state)
{
	const struct env_case *c = *state;
	json_t *env = json_deep_copy(happy_path());
	assert_non_null(env);
	apply(env, c->muts);
	json_t *before = json_deep_copy(env);
	struct snap_holder h;
	make_snapshot(c->snap, &h);

	struct env_verdict v;
	core_envelope_verify(env, h.present ? &h.s : NULL, &v);
	assert_true(json_equal(env, before)); /* the envelope is borrowed, never changed */

	const char *expected[N_ELEMS(env_checks)];
	for (size_t i = 0; i < N_ELEMS(env_checks); i++) {
		bool freshness = strcmp(env_checks[i], "freshness") == 0;
		expected[i] = listed(c->fails, env_checks[i])        ? "fail"
			      : freshness && snapshot_absent(c->snap) ? "skipped"
								      : "pass";
	}
	assert_known_checks(c->fails, env_checks, N_ELEMS(env_checks));
	assert_checks(&v, env_checks, N_ELEMS(env_checks), expected, c->unasserted);
	assert_codes(&v, c->codes, c->verdict);
	if (c->detail_check) {
		const char *d = detail_of(&v, c->detail_check);
		assert_non_null(d);
		if (strstr(d, c->detail_has) == NULL)
			fail_msg("detail of %s (%s) does not name %s", c->detail_check, d, c->detail_has);
	}

	/* details never carry claim text */
	size_t i, k;
	json_t *claim, *check;
	json_array_foreach(json_object_get(json_object_get(env, "summary"), "claims"), i, claim) {
		const char *text = json_string_value(json_object_get(claim, "text"));
		if (text == NULL || strlen(text) < 12)
			continue;
		json_array_foreach(v.checks, k, check)
			assert_null(strstr(json_string_value(json_object_get(check, "detail")), text));
	}

	core_env_verdict_free(&v);
	assert_null(v.failure_codes);
	assert_null(v.checks);
	json_decref(h.files);
	json_decref(before);
	json_decref(env);
}

int main(void)
{
	static char names[ENV_CASE_COUNT][160];
	static struct CMUnitTest tests[ENV_CASE_COUNT];
	for (size_t k = 0; k < ENV_CASE_COUNT; k++) {
		snprintf(names[k], sizeof names[k], "envelope: %s", env_cases[k].name);
		tests[k] = (struct CMUnitTest){names[k], run_env_case, NULL, NULL, &env_cases[k]};
	}
	return cmocka_run_group_tests_name("envelope_checks", tests, load_seed, free_seed);
}
