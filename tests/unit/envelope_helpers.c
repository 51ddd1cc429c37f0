/* The helpers of the unit_envelope_* executables (envelope_helpers.h). */
#include "unit.h"

#include <jansson.h>

#include "envelope_helpers.h"

#ifndef RG_SEED_FIXTURE
#error "RG_SEED_FIXTURE must name tests/fixtures/envelopes/context-envelope-v1.json"
#endif

json_t *seed; /* the whole fixture, loaded by the group setup */

static const json_t *fixture(const char *key)
{
	const json_t *v = json_object_get(json_object_get(seed, "conformance_fixture"), key);
	assert_non_null(v);
	return v;
}

const json_t *happy_path(void)
{
	return fixture("happy_path");
}

const json_t *context_relevance(void)
{
	return fixture("context_relevance");
}

int load_seed(void **state)
{
	(void)state;
	json_error_t err;
	seed = json_load_file(RG_SEED_FIXTURE, JSON_REJECT_DUPLICATES, &err);
	if (seed == NULL)
		fprintf(stderr, "cannot load %s: %s (line %d)\n", RG_SEED_FIXTURE, err.text, err.line);
	return seed ? 0 : -1;
}

int free_seed(void **state)
{
	(void)state;
	json_decref(seed);
	seed = NULL;
	return 0;
}

/* ---- mutations: "/a/0/b" paths; "-" as the last array token appends ---------------- */

static bool array_index(const json_t *a, const char *tok, size_t *out)
{
	char *end;
	unsigned long i = strtoul(tok, &end, 10);
	if (*tok == '\0' || *end != '\0' || i >= json_array_size(a))
		return false;
	*out = i;
	return true;
}

/* The container that holds the last token of path (copied into last). */
static json_t *parent_of(json_t *doc, const char *path, char *last, size_t size)
{
	char buf[256];
	assert_true(path[0] == '/' && strlen(path) < sizeof buf);
	strcpy(buf, path + 1);
	json_t *node = doc;
	char *tok = buf, *slash;
	while ((slash = strchr(tok, '/')) != NULL) {
		size_t i;
		*slash = '\0';
		if (json_is_object(node))
			node = json_object_get(node, tok);
		else
			node = array_index(node, tok, &i) ? json_array_get(node, i) : NULL;
		if (node == NULL)
			fail_msg("mutation path %s: no member %s", path, tok);
		tok = slash + 1;
	}
	assert_true(strlen(tok) < size);
	strcpy(last, tok);
	return node;
}

/* Puts value (stolen) at path; a NULL value deletes what is there. */
static void put(json_t *doc, const char *path, json_t *value)
{
	char last[128];
	json_t *parent = parent_of(doc, path, last, sizeof last);
	size_t i;
	if (json_is_object(parent)) {
		if (value)
			assert_int_equal(json_object_set_new(parent, last, value), 0);
		else if (json_object_del(parent, last) != 0)
			fail_msg("mutation path %s: nothing to delete", path);
	} else if (json_is_array(parent) && strcmp(last, "-") == 0 && value) {
		assert_int_equal(json_array_append_new(parent, value), 0);
	} else if (json_is_array(parent) && array_index(parent, last, &i)) {
		if (value)
			assert_int_equal(json_array_set_new(parent, i, value), 0);
		else
			assert_int_equal(json_array_remove(parent, i), 0);
	} else {
		fail_msg("mutation path %s: no container", path);
	}
}

static json_t *get(json_t *doc, const char *path)
{
	char last[128];
	json_t *parent = parent_of(doc, path, last, sizeof last);
	size_t i;
	if (json_is_object(parent))
		return json_object_get(parent, last);
	return array_index(parent, last, &i) ? json_array_get(parent, i) : NULL;
}

