/* core/envelope: the checks of docs/envelope-contract.md, read against the seed fixture
 * (context-envelope-v1.json). Every envelope case is one row of a table: the seed's happy_path,
 * a few JSON-pointer mutations, a workspace snapshot, and the expected per-check results,
 * failure codes and verdict. The relevance cases are rows of a second table, built from the
 * seed's context_relevance, its load_only_variant, or a load receipt shaped like API.md §4. */
#include "unit.h"

#include <jansson.h>

#include "core/envelope.h"

#ifndef RG_SEED_FIXTURE
#error "RG_SEED_FIXTURE must name tests/fixtures/envelopes/context-envelope-v1.json"
#endif

/* The seed's values, repeated here so that a row reads on its own. */
#define ROOT "sha256:5e3f5df0d7d6b4f0b9bde774c0f94b71a71c8ccf8b7c59e26a4dfad1b59f5101"
#define OTHER_ROOT "sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define HASH0 "sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a9201"
#define HASH0_MOVED "sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a9202"
#define HASH0_UPPER "sha256:830671B42A75B2F6D8120DF44B05F8F340FB522D3524A827CDDF2CCF1D4A9201"
#define RECEIPT0 "sha256:0011111111111111111111111111111111111111111111111111111111111111"
#define DELIVERED(n) "sha256:200000000000000000000000000000000000000000000000000000000000000" #n
#define SOURCE(n) "sha256:100000000000000000000000000000000000000000000000000000000000000" #n
/* A JSON string literal. */
#define JS(s) "\"" s "\""
/* A third, uncited source ref (its path is not in any snapshot). */
#define EXTRA_REF(members)                                                                       \
	"{\"id\": \"src_003\", \"range\": \"1-9\", " members "}"
#define EXTRA_PATH "\"path\": \"docs/extra.md\""
#define EXTRA_HASH "\"content_hash\": " JS(HASH0)
#define EXTRA_CMD "\"expansion_command\": \"index context --focus docs/extra.md\""

static json_t *seed; /* the whole fixture, loaded by the group setup */

static const json_t *fixture(const char *key)
{
	const json_t *v = json_object_get(json_object_get(seed, "conformance_fixture"), key);
	assert_non_null(v);
	return v;
}

static const json_t *happy_path(void)
{
	return fixture("happy_path");
}

static const json_t *context_relevance(void)
{
	return fixture("context_relevance");
}

static int load_seed(void **state)
{
	(void)state;
	json_error_t err;
	seed = json_load_file(RG_SEED_FIXTURE, JSON_REJECT_DUPLICATES, &err);
	if (seed == NULL)
		fprintf(stderr, "cannot load %s: %s (line %d)\n", RG_SEED_FIXTURE, err.text, err.line);
	return seed ? 0 : -1;
}

static int free_seed(void **state)
{
	(void)state;
	json_decref(seed);
	seed = NULL;
	return 0;
}

/* ---- mutations: "/a/0/b" paths; "-" as the last array token appends ---------------- */

enum op { OP_END, OP_SET, OP_DEL, OP_MOVE };

struct mutation {
	enum op op;
	const char *path;
	const char *value; /* JSON text for OP_SET, the destination path for OP_MOVE */
};

#define SET(p, v) {OP_SET, p, v}
#define DEL(p) {OP_DEL, p, NULL}
#define MOVE(from, to) {OP_MOVE, from, to}
#define MAX_MUTATIONS 12

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

static void apply(json_t *doc, const struct mutation *muts)
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

#define MAX_CODES 10
#define MAX_FAILS 11 /* ten checks and the terminating NULL */

