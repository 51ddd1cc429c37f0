/*
 * it_envelopes_conformance — the seed's context envelope fixture end to end
 * (openapi/openapi.yaml "Conventions", "Context envelopes"; docs/envelope-contract.md; the seed
 * context-envelope-v1.json; issue 6):
 *
 *  - the seed's conformance_fixture.happy_path against a matching workspace snapshot: 201
 *    MATCH, no failure codes, every check passes; GET reads the same verdict back;
 *  - every seed negative_test_cases entry as data (tests/fixtures/envelopes/negative/<name>.json:
 *    mutations of happy_path or of context_relevance) with its failure_code and verdict.
 *
 * Helpers: envelope_helpers.h. The fixture files come from RG_FIXTURES_DIR (set by CMake).
 * Every tenant is unique (it_unique), so the file runs beside the others against one
 * database.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "envelope_helpers.h"

#define UNKNOWN_ENV "env_00000000000000000000000000000000"

/* ================================================================ happy path */

static void test_happy_path(void **state)
{
	(void)state;
	struct it_resp r, g;
	env_post(ta.rw, ws_match, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "happy path against a matching snapshot");
	const char *ct = it_resp_header(&r, "Content-Type");
	IT_CHECK(ct && strcasecmp(ct, "application/json; charset=utf-8") == 0, "Content-Type is %s",
		 ct ? ct : "none");
	for (size_t i = 0; i < n_env_checks; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, env_checks[i].check), "result", "pass"),
			 "happy path: check %s does not pass: %s", env_checks[i].check, r.body);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "workspace_id", ws_match) &&
		     it_json_int(r.json, "workspace_revision", -1) == 1,
		 "workspace_id / workspace_revision: %s", r.body);
	char id[ID_MAX];
	it_copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));

	/* GET: the same verdict, the same document */
	env_get(ta.reader, id, &g);
	IT_STATUS(&g, 200);
	expect_etag(&g, 1);
	char *a = dump(r.json), *b = dump(g.json);
	IT_CHECK(json_equal(r.json, g.json),
		 "GET differs from the POST answer:\n  POST: %s\n  GET:  %s", a, b);
	free(a);
	free(b);
	it_resp_free(&g);

	/* the same envelope again is a new resource */
	struct it_resp r2;
	env_post(ta.rw, ws_match, happy_copy(), &r2);
	EXPECT_ENV(&r2, "MATCH", NO_CODES, true, "happy path, second submission");
	IT_CHECK(!it_json_str_is(r2.json, "envelope_id", id),
		 "two submissions got the same envelope_id %s", id);
	it_resp_free(&r2);
	it_resp_free(&r);

	/* without a workspace: freshness is skipped, still MATCH */
	env_post(ta.rw, NULL, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "happy path without a workspace");
	IT_CHECK(it_json_str_is(check_of(r.json, "freshness"), "result", "skipped"),
		 "freshness without a workspace is not skipped: %s", r.body);
	IT_CHECK(it_json_has_null(r.json, "workspace_id") &&
		     it_json_has_null(r.json, "workspace_revision"),
		 "workspace_id / workspace_revision are not null without a workspace: %s", r.body);
	it_resp_free(&r);

	/* unknown envelope → 404 */
	env_get(ta.reader, UNKNOWN_ENV, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	env_verify(ta.rw, UNKNOWN_ENV, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

/* ================================================================ the seed's negative cases */

/* new: the negative case file of `name` (NULL when missing) */
static json_t *negative_case(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s.json", NEG_DIR, name);
	return load_json(path);
}

static void test_negative_cases(void **state)
{
	(void)state;
	const json_t *cases = json_object_get(seed, "negative_test_cases");
	IT_CHECK(json_is_array(cases) && json_array_size(cases) == 13,
		 "the seed has not 13 negative_test_cases");
	size_t failures = 0, i;
	const json_t *sc;
	json_array_foreach (cases, i, sc) {
		const char *name = it_json_str(sc, "name");
		IT_CHECK(name != NULL, "negative_test_cases[%zu] has no name", i);
		json_t *c = negative_case(name);
		IT_CHECK(c != NULL, "no data file %s/%s.json for the seed case", NEG_DIR, name);
		const char *code = it_json_str(sc, "failure_code");
		const char *verdict = it_json_str(sc, "expected_verdict");
		IT_CHECK(it_json_str_is(c, "name", name) &&
			     it_json_str_is(c, "failure_code", code) &&
			     it_json_str_is(c, "expected_verdict", verdict),
			 "%s.json disagrees with the seed on name, failure_code or "
			 "expected_verdict",
			 name);
		const char *base = it_json_str(c, "base");
		bool env = base && strcmp(base, "happy_path") == 0;
		IT_CHECK(env || (base && strcmp(base, "context_relevance") == 0),
			 "%s.json: base is neither happy_path nor context_relevance", name);
		const char *snap = it_json_str(c, "snapshot");
		IT_CHECK(snap && (strcmp(snap, "match") == 0 || strcmp(snap, "none") == 0),
			 "%s.json: snapshot is neither match nor none", name);
		const json_t *muts = json_object_get(c, "mutations");
		IT_CHECK(json_is_array(muts) && json_array_size(muts) >= 1, "%s.json: no mutations",
			 name);

		json_t *doc = env ? happy_copy() : relevance_copy();
		size_t k;
		const json_t *m;
		json_array_foreach (muts, k, m)
			mutate(doc, it_json_str(m, "op"), it_json_str(m, "path"),
			       json_object_get(m, "value"));
		bool exact =
		    json_array_size(muts) == 1 || json_is_true(json_object_get(c, "exclusive"));

		struct it_resp r;
		if (env)
			env_post(ta.rw, strcmp(snap, "match") == 0 ? ws_match : NULL, doc, &r);
		else
			relevance_doc(ta.reader, doc, &r);
		char why[2048] = "";
		const char *codes[] = {code, NULL};
		bool ok = outcome_ok(&r, env ? ENVELOPE : RELEVANCE, env ? 201 : 200, verdict,
				     codes, exact, NULL, why, sizeof why);
		if (ok && env) {
			/* GET reads the same verdict back */
			struct it_resp g;
			env_get(ta.reader, it_json_str(r.json, "envelope_id"), &g);
			if (g.status != 200 ||
			    !json_equal(json_object_get(g.json, "failure_codes"),
					json_object_get(r.json, "failure_codes")) ||
			    !it_json_str_is(g.json, "verdict", verdict)) {
				soft(why, sizeof why,
				     "GET does not read the verdict back: %ld %.500s", g.status,
				     g.body);
				ok = false;
			}
			it_resp_free(&g);
		}
		if (!ok) {
			failures++;
			fprintf(stderr,
				"FAIL negative case %s (expect %s%s %s): %s\n  request: %s\n"
				"  answer %ld: %.2000s\n",
				name, exact ? "exactly " : "", code, verdict, why, r.desc, r.status,
				r.body ? r.body : "");
		} else {
			fprintf(stderr, "  ok negative case %s → %s %s\n", name, code, verdict);
		}
		it_resp_free(&r);
		json_decref(c);
	}

	/* every file of the folder is a seed case (no orphan data) */
	DIR *d = opendir(NEG_DIR);
	IT_CHECK(d != NULL, "cannot open %s", NEG_DIR);
	size_t files = 0;
	for (struct dirent *e = readdir(d); e; e = readdir(d)) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		files++;
		bool known = false;
		json_array_foreach (cases, i, sc) {
			const char *name = it_json_str(sc, "name");
			known |= strlen(name) == len - 5 && strncmp(name, e->d_name, len - 5) == 0;
		}
		if (!known) {
			fprintf(stderr, "FAIL %s/%s names no seed negative_test_cases entry\n",
				NEG_DIR, e->d_name);
			failures++;
		}
	}
	closedir(d);
	IT_CHECK(files == json_array_size(cases), "%zu case files for %zu seed cases", files,
		 json_array_size(cases));
	IT_CHECK(failures == 0, "%zu negative case(s) failed (see above)", failures);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_happy_path),
	    cmocka_unit_test(test_negative_cases),
	};
	int rc = cmocka_run_group_tests_name("it_envelopes_conformance", tests, group_setup,
					     group_teardown);
	it_cleanup();
	return rc;
}