void apply(json_t *doc, const struct mutation *muts)
{
	for (const struct mutation *m = muts; m->op != OP_END; m++) {
		if (m->op == OP_SET) {
			json_error_t err;
			json_t *v = json_loads(m->value, JSON_DECODE_ANY, &err);
			if (v == NULL)
				fail_msg("mutation value for %s: %s", m->path, err.text);
			put(doc, m->path, v);
		} else if (m->op == OP_DEL) {
			put(doc, m->path, NULL);
		} else {
			json_t *v = get(doc, m->path);
			assert_non_null(v);
			json_incref(v);
			put(doc, m->path, NULL);
			put(doc, m->value, v);
		}
	}
}

/* ---- shared assertions ---------------------------------------------------------------- */

bool listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static int severity(const char *verdict)
{
	if (strcmp(verdict, "UNVERIFIABLE") == 0)
		return 2;
	if (strcmp(verdict, "DRIFT") == 0)
		return 1;
	assert_string_equal(verdict, "MATCH");
	return 0;
}

/* The seed's verdict of a code, from negative_test_cases (not from core). */
const char *seed_verdict(const char *code)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(seed, "negative_test_cases"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "failure_code")), code) == 0)
			return json_string_value(json_object_get(c, "expected_verdict"));
	fail_msg("%s is not a failure code of the seed", code);
	return NULL;
}

/* failure_codes equals codes exactly (order included), has no duplicates, and the verdict is
 * the row's, which must itself be the worst of the codes' seed verdicts (a table sanity check). */
void assert_codes(const struct env_verdict *v, const char *const *codes,
			 const char *verdict)
{
	size_t n = 0, i, j;
	int worst = 0;
	for (; codes[n]; n++)
		if (severity(seed_verdict(codes[n])) > worst)
			worst = severity(seed_verdict(codes[n]));
	assert_int_equal(worst, severity(verdict));

	assert_true(json_is_array(v->failure_codes));
	for (i = 0; i < json_array_size(v->failure_codes); i++) {
		const char *got = json_string_value(json_array_get(v->failure_codes, i));
		assert_non_null(got);
		if (i >= n || strcmp(got, codes[i]) != 0)
			fail_msg("failure_codes[%zu] is %s, expected %s", i, got, i < n ? codes[i] : "(none)");
		for (j = 0; j < i; j++)
			assert_string_not_equal(got,
						json_string_value(json_array_get(v->failure_codes, j)));
	}
	if (i < n)
		fail_msg("failure_codes has %zu entries, expected %zu (missing %s)", i, n, codes[i]);
	assert_non_null(v->verdict);
	assert_string_equal(v->verdict, verdict);
}

/* checks[] lists exactly names, in order, each {check, result, detail}; result is expected(i). */
void assert_checks(const struct env_verdict *v, const char *const *names, size_t count,
			  const char *const *expected, const char *unasserted)
{
	assert_true(json_is_array(v->checks));
	assert_int_equal(json_array_size(v->checks), count);
	for (size_t i = 0; i < count; i++) {
		const json_t *c = json_array_get(v->checks, i);
		const char *check = json_string_value(json_object_get(c, "check"));
		const char *result = json_string_value(json_object_get(c, "result"));
		const char *detail = json_string_value(json_object_get(c, "detail"));
		assert_int_equal(json_object_size(c), 3);
		assert_non_null(check);
		assert_string_equal(check, names[i]);
		assert_non_null(result);
		assert_non_null(detail);
		assert_true(strlen(detail) > 0 && strlen(detail) < 200);
		if (unasserted && strcmp(check, unasserted) == 0) {
			assert_true(strcmp(result, "pass") == 0 || strcmp(result, "fail") == 0);
			continue;
		}
		if (strcmp(result, expected[i]) != 0)
			fail_msg("check %s is %s (%s), expected %s", check, result, detail, expected[i]);
	}
}

/* Table sanity: every name in fails is one of the checks. */
void assert_known_checks(const char *const *fails, const char *const *names, size_t count)
{
	for (; *fails; fails++) {
		size_t i = 0;
		while (i < count && strcmp(names[i], *fails) != 0)
			i++;
		if (i == count)
			fail_msg("%s is not a check", *fails);
	}
}