static bool listed(const char *const *list, const char *s)
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
static const char *seed_verdict(const char *code)
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
static void assert_codes(const struct env_verdict *v, const char *const *codes,
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
static void assert_checks(const struct env_verdict *v, const char *const *names, size_t count,
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
static void assert_known_checks(const char *const *fails, const char *const *names, size_t count)
{
	for (; *fails; fails++) {
		size_t i = 0;
		while (i < count && strcmp(names[i], *fails) != 0)
			i++;
		if (i == count)
			fail_msg("%s is not a check", *fails);
	}
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

/* ---- envelope cases ----------------------------------------------------------------- */

static const char *const env_checks[] = {
	"claims_cite_refs", "refs_exist",    "refs_expandable", "hashes", "freshness",
	"receipt_chain",    "quality_gates", "readability",     "budget", "declared_failure",
};

enum snap_kind {
	SNAP_NONE,             /* no snapshot at all (NULL) */
	SNAP_NO_FILES,         /* a snapshot struct whose files are NULL: no snapshot either */
	SNAP_MATCH,            /* root_hash equal, files = the two refs */
	SNAP_OTHER_ROOT,       /* root_hash different, files = the two refs */
	SNAP_MATCH_ONLY_REF0,  /* root_hash equal, files = ref 0 only */
	SNAP_OTHER_ONLY_REF0,  /* root_hash different, files = ref 0 only */
	SNAP_NULL_ROOT_ONLY_REF0, /* no root_hash, files = ref 0 only */
	SNAP_MATCH_EMPTY,      /* root_hash equal, no files */
	SNAP_OTHER_EMPTY,      /* root_hash different, no files */
	SNAP_REF0_MOVED,       /* root_hash equal, the snapshot holds another hash for ref 0 */
};

struct env_case {
	const char *name;
	struct mutation muts[MAX_MUTATIONS];
	enum snap_kind snap;
	const char *fails[MAX_FAILS]; /* checks that fail; the others pass (freshness: skipped
				       * without a snapshot) */
	const char *codes[MAX_CODES];
	const char *verdict;
	const char *unasserted;   /* a check whose result the contract leaves open */
	const char *detail_check; /* optional: this check's detail names detail_has */
	const char *detail_has;
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

/* clang-format off */
static struct env_case env_cases[] = {
	/* the seed's happy path */
	{"happy_path", {{0}}, SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"happy_path_without_snapshot", {{0}}, SNAP_NONE, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"unknown_members_are_ignored",
	 {SET("/producer_note", "{\"any\": [1, 2]}"), SET("/source_refs/0/note", JS("x"))},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},

	/* claims_cite_refs → lossy_summary */
	{"summary_claim_without_ref", {SET("/summary/claims/0/source_ref_ids", "[]")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: claim without source_ref_ids member", {DEL("/summary/claims/1/source_ref_ids")},
	 SNAP_MATCH, {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: no claims", {SET("/summary/claims", "[]")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: no summary", {DEL("/summary")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: claim without text", {DEL("/summary/claims/1/text")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: lossless_by_ref false", {SET("/compression/lossless_by_ref", "false")},
	 SNAP_MATCH, {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: lossless_by_ref absent", {DEL("/compression/lossless_by_ref")},
	 SNAP_MATCH, {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: no strategy", {DEL("/compression/strategy")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: no ratio_target", {DEL("/compression/ratio_target")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"claims_cite_refs: no compression", {DEL("/compression")}, SNAP_MATCH,
	 {"claims_cite_refs"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},

	/* refs_exist → missing_source_ref */
	{"missing_source_ref", {SET("/summary/claims/0/source_ref_ids", "[\"src_999\"]")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, "refs_exist", "src_999"},
	{"refs_exist: one of two cited ids unknown",
	 {SET("/summary/claims/1/source_ref_ids", "[\"src_002\", \"src_404\"]")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, "refs_exist", "src_404"},
	{"refs_exist: cited id is not a string", {SET("/summary/claims/0/source_ref_ids", "[42]")},
	 SNAP_MATCH, {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"refs_exist: cited id is null", {SET("/summary/claims/0/source_ref_ids", "[null]")},
	 SNAP_MATCH, {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"refs_exist: cited ref without path", {DEL("/source_refs/0/path")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"refs_exist: cited ref without range", {DEL("/source_refs/1/range")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	/* the listed path's hash is now absent, so freshness fails too; whether `hashes` also
	 * fails on an absent (rather than malformed) hash the table leaves open */
	{"refs_exist: cited ref without content_hash", {DEL("/source_refs/0/content_hash")},
	 SNAP_MATCH, {"refs_exist", "freshness"}, {"missing_source_ref", "stale_context"},
	 "UNVERIFIABLE", "hashes", NULL, NULL},
	{"refs_exist: a ref without id is not cited", {DEL("/source_refs/1/id")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	/* "" names no ref when no ref has the id "" (bug: find_ref compares an id-less ref as "") */
	{"refs_exist: an empty cited id does not name an id-less ref",
	 {DEL("/source_refs/1/id"), SET("/summary/claims/1/source_ref_ids", "[\"\"]")}, SNAP_MATCH,
	 {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	/* An empty string is no id (like an empty path or range): it names nothing. */
	{"refs_exist: an empty cited id does not name a ref whose id is empty",
	 {SET("/source_refs/1/id", JS("")), SET("/summary/claims/1/source_ref_ids", "[\"\"]")},
	 SNAP_MATCH, {"refs_exist"}, {"missing_source_ref"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"refs_exist: an uncited incomplete ref passes",
	 {SET("/source_refs/-", EXTRA_REF(EXTRA_HASH ", " EXTRA_CMD))}, SNAP_MATCH, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},

	/* refs_expandable → unexpanded_required_ref */
	{"edit_depends_on_unexpanded_ref", {DEL("/source_refs/0/expansion_command")}, SNAP_MATCH,
	 {"refs_expandable"}, {"unexpanded_required_ref"}, "UNVERIFIABLE", NULL, "refs_expandable",
	 "src_001"},
	{"refs_expandable: empty expansion_command", {SET("/source_refs/1/expansion_command", JS(""))},
	 SNAP_MATCH, {"refs_expandable"}, {"unexpanded_required_ref"}, "UNVERIFIABLE", NULL,
	 "refs_expandable", "src_002"},
	{"refs_expandable: an uncited ref without expansion_command passes",
	 {SET("/source_refs/-", EXTRA_REF(EXTRA_PATH ", " EXTRA_HASH))}, SNAP_MATCH, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},

	/* hashes → stale_context */
	{"hashes: upper-case hex (no snapshot)", {SET("/source_refs/0/content_hash", JS(HASH0_UPPER))},
	 SNAP_NONE, {"hashes"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"hashes: upper-case hex also differs from the snapshot, one code",
	 {SET("/source_refs/0/content_hash", JS(HASH0_UPPER))}, SNAP_MATCH, {"hashes", "freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"hashes: 63 hex digits",
	 {SET("/source_refs/1/content_hash",
	      JS("sha256:adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de5"))},
	 SNAP_NONE, {"hashes"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"hashes: no prefix",
	 {SET("/source_refs/1/content_hash",
	      JS("adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de55"))},
	 SNAP_NONE, {"hashes"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"hashes: an uncited ref's malformed hash fails",
	 {SET("/source_refs/-", EXTRA_REF(EXTRA_PATH ", \"content_hash\": \"sha256:xyz\", " EXTRA_CMD))},
	 SNAP_MATCH, {"hashes"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},

	/* freshness → stale_context */
	{"source_hash_moved", {SET("/source_refs/0/content_hash", JS(HASH0_MOVED))}, SNAP_MATCH,
	 {"freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: hash moved, no snapshot → skipped",
	 {SET("/source_refs/0/content_hash", JS(HASH0_MOVED))}, SNAP_NONE, {NULL}, {NULL}, "MATCH",
	 NULL, NULL, NULL},
	{"freshness: snapshot without files → skipped",
	 {SET("/source_refs/0/content_hash", JS(HASH0_MOVED))}, SNAP_NO_FILES, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},
	{"freshness: the snapshot moved, not the envelope", {{0}}, SNAP_REF0_MOVED, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: hash moved, snapshot of another root",
	 {SET("/source_refs/0/content_hash", JS(HASH0_MOVED))}, SNAP_OTHER_ROOT, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: listed paths equal, other root passes", {{0}}, SNAP_OTHER_ROOT, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},
	{"freshness: unlisted path, same root passes", {{0}}, SNAP_MATCH_ONLY_REF0, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},
	{"freshness: unlisted path, other root fails", {{0}}, SNAP_OTHER_ONLY_REF0, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: unlisted path, snapshot without root fails", {{0}}, SNAP_NULL_ROOT_ONLY_REF0,
	 {"freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: empty snapshot, same root passes", {{0}}, SNAP_MATCH_EMPTY, {NULL}, {NULL},
	 "MATCH", NULL, NULL, NULL},
	{"freshness: empty snapshot, other root fails", {{0}}, SNAP_OTHER_EMPTY, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: renamed path, same root passes", {SET("/source_refs/1/path", JS("src/renamed.ts"))},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"freshness: renamed path, other root fails", {SET("/source_refs/1/path", JS("src/renamed.ts"))},
	 SNAP_OTHER_ROOT, {"freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: envelope root_hash differs, listed paths equal passes",
	 {SET("/workspace/root_hash", JS(OTHER_ROOT))}, SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL,
	 NULL, NULL},
	{"freshness: no root_hash, no snapshot", {DEL("/workspace/root_hash")}, SNAP_NONE,
	 {"freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: no git_head, no snapshot", {DEL("/workspace/git_head")}, SNAP_NONE,
	 {"freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: no git_head", {DEL("/workspace/git_head")}, SNAP_MATCH, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"freshness: no workspace", {DEL("/workspace")}, SNAP_MATCH, {"freshness"},
	 {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},

	/* receipt_chain → unjoinable_receipt */
	{"receipt_cannot_join_to_action", {DEL("/receipt_chain/1/receipt_hash")}, SNAP_MATCH,
	 {"receipt_chain"}, {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: empty chain", {SET("/receipt_chain", "[]")}, SNAP_MATCH, {"receipt_chain"},
	 {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: no chain", {DEL("/receipt_chain")}, SNAP_MATCH, {"receipt_chain"},
	 {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: duplicate receipt hashes", {SET("/receipt_chain/2/receipt_hash", JS(RECEIPT0))},
	 SNAP_MATCH, {"receipt_chain"}, {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: no tool", {DEL("/receipt_chain/0/tool")}, SNAP_MATCH, {"receipt_chain"},
	 {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: empty tool", {SET("/receipt_chain/2/tool", JS(""))}, SNAP_MATCH,
	 {"receipt_chain"}, {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: malformed receipt_hash", {SET("/receipt_chain/2/receipt_hash", JS("sha256:33"))},
	 SNAP_MATCH, {"receipt_chain"}, {"unjoinable_receipt"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"receipt_chain: one receipt suffices", {DEL("/receipt_chain/2"), DEL("/receipt_chain/1")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},

	/* quality_gates → quality_gate_missing */
	{"test_or_review_gate_absent", {DEL("/quality_gates/test_evidence")}, SNAP_MATCH,
	 {"quality_gates"}, {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: readability absent", {DEL("/quality_gates/readability")}, SNAP_MATCH,
	 {"quality_gates"}, {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: no gates", {DEL("/quality_gates")}, SNAP_MATCH, {"quality_gates"},
	 {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: test_evidence DRIFT", {SET("/quality_gates/test_evidence", JS("DRIFT"))},
	 SNAP_MATCH, {"quality_gates"}, {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: test_evidence UNVERIFIABLE",
	 {SET("/quality_gates/test_evidence", JS("UNVERIFIABLE"))}, SNAP_MATCH, {"quality_gates"},
	 {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: test_evidence not a verdict", {SET("/quality_gates/test_evidence", JS("PASS"))},
	 SNAP_MATCH, {"quality_gates"}, {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: readability UNVERIFIABLE",
	 {SET("/quality_gates/readability", JS("UNVERIFIABLE"))}, SNAP_MATCH, {"quality_gates"},
	 {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: readability lower-case", {SET("/quality_gates/readability", JS("match"))},
	 SNAP_MATCH, {"quality_gates"}, {"quality_gate_missing"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"quality_gates: the freshness gate is not required", {DEL("/quality_gates/freshness")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},

	/* readability → readability_regression */
	{"patch_makes_code_harder_to_read", {SET("/quality_gates/readability", JS("DRIFT"))},
	 SNAP_MATCH, {"readability"}, {"readability_regression"}, "DRIFT", NULL, NULL, NULL},

	/* budget → budget_exceeded (the happy path's claims are 99 + 84 = 183 bytes: 46 tokens) */
	{"packet_exceeds_budget", {SET("/context_budget/target_packet_tokens", "190000")}, SNAP_MATCH,
	 {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: target exactly max - reserved passes",
	 {SET("/context_budget/target_packet_tokens", "188000")}, SNAP_MATCH, {NULL}, {NULL}, "MATCH",
	 NULL, NULL, NULL},
	{"budget: target one over max - reserved fails",
	 {SET("/context_budget/target_packet_tokens", "188001")}, SNAP_MATCH, {"budget"},
	 {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: no reserved, target exactly max passes",
	 {DEL("/context_budget/reserved_response_tokens"),
	  SET("/context_budget/target_packet_tokens", "200000")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"budget: no reserved, target one over max fails",
	 {DEL("/context_budget/reserved_response_tokens"),
	  SET("/context_budget/target_packet_tokens", "200001")},
	 SNAP_MATCH, {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: reserved above max fails", {SET("/context_budget/reserved_response_tokens", "300000")},
	 SNAP_MATCH, {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: claims exactly at the target (ceil(183 / 4) = 46) pass",
	 {SET("/context_budget/target_packet_tokens", "46")}, SNAP_MATCH, {NULL}, {NULL}, "MATCH",
	 NULL, NULL, NULL},
	{"budget: claims one token over the target fail",
	 {SET("/context_budget/target_packet_tokens", "45")}, SNAP_MATCH, {"budget"},
	 {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: 9 bytes are 3 tokens, target 3 passes",
	 {SET("/summary/claims", "[{\"text\": \"abcdefghi\", \"source_ref_ids\": [\"src_001\"]}]"),
	  SET("/context_budget/target_packet_tokens", "3")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"budget: 9 bytes are 3 tokens, target 2 fails",
	 {SET("/summary/claims", "[{\"text\": \"abcdefghi\", \"source_ref_ids\": [\"src_001\"]}]"),
	  SET("/context_budget/target_packet_tokens", "2")},
	 SNAP_MATCH, {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: 8 bytes are 2 tokens",
	 {SET("/summary/claims", "[{\"text\": \"abcdefgh\", \"source_ref_ids\": [\"src_001\"]}]"),
	  SET("/context_budget/target_packet_tokens", "2")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"budget: bytes, not characters (5 x U+00E9 = 10 bytes = 3 tokens)",
	 {SET("/summary/claims",
	      "[{\"text\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\", \"source_ref_ids\": [\"src_001\"]}]"),
	  SET("/context_budget/target_packet_tokens", "2")},
	 SNAP_MATCH, {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: the ceiling is over all claims (1 + 1 bytes = 1 token)",
	 {SET("/summary/claims", "[{\"text\": \"a\", \"source_ref_ids\": [\"src_001\"]}, "
				 "{\"text\": \"b\", \"source_ref_ids\": [\"src_002\"]}]"),
	  SET("/context_budget/target_packet_tokens", "1")},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"budget: no max_input_tokens", {DEL("/context_budget/max_input_tokens")}, SNAP_MATCH,
	 {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: no target_packet_tokens", {DEL("/context_budget/target_packet_tokens")}, SNAP_MATCH,
	 {"budget"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"budget: no context_budget", {DEL("/context_budget")}, SNAP_MATCH, {"budget"},
	 {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},

	/* declared_failure → the declared code */
	{"declared_failure: budget_exceeded", {SET("/failure_code", JS("budget_exceeded"))},
	 SNAP_MATCH, {"declared_failure"}, {"budget_exceeded"}, "DRIFT", NULL, NULL, NULL},
	{"declared_failure: lossy_summary", {SET("/failure_code", JS("lossy_summary"))}, SNAP_NONE,
	 {"declared_failure"}, {"lossy_summary"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"declared_failure: a relevance code is a known code",
	 {SET("/failure_code", JS("raw_context_leak"))}, SNAP_MATCH, {"declared_failure"},
	 {"raw_context_leak"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"declared_failure: unknown code ignored", {SET("/failure_code", JS("not_a_failure_code"))},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"declared_failure: wrong case is unknown", {SET("/failure_code", JS("STALE_CONTEXT"))},
	 SNAP_MATCH, {NULL}, {NULL}, "MATCH", NULL, NULL, NULL},
	{"declared_failure: empty code ignored", {SET("/failure_code", JS(""))}, SNAP_MATCH, {NULL},
	 {NULL}, "MATCH", NULL, NULL, NULL},
	{"declared_failure: same code as a finding, listed once",
	 {SET("/source_refs/0/content_hash", JS(HASH0_MOVED)), SET("/failure_code", JS("stale_context"))},
	 SNAP_MATCH, {"freshness", "declared_failure"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL,
	 NULL},

	/* combined failures: every code once, in the order of the checks, the worst verdict */
	{"combined: DRIFT only", {SET("/context_budget/target_packet_tokens", "1"),
				  SET("/quality_gates/readability", JS("DRIFT"))},
	 SNAP_MATCH, {"readability", "budget"}, {"readability_regression", "budget_exceeded"}, "DRIFT",
	 NULL, NULL, NULL},
	{"combined: table order, not mutation order",
	 {SET("/context_budget/target_packet_tokens", "1"),
	  SET("/receipt_chain", "[]"),
	  SET("/compression/lossless_by_ref", "false")},
	 SNAP_MATCH, {"claims_cite_refs", "receipt_chain", "budget"},
	 {"lossy_summary", "unjoinable_receipt", "budget_exceeded"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"combined: quality gate and readability",
	 {SET("/quality_gates/readability", JS("DRIFT")), SET("/quality_gates/test_evidence", JS("DRIFT"))},
	 SNAP_MATCH, {"quality_gates", "readability"},
	 {"quality_gate_missing", "readability_regression"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"combined: a declared code comes from the last check",
	 {SET("/quality_gates/readability", JS("DRIFT")), SET("/failure_code", JS("lossy_summary"))},
	 SNAP_MATCH, {"readability", "declared_failure"}, {"readability_regression", "lossy_summary"},
	 "UNVERIFIABLE", NULL, NULL, NULL},
	{"combined: hashes and freshness, no snapshot then stale once",
	 {SET("/source_refs/1/content_hash", JS("sha256:1")), DEL("/workspace/git_head")}, SNAP_NONE,
	 {"hashes", "freshness"}, {"stale_context"}, "UNVERIFIABLE", NULL, NULL, NULL},
	{"combined: every check fails",
	 {SET("/compression/lossless_by_ref", "false"),
	  SET("/summary/claims/1/source_ref_ids", "[\"src_404\"]"),
	  DEL("/source_refs/0/expansion_command"),
	  SET("/source_refs/0/content_hash", JS(HASH0_UPPER)),
	  SET("/receipt_chain", "[]"),
	  DEL("/quality_gates/test_evidence"),
	  SET("/quality_gates/readability", JS("DRIFT")),
	  SET("/context_budget/target_packet_tokens", "1"),
	  SET("/failure_code", JS("lossy_summary"))},
	 SNAP_MATCH,
	 {"claims_cite_refs", "refs_exist", "refs_expandable", "hashes", "freshness", "receipt_chain",
	  "quality_gates", "readability", "budget", "declared_failure"},
	 {"lossy_summary", "missing_source_ref", "unexpanded_required_ref", "stale_context",
	  "unjoinable_receipt", "quality_gate_missing", "readability_regression", "budget_exceeded"},
	 "UNVERIFIABLE", NULL, NULL, NULL},
};
/* clang-format on */

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

/* ---- relevance cases ---------------------------------------------------------------- */

static const char *const rel_checks[] = {"raw_context", "usefulness", "accounting", "join",
					 "selection"};

enum rel_base {
	REL_CONTEXT,   /* the seed's context_relevance, via core_relevance_from_context */
	REL_LOAD_ONLY, /* the seed's load_only_variant, via core_relevance_from_context */
	REL_RECEIPT,   /* {load_receipt: <API.md §4 shape>, relevance: <seed relevance>}, via
			* core_relevance_from_receipt (relevance NULL when the member is absent) */
};

struct rel_case {
	const char *name;
	enum rel_base base;
	struct mutation muts[MAX_MUTATIONS];
	bool no_event; /* accounting, join and selection are skipped */
	const char *fails[MAX_FAILS];
	const char *codes[MAX_CODES];
	const char *verdict;
};

#define INPUT_REF(n) "/relevance/input_refs/" #n

/* clang-format off */
static struct rel_case rel_cases[] = {
	{"context_relevance", REL_CONTEXT, {{0}}, false, {NULL}, {NULL}, "MATCH"},
	{"load_only_variant", REL_LOAD_ONLY, {{0}}, true, {NULL}, {NULL}, "MATCH"},
	{"load_receipt with relevance", REL_RECEIPT, {{0}}, false, {NULL}, {NULL}, "MATCH"},
	{"load_receipt without relevance", REL_RECEIPT, {DEL("/relevance")}, true, {NULL}, {NULL},
	 "MATCH"},

	/* accounting → relevance_accounting_missing */
	{"selected_count_not_accounted_by_relevance_buckets", REL_CONTEXT,
	 {SET("/relevance/unused_count", "0")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: a bucket count absent", REL_CONTEXT, {DEL("/relevance/unknown_count")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: buckets sum above selected_count", REL_CONTEXT,
	 {SET("/relevance/unknown_count", "1")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: selected_count grew", REL_CONTEXT, {SET("/selection/selected_count", "4")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: unknown label", REL_CONTEXT, {SET(INPUT_REF(2) "/relevance", JS("irrelevant"))},
	 false, {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: label absent", REL_CONTEXT, {DEL(INPUT_REF(1) "/relevance")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
	{"accounting: every label valid, buckets sum", REL_CONTEXT,
	 {SET(INPUT_REF(2) "/relevance", JS("unknown")), SET("/relevance/unused_count", "0"),
	  SET("/relevance/unknown_count", "1")},
	 false, {NULL}, {NULL}, "MATCH"},
	{"accounting: against the receipt's selected_count", REL_RECEIPT,
	 {SET("/load_receipt/selected_count", "4")}, false, {"accounting"},
	 {"relevance_accounting_missing"}, "UNVERIFIABLE"},

	/* usefulness → missing_relevance */
	{"usefulness_claim_without_relevance_event", REL_CONTEXT,
	 {SET("/relevance", "null"), SET("/claims_usefulness", "true")}, true, {"usefulness"},
	 {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: claimed by the load receipt contract, no relevance", REL_CONTEXT,
	 {DEL("/relevance"), SET("/receipt_contract/load_receipt/claims_usefulness", "true")}, true,
	 {"usefulness"}, {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: claimed with a relevance event passes", REL_CONTEXT,
	 {SET("/claims_usefulness", "true")}, false, {NULL}, {NULL}, "MATCH"},
	{"usefulness: load only, claimed", REL_LOAD_ONLY, {SET("/claims_usefulness", "true")}, true,
	 {"usefulness"}, {"missing_relevance"}, "UNVERIFIABLE"},
	{"usefulness: the receipt claims it, no relevance", REL_RECEIPT,
	 {DEL("/relevance"), SET("/load_receipt/claims_usefulness", "true")}, true, {"usefulness"},
	 {"missing_relevance"}, "UNVERIFIABLE"},

	/* selection → over_selection */
	{"relevance_labels_more_inputs_than_delivered", REL_CONTEXT,
	 {SET("/selection/delivered_count", "2")}, false, {"selection"}, {"over_selection"}, "DRIFT"},
	{"selection: against the receipt's delivered_count", REL_RECEIPT,
	 {SET("/load_receipt/delivered_count", "2")}, false, {"selection"}, {"over_selection"},
	 "DRIFT"},

	/* join → unjoinable_relevance */
	{"relevance_points_to_context_never_delivered", REL_CONTEXT,
	 {SET(INPUT_REF(2) "/input_id", JS("ctx_in_004"))}, false, {"join"}, {"unjoinable_relevance"},
	 "UNVERIFIABLE"},
	{"join: delivered_hash differs", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/delivered_hash", JS(DELIVERED(3)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: the source_hash is not the delivered_hash", REL_CONTEXT,
	 {SET(INPUT_REF(0) "/delivered_hash", JS(SOURCE(1)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: delivered_hash absent", REL_CONTEXT, {DEL(INPUT_REF(0) "/delivered_hash")}, false,
	 {"join"}, {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: a suppressed input of the receipt", REL_RECEIPT,
	 {SET(INPUT_REF(2) "/input_id", JS("ctx_in_004")), SET(INPUT_REF(2) "/delivered_hash", JS(SOURCE(4)))},
	 false, {"join"}, {"unjoinable_relevance"}, "UNVERIFIABLE"},
	{"join: the receipt delivered other bytes", REL_RECEIPT,
	 {SET("/load_receipt/loaded_inputs/0/delivered_hash", JS(DELIVERED(9)))}, false, {"join"},
	 {"unjoinable_relevance"}, "UNVERIFIABLE"},

	/* raw_context → raw_context_leak */
	{"relevance_event_contains_raw_context", REL_CONTEXT,
	 {SET(INPUT_REF(0) "/content", JS("raw text"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: text on an input_ref", REL_CONTEXT, {SET(INPUT_REF(2) "/text", JS("raw"))}, false,
	 {"raw_context"}, {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: raw_context on an input_ref", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/raw_context", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: raw_payload on an input_ref", REL_CONTEXT,
	 {SET(INPUT_REF(1) "/raw_payload", "{\"bytes\": \"raw\"}")}, false, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: content on a loaded input", REL_CONTEXT,
	 {SET("/loaded_inputs/1/content", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},
	{"raw_context: text on a loaded input, no relevance event", REL_CONTEXT,
	 {SET("/loaded_inputs/2/text", JS("raw")), SET("/relevance", "null")}, true, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: raw_payload on a loaded input of the receipt", REL_RECEIPT,
	 {SET("/load_receipt/loaded_inputs/0/raw_payload", JS("raw"))}, false, {"raw_context"},
	 {"raw_context_leak"}, "UNVERIFIABLE"},
	{"raw_context: content on a receipt's relevance input_ref", REL_RECEIPT,
	 {SET(INPUT_REF(0) "/content", JS("raw"))}, false, {"raw_context"}, {"raw_context_leak"},
	 "UNVERIFIABLE"},

	/* where the members are read from */
	{"source: top-level counts", REL_CONTEXT,
	 {DEL("/selection"), SET("/selected_count", "3"), SET("/delivered_count", "3")}, false, {NULL},
	 {NULL}, "MATCH"},
	{"source: top-level delivered_count is read", REL_CONTEXT,
	 {DEL("/selection"), SET("/selected_count", "3"), SET("/delivered_count", "2")}, false,
	 {"selection"}, {"over_selection"}, "DRIFT"},
	{"source: relevance_event instead of relevance", REL_CONTEXT,
	 {MOVE("/relevance", "/relevance_event")}, false, {NULL}, {NULL}, "MATCH"},
	{"source: relevance_event is checked", REL_CONTEXT,
	 {MOVE("/relevance", "/relevance_event"), SET("/relevance_event/unused_count", "5")}, false,
	 {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},

	/* combined: every code once, in the order of the checks, the worst verdict */
	{"combined: raw, accounting, join, selection", REL_CONTEXT,
	 {SET("/selection/delivered_count", "2"),
	  SET(INPUT_REF(0) "/delivered_hash", JS(DELIVERED(7))),
	  SET(INPUT_REF(1) "/raw_payload", JS("raw")),
	  SET("/relevance/unknown_count", "5")},
	 false, {"raw_context", "accounting", "join", "selection"},
	 {"raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance", "over_selection"},
	 "UNVERIFIABLE"},
	{"combined: raw and missing relevance", REL_LOAD_ONLY,
	 {SET("/claims_usefulness", "true"),
	  SET("/loaded_inputs", "[{\"input_id\": \"ctx_in_001\", \"content\": \"raw\"}]")},
	 true, {"raw_context", "usefulness"}, {"raw_context_leak", "missing_relevance"},
	 "UNVERIFIABLE"},

	/* Last on purpose: the counts are integers >= 0 as the relevance body allows (no upper
	 * bound), and 2 * INT64_MAX + 2 + 3 = 2^64 + 3 is not 3. core/envelope.c sums them in a
	 * json_int_t: signed overflow (UBSan aborts the binary; without it the sum wraps to 3). */
	{"accounting: huge buckets do not wrap to selected_count", REL_CONTEXT,
	 {SET("/relevance/decisive_count", "9223372036854775807"),
	  SET("/relevance/supporting_count", "9223372036854775807"),
	  SET("/relevance/unused_count", "2"), SET("/relevance/unknown_count", "3")},
	 false, {"accounting"}, {"relevance_accounting_missing"}, "UNVERIFIABLE"},
};
/* clang-format on */

/* A stored load receipt as API.md §4 describes it, for the seed's three delivered inputs
 * (same input ids and hashes) and its one suppressed input. */
static json_t *load_receipt(void)
{
	const json_t *cr = context_relevance();
	json_t *loaded = json_array(), *suppressed = json_array();
	size_t i;
	json_t *in;
	json_array_foreach(json_object_get(cr, "loaded_inputs"), i, in) {
		char record[40];
		snprintf(record, sizeof record, "src_%032zx", i + 1);
		json_array_append_new(
			loaded, json_pack("{s:O, s:s, s:O, s:O, s:O}", "input_id",
					  json_object_get(in, "input_id"), "record_id", record,
					  "source_hash", json_object_get(in, "source_hash"),
					  "delivered_hash", json_object_get(in, "delivered_hash"),
					  "rank", json_object_get(in, "rank")));
	}
	json_array_foreach(json_object_get(cr, "suppressed_inputs"), i, in)
		json_array_append_new(
			suppressed,
			json_pack("{s:O, s:s, s:O, s:O, s:s}", "input_id", json_object_get(in, "input_id"),
				  "record_id", "src_000000000000000000000000000000ff", "source_hash",
				  json_object_get(in, "source_hash"), "rank", json_object_get(in, "rank"),
				  "suppression_reason", "beyond_limit"));
	json_t *r = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:o, s:b}", "receipt_id",
			      "lrc_0123456789abcdef0123456789abcdef", "event_type", "context.load",
			      "candidate_count", 4, "selected_count", 3, "delivered_count", 3,
			      "suppressed_count", 1, "loaded_inputs", loaded, "suppressed_inputs",
			      suppressed, "claims_usefulness", 0);
	assert_non_null(r);
	return r;
}

static json_t *rel_base_doc(enum rel_base base)
{
	if (base == REL_CONTEXT)
		return json_deep_copy(context_relevance());
	if (base == REL_LOAD_ONLY)
		return json_deep_copy(json_object_get(context_relevance(), "load_only_variant"));
	json_t *doc = json_pack("{s:o, s:O}", "load_receipt", load_receipt(), "relevance",
				json_object_get(context_relevance(), "relevance"));
	json_t *copy = json_deep_copy(doc); /* the relevance object is not the seed's own */
	json_decref(doc);
	return copy;
}

static json_t *normalise(enum rel_base base, const json_t *doc)
{
	if (base == REL_RECEIPT)
		return core_relevance_from_receipt(json_object_get(doc, "load_receipt"),
						   json_object_get(doc, "relevance"));
	return core_relevance_from_context(doc);
}

static void run_rel_case(void **state)
{
	const struct rel_case *c = *state;
	json_t *doc = rel_base_doc(c->base);
	assert_non_null(doc);
	apply(doc, c->muts);
	json_t *before = json_deep_copy(doc);
	json_t *n = normalise(c->base, doc);
	assert_non_null(n);
	assert_true(json_equal(doc, before)); /* the inputs are borrowed */
	json_t *n_before = json_deep_copy(n);

	struct env_verdict v;
	core_relevance_verify(n, &v);
	assert_true(json_equal(n, n_before));

	const char *expected[N_ELEMS(rel_checks)];
	for (size_t i = 0; i < N_ELEMS(rel_checks); i++)
		expected[i] = listed(c->fails, rel_checks[i]) ? "fail"
			      : c->no_event && i >= 2          ? "skipped"
							       : "pass";
	assert_known_checks(c->fails, rel_checks, N_ELEMS(rel_checks));
	assert_checks(&v, rel_checks, N_ELEMS(rel_checks), expected, NULL);
	assert_codes(&v, c->codes, c->verdict);

	core_env_verdict_free(&v);
	json_decref(n_before);
	json_decref(n);
	json_decref(before);
	json_decref(doc);
}

/* ---- normalised forms ------------------------------------------------------------------ */

static json_int_t iget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_from_context(void **state)
{
	(void)state;
	const json_t *cr = context_relevance();
	json_t *n = core_relevance_from_context(cr);
	assert_non_null(n);
	assert_int_equal(json_object_size(n), 5);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), json_object_get(cr, "loaded_inputs")));
	assert_true(json_equal(json_object_get(n, "relevance"), json_object_get(cr, "relevance")));
	json_decref(n);

	n = core_relevance_from_context(json_object_get(cr, "load_only_variant"));
	assert_non_null(n);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_is_null(json_object_get(n, "relevance")));
	json_t *want = json_pack("[{s:s}, {s:s}, {s:s}]", "input_id", "ctx_in_001", "input_id",
				 "ctx_in_002", "input_id", "ctx_in_003");
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), want));
	json_decref(want);
	json_decref(n);

	/* the seed's own expectation for the load-only variant */
	assert_string_equal(json_string_value(json_object_get(json_object_get(cr, "load_only_variant"),
							      "expected_verdict")),
			    "MATCH");
}

static void test_from_receipt(void **state)
{
	(void)state;
	json_t *receipt = load_receipt();
	const json_t *rel = json_object_get(context_relevance(), "relevance");
	json_t *rel_before = json_deep_copy(rel), *receipt_before = json_deep_copy(receipt);

	json_t *n = core_relevance_from_receipt(receipt, rel);
	assert_non_null(n);
	assert_int_equal(json_object_size(n), 5);
	assert_int_equal(iget(n, "selected_count"), 3);
	assert_int_equal(iget(n, "delivered_count"), 3);
	assert_true(json_is_false(json_object_get(n, "claims_usefulness")));
	assert_true(json_equal(json_object_get(n, "loaded_inputs"), json_object_get(receipt, "loaded_inputs")));
	assert_true(json_equal(json_object_get(n, "relevance"), rel));
	struct env_verdict v;
	core_relevance_verify(n, &v);
	assert_string_equal(v.verdict, "MATCH");
	assert_int_equal(json_array_size(v.failure_codes), 0);
	core_env_verdict_free(&v);
	json_decref(n);

	n = core_relevance_from_receipt(receipt, NULL);
	assert_non_null(n);
	assert_true(json_is_null(json_object_get(n, "relevance")));
	json_decref(n);

	assert_true(json_equal(rel, rel_before));
	assert_true(json_equal(receipt, receipt_before));
	json_decref(rel_before);
	json_decref(receipt_before);
	json_decref(receipt);
}

/* ---- codes ----------------------------------------------------------------------------- */

static void test_code_verdicts(void **state)
{
	(void)state;
	static const char *const table[][2] = {
		{"stale_context", "UNVERIFIABLE"},
		{"lossy_summary", "UNVERIFIABLE"},
		{"missing_source_ref", "UNVERIFIABLE"},
		{"unexpanded_required_ref", "UNVERIFIABLE"},
		{"unjoinable_receipt", "UNVERIFIABLE"},
		{"readability_regression", "DRIFT"},
		{"quality_gate_missing", "UNVERIFIABLE"},
		{"budget_exceeded", "DRIFT"},
		{"relevance_accounting_missing", "UNVERIFIABLE"},
		{"missing_relevance", "UNVERIFIABLE"},
		{"over_selection", "DRIFT"},
		{"unjoinable_relevance", "UNVERIFIABLE"},
		{"raw_context_leak", "UNVERIFIABLE"},
	};
	for (size_t i = 0; i < N_ELEMS(table); i++) {
		const char *got = core_env_code_verdict(table[i][0]);
		assert_non_null(got);
		assert_string_equal(got, table[i][1]);
		assert_string_equal(got, seed_verdict(table[i][0]));
	}
	/* the seed lists exactly these 13 codes */
	const json_t *codes = json_object_get(seed, "failure_codes");
	assert_int_equal(json_array_size(codes), N_ELEMS(table));
	size_t i;
	json_t *c;
	json_array_foreach(codes, i, c)
		assert_non_null(core_env_code_verdict(json_string_value(c)));
	assert_int_equal(json_array_size(json_object_get(seed, "negative_test_cases")), N_ELEMS(table));

	assert_null(core_env_code_verdict("unknown_code"));
	assert_null(core_env_code_verdict(""));
	assert_null(core_env_code_verdict("STALE_CONTEXT"));
	assert_null(core_env_code_verdict("stale_context "));
	assert_null(core_env_code_verdict("stale"));
	assert_null(core_env_code_verdict(NULL));
}

/* Every negative_test_cases entry of the seed has a row of the same name that expects
 * exactly its failure_code and expected_verdict. */
static void test_seed_negative_cases_covered(void **state)
{
	(void)state;
	size_t i, k;
	json_t *nc;
	json_array_foreach(json_object_get(seed, "negative_test_cases"), i, nc) {
		const char *name = json_string_value(json_object_get(nc, "name"));
		const char *code = json_string_value(json_object_get(nc, "failure_code"));
		const char *verdict = json_string_value(json_object_get(nc, "expected_verdict"));
		const char *const *codes = NULL;
		const char *row_verdict = NULL;
		for (k = 0; k < N_ELEMS(env_cases); k++)
			if (strcmp(env_cases[k].name, name) == 0) {
				codes = env_cases[k].codes;
				row_verdict = env_cases[k].verdict;
			}
		for (k = 0; k < N_ELEMS(rel_cases); k++)
			if (strcmp(rel_cases[k].name, name) == 0) {
				codes = rel_cases[k].codes;
				row_verdict = rel_cases[k].verdict;
			}
		if (codes == NULL)
			fail_msg("no row for the seed's negative case %s", name);
		assert_non_null(codes[0]);
		assert_string_equal(codes[0], code);
		assert_null(codes[1]);
		assert_string_equal(row_verdict, verdict);
	}
}

/* ---- main ----------------------------------------------------------------------------- */

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_code_verdicts),
		cmocka_unit_test(test_seed_negative_cases_covered),
		cmocka_unit_test(test_from_context),
		cmocka_unit_test(test_from_receipt),
	};
	static char names[N_ELEMS(env_cases) + N_ELEMS(rel_cases)][160];
	static struct CMUnitTest tests[N_ELEMS(fixed) + N_ELEMS(env_cases) + N_ELEMS(rel_cases)];
	size_t n = 0, k;
	for (k = 0; k < N_ELEMS(fixed); k++)
		tests[n++] = fixed[k];
	for (k = 0; k < N_ELEMS(env_cases); k++) {
		snprintf(names[k], sizeof names[k], "envelope: %s", env_cases[k].name);
		tests[n++] = (struct CMUnitTest){names[k], run_env_case, NULL, NULL, &env_cases[k]};
	}
	for (k = 0; k < N_ELEMS(rel_cases); k++) {
		char *name = names[N_ELEMS(env_cases) + k];
		snprintf(name, sizeof names[0], "relevance: %s", rel_cases[k].name);
		tests[n++] = (struct CMUnitTest){name, run_rel_case, NULL, NULL, &rel_cases[k]};
	}
	return cmocka_run_group_tests_name("envelope", tests, load_seed, free_seed);
}
