/*
 * it_envelopes — context envelopes and relevance checks end to end (API.md §0, §9;
 * docs/envelope-contract.md; the seed context-envelope-v1.json; issue 6):
 *
 *  - the seed's conformance_fixture.happy_path against a matching workspace snapshot: 201
 *    MATCH, no failure codes, every check passes; GET reads the same verdict back;
 *  - every seed negative_test_cases entry as data (tests/fixtures/envelopes/negative/<name>.json:
 *    mutations of happy_path or of context_relevance) with its failure_code and verdict;
 *  - combined failures (every code, in the order of the contract's table, the worst verdict),
 *    each missing required field as the finding of the check that owns it, the gate, hash and
 *    budget rules at their edges, the freshness rules (listed path → hash, unlisted → root);
 *  - the seed's load_only_variant, the relevance_event alias, the raw payload members;
 *  - re-verification: MATCH → UNVERIFIABLE stale_context after the snapshot changes, and back;
 *  - relevance joined to a stored load receipt (memory context assembly);
 *  - workspace snapshot compare-and-swap, If-Match, GET;
 *  - every limit of the decisions page at its edge (the 10000-file snapshot built here);
 *  - tenant isolation, audit records without claim text, scopes, and a server log without
 *    claim text (last: it stops the server).
 *
 * The fixture files come from RG_FIXTURES_DIR (set by CMake). Every tenant is unique
 * (it_unique), so the file runs beside the others against one database.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
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

#include "harness.h"

#ifndef RG_FIXTURES_DIR
#error "RG_FIXTURES_DIR (tests/fixtures) must be defined by the build"
#endif

#define ENV_DIR RG_FIXTURES_DIR "/envelopes"
#define SEED_FILE ENV_DIR "/context-envelope-v1.json"
#define NEG_DIR ENV_DIR "/negative"

#define EXP_NULL LLONG_MIN /* expected_revision: null */
#define ID_MAX 80
#define UNKNOWN_ENV "env_00000000000000000000000000000000"
#define UNKNOWN_LRC "lrc_00000000000000000000000000000000"
#define CLAIM_MARKER "CLAIM-MARKER"

/* the contract's limits (docs/envelope-contract.md) */
#define MAX_SOURCE_REFS 256
#define MAX_CLAIMS 256
#define MAX_CLAIM_BYTES 4000
#define MAX_CLAIM_REFS 32
#define MAX_RECEIPTS 64
#define MAX_FILES 10000
#define MAX_REL_INPUTS 256
#define DEFAULT_MAX_BODY 1048576
#define RACERS 8

static struct it_server srv;
static json_t *seed;             /* the fixture file */
static const json_t *happy;      /* borrowed: conformance_fixture.happy_path */
static const json_t *relevance0; /* borrowed: conformance_fixture.context_relevance */

/* tenant A: every test that does not need a tenant of its own */
struct tenant {
	char *name;
	char *admin;  /* admin */
	char *rw;     /* envelopes:read,envelopes:write */
	char *reader; /* envelopes:read */
};
static struct tenant ta;
static char ws_match[ID_MAX]; /* A's workspace whose snapshot matches the happy path */

/* ================================================================ checks of the contract */

struct check_def {
	const char *check;
	const char *code; /* NULL: declared_failure (any known code) */
};

/* the contract's table, in its order */
static const struct check_def env_checks[] = {
    {"claims_cite_refs", "lossy_summary"},
    {"refs_exist", "missing_source_ref"},
    {"refs_expandable", "unexpanded_required_ref"},
    {"hashes", "stale_context"},
    {"freshness", "stale_context"},
    {"receipt_chain", "unjoinable_receipt"},
    {"quality_gates", "quality_gate_missing"},
    {"readability", "readability_regression"},
    {"budget", "budget_exceeded"},
    {"declared_failure", NULL},
};
#define N_ENV_CHECKS (sizeof env_checks / sizeof *env_checks)

static const struct check_def rel_checks[] = {
    {"raw_context", "raw_context_leak"},
    {"usefulness", "missing_relevance"},
    {"accounting", "relevance_accounting_missing"},
    {"join", "unjoinable_relevance"},
    {"selection", "over_selection"},
};
#define N_REL_CHECKS (sizeof rel_checks / sizeof *rel_checks)

static const char *code_verdict(const char *code)
{
	static const char *const drift[] = {"readability_regression", "budget_exceeded",
					    "over_selection"};
	for (size_t i = 0; i < sizeof drift / sizeof *drift; i++) {
		if (strcmp(code, drift[i]) == 0)
			return "DRIFT";
	}
	return "UNVERIFIABLE";
}

static int verdict_rank(const char *v)
{
	if (!v)
		return -1;
	if (strcmp(v, "MATCH") == 0)
		return 0;
	if (strcmp(v, "DRIFT") == 0)
		return 1;
	if (strcmp(v, "UNVERIFIABLE") == 0)
		return 2;
	return -1;
}

/* position of code in the envelope table (its first row), or -1 */
static int env_code_rank(const char *code)
{
	for (size_t i = 0; i < N_ENV_CHECKS; i++) {
		if (env_checks[i].code && strcmp(env_checks[i].code, code) == 0)
			return (int)i;
	}
	return -1;
}

static bool rel_code_known(const char *code)
{
	for (size_t i = 0; i < N_REL_CHECKS; i++) {
		if (strcmp(rel_checks[i].code, code) == 0)
			return true;
	}
	return false;
}

/* a code of the seed's failure_codes list */
static bool seed_code_known(const char *code)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(seed, "failure_codes"), i, c) {
		if (json_is_string(c) && strcmp(json_string_value(c), code) == 0)
			return true;
	}
	return false;
}

/* ================================================================ small helpers */

static void copy_str(char *dst, size_t n, const char *src)
{
	IT_CHECK(src != NULL, "a string member is missing");
	IT_CHECK(strlen(src) < n, "a string member is too long for the test's buffer");
	snprintf(dst, n, "%s", src);
}

static bool has_prefix_hex(const char *id, const char *prefix)
{
	size_t p = strlen(prefix);
	if (!id || strlen(id) != p + 32 || strncmp(id, prefix, p) != 0)
		return false;
	for (size_t i = p; i < p + 32; i++) {
		char ch = id[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return true;
}

/* new: exactly n bytes: prefix (cut at n), then filler words */
static char *text_of(const char *prefix, size_t n)
{
	static const char filler[] = " lorem ipsum dolor sit amet";
	size_t p = strlen(prefix);
	char *s = malloc(n + 1);
	assert_non_null(s);
	if (p > n)
		p = n;
	memcpy(s, prefix, p);
	for (size_t i = p; i < n; i++)
		s[i] = filler[(i - p) % (sizeof filler - 1)];
	s[n] = '\0';
	return s;
}

/* new: `count` copies of the UTF-8 sequence unit, then suffix */
static char *repeat_utf8(const char *unit, size_t count, const char *suffix)
{
	size_t u = strlen(unit), x = strlen(suffix);
	char *s = malloc(u * count + x + 1);
	assert_non_null(s);
	for (size_t i = 0; i < count; i++)
		memcpy(s + i * u, unit, u);
	memcpy(s + u * count, suffix, x + 1);
	return s;
}

/* "sha256:" + 64 lowercase hex derived from n (distinct n, distinct hashes) */
static void hash_of(unsigned long long n, char out[72])
{
	snprintf(out, 72, "sha256:%064llx", n);
}

static char *dump(const json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	assert_non_null(t);
	return t;
}

/* new: the compact text of j, which it steals */
static char *dump_new(json_t *j)
{
	char *t = dump(j);
	json_decref(j);
	return t;
}

static void soft(char *why, size_t n, const char *fmt, ...) IT_PRINTF(3, 4);
/* appends one reason to why (a NUL-terminated buffer of n bytes) */
static void soft(char *why, size_t n, const char *fmt, ...)
{
	size_t used = strlen(why);
	if (used + 3 >= n)
		return;
	if (used) {
		why[used++] = ';';
		why[used++] = ' ';
		why[used] = '\0';
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why + used, n - used, fmt, ap);
	va_end(ap);
}

/* ================================================================ tenants and requests */

static char *token_for(const char *tenant, const char *scopes, const char *name)
{
	char *tok = it_token(tenant, scopes, name);
	IT_CHECK(tok != NULL, "cannot create a %s token for %s", scopes, tenant);
	return tok;
}

static void tenant_new(struct tenant *t, const char *prefix)
{
	t->name = it_unique(prefix);
	t->admin = token_for(t->name, "admin", "it-admin");
	t->rw = token_for(t->name, "envelopes:read,envelopes:write", "it-rw");
	t->reader = token_for(t->name, "envelopes:read", "it-reader");
}

static void tenant_free(struct tenant *t)
{
	free(t->name);
	free(t->admin);
	free(t->rw);
	free(t->reader);
	memset(t, 0, sizeof *t);
}

/* body: steals */
static void send_json(const char *method, const char *path, const char *token, json_t *body,
		      const char *const *headers, struct it_resp *r)
{
	it_request_json(&srv, method, path, token, body, headers, r);
	json_decref(body);
}

static void get(const char *path, const char *token, struct it_resp *r)
{
	it_request(&srv, "GET", path, token, NULL, NULL, r);
}

#define expect_422x(r, code, field, exact, what) IT_422(r, code, field, exact, what)

static void expect_422(const struct it_resp *r, const char *code, const char *field,
		       const char *what)
{
	expect_422x(r, code, field, true, what);
}

static void expect_etag(const struct it_resp *r, long long rev)
{
	char want[40];
	snprintf(want, sizeof want, "\"%lld\"", rev);
	const char *etag = it_resp_header(r, "ETag");
	IT_CHECK(etag && strcmp(etag, want) == 0, "%s: ETag is %s, expected %s", r->desc,
		 etag ? etag : "none", want);
}

/* ================================================================ JSON mutations */

struct seg {
	char key[128];
	long idx; /* -1: key */
};

/* "a.b[2].c" → segments; returns their number */
static size_t parse_path(const char *path, struct seg *segs, size_t max)
{
	size_t n = 0;
	const char *p = path;
	while (*p) {
		IT_CHECK(n < max, "mutation path %s has too many segments", path);
		if (*p == '[') {
			char *end = NULL;
			long v = strtol(p + 1, &end, 10);
			IT_CHECK(end && end > p + 1 && *end == ']' && v >= 0,
				 "mutation path %s: bad index", path);
			segs[n].key[0] = '\0';
			segs[n].idx = v;
			p = end + 1;
		} else {
			size_t k = strcspn(p, ".[");
			IT_CHECK(k > 0 && k < sizeof segs[n].key, "mutation path %s: bad member",
				 path);
			memcpy(segs[n].key, p, k);
			segs[n].key[k] = '\0';
			segs[n].idx = -1;
			p += k;
		}
		n++;
		if (*p == '.')
			p++;
	}
	IT_CHECK(n > 0, "empty mutation path");
	return n;
}

/* set (value: borrowed, copied; a missing member is added, index == size appends) or
 * delete (value ignored) the member at path */
static void mutate(json_t *root, const char *op, const char *path, const json_t *value)
{
	struct seg segs[16];
	size_t n = parse_path(path, segs, 16);
	json_t *c = root;
	for (size_t i = 0; i + 1 < n; i++) {
		c = segs[i].idx < 0 ? json_object_get(c, segs[i].key)
				    : json_array_get(c, (size_t)segs[i].idx);
		IT_CHECK(c != NULL, "mutation path %s: segment %zu does not exist", path, i);
	}
	const struct seg *last = &segs[n - 1];
	if (strcmp(op, "set") == 0) {
		IT_CHECK(value != NULL, "set %s without a value", path);
		json_t *v = json_deep_copy(value);
		if (last->idx < 0) {
			IT_CHECK(json_is_object(c), "set %s: not an object", path);
			json_object_set_new(c, last->key, v);
		} else {
			IT_CHECK(json_is_array(c), "set %s: not an array", path);
			size_t sz = json_array_size(c);
			IT_CHECK((size_t)last->idx <= sz, "set %s: index beyond the end", path);
			if ((size_t)last->idx == sz)
				json_array_append_new(c, v);
			else
				json_array_set_new(c, (size_t)last->idx, v);
		}
	} else if (strcmp(op, "delete") == 0) {
		int rc = last->idx < 0 ? json_object_del(c, last->key)
				       : json_array_remove(c, (size_t)last->idx);
		IT_CHECK(rc == 0, "delete %s: nothing there", path);
	} else {
		IT_FAIL("unknown mutation op %s", op);
	}
}

/* shorthands over a document: value steals */
static void set_new(json_t *doc, const char *path, json_t *value)
{
	mutate(doc, "set", path, value);
	json_decref(value);
}

static void del(json_t *doc, const char *path)
{
	mutate(doc, "delete", path, NULL);
}

/* new: a copy of the happy path / the relevance base */
static json_t *happy_copy(void)
{
	return json_deep_copy(happy);
}

static json_t *relevance_copy(void)
{
	return json_deep_copy(relevance0);
}

/* ================================================================ snapshots */

/* new: the two files of the happy path with its hashes */
static json_t *happy_files(void)
{
	json_t *files = json_array();
	size_t i;
	const json_t *ref;
	json_array_foreach (json_object_get(happy, "source_refs"), i, ref) {
		json_t *f = json_object();
		json_object_set_new(f, "path", json_string(it_json_str(ref, "path")));
		json_object_set_new(f, "content_hash",
				    json_string(it_json_str(ref, "content_hash")));
		json_array_append_new(files, f);
	}
	return files;
}

static const char *happy_root(void)
{
	return it_json_str(json_object_get(happy, "workspace"), "root_hash");
}

static const char *happy_head(void)
{
	return it_json_str(json_object_get(happy, "workspace"), "git_head");
}

/* new: {expected_revision, root_hash, git_head, files} (files: steals) */
static json_t *snap_body(long long expected, const char *root, const char *head, json_t *files)
{
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision",
			    expected == EXP_NULL ? json_null() : json_integer(expected));
	json_object_set_new(b, "root_hash", json_string(root));
	json_object_set_new(b, "git_head", json_string(head));
	json_object_set_new(b, "files", files);
	return b;
}

static void snap_path(const char *ws, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/workspaces/%s/snapshot", ws);
}

/* body: steals */
static void snap_put(const char *token, const char *ws, json_t *body, const char *const *headers,
		     struct it_resp *r)
{
	char path[256];
	snap_path(ws, path, sizeof path);
	send_json("PUT", path, token, body, headers, r);
}

/* the PUT/GET answer: {workspace_id, revision, root_hash, git_head, file_count} (+ files) */
static void check_snap_answer(const struct it_resp *r, const char *ws, long long rev,
			      const char *root, const char *head, size_t nfiles, bool with_files)
{
	const json_t *j = r->json;
	IT_CHECK(json_is_object(j), "%s: not a JSON object: %s", r->desc, r->body);
	IT_CHECK(it_json_str_is(j, "workspace_id", ws), "%s: workspace_id is not %s: %.300s",
		 r->desc, ws, r->body);
	IT_CHECK(it_json_int(j, "revision", -1) == rev, "%s: revision is not %lld: %.300s", r->desc,
		 rev, r->body);
	IT_CHECK(it_json_str_is(j, "root_hash", root), "%s: root_hash is not %s: %.300s", r->desc,
		 root, r->body);
	IT_CHECK(it_json_str_is(j, "git_head", head), "%s: git_head is not %s: %.300s", r->desc,
		 head, r->body);
	IT_CHECK(it_json_int(j, "file_count", -1) == (long long)nfiles,
		 "%s: file_count is not %zu: %.300s", r->desc, nfiles, r->body);
	const json_t *files = json_object_get(j, "files");
	if (with_files)
		IT_CHECK(json_is_array(files) && json_array_size(files) == nfiles,
			 "%s: files is not an array of %zu: %.300s", r->desc, nfiles, r->body);
	expect_etag(r, rev);
}

/* PUT a snapshot that must succeed; files: steals */
static void snap_ok(const char *token, const char *ws, long long expected, const char *root,
		    const char *head, json_t *files)
{
	size_t n = json_array_size(files);
	struct it_resp r;
	snap_put(token, ws, snap_body(expected, root, head, files), NULL, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, expected == EXP_NULL ? 1 : expected + 1, root, head, n, false);
	it_resp_free(&r);
}

/* new: a fresh workspace id of tenant-independent form */
static void ws_fresh(char ws[ID_MAX])
{
	char *u = it_unique("ws");
	copy_str(ws, ID_MAX, u);
	free(u);
}

/* ================================================================ envelopes */

/* new: {workspace_id?, envelope} (envelope: steals) */
static json_t *env_body(const char *ws, json_t *envelope)
{
	json_t *b = json_object();
	if (ws)
		json_object_set_new(b, "workspace_id", json_string(ws));
	json_object_set_new(b, "envelope", envelope);
	return b;
}

/* envelope: steals */
static void env_post(const char *token, const char *ws, json_t *envelope, struct it_resp *r)
{
	send_json("POST", "/v1/envelopes", token, env_body(ws, envelope), NULL, r);
}

static void env_get(const char *token, const char *id, struct it_resp *r)
{
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s", id);
	get(path, token, r);
}

static void env_verify(const char *token, const char *id, struct it_resp *r)
{
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s/verify", id);
	it_request(&srv, "POST", path, token, "{}", NULL, r);
}

/* borrowed: the checks[] entry named `check`, or NULL */
static const json_t *check_of(const json_t *ans, const char *check)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(ans, "checks"), i, c) {
		if (it_json_str_is(c, "check", check))
			return c;
	}
	return NULL;
}

/* the detail of `check` names one of the NULL-terminated alternatives (an id or index) */
static void expect_detail_names(const json_t *ans, const char *check, ...)
{
	const char *detail = it_json_str(check_of(ans, check), "detail");
	bool found = false;
	va_list ap;
	va_start(ap, check);
	for (const char *alt = va_arg(ap, const char *); alt; alt = va_arg(ap, const char *))
		found |= detail && strstr(detail, alt) != NULL;
	va_end(ap);
	IT_CHECK(found, "the %s detail \"%s\" names no offending id or index", check,
		 detail ? detail : "(none)");
}

static bool codes_have(const json_t *ans, const char *code)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(ans, "failure_codes"), i, c) {
		if (json_is_string(c) && strcmp(json_string_value(c), code) == 0)
			return true;
	}
	return false;
}

enum kind { ENVELOPE, RELEVANCE };

/*
 * The answer's shape and internal consistency (soft: reasons appended to why):
 * verdict one of three and the worst of the codes; failure_codes unique known strings
 * (envelopes: in the order of the table, the declared code — the envelope's own
 * failure_code — may come last); checks[] names every check once (envelopes: in the table's
 * order) with result pass|fail|skipped and a string detail; a failing check's code is listed
 * and a listed code has a failing check.
 */
static bool answer_shape_ok(const json_t *j, enum kind kind, const char *declared, char *why,
			    size_t n)
{
	size_t before = strlen(why);
	if (!json_is_object(j)) {
		soft(why, n, "the answer is not a JSON object");
		return false;
	}
	const char *verdict = it_json_str(j, "verdict");
	if (verdict_rank(verdict) < 0)
		soft(why, n, "verdict is not MATCH|DRIFT|UNVERIFIABLE");
	const json_t *codes = json_object_get(j, "failure_codes");
	const json_t *checks = json_object_get(j, "checks");
	if (!json_is_array(codes) || !json_is_array(checks)) {
		soft(why, n, "failure_codes or checks is not an array");
		return false;
	}
	int worst = 0, last_rank = -1;
	size_t i;
	const json_t *c;
	json_array_foreach (codes, i, c) {
		const char *code = json_string_value(c);
		if (!code) {
			soft(why, n, "failure_codes[%zu] is not a string", i);
			continue;
		}
		for (size_t k = 0; k < i; k++) {
			const char *other = json_string_value(json_array_get(codes, k));
			if (other && strcmp(other, code) == 0)
				soft(why, n, "failure code %s is listed twice", code);
		}
		bool is_declared = declared && strcmp(declared, code) == 0;
		bool known = kind == ENVELOPE ? (env_code_rank(code) >= 0 ||
						 (is_declared && seed_code_known(code)))
					      : rel_code_known(code);
		if (!known) {
			soft(why, n, "failure code %s is not a code of this endpoint", code);
			continue;
		}
		int vr = verdict_rank(code_verdict(code));
		worst = vr > worst ? vr : worst;
		if (kind == ENVELOPE) {
			int rank = env_code_rank(code);
			bool last = i + 1 == json_array_size(codes);
			if (rank >= 0 && rank < last_rank && !(is_declared && last))
				soft(why, n, "failure code %s is out of the table's order", code);
			if (rank >= 0 && !(is_declared && last))
				last_rank = rank;
		}
	}
	if (verdict_rank(verdict) >= 0 && verdict_rank(verdict) != worst)
		soft(why, n, "verdict %s is not the worst of the codes", verdict);

	const struct check_def *defs = kind == ENVELOPE ? env_checks : rel_checks;
	size_t ndefs = kind == ENVELOPE ? N_ENV_CHECKS : N_REL_CHECKS;
	if (json_array_size(checks) != ndefs)
		soft(why, n, "checks[] has %zu entries, expected %zu", json_array_size(checks),
		     ndefs);
	for (size_t d = 0; d < ndefs; d++) {
		const json_t *found = NULL;
		size_t count = 0, at = 0;
		json_array_foreach (checks, i, c) {
			if (it_json_str_is(c, "check", defs[d].check)) {
				found = c;
				count++;
				at = i;
			}
		}
		if (count != 1) {
			soft(why, n, "check %s appears %zu times", defs[d].check, count);
			continue;
		}
		if (kind == ENVELOPE && at != d)
			soft(why, n, "check %s is at checks[%zu], the table puts it at %zu",
			     defs[d].check, at, d);
		const char *res = it_json_str(found, "result");
		bool fail = res && strcmp(res, "fail") == 0;
		if (!res || (!fail && strcmp(res, "pass") != 0 && strcmp(res, "skipped") != 0))
			soft(why, n, "check %s: result is not pass|fail|skipped", defs[d].check);
		const json_t *detail = json_object_get(found, "detail");
		if (kind == ENVELOPE ? !json_is_string(detail)
				     : (detail && !json_is_string(detail) && !json_is_null(detail)))
			soft(why, n, "check %s: detail is not a string", defs[d].check);
		const char *code = defs[d].code ? defs[d].code : declared;
		if (fail && (!code || !codes_have(j, code)))
			soft(why, n, "check %s fails but its code %s is not listed", defs[d].check,
			     code ? code : "(none declared)");
	}
	json_array_foreach (codes, i, c) {
		const char *code = json_string_value(c);
		bool explained = false;
		for (size_t d = 0; code && d < ndefs; d++) {
			const char *dc = defs[d].code ? defs[d].code : declared;
			const json_t *ch = check_of(j, defs[d].check);
			if (dc && strcmp(dc, code) == 0 && it_json_str_is(ch, "result", "fail"))
				explained = true;
		}
		if (code && !explained)
			soft(why, n, "code %s is listed but no check that owns it fails", code);
	}
	if (kind == ENVELOPE) {
		if (!has_prefix_hex(it_json_str(j, "envelope_id"), "env_"))
			soft(why, n, "envelope_id is not env_ + 32 hex");
		if (it_json_int(j, "revision", -1) < 1)
			soft(why, n, "revision is not an integer >= 1");
		if (!it_is_timestamp_ms(it_json_str(j, "created_at")))
			soft(why, n, "created_at is not RFC 3339 UTC with milliseconds");
		const json_t *w = json_object_get(j, "workspace_id");
		const json_t *wr = json_object_get(j, "workspace_revision");
		if (!w || !wr || !(json_is_string(w) || json_is_null(w)) ||
		    !(json_is_integer(wr) || json_is_null(wr)) ||
		    json_is_null(w) != json_is_null(wr))
			soft(why, n,
			     "workspace_id/workspace_revision are not both present (both "
			     "null or a string and an integer)");
	}
	return strlen(why) == before;
}

/*
 * The expected outcome (soft). codes: NULL-terminated; exact: failure_codes is exactly codes
 * (envelopes: in that order; relevance: as a set); otherwise they are among failure_codes.
 */
static bool outcome_ok(const struct it_resp *r, enum kind kind, long status, const char *verdict,
		       const char *const *codes, bool exact, const char *declared, char *why,
		       size_t n)
{
	size_t before = strlen(why);
	if (r->status != status) {
		soft(why, n, "status %ld, expected %ld", r->status, status);
		return false;
	}
	const char *ct = it_resp_header(r, "Content-Type");
	if (!ct || strncmp(ct, "application/json", 16) != 0)
		soft(why, n, "Content-Type is %s", ct ? ct : "none");
	if (!answer_shape_ok(r->json, kind, declared, why, n))
		return false;
	if (!it_json_str_is(r->json, "verdict", verdict))
		soft(why, n, "verdict is %s, expected %s", it_json_str(r->json, "verdict"),
		     verdict);
	size_t want = 0;
	for (; codes[want]; want++) {
		if (!codes_have(r->json, codes[want]))
			soft(why, n, "%s is not among failure_codes", codes[want]);
	}
	const json_t *got = json_object_get(r->json, "failure_codes");
	if (exact && json_array_size(got) != want)
		soft(why, n, "failure_codes has %zu entries, expected exactly %zu",
		     json_array_size(got), want);
	if (exact && kind == ENVELOPE && json_array_size(got) == want) {
		for (size_t i = 0; i < want; i++) {
			if (!json_is_string(json_array_get(got, i)) ||
			    strcmp(json_string_value(json_array_get(got, i)), codes[i]) != 0)
				soft(why, n, "failure_codes[%zu] is not %s", i, codes[i]);
		}
	}
	return strlen(why) == before;
}

static void expect_outcome_at(const struct it_resp *r, enum kind kind, long status,
			      const char *verdict, const char *const *codes, bool exact,
			      const char *declared, const char *what, const char *file, int line)
{
	char why[2048] = "";
	if (outcome_ok(r, kind, status, verdict, codes, exact, declared, why, sizeof why))
		return;
	it_fail_at(file, line, "%s: %s\n  request: %s\n  answer %ld: %.3000s", what, why, r->desc,
		   r->status, r->body ? r->body : "");
}

#define CODES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_CODES ((const char *const[]){NULL})
#define EXPECT_ENV(r, verdict, codes, exact, what)                                                 \
	expect_outcome_at((r), ENVELOPE, 201, (verdict), (codes), (exact), NULL, (what), __FILE__, \
			  __LINE__)
#define EXPECT_ENV_DECL(r, verdict, codes, exact, declared, what)                                  \
	expect_outcome_at((r), ENVELOPE, 201, (verdict), (codes), (exact), (declared), (what),     \
			  __FILE__, __LINE__)
#define EXPECT_REL(r, verdict, codes, exact, what)                                                 \
	expect_outcome_at((r), RELEVANCE, 200, (verdict), (codes), (exact), NULL, (what),          \
			  __FILE__, __LINE__)

/* POST an envelope (steals) and expect the outcome */
#define POST_EXPECT(ws, env, verdict, codes, exact, what)                                          \
	do {                                                                                       \
		struct it_resp r_;                                                                 \
		env_post(ta.rw, (ws), (env), &r_);                                                 \
		EXPECT_ENV(&r_, (verdict), (codes), (exact), (what));                              \
		it_resp_free(&r_);                                                                 \
	} while (0)

static void relevance_post(const char *token, json_t *body, struct it_resp *r)
{
	send_json("POST", "/v1/context/relevance-checks", token, body, NULL, r);
}

/* {context_relevance: doc} (doc: steals) */
static void relevance_doc(const char *token, json_t *doc, struct it_resp *r)
{
	json_t *b = json_object();
	json_object_set_new(b, "context_relevance", doc);
	relevance_post(token, b, r);
}

#define REL_EXPECT(doc, verdict, codes, exact, what)                                               \
	do {                                                                                       \
		struct it_resp r_;                                                                 \
		relevance_doc(ta.reader, (doc), &r_);                                              \
		EXPECT_REL(&r_, (verdict), (codes), (exact), (what));                              \
		it_resp_free(&r_);                                                                 \
	} while (0)

/* ================================================================ audit */

/* new: every item of a paginated list, walking next_cursor */
static json_t *list_all(const char *token, const char *path)
{
	return it_list_all(&srv, token, path);
}

static size_t audit_count(const char *token, const char *type, const char *id)
{
	char path[512];
	if (id)
		snprintf(path, sizeof path, "/v1/audit?resource_type=%s&resource_id=%s", type, id);
	else
		snprintf(path, sizeof path, "/v1/audit?resource_type=%s", type);
	json_t *all = list_all(token, path);
	size_t n = json_array_size(all);
	json_decref(all);
	return n;
}

/* ================================================================ setup */

static json_t *load_json(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!j)
		fprintf(stderr, "cannot read %s: %s (line %d)\n", path, err.text, err.line);
	return j;
}

static int group_setup(void **state)
{
	(void)state;
	seed = load_json(SEED_FILE);
	if (!seed)
		return -1;
	const json_t *fx = json_object_get(seed, "conformance_fixture");
	happy = json_object_get(fx, "happy_path");
	relevance0 = json_object_get(fx, "context_relevance");
	if (!json_is_object(happy) || !json_is_object(relevance0)) {
		fprintf(stderr, "%s: no conformance_fixture.happy_path / context_relevance\n",
			SEED_FILE);
		return -1;
	}
	if (it_server_start(&srv, NULL) != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = 0;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		rc = -1;
	tenant_free(&ta);
	json_decref(seed);
	return rc;
}

/* tenant A and its matching workspace (first test) */
static void test_setup_tenant(void **state)
{
	(void)state;
	tenant_new(&ta, "env-a");
	ws_fresh(ws_match);
	snap_ok(ta.rw, ws_match, EXP_NULL, happy_root(), happy_head(), happy_files());
}

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
	for (size_t i = 0; i < N_ENV_CHECKS; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, env_checks[i].check), "result", "pass"),
			 "happy path: check %s does not pass: %s", env_checks[i].check, r.body);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "workspace_id", ws_match) &&
		     it_json_int(r.json, "workspace_revision", -1) == 1,
		 "workspace_id / workspace_revision: %s", r.body);
	char id[ID_MAX];
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));

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

/* ================================================================ relevance: base, variants */

static void test_relevance_variants(void **state)
{
	(void)state;
	/* the seed's context_relevance itself is a valid, joined relevance event */
	REL_EXPECT(relevance_copy(), "MATCH", NO_CODES, true, "the seed's context_relevance");
	struct it_resp r;
	relevance_doc(ta.reader, relevance_copy(), &r);
	IT_STATUS(&r, 200);
	for (size_t i = 0; i < N_REL_CHECKS; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, rel_checks[i].check), "result", "pass"),
			 "context_relevance: check %s does not pass: %s", rel_checks[i].check,
			 r.body);
	it_resp_free(&r);

	/* the seed's load_only_variant: no relevance event, no usefulness claim */
	const json_t *lov = json_object_get(relevance0, "load_only_variant");
	IT_CHECK(json_is_object(lov) && it_json_str_is(lov, "expected_verdict", "MATCH"),
		 "the seed has no load_only_variant expecting MATCH");
	relevance_doc(ta.reader, json_deep_copy(lov), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "load_only_variant");
	IT_CHECK(!it_json_str_is(check_of(r.json, "raw_context"), "result", "fail") &&
		     !it_json_str_is(check_of(r.json, "usefulness"), "result", "fail"),
		 "load_only_variant: a check fails: %s", r.body);
	it_resp_free(&r);
	/* the same, claiming usefulness → missing_relevance */
	json_t *doc = json_deep_copy(lov);
	set_new(doc, "claims_usefulness", json_true());
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("missing_relevance"), true,
		   "load_only_variant claiming usefulness");
	/* a usefulness claim with a relevance event is fine */
	doc = relevance_copy();
	set_new(doc, "claims_usefulness", json_true());
	set_new(doc, "receipt_contract.load_receipt.claims_usefulness", json_true());
	REL_EXPECT(doc, "MATCH", NO_CODES, true,
		   "usefulness claimed with a joined relevance event");
	/* the relevance_event alias is read like relevance */
	doc = relevance_copy();
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(doc, "relevance")));
	del(doc, "relevance");
	REL_EXPECT(doc, "MATCH", NO_CODES, true, "relevance given as relevance_event");
	doc = relevance_copy();
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(doc, "relevance")));
	del(doc, "relevance");
	set_new(doc, "relevance_event.unused_count", json_integer(0));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "relevance_event with unaccounted inputs");

	/* accounting: an unknown label, a missing bucket count */
	doc = relevance_copy();
	set_new(doc, "relevance.input_refs[2].relevance", json_string("useful"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "a relevance label outside the four");
	doc = relevance_copy();
	del(doc, "relevance.unknown_count");
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "unknown_count missing");
	/* join: an input id that was never loaded */
	doc = relevance_copy();
	set_new(doc, "relevance.input_refs[1].input_id", json_string("ctx_in_004"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "input_ref naming the suppressed input");
	/* selection: a fourth (duplicate) input_ref over 3 delivered, counts still 3 */
	doc = relevance_copy();
	json_t *refs = json_object_get(json_object_get(doc, "relevance"), "input_refs");
	json_array_append_new(refs, json_deep_copy(json_array_get(refs, 2)));
	REL_EXPECT(doc, "DRIFT", CODES("over_selection"), true,
		   "four input_refs for three delivered inputs");

	/* counts at the top level instead of in selection */
	doc = relevance_copy();
	del(doc, "selection");
	set_new(doc, "selected_count", json_integer(3));
	set_new(doc, "delivered_count", json_integer(3));
	REL_EXPECT(doc, "MATCH", NO_CODES, true, "counts at the top level");
	doc = relevance_copy();
	del(doc, "selection");
	set_new(doc, "selected_count", json_integer(3));
	set_new(doc, "delivered_count", json_integer(2));
	REL_EXPECT(doc, "DRIFT", CODES("over_selection"), true,
		   "top-level delivered_count below the labelled inputs");
	/* no counts at all: the buckets account for nothing */
	doc = relevance_copy();
	del(doc, "selection");
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("relevance_accounting_missing"), false,
		   "a relevance event without selected_count");
	/* loaded_input_ids carry no delivered hashes: a relevance event cannot join them */
	doc = json_deep_copy(lov);
	set_new(doc, "relevance_event", json_deep_copy(json_object_get(relevance0, "relevance")));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "load_only_variant with a relevance event (no delivered hashes to join)");

	/* raw payload members on a loaded input or an input_ref, each a finding */
	struct {
		const char *path;
	} raw[] = {
	    {"loaded_inputs[0].raw_context"},        {"loaded_inputs[1].content"},
	    {"loaded_inputs[2].raw_payload"},        {"loaded_inputs[0].text"},
	    {"relevance.input_refs[0].raw_context"}, {"relevance.input_refs[1].raw_payload"},
	    {"relevance.input_refs[2].text"},
	};
	for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
		doc = relevance_copy();
		set_new(doc, raw[i].path, json_string("raw text that must never be sent"));
		char what[160];
		snprintf(what, sizeof what, "raw payload at %s", raw[i].path);
		REL_EXPECT(doc, "UNVERIFIABLE", CODES("raw_context_leak"), true, what);
	}
}

/* ================================================================ combined failures */

static void test_combined_failures(void **state)
{
	(void)state;
	json_t *e;

	/* readability DRIFT + stale → UNVERIFIABLE with both */
	e = happy_copy();
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(
	    e, "source_refs[0].content_hash",
	    json_string("sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a9202"));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE", CODES("stale_context", "readability_regression"),
		    true, "readability DRIFT + stale source hash");

	/* two DRIFT codes → DRIFT */
	e = happy_copy();
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "DRIFT", CODES("readability_regression", "budget_exceeded"), true,
		    "readability DRIFT + over budget");

	/* three: lossy + unexpanded (src_002 is still cited) + budget */
	e = happy_copy();
	set_new(e, "summary.claims[0].source_ref_ids", json_array());
	del(e, "source_refs[1].expansion_command");
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("lossy_summary", "unexpanded_required_ref", "budget_exceeded"), true,
		    "lossy + unexpanded + over budget");

	/* three more: missing ref + duplicate receipt + absent test gate */
	e = happy_copy();
	set_new(e, "summary.claims[1].source_ref_ids", json_pack("[s]", "src_999"));
	set_new(e, "receipt_chain[2].receipt_hash",
		json_string(it_json_str(json_array_get(json_object_get(happy, "receipt_chain"), 0),
					"receipt_hash")));
	del(e, "quality_gates.test_evidence");
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("missing_source_ref", "unjoinable_receipt", "quality_gate_missing"), true,
		    "missing ref + duplicate receipt + absent test gate");

	/* all eight envelope codes at once, in the table's order */
	e = happy_copy();
	set_new(e, "compression.lossless_by_ref", json_false());
	set_new(e, "summary.claims[0].source_ref_ids", json_pack("[ss]", "src_001", "src_999"));
	del(e, "source_refs[0].expansion_command");
	set_new(
	    e, "source_refs[1].content_hash",
	    json_string("sha256:adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de5f"));
	set_new(e, "receipt_chain[1].receipt_hash",
		json_string(it_json_str(json_array_get(json_object_get(happy, "receipt_chain"), 0),
					"receipt_hash")));
	set_new(e, "quality_gates.test_evidence", json_string("DRIFT"));
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE",
		    CODES("lossy_summary", "missing_source_ref", "unexpanded_required_ref",
			  "stale_context", "unjoinable_receipt", "quality_gate_missing",
			  "readability_regression", "budget_exceeded"),
		    true, "all eight envelope failures");

	/* a malformed hash fails hashes and freshness: stale_context once */
	e = happy_copy();
	set_new(
	    e, "source_refs[1].content_hash",
	    json_string("sha256:ADF30BB9A2BC994F3D54B5C1A203BDBCB913F079FD7224F111E9E363B777DE55"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV(&r, "UNVERIFIABLE", CODES("stale_context"), true,
			   "upper-case hex hash (hashes and freshness both fail)");
		IT_CHECK(it_json_str_is(check_of(r.json, "hashes"), "result", "fail"),
			 "the hashes check does not fail on upper-case hex: %s", r.body);
		it_resp_free(&r);
	}

	/* the envelope's own failure_code is listed too (once) */
	e = happy_copy();
	set_new(e, "failure_code", json_string("budget_exceeded"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "DRIFT", CODES("budget_exceeded"), true, "budget_exceeded",
				"declared failure_code budget_exceeded");
		IT_CHECK(it_json_str_is(check_of(r.json, "declared_failure"), "result", "fail"),
			 "declared_failure does not fail for a declared code: %s", r.body);
		it_resp_free(&r);
	}
	e = happy_copy();
	set_new(e, "failure_code", json_string("budget_exceeded"));
	set_new(e, "context_budget.target_packet_tokens", json_integer(190000));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "DRIFT", CODES("budget_exceeded"), true, "budget_exceeded",
				"declared budget_exceeded that also fails");
		it_resp_free(&r);
	}
	e = happy_copy();
	set_new(e, "failure_code", json_string("stale_context"));
	set_new(e, "quality_gates.readability", json_string("DRIFT"));
	{
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		EXPECT_ENV_DECL(&r, "UNVERIFIABLE",
				CODES("readability_regression", "stale_context"), false,
				"stale_context", "declared stale_context + readability DRIFT");
		IT_CHECK(json_array_size(json_object_get(r.json, "failure_codes")) == 2,
			 "expected exactly two codes: %s", r.body);
		it_resp_free(&r);
	}
	/* an unknown declared code is ignored */
	e = happy_copy();
	set_new(e, "failure_code", json_string("not_a_known_code"));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "an unknown declared failure_code");

	/* each failing check's detail names the offending ids or indexes */
	struct {
		const char *check;
		const char *path;
		const char *value; /* JSON; NULL: delete */
		const char *alt1, *alt2;
	} details[] = {
	    {"refs_exist", "summary.claims[0].source_ref_ids", "[\"src_999\"]", "src_999", NULL},
	    {"refs_expandable", "source_refs[0].expansion_command", NULL, "src_001", NULL},
	    {"freshness", "source_refs[1].content_hash",
	     "\"sha256:adf30bb9a2bc994f3d54b5c1a203bdbcb913f079fd7224f111e9e363b777de5f\"",
	     "src_002", "1"},
	    {"hashes", "source_refs[1].content_hash", "\"sha256:xyz\"", "src_002", "1"},
	    {"claims_cite_refs", "summary.claims[1].source_ref_ids", "[]", "1", NULL},
	    {"receipt_chain", "receipt_chain[2].tool", "\"\"", "2", NULL},
	};
	for (size_t i = 0; i < sizeof details / sizeof *details; i++) {
		e = happy_copy();
		if (details[i].value) {
			json_error_t err;
			json_t *v = json_loads(details[i].value, JSON_DECODE_ANY, &err);
			IT_CHECK(v != NULL, "bad test value %s", details[i].value);
			set_new(e, details[i].path, v);
		} else {
			del(e, details[i].path);
		}
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		IT_STATUS(&r, 201);
		IT_CHECK(it_json_str_is(check_of(r.json, details[i].check), "result", "fail"),
			 "%s does not fail: %s", details[i].check, r.body);
		expect_detail_names(r.json, details[i].check, details[i].alt1, details[i].alt2,
				    (const char *)NULL);
		it_resp_free(&r);
	}

	/* claim tokens count bytes, not characters: 2000 two-byte characters are 1000 tokens */
	{
		char *mb = repeat_utf8("é", 2000, "");
		size_t bytes =
		    strlen(mb) +
		    strlen(it_json_str(
			json_array_get(json_object_get(json_object_get(happy, "summary"), "claims"),
				       1),
			"text"));
		long long tokens = (long long)((bytes + 3) / 4);
		for (int over = 0; over <= 1; over++) {
			e = happy_copy();
			set_new(e, "summary.claims[0].text", json_string(mb));
			set_new(e, "context_budget.target_packet_tokens",
				json_integer(tokens - over));
			if (over)
				POST_EXPECT(ws_match, e, "DRIFT", CODES("budget_exceeded"), true,
					    "multi-byte claims one token over the target");
			else
				POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true,
					    "multi-byte claims exactly at the target");
		}
		free(mb);
	}

	/* relevance: three UNVERIFIABLE codes together */
	json_t *doc = relevance_copy();
	set_new(doc, "relevance.input_refs[0].content", json_string("raw text"));
	set_new(
	    doc, "relevance.input_refs[1].delivered_hash",
	    json_string("sha256:200000000000000000000000000000000000000000000000000000000000000f"));
	set_new(doc, "relevance.unused_count", json_integer(0));
	REL_EXPECT(
	    doc, "UNVERIFIABLE",
	    CODES("raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance"), true,
	    "raw context + unaccounted + unjoinable");
	/* DRIFT + UNVERIFIABLE → UNVERIFIABLE */
	doc = relevance_copy();
	set_new(doc, "selection.delivered_count", json_integer(2));
	set_new(doc, "loaded_inputs[0].text", json_string("raw text"));
	REL_EXPECT(doc, "UNVERIFIABLE", CODES("raw_context_leak", "over_selection"), true,
		   "over selection + raw context");
	/* every relevance code at once */
	doc = relevance_copy();
	set_new(doc, "selection.delivered_count", json_integer(2));
	set_new(doc, "relevance.input_refs[0].raw_payload", json_string("raw"));
	set_new(
	    doc, "relevance.input_refs[2].delivered_hash",
	    json_string("sha256:2000000000000000000000000000000000000000000000000000000000000009"));
	set_new(doc, "relevance.decisive_count", json_integer(5));
	set_new(doc, "claims_usefulness", json_true());
	REL_EXPECT(doc, "UNVERIFIABLE",
		   CODES("raw_context_leak", "relevance_accounting_missing", "unjoinable_relevance",
			 "over_selection"),
		   true, "raw + accounting + join + selection (usefulness with an event is fine)");
}

/* ================================================================ required fields, edges */

struct finding_case {
	const char *op;
	const char *path;
	const char *value; /* JSON text for set */
	const char *verdict;
	const char *code; /* NULL: MATCH */
	bool exact;
};

static void test_findings_table(void **state)
{
	(void)state;
	/* every required field of the seed except envelope_id (422, test_limits_envelope) and
	 * failure_code, missing; then gate, hash, budget values at their edges */
	static const struct finding_case cases[] = {
	    {"delete", "workspace.root_hash", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "workspace.git_head", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "workspace", NULL, "UNVERIFIABLE", "stale_context", true},
	    {"delete", "context_budget.max_input_tokens", NULL, "DRIFT", "budget_exceeded", true},
	    {"delete", "context_budget.target_packet_tokens", NULL, "DRIFT", "budget_exceeded",
	     true},
	    {"delete", "context_budget", NULL, "DRIFT", "budget_exceeded", true},
	    {"delete", "compression.strategy", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression.ratio_target", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression.lossless_by_ref", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "compression", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "source_refs[0].path", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[0].range", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[0].content_hash", NULL, "UNVERIFIABLE", "missing_source_ref",
	     false},
	    {"delete", "source_refs", NULL, "UNVERIFIABLE", "missing_source_ref", true},
	    {"delete", "source_refs[1].expansion_command", NULL, "UNVERIFIABLE",
	     "unexpanded_required_ref", true},
	    {"delete", "summary.claims[0].text", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "summary.claims[1].source_ref_ids", NULL, "UNVERIFIABLE", "lossy_summary",
	     true},
	    {"delete", "summary", NULL, "UNVERIFIABLE", "lossy_summary", true},
	    {"set", "summary.claims", "[]", "UNVERIFIABLE", "lossy_summary", true},
	    {"delete", "receipt_chain[0].tool", NULL, "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"delete", "receipt_chain[2].receipt_hash", NULL, "UNVERIFIABLE", "unjoinable_receipt",
	     true},
	    {"delete", "receipt_chain", NULL, "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"set", "receipt_chain", "[]", "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"delete", "quality_gates.readability", NULL, "UNVERIFIABLE", "quality_gate_missing",
	     true},
	    {"delete", "quality_gates", NULL, "UNVERIFIABLE", "quality_gate_missing", true},
	    /* values */
	    {"set", "compression.lossless_by_ref", "false", "UNVERIFIABLE", "lossy_summary", true},
	    {"set", "source_refs[0].expansion_command", "\"\"", "UNVERIFIABLE",
	     "unexpanded_required_ref", true},
	    {"set", "source_refs[0].content_hash",
	     "\"sha1:830671b42a75b2f6d8120df44b05f8f340fb522d\"", "UNVERIFIABLE", "stale_context",
	     true},
	    {"set", "source_refs[0].content_hash",
	     "\"sha256:830671b42a75b2f6d8120df44b05f8f340fb522d3524a827cddf2ccf1d4a920\"",
	     "UNVERIFIABLE", "stale_context", true},
	    {"set", "receipt_chain[0].tool", "\"\"", "UNVERIFIABLE", "unjoinable_receipt", true},
	    {"set", "receipt_chain[0].receipt_hash", "\"sha256:0011\"", "UNVERIFIABLE",
	     "unjoinable_receipt", true},
	    {"set", "quality_gates.test_evidence", "\"DRIFT\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.test_evidence", "\"UNVERIFIABLE\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.readability", "\"UNVERIFIABLE\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"set", "quality_gates.readability", "\"GOOD\"", "UNVERIFIABLE", "quality_gate_missing",
	     true},
	    {"set", "quality_gates.test_evidence", "\"match\"", "UNVERIFIABLE",
	     "quality_gate_missing", true},
	    {"delete", "quality_gates.freshness", NULL, "MATCH", NULL, true},
	    /* budget: 200000 - 12000 = 188000 */
	    {"set", "context_budget.target_packet_tokens", "188000", "MATCH", NULL, true},
	    {"set", "context_budget.target_packet_tokens", "188001", "DRIFT", "budget_exceeded",
	     true},
	    {"delete", "context_budget.reserved_response_tokens", NULL, "MATCH", NULL, true},
	    /* the receipt chain's other members are not required */
	    {"delete", "receipt_chain[0].action", NULL, "MATCH", NULL, true},
	    {"delete", "workspace.dirty", NULL, "MATCH", NULL, true},
	};
	size_t failures = 0;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct finding_case *c = &cases[i];
		json_t *e = happy_copy();
		if (strcmp(c->op, "set") == 0) {
			json_error_t err;
			json_t *v = json_loads(c->value, JSON_DECODE_ANY, &err);
			IT_CHECK(v != NULL, "bad test value %s", c->value);
			set_new(e, c->path, v);
		} else {
			del(e, c->path);
		}
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		char why[2048] = "";
		const char *codes[] = {c->code, NULL};
		if (!outcome_ok(&r, ENVELOPE, 201, c->verdict, codes, c->exact, NULL, why,
				sizeof why)) {
			failures++;
			fprintf(stderr,
				"FAIL finding: %s %s%s%s → expected %s%s %s: %s\n  answer %ld: "
				"%.2000s\n",
				c->op, c->path, c->value ? " = " : "", c->value ? c->value : "",
				c->exact ? "exactly " : "", c->code ? c->code : "(no code)",
				c->verdict, why, r.status, r.body ? r.body : "");
		}
		it_resp_free(&r);
	}

	/* the claims' own tokens against the target: ceil(bytes / 4) */
	size_t bytes = 0, i;
	const json_t *cl;
	json_array_foreach (json_object_get(json_object_get(happy, "summary"), "claims"), i, cl)
		bytes += strlen(it_json_str(cl, "text"));
	long long tokens = (long long)((bytes + 3) / 4);
	for (int over = 0; over <= 1; over++) {
		json_t *e = happy_copy();
		set_new(e, "context_budget.target_packet_tokens", json_integer(tokens - over));
		struct it_resp r;
		env_post(ta.rw, ws_match, e, &r);
		char why[2048] = "";
		bool ok = over ? outcome_ok(&r, ENVELOPE, 201, "DRIFT", CODES("budget_exceeded"),
					    true, NULL, why, sizeof why)
			       : outcome_ok(&r, ENVELOPE, 201, "MATCH", NO_CODES, true, NULL, why,
					    sizeof why);
		if (!ok) {
			failures++;
			fprintf(stderr,
				"FAIL finding: target_packet_tokens %lld for claims of %zu bytes "
				"(%lld tokens): %s\n  answer %ld: %.2000s\n",
				tokens - over, bytes, tokens, why, r.status, r.body ? r.body : "");
		}
		it_resp_free(&r);
	}
	IT_CHECK(failures == 0, "%zu finding case(s) failed (see above)", failures);
}

/* ================================================================ freshness rules */

static void post_against(const char *root, json_t *files, const char *verdict,
			 const char *const *codes, const char *what)
{
	char ws[ID_MAX];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, root, "another-head", files);
	POST_EXPECT(ws, happy_copy(), verdict, codes, true, what);
}

static void test_freshness_rules(void **state)
{
	(void)state;
	char other_root[72];
	hash_of(0xabcdefULL, other_root);
	/* listed paths decide by their hashes, whatever the root */
	post_against(other_root, happy_files(), "MATCH", NO_CODES,
		     "both refs listed with equal hashes, another root");
	/* an unlisted path falls back to the root */
	json_t *one = happy_files();
	json_array_remove(one, 1);
	post_against(other_root, one, "UNVERIFIABLE", CODES("stale_context"),
		     "src_002 unlisted, another root");
	one = happy_files();
	json_array_remove(one, 1);
	post_against(happy_root(), one, "MATCH", NO_CODES, "src_002 unlisted, the same root");
	post_against(happy_root(), json_array(), "MATCH", NO_CODES, "no files, the same root");
	post_against(other_root, json_array(), "UNVERIFIABLE", CODES("stale_context"),
		     "no files, another root");
	/* a listed path with another hash is stale even when the root matches */
	json_t *moved = happy_files();
	char h[72];
	hash_of(42, h);
	json_object_set_new(json_array_get(moved, 1), "content_hash", json_string(h));
	post_against(happy_root(), moved, "UNVERIFIABLE", CODES("stale_context"),
		     "src_002 listed with another hash, the same root");

	/* an unknown workspace → 404, nothing stored */
	char ws[ID_MAX];
	ws_fresh(ws);
	struct it_resp r;
	size_t before = audit_count(ta.admin, "envelope", NULL);
	env_post(ta.rw, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "envelope", NULL) == before,
		 "a refused envelope was audited");
}

/* ================================================================ verify */

static void test_verify_flip(void **state)
{
	(void)state;
	char ws[ID_MAX], id[ID_MAX];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "before the snapshot changes");
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	char created[64];
	copy_str(created, sizeof created, it_json_str(r.json, "created_at"));
	it_resp_free(&r);

	/* the workspace moves on: context.ts and the root change */
	char root2[72], h2[72];
	hash_of(0x2222ULL, root2);
	hash_of(0x3333ULL, h2);
	json_t *files = happy_files();
	json_object_set_new(json_array_get(files, 0), "content_hash", json_string(h2));
	snap_ok(ta.rw, ws, 1, root2, "head-2", files);

	/* the stored verdict does not change by itself */
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "verdict", "MATCH") &&
		     it_json_int(r.json, "revision", -1) == 1,
		 "the stored verdict changed without a verify: %s", r.body);
	it_resp_free(&r);

	/* verify → UNVERIFIABLE stale_context, revision 2 */
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "UNVERIFIABLE", CODES("stale_context"), true, NULL,
			  "verify after the snapshot changed", __FILE__, __LINE__);
	IT_CHECK(it_json_str_is(r.json, "envelope_id", id) &&
		     it_json_int(r.json, "revision", -1) == 2,
		 "verify: envelope_id / revision 2: %s", r.body);
	IT_CHECK(it_json_str_is(check_of(r.json, "freshness"), "result", "fail"),
		 "verify: freshness does not fail: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "workspace_id", ws) &&
		     it_json_int(r.json, "workspace_revision", -1) == 2,
		 "verify: workspace_revision is not 2: %s", r.body);
	json_t *verified = json_deep_copy(r.json);
	it_resp_free(&r);

	/* GET shows the new latest verdict */
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	expect_etag(&r, 2);
	char *a = dump(verified), *b = dump(r.json);
	IT_CHECK(json_equal(verified, r.json), "GET after verify differs:\n  verify: %s\n  GET: %s",
		 a, b);
	IT_CHECK(it_json_str_is(r.json, "created_at", created), "created_at moved on verify");
	free(a);
	free(b);
	json_decref(verified);
	it_resp_free(&r);

	/* verify again: still stale, revision 3 */
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "UNVERIFIABLE", CODES("stale_context"), true, NULL,
			  "second verify", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 3, "revision is not 3: %s", r.body);
	it_resp_free(&r);

	/* the workspace goes back: MATCH again, revision 4 */
	snap_ok(ta.rw, ws, 2, happy_root(), happy_head(), happy_files());
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "verify after the snapshot was restored", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 4 &&
		     it_json_int(r.json, "workspace_revision", -1) == 3,
		 "revision 4 / workspace_revision 3: %s", r.body);
	it_resp_free(&r);

	/* an envelope without a workspace verifies too (freshness skipped) */
	env_post(ta.rw, NULL, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "without a workspace");
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "verify without a workspace", __FILE__, __LINE__);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2 &&
		     it_json_str_is(check_of(r.json, "freshness"), "result", "skipped"),
		 "verify without a workspace: %s", r.body);
	it_resp_free(&r);

	/* verify's body is {} (strict) */
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s/verify", id);
	it_request(&srv, "POST", path, ta.rw, "{\"colour\":\"blue\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	it_request(&srv, "POST", path, ta.rw, "[]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	env_get(ta.reader, id, &r);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2, "a refused verify moved the revision");
	it_resp_free(&r);
}

/* ================================================================ load receipts */

static void create_note(const char *token, const char *content)
{
	json_t *b = json_object();
	json_object_set_new(b, "source_kind", json_string("note"));
	json_object_set_new(b, "content", json_string(content));
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", token, b, NULL, &r);
	IT_STATUS(&r, 201);
	it_resp_free(&r);
}

/* new: {load_receipt_id, relevance} with input_refs built from the receipt's loaded inputs */
static json_t *receipt_relevance(const char *lrc, const json_t *loaded, const char *const *labels,
				 long long decisive, long long supporting, long long unused,
				 long long unknown)
{
	json_t *refs = json_array();
	size_t i;
	const json_t *li;
	json_array_foreach (loaded, i, li) {
		json_t *ref = json_object();
		json_object_set_new(ref, "input_id", json_string(it_json_str(li, "input_id")));
		json_object_set_new(ref, "delivered_hash",
				    json_string(it_json_str(li, "delivered_hash")));
		json_object_set_new(ref, "relevance", json_string(labels[i]));
		json_array_append_new(refs, ref);
	}
	json_t *rel =
	    json_pack("{sI sI sI sI so}", "decisive_count", (json_int_t)decisive,
		      "supporting_count", (json_int_t)supporting, "unused_count",
		      (json_int_t)unused, "unknown_count", (json_int_t)unknown, "input_refs", refs);
	return json_pack("{ss so}", "load_receipt_id", lrc, "relevance", rel);
}

static void test_relevance_load_receipt(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-lrc");
	char *writer = token_for(t.name, "memory:write", "it-mem-writer");
	char *mreader = token_for(t.name, "memory:read", "it-mem-reader");
	create_note(writer, "qzenvrel qzenvrel alpha context note about the router");
	create_note(writer, "qzenvrel beta context note about the tests");

	struct it_resp r;
	send_json("POST", "/v1/memory/context", mreader, json_pack("{ss}", "query", "qzenvrel"),
		  NULL, &r);
	IT_STATUS(&r, 200);
	const json_t *rc = json_object_get(r.json, "load_receipt");
	IT_CHECK(json_is_object(rc), "no load_receipt: %s", r.body);
	char lrc[ID_MAX];
	copy_str(lrc, sizeof lrc, it_json_str(rc, "receipt_id"));
	json_t *loaded = json_deep_copy(json_object_get(rc, "loaded_inputs"));
	IT_CHECK(json_array_size(loaded) == 2 && it_json_int(rc, "selected_count", -1) == 2 &&
		     it_json_int(rc, "delivered_count", -1) == 2,
		 "expected two selected and delivered inputs: %s", r.body);
	it_resp_free(&r);
	const char *labels[] = {"decisive", "supporting"};

	/* joined, accounted → MATCH (envelopes:read suffices) */
	relevance_post(t.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "relevance joined to the stored load receipt");
	for (size_t i = 0; i < N_REL_CHECKS; i++)
		IT_CHECK(it_json_str_is(check_of(r.json, rel_checks[i].check), "result", "pass"),
			 "joined relevance: check %s does not pass: %s", rel_checks[i].check,
			 r.body);
	it_resp_free(&r);

	/* a delivered_hash that the receipt does not hold → unjoinable_relevance */
	json_t *b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	char h[72];
	hash_of(0xdeadULL, h);
	set_new(b, "relevance.input_refs[1].delivered_hash", json_string(h));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "a wrong delivered_hash against the receipt");
	it_resp_free(&r);
	/* an input id the receipt never loaded */
	b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	set_new(b, "relevance.input_refs[0].input_id", json_string("ctx_in_999"));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("unjoinable_relevance"), true,
		   "an input_id the receipt never loaded");
	it_resp_free(&r);
	/* the counts come from the receipt: 3 accounted for 2 selected */
	relevance_post(t.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 1, 0), &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("relevance_accounting_missing"), true,
		   "buckets that do not sum to the receipt's selected_count");
	it_resp_free(&r);
	/* raw content on an input_ref */
	b = receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0);
	set_new(b, "relevance.input_refs[0].content", json_string("qzenvrel alpha raw"));
	relevance_post(t.reader, b, &r);
	EXPECT_REL(&r, "UNVERIFIABLE", CODES("raw_context_leak"), true,
		   "raw content in a receipt-joined relevance");
	it_resp_free(&r);

	/* an unknown receipt → 404 */
	relevance_post(t.reader, receipt_relevance(UNKNOWN_LRC, loaded, labels, 1, 1, 0, 0), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	/* another tenant's receipt → 404 */
	relevance_post(ta.reader, receipt_relevance(lrc, loaded, labels, 1, 1, 0, 0), &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* shapes: neither form, a relevance that is not an object → 422 */
	relevance_post(t.reader, json_object(), &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	relevance_post(t.reader, json_pack("{ss si}", "load_receipt_id", lrc, "relevance", 5), &r);
	expect_422(&r, "validation_failed", "relevance", "relevance is a number");
	it_resp_free(&r);
	relevance_post(t.reader, json_pack("{si}", "context_relevance", 5), &r);
	expect_422(&r, "validation_failed", "context_relevance", "context_relevance is a number");
	it_resp_free(&r);
	relevance_post(
	    t.reader, json_pack("{so ss}", "context_relevance", relevance_copy(), "colour", "blue"),
	    &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);

	json_decref(loaded);
	free(writer);
	free(mreader);
	tenant_free(&t);
}

/* ================================================================ snapshot CAS */

static void test_snapshot_cas(void **state)
{
	(void)state;
	char ws[ID_MAX], path[256];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct it_resp r;

	/* never written: GET 404, a number → 409 with current_revision null */
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	snap_put(ta.rw, ws, snap_body(3, happy_root(), happy_head(), happy_files()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "409 on a never-written workspace without current_revision null: %s", r.body);
	it_resp_free(&r);

	/* If-Match on a never-written workspace: "1" fails, nothing is written */
	const char *im1_new[] = {"If-Match: \"1\"", NULL};
	snap_put(ta.rw, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), im1_new,
		 &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* first write: null → revision 1 */
	snap_put(ta.rw, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, false);
	it_resp_free(&r);

	/* stale: null again, 2, 7 */
	long long stale[] = {EXP_NULL, 2, 7};
	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
		snap_put(ta.rw, ws, snap_body(stale[i], happy_root(), "x", json_array()), NULL, &r);
		IT_PROBLEM(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
			 "current_revision is not 1: %s", r.body);
		it_resp_free(&r);
	}

	/* GET: the shape + files */
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, true);
	json_t *want = happy_files();
	size_t i;
	const json_t *f;
	json_array_foreach (want, i, f) {
		bool found = false;
		size_t k;
		const json_t *g;
		json_array_foreach (json_object_get(r.json, "files"), k, g)
			found |= it_json_str_is(g, "path", it_json_str(f, "path")) &&
				 it_json_str_is(g, "content_hash", it_json_str(f, "content_hash"));
		IT_CHECK(found, "GET snapshot lacks %s: %s", it_json_str(f, "path"), r.body);
	}
	json_decref(want);
	it_resp_free(&r);

	/* revision 1 → 2 with three files */
	json_t *three = happy_files();
	char h[72];
	hash_of(7, h);
	json_array_append_new(three, json_pack("{ss ss}", "path", "README.md", "content_hash", h));
	snap_ok(ta.rw, ws, 1, happy_root(), "head-2", three);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 2, happy_root(), "head-2", 3, true);
	it_resp_free(&r);

	/* If-Match: wrong → 412, nothing changes; right → 200 */
	const char *im1[] = {"If-Match: \"1\"", NULL};
	snap_put(ta.rw, ws, snap_body(2, happy_root(), "head-x", json_array()), im1, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);
	const char *im2[] = {"If-Match: \"2\"", NULL};
	snap_put(ta.rw, ws, snap_body(2, happy_root(), "head-3", json_array()), im2, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 3, happy_root(), "head-3", 0, false);
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 3, happy_root(), "head-3", 0, true);
	it_resp_free(&r);

	/* expected_revision is required */
	json_t *b = snap_body(3, happy_root(), "h", json_array());
	json_object_del(b, "expected_revision");
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision missing");
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "workspace", ws) == 3,
		 "three snapshot writes, not three audit records");
}

/* ================================================================ limits: snapshots */

/* a short unique path for file i: all 1-char names, then 2, then 3 (base 62) */
static void short_path(size_t i, char out[8])
{
	static const char al[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t len = 1, span = 62;
	while (i >= span) {
		i -= span;
		len++;
		span *= 62;
	}
	out[len] = '\0';
	for (size_t k = len; k > 0; k--) {
		out[k - 1] = al[i % 62];
		i /= 62;
	}
}

/* new: n files with short unique paths (the happy path's two first, with their hashes) */
static json_t *many_files(size_t n)
{
	json_t *files = happy_files();
	char h[72], p[8];
	hash_of(99, h);
	for (size_t i = 2; i < n; i++) {
		short_path(i, p);
		json_array_append_new(files, json_pack("{ss ss}", "path", p, "content_hash", h));
	}
	return files;
}

static void test_limits_snapshot(void **state)
{
	(void)state;
	char ws[ID_MAX];
	struct it_resp r;

	/* 10000 files pass (the body stays under the default 1 MiB) and serve freshness */
	ws_fresh(ws);
	json_t *b = snap_body(EXP_NULL, happy_root(), happy_head(), many_files(MAX_FILES));
	char *text = dump(b);
	json_decref(b);
	IT_CHECK(strlen(text) < DEFAULT_MAX_BODY, "the 10000-file body is %zu bytes", strlen(text));
	char path[256];
	snap_path(ws, path, sizeof path);
	it_request(&srv, "PUT", path, ta.rw, text, NULL, &r);
	free(text);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), MAX_FILES, false);
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), MAX_FILES, true);
	it_resp_free(&r);
	POST_EXPECT(ws, happy_copy(), "MATCH", NO_CODES, true,
		    "the happy path against a 10000-file snapshot");

	/* 10001 → 422, nothing written */
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	b = snap_body(EXP_NULL, happy_root(), happy_head(), many_files(MAX_FILES + 1));
	text = dump(b);
	json_decref(b);
	IT_CHECK(strlen(text) < DEFAULT_MAX_BODY, "the 10001-file body is %zu bytes", strlen(text));
	it_request(&srv, "PUT", path, ta.rw, text, NULL, &r);
	free(text);
	expect_422(&r, "validation_failed", "files", "10001 files");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	/* field bounds */
	char *p1024 = text_of("src/", 1024), *p1025 = text_of("src/", 1025);
	char *g256 = text_of("head-", 256), *g257 = text_of("head-", 257);
	char h[72];
	hash_of(5, h);
	struct {
		const char *what;
		json_t *files;
		const char *root;
		const char *head;
		const char *field; /* NULL: passes */
	} cases[] = {
	    {"path of 1024 bytes", json_pack("[{ss ss}]", "path", p1024, "content_hash", h),
	     happy_root(), "h", NULL},
	    {"path of 1025 bytes", json_pack("[{ss ss}]", "path", p1025, "content_hash", h),
	     happy_root(), "h", "files[0].path"},
	    {"empty path", json_pack("[{ss ss}]", "path", "", "content_hash", h), happy_root(), "h",
	     "files[0].path"},
	    {"duplicate paths",
	     json_pack("[{ss ss} {ss ss}]", "path", "a.c", "content_hash", h, "path", "a.c",
		       "content_hash", h),
	     happy_root(), "h", "files"},
	    {"content_hash not sha256",
	     json_pack("[{ss ss}]", "path", "a.c", "content_hash", "sha256:abc"), happy_root(), "h",
	     "files[0].content_hash"},
	    {"content_hash upper-case",
	     json_pack("[{ss ss}]", "path", "a.c", "content_hash",
		       "sha256:5E3F5DF0D7D6B4F0B9BDE774C0F94B71A71C8CCF8B7C59E26A4DFAD1B59F5101"),
	     happy_root(), "h", "files[0].content_hash"},
	    {"content_hash missing", json_pack("[{ss}]", "path", "a.c"), happy_root(), "h",
	     "files[0].content_hash"},
	    {"path not a string", json_pack("[{si ss}]", "path", 5, "content_hash", h),
	     happy_root(), "h", "files[0].path"},
	    {"a file is not an object", json_pack("[s]", "a.c"), happy_root(), "h", "files[0]"},
	    {"files not an array", json_pack("{}"), happy_root(), "h", "files"},
	    {"root_hash malformed", json_array(), "sha256:12", "h", "root_hash"},
	    {"git_head of 256 bytes", json_array(), happy_root(), g256, NULL},
	    {"git_head of 257 bytes", json_array(), happy_root(), g257, "git_head"},
	    {"empty git_head", json_array(), happy_root(), "", "git_head"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ws_fresh(ws);
		snap_put(ta.rw, ws,
			 snap_body(EXP_NULL, cases[i].root, cases[i].head, cases[i].files), NULL,
			 &r);
		if (!cases[i].field) {
			if (r.status != 200)
				fprintf(stderr, "  case: %s\n", cases[i].what);
			IT_STATUS(&r, 200);
		} else {
			/* duplicates: the list, or the repeated entry */
			expect_422x(&r, "validation_failed", cases[i].field,
				    strcmp(cases[i].what, "duplicate paths") != 0, cases[i].what);
		}
		it_resp_free(&r);
	}
	free(p1024);
	free(p1025);
	free(g256);
	free(g257);

	/* types, unknown members, the path parameter */
	ws_fresh(ws);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "expected_revision", json_string("1"));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision a string");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "expected_revision", json_integer(0));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "expected_revision", "expected_revision 0");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_set_new(b, "colour", json_string("blue"));
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "unknown_field", "colour", "an unknown member");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h",
		      json_pack("[{ss ss ss}]", "path", "a", "content_hash", h, "mode", "0644"));
	snap_put(ta.rw, ws, b, NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	b = snap_body(EXP_NULL, happy_root(), "h", json_array());
	json_object_del(b, "root_hash");
	snap_put(ta.rw, ws, b, NULL, &r);
	expect_422(&r, "validation_failed", "root_hash", "root_hash missing");
	it_resp_free(&r);
	snap_put(ta.rw, "-bad-ws", snap_body(EXP_NULL, happy_root(), "h", json_array()), NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "a workspace_id off its pattern");
	it_resp_free(&r);
	char path2[256];
	snap_path(ws, path2, sizeof path2);
	it_request(&srv, "PUT", path2, ta.rw, "[1]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "PUT", path2, ta.rw, "{\"files\":", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);
	get(path2, ta.reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

/* ================================================================ limits: envelopes */

/* new: a source ref {id, path, range, content_hash, expansion_command} */
static json_t *src_ref(const char *id, const char *path, const char *range, const char *hash,
		       const char *cmd)
{
	return json_pack("{ss ss ss ss ss}", "id", id, "path", path, "range", range, "content_hash",
			 hash, "expansion_command", cmd);
}

/* POST an envelope that must be rejected with 422 naming `field` */
static void expect_rejected(json_t *env, const char *field, const char *what)
{
	struct it_resp r;
	env_post(ta.rw, ws_match, env, &r);
	expect_422(&r, "validation_failed", field, what);
	it_resp_free(&r);
}

static void test_limits_envelope(void **state)
{
	(void)state;
	size_t audit0 = audit_count(ta.admin, "envelope", NULL);
	size_t accepted = 0;
	char h[72], id[160];
	json_t *e, *arr;

	/* envelope_id: required, a string of 1..128 */
	char *id128 = text_of("ctxenv_", 128), *id129 = text_of("ctxenv_", 129);
	e = happy_copy();
	set_new(e, "envelope_id", json_string(id128));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "envelope_id of 128");
	accepted++;
	e = happy_copy();
	set_new(e, "envelope_id", json_string(id129));
	expect_rejected(e, "envelope.envelope_id", "envelope_id of 129");
	e = happy_copy();
	set_new(e, "envelope_id", json_string(""));
	expect_rejected(e, "envelope.envelope_id", "empty envelope_id");
	e = happy_copy();
	del(e, "envelope_id");
	expect_rejected(e, "envelope.envelope_id", "envelope_id missing");
	e = happy_copy();
	set_new(e, "envelope_id", json_integer(7));
	expect_rejected(e, "envelope.envelope_id", "envelope_id a number");
	free(id128);
	free(id129);

	/* source_refs: 256 pass (unlisted paths: the root matches) / 257 */
	e = happy_copy();
	arr = json_object_get(e, "source_refs");
	for (size_t i = 2; i < MAX_SOURCE_REFS; i++) {
		char p[64];
		snprintf(id, sizeof id, "src_x%03zu", i);
		snprintf(p, sizeof p, "lib/extra/file%03zu.c", i);
		hash_of(1000 + i, h);
		json_array_append_new(arr, src_ref(id, p, "1-2", h, "index context --focus x"));
	}
	json_t *e257 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "256 source refs");
	accepted++;
	hash_of(9999, h);
	json_array_append_new(json_object_get(e257, "source_refs"),
			      src_ref("src_x257", "lib/extra/x257.c", "1-2", h, "cmd"));
	expect_rejected(e257, "envelope.source_refs", "257 source refs");

	/* claims: 256 / 257 */
	e = happy_copy();
	arr = json_object_get(json_object_get(e, "summary"), "claims");
	for (size_t i = 2; i < MAX_CLAIMS; i++)
		json_array_append_new(arr, json_pack("{ss s[s]}", "text", "A short claim.",
						     "source_ref_ids", "src_001"));
	json_t *c257 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "256 claims");
	accepted++;
	json_array_append_new(
	    json_object_get(json_object_get(c257, "summary"), "claims"),
	    json_pack("{ss s[s]}", "text", "One too many.", "source_ref_ids", "src_001"));
	expect_rejected(c257, "envelope.summary.claims", "257 claims");

	/* claim text: 4000 / 4001 bytes, ASCII and two-byte characters */
	char *t4000 = text_of("claim ", MAX_CLAIM_BYTES), *t4001 = text_of("claim ", 4001);
	char *u4000 = repeat_utf8("é", 2000, ""), *u4001 = repeat_utf8("é", 2000, "x");
	const char *ok_texts[] = {t4000, u4000};
	const char *bad_texts[] = {t4001, u4001};
	for (size_t i = 0; i < 2; i++) {
		e = happy_copy();
		set_new(e, "summary.claims[0].text", json_string(ok_texts[i]));
		POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true,
			    i ? "claim text of 4000 bytes (2000 two-byte characters)"
			      : "claim text of 4000 bytes");
		accepted++;
		e = happy_copy();
		set_new(e, "summary.claims[0].text", json_string(bad_texts[i]));
		expect_rejected(e, "envelope.summary.claims[0].text",
				i ? "claim text of 4001 bytes (2001 characters)"
				  : "claim text of 4001 bytes");
	}
	free(t4000);
	free(t4001);
	free(u4000);
	free(u4001);

	/* source_ref_ids: 32 / 33 */
	e = happy_copy();
	arr = json_object_get(
	    json_array_get(json_object_get(json_object_get(e, "summary"), "claims"), 0),
	    "source_ref_ids");
	for (size_t i = 1; i < MAX_CLAIM_REFS; i++)
		json_array_append_new(arr, json_string(i % 2 ? "src_002" : "src_001"));
	json_t *r33 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "32 source_ref_ids in a claim");
	accepted++;
	json_array_append_new(
	    json_object_get(
		json_array_get(json_object_get(json_object_get(r33, "summary"), "claims"), 0),
		"source_ref_ids"),
	    json_string("src_001"));
	expect_rejected(r33, "envelope.summary.claims[0].source_ref_ids",
			"33 source_ref_ids in a claim");

	/* receipt_chain: 64 / 65 */
	e = happy_copy();
	arr = json_object_get(e, "receipt_chain");
	for (size_t i = 3; i < MAX_RECEIPTS; i++) {
		hash_of(5000 + i, h);
		json_array_append_new(arr, json_pack("{ss ss ss}", "tool", "crucible", "action",
						     "assess", "receipt_hash", h));
	}
	json_t *rc65 = json_deep_copy(e);
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "64 receipts");
	accepted++;
	hash_of(6000, h);
	json_array_append_new(json_object_get(rc65, "receipt_chain"),
			      json_pack("{ss ss}", "tool", "crucible", "receipt_hash", h));
	expect_rejected(rc65, "envelope.receipt_chain", "65 receipts");

	/* source ref strings at their edges: an extra, uncited, unlisted ref (root matches) */
	char *s128 = text_of("src_", 128), *s129 = text_of("src_", 129);
	char *p1024 = text_of("lib/", 1024), *p1025 = text_of("lib/", 1025);
	char *r64 = text_of("1-", 64), *r65 = text_of("1-", 65);
	char *x1024 = text_of("index context --focus ", 1024),
	     *x1025 = text_of("index context --focus ", 1025);
	char *h80 = text_of("sha256:", 80), *h81 = text_of("sha256:", 81);
	hash_of(77, h);
	struct {
		const char *what;
		const char *id, *path, *range, *hash, *cmd;
		const char *field; /* NULL: passes */
	} refs[] = {
	    {"id of 128", s128, "lib/a.c", "1-2", h, "cmd", NULL},
	    {"id of 129", s129, "lib/a.c", "1-2", h, "cmd", "envelope.source_refs[2].id"},
	    {"path of 1024", "src_e1", p1024, "1-2", h, "cmd", NULL},
	    {"path of 1025", "src_e2", p1025, "1-2", h, "cmd", "envelope.source_refs[2].path"},
	    {"range of 64", "src_e3", "lib/a.c", r64, h, "cmd", NULL},
	    {"range of 65", "src_e4", "lib/a.c", r65, h, "cmd", "envelope.source_refs[2].range"},
	    {"expansion_command of 1024", "src_e5", "lib/a.c", "1-2", h, x1024, NULL},
	    {"expansion_command of 1025", "src_e6", "lib/a.c", "1-2", h, x1025,
	     "envelope.source_refs[2].expansion_command"},
	    {"content_hash of 81", "src_e8", "lib/a.c", "1-2", h81, "cmd",
	     "envelope.source_refs[2].content_hash"},
	};
	for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
		e = happy_copy();
		json_array_append_new(
		    json_object_get(e, "source_refs"),
		    src_ref(refs[i].id, refs[i].path, refs[i].range, refs[i].hash, refs[i].cmd));
		if (!refs[i].field) {
			POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, refs[i].what);
			accepted++;
		} else {
			expect_rejected(e, refs[i].field, refs[i].what);
		}
	}
	/* an 80-byte content_hash is well-formed but not a sha256 ref: a finding */
	e = happy_copy();
	json_array_append_new(json_object_get(e, "source_refs"),
			      src_ref("src_e7", "lib/a.c", "1-2", h80, "cmd"));
	POST_EXPECT(ws_match, e, "UNVERIFIABLE", CODES("stale_context"), true,
		    "content_hash of 80 bytes that is no sha256 ref");
	accepted++;
	free(s128);
	free(s129);
	free(p1024);
	free(p1025);
	free(r64);
	free(r65);
	free(x1024);
	free(x1025);
	free(h80);
	free(h81);

	/* wrong types → 422 */
	struct {
		const char *path;
		const char *value; /* JSON */
		const char *field; /* errors[] names it; NULL: envelope.<path> */
	} wrong[] = {
	    {"source_refs", "{}", NULL},
	    {"source_refs", "\"src_001\"", NULL},
	    {"source_refs[0]", "\"src_001\"", NULL},
	    {"source_refs[0].path", "5", NULL},
	    {"source_refs[0].content_hash", "null", NULL},
	    {"source_refs[1].expansion_command", "[\"index\"]", NULL},
	    {"context_budget.max_input_tokens", "\"200000\"", NULL},
	    {"context_budget.target_packet_tokens", "4000.5", NULL},
	    {"context_budget.reserved_response_tokens", "null", NULL},
	    {"context_budget", "[]", NULL},
	    {"workspace", "\"ws\"", NULL},
	    {"compression", "[]", NULL},
	    {"summary.claims", "{}", NULL},
	    {"summary.claims[0]", "\"claim\"", NULL},
	    {"summary.claims[0].text", "5", NULL},
	    {"summary.claims[0].source_ref_ids", "\"src_001\"", NULL},
	    {"summary.claims[0].source_ref_ids", "[1]",
	     "envelope.summary.claims[0].source_ref_ids[0]"},
	    {"receipt_chain", "{}", NULL},
	    {"receipt_chain[0]", "\"index\"", NULL},
	    {"receipt_chain[0].tool", "5", NULL},
	    {"quality_gates", "[]", NULL},
	    {"quality_gates.readability", "true", "envelope.quality_gates[0]"}, /* by position */
	    {"failure_code", "5", NULL},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		e = happy_copy();
		json_error_t err;
		json_t *v = json_loads(wrong[i].value, JSON_DECODE_ANY, &err);
		IT_CHECK(v != NULL, "bad test value %s", wrong[i].value);
		set_new(e, wrong[i].path, v);
		char what[200], field[200];
		snprintf(what, sizeof what, "%s = %s", wrong[i].path, wrong[i].value);
		snprintf(field, sizeof field, "envelope.%s", wrong[i].path);
		expect_rejected(e, wrong[i].field ? wrong[i].field : field, what);
	}

	/* unknown members inside the envelope are the producer's business: accepted */
	e = happy_copy();
	set_new(e, "x_producer", json_pack("{ss}", "note", "anything"));
	set_new(e, "workspace.branch", json_string("main"));
	set_new(e, "source_refs[0].language", json_string("typescript"));
	set_new(e, "summary.claims[0].confidence", json_real(0.9));
	set_new(e, "receipt_chain[0].at", json_string("2026-06-28T12:00:00Z"));
	set_new(e, "quality_gates.security", json_string("MATCH"));
	set_new(e, "context_budget.note", json_string("not an integer, but unknown"));
	POST_EXPECT(ws_match, e, "MATCH", NO_CODES, true, "unknown members inside the envelope");
	accepted++;

	/* the request body itself is strict */
	struct it_resp r;
	json_t *b = env_body(ws_match, happy_copy());
	json_object_set_new(b, "colour", json_string("blue"));
	send_json("POST", "/v1/envelopes", ta.rw, b, NULL, &r);
	expect_422(&r, "unknown_field", "colour", "an unknown member of the request");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, json_pack("{ss}", "workspace_id", ws_match), NULL,
		  &r);
	expect_422(&r, "validation_failed", "envelope", "envelope missing");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, json_pack("{s[i]}", "envelope", 1), NULL, &r);
	expect_422(&r, "validation_failed", "envelope", "envelope an array");
	it_resp_free(&r);
	send_json("POST", "/v1/envelopes", ta.rw, env_body("-bad-ws", happy_copy()), NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "workspace_id off its pattern");
	it_resp_free(&r);
	b = env_body(NULL, happy_copy());
	json_object_set_new(b, "workspace_id", json_integer(5));
	send_json("POST", "/v1/envelopes", ta.rw, b, NULL, &r);
	expect_422(&r, "validation_failed", "workspace_id", "workspace_id a number");
	it_resp_free(&r);
	/* an envelope over the body limit (1 MiB by default) → 413 */
	e = happy_copy();
	char *big = text_of("claim ", MAX_CLAIM_BYTES);
	arr = json_object_get(json_object_get(e, "summary"), "claims");
	for (size_t i = 0; i < 270; i++)
		json_array_append_new(
		    arr, json_pack("{ss s[s]}", "text", big, "source_ref_ids", "src_001"));
	free(big);
	char *huge = dump_new(env_body(ws_match, e));
	IT_CHECK(strlen(huge) > DEFAULT_MAX_BODY, "the oversized body is only %zu bytes",
		 strlen(huge));
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, huge, NULL, &r);
	IT_PROBLEM(&r, 413, "payload_too_large");
	it_resp_free(&r);
	free(huge);
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, "[1]", NULL, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, "{\"envelope\": {", NULL, &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* only the accepted ones were stored and audited */
	IT_CHECK(audit_count(ta.admin, "envelope", NULL) == audit0 + accepted,
		 "expected %zu new envelope audit records", accepted);
}

/* ================================================================ limits: relevance */

/* new: a relevance document with n loaded inputs and n input_refs (all "unknown") */
static json_t *relevance_n(size_t n_loaded, size_t n_refs)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "selection",
			    json_pack("{sI sI}", "selected_count", (json_int_t)n_refs,
				      "delivered_count", (json_int_t)n_loaded));
	json_t *loaded = json_array(), *refs = json_array();
	char id[32], sh[72], dh[72];
	for (size_t i = 0; i < n_loaded; i++) {
		snprintf(id, sizeof id, "ctx_in_%04zu", i);
		hash_of(0x100000 + i, sh);
		hash_of(0x200000 + i, dh);
		json_array_append_new(loaded,
				      json_pack("{ss ss ss sI}", "input_id", id, "source_hash", sh,
						"delivered_hash", dh, "rank", (json_int_t)(i + 1)));
		if (i < n_refs)
			json_array_append_new(refs, json_pack("{ss ss ss}", "input_id", id,
							      "delivered_hash", dh, "relevance",
							      "unknown"));
	}
	json_object_set_new(doc, "loaded_inputs", loaded);
	json_object_set_new(doc, "relevance",
			    json_pack("{si si si sI so}", "decisive_count", 0, "supporting_count",
				      0, "unused_count", 0, "unknown_count", (json_int_t)n_refs,
				      "input_refs", refs));
	return doc;
}

static void test_limits_relevance(void **state)
{
	(void)state;
	struct it_resp r;
	REL_EXPECT(relevance_n(MAX_REL_INPUTS, MAX_REL_INPUTS), "MATCH", NO_CODES, true,
		   "256 loaded inputs, 256 input_refs");

	relevance_doc(ta.reader, relevance_n(MAX_REL_INPUTS + 1, MAX_REL_INPUTS), &r);
	expect_422(&r, "validation_failed", "context_relevance.loaded_inputs", "257 loaded inputs");
	it_resp_free(&r);

	/* 257 input_refs over 256 loaded inputs (one repeated) */
	json_t *doc = relevance_n(MAX_REL_INPUTS, MAX_REL_INPUTS);
	json_t *refs = json_object_get(json_object_get(doc, "relevance"), "input_refs");
	json_array_append_new(refs, json_deep_copy(json_array_get(refs, 0)));
	relevance_doc(ta.reader, doc, &r);
	expect_422(&r, "validation_failed", "context_relevance.relevance.input_refs",
		   "257 input_refs");
	it_resp_free(&r);

	struct {
		const char *path;
		const char *value;
	} wrong[] = {
	    {"selection.selected_count", "\"3\""},
	    {"selection.delivered_count", "3.5"},
	    {"relevance.decisive_count", "\"1\""},
	    {"relevance.unknown_count", "0.5"},
	    {"loaded_inputs", "{}"},
	    {"relevance.input_refs", "\"ctx_in_001\""},
	    {"relevance", "[]"},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		doc = relevance_copy();
		json_error_t err;
		json_t *v = json_loads(wrong[i].value, JSON_DECODE_ANY, &err);
		IT_CHECK(v != NULL, "bad test value");
		set_new(doc, wrong[i].path, v);
		relevance_doc(ta.reader, doc, &r);
		char what[160];
		snprintf(what, sizeof what, "context_relevance.%s = %s", wrong[i].path,
			 wrong[i].value);
		char field[160];
		snprintf(field, sizeof field, "context_relevance.%s", wrong[i].path);
		expect_422(&r, "validation_failed", field, what);
		it_resp_free(&r);
	}
}

/* ================================================================ races */

struct racer {
	const char *method;
	const char *path;
	const char *token;
	const char *body;
	long status;
	long long revision;
	long long current_revision;
	char code[64];
};

static void *race_one(void *arg)
{
	struct racer *rc = arg;
	struct it_resp r;
	it_request(&srv, rc->method, rc->path, rc->token, rc->body, NULL, &r);
	rc->status = r.status;
	rc->revision = it_json_int(r.json, "revision", -1);
	rc->current_revision = it_json_int(r.json, "current_revision", -1);
	const char *code = it_json_str(r.json, "code");
	snprintf(rc->code, sizeof rc->code, "%s", code ? code : "");
	it_resp_free(&r);
	return NULL;
}

static void race(struct racer *rcs, size_t n)
{
	pthread_t th[RACERS];
	IT_CHECK(n <= RACERS, "too many racers");
	for (size_t i = 0; i < n; i++)
		IT_CHECK(pthread_create(&th[i], NULL, race_one, &rcs[i]) == 0, "pthread_create");
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* exactly one 200 at revision `win`, every other racer 409 stale_revision with current `win` */
static void expect_one_winner(const struct racer *rcs, size_t n, long long win, const char *what)
{
	size_t winners = 0;
	for (size_t i = 0; i < n; i++) {
		if (rcs[i].status == 200) {
			winners++;
			IT_CHECK(rcs[i].revision == win,
				 "%s: the winner got revision %lld, not %lld", what,
				 rcs[i].revision, win);
		} else {
			IT_CHECK(rcs[i].status == 409 &&
				     strcmp(rcs[i].code, "stale_revision") == 0 &&
				     rcs[i].current_revision == win,
				 "%s: racer %zu got %ld %s (current_revision %lld), expected 409 "
				 "stale_revision with current_revision %lld",
				 what, i, rcs[i].status, rcs[i].code, rcs[i].current_revision, win);
		}
	}
	IT_CHECK(winners == 1, "%s: %zu winners", what, winners);
}

static void test_races(void **state)
{
	(void)state;
	char ws[ID_MAX], path[256], id[ID_MAX];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct racer rcs[RACERS];
	char *bodies[RACERS];

	/* the first write of a workspace: one wins, the others see revision 1 */
	for (size_t i = 0; i < RACERS; i++) {
		char head[32];
		snprintf(head, sizeof head, "race-head-%zu", i);
		bodies[i] =
		    dump_new(json_pack("{sn ss ss so}", "expected_revision", "root_hash",
				       happy_root(), "git_head", head, "files", happy_files()));
		rcs[i] = (struct racer){"PUT", path, ta.rw, bodies[i], 0, 0, 0, ""};
	}
	race(rcs, RACERS);
	expect_one_winner(rcs, RACERS, 1, "racing first snapshot writes");
	for (size_t i = 0; i < RACERS; i++)
		free(bodies[i]);

	/* the next write, all from revision 1 */
	for (size_t i = 0; i < RACERS; i++) {
		char head[32];
		snprintf(head, sizeof head, "race-2-head-%zu", i);
		bodies[i] =
		    dump_new(json_pack("{si ss ss so}", "expected_revision", 1, "root_hash",
				       happy_root(), "git_head", head, "files", happy_files()));
		rcs[i] = (struct racer){"PUT", path, ta.rw, bodies[i], 0, 0, 0, ""};
	}
	race(rcs, RACERS);
	expect_one_winner(rcs, RACERS, 2, "racing snapshot writes from revision 1");
	for (size_t i = 0; i < RACERS; i++)
		free(bodies[i]);
	IT_CHECK(audit_count(ta.admin, "workspace", ws) == 2,
		 "two winning snapshot writes, not two audit records");

	/* concurrent verifies: each one a new revision, none lost */
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "the raced envelope");
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	char vpath[128];
	snprintf(vpath, sizeof vpath, "/v1/envelopes/%s/verify", id);
	for (size_t i = 0; i < RACERS; i++)
		rcs[i] = (struct racer){"POST", vpath, ta.rw, "{}", 0, 0, 0, ""};
	race(rcs, RACERS);
	bool seen[RACERS + 2] = {false};
	for (size_t i = 0; i < RACERS; i++) {
		IT_CHECK(rcs[i].status == 200, "concurrent verify %zu: status %ld %s", i,
			 rcs[i].status, rcs[i].code);
		long long rev = rcs[i].revision;
		IT_CHECK(rev >= 2 && rev <= RACERS + 1 && !seen[rev],
			 "concurrent verifies: revision %lld twice or out of 2..%d", rev,
			 RACERS + 1);
		seen[rev] = true;
	}
	env_get(ta.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == RACERS + 1,
		 "after %d verifies the revision is not %d: %s", RACERS, RACERS + 1, r.body);
	expect_etag(&r, RACERS + 1);
	it_resp_free(&r);
	IT_CHECK(audit_count(ta.admin, "envelope", id) == RACERS + 1,
		 "the envelope's audit does not hold 1 + %d records", RACERS);
	char apath[256];
	snprintf(apath, sizeof apath, "/v1/audit/verify?resource_type=envelope&resource_id=%s", id);
	get(apath, ta.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == RACERS + 1,
		 "the envelope's audit chain after concurrent verifies: %s", r.body);
	it_resp_free(&r);
}

/* ================================================================ protocol */

static void test_protocol(void **state)
{
	(void)state;
	struct it_resp r;
	char path[256];
	env_post(ta.rw, ws_match, happy_copy(), &r);
	IT_STATUS(&r, 201);
	snprintf(path, sizeof path, "/v1/envelopes/%s", it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);

	struct {
		const char *method;
		const char *path;
	} wrong[] = {
	    {"DELETE", path},
	    {"PUT", path},
	    {"GET", "/v1/envelopes"},
	    {"GET", "/v1/context/relevance-checks"},
	    {"DELETE", "/v1/workspaces/w1/snapshot"},
	    {"POST", "/v1/workspaces/w1/snapshot"},
	};
	for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
		it_request(&srv, wrong[i].method, wrong[i].path, ta.admin,
			   strcmp(wrong[i].method, "GET") == 0 ? NULL : "{}", NULL, &r);
		IT_PROBLEM(&r, 405, "method_not_allowed");
		it_resp_free(&r);
	}
	const char *text_ct[] = {"Content-Type: text/plain", NULL};
	char *body = dump_new(env_body(ws_match, happy_copy()));
	it_request(&srv, "POST", "/v1/envelopes", ta.rw, body, text_ct, &r);
	IT_PROBLEM(&r, 415, "unsupported_media_type");
	it_resp_free(&r);
	free(body);
}

/* ================================================================ isolation */

static void test_isolation(void **state)
{
	(void)state;
	struct tenant tb;
	tenant_new(&tb, "env-b");
	char ws[ID_MAX], id[ID_MAX], path[256];
	ws_fresh(ws);
	snap_ok(ta.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	struct it_resp r;
	env_post(ta.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "tenant A's envelope");
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);

	const char *b_tokens[] = {tb.admin, tb.rw};
	for (size_t i = 0; i < 2; i++) {
		env_get(b_tokens[i], id, &r);
		IT_PROBLEM(&r, 404, "not_found");
		IT_CHECK(!strstr(r.body, "MATCH"), "the 404 reveals the verdict: %s", r.body);
		it_resp_free(&r);
		env_verify(b_tokens[i], id, &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
		snap_path(ws, path, sizeof path);
		get(path, b_tokens[i], &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
		env_post(b_tokens[i], ws, happy_copy(), &r);
		IT_PROBLEM(&r, 404, "not_found");
		it_resp_free(&r);
	}
	/* B's CAS sees a never-written workspace: a number → 409 with null */
	snap_put(tb.rw, ws, snap_body(1, happy_root(), "b", json_array()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_has_null(r.json, "current_revision"),
		 "B learns A's revision of the workspace: %s", r.body);
	it_resp_free(&r);
	/* B may use the same id for its own workspace; A's stays as it was */
	char other_root[72];
	hash_of(0xb0b0ULL, other_root);
	snap_ok(tb.rw, ws, EXP_NULL, other_root, "b-head", json_array());
	env_post(tb.rw, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "UNVERIFIABLE", CODES("stale_context"), true,
		   "B's envelope against B's own workspace of the same id");
	it_resp_free(&r);
	get(path, ta.reader, &r);
	IT_STATUS(&r, 200);
	check_snap_answer(&r, ws, 1, happy_root(), happy_head(), 2, true);
	it_resp_free(&r);
	env_verify(ta.rw, id, &r);
	expect_outcome_at(&r, ENVELOPE, 200, "MATCH", NO_CODES, true, NULL,
			  "A's verify after B wrote its own workspace of the same id", __FILE__,
			  __LINE__);
	it_resp_free(&r);
	/* B's audit does not show A's envelope or workspace */
	IT_CHECK(audit_count(tb.admin, "envelope", id) == 0, "B reads A's envelope audit");
	IT_CHECK(audit_count(tb.admin, "workspace", ws) == 1,
		 "B's workspace audit is not exactly its own write");
	tenant_free(&tb);
}

/* ================================================================ audit */

static void test_audit(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-audit");
	char ws[ID_MAX], id[ID_MAX], path[512];
	ws_fresh(ws);
	snap_ok(t.rw, ws, EXP_NULL, happy_root(), happy_head(), happy_files());

	/* claims carrying a marker; one claim fails (a detail must name it without its text) */
	json_t *e = happy_copy();
	set_new(e, "summary.claims[0].text",
		json_string(CLAIM_MARKER " the router's secret claim"));
	set_new(e, "summary.claims[1].text", json_string(CLAIM_MARKER " an uncited secret claim"));
	set_new(e, "summary.claims[1].source_ref_ids", json_array());
	struct it_resp r;
	env_post(t.rw, ws, e, &r);
	EXPECT_ENV(&r, "UNVERIFIABLE", CODES("lossy_summary"), true, "the audited envelope");
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the verdict repeats claim text: %s", r.body);
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	json_t *codes = json_deep_copy(json_object_get(r.json, "failure_codes"));
	it_resp_free(&r);
	env_verify(t.rw, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the verify answer repeats claim text: %s", r.body);
	it_resp_free(&r);

	/* workspace.snapshot_updated {root_hash, file_count} */
	snprintf(path, sizeof path, "/v1/audit?resource_type=workspace&resource_id=%s", ws);
	json_t *recs = list_all(t.admin, path);
	IT_CHECK(json_array_size(recs) == 1, "workspace audit: %zu records", json_array_size(recs));
	json_t *rec = json_array_get(recs, 0);
	const json_t *d = json_object_get(rec, "details");
	char *text = dump(recs);
	IT_CHECK(it_json_str_is(rec, "action", "workspace.snapshot_updated") &&
		     it_json_str_is(rec, "resource_type", "workspace") &&
		     it_json_int(rec, "revision_after", -1) == 1 &&
		     it_json_has_null(rec, "prev_hash") &&
		     it_is_sha256_ref(it_json_str(rec, "hash")),
		 "workspace audit record: %s", text);
	IT_CHECK(it_json_str_is(d, "root_hash", happy_root()) &&
		     it_json_int(d, "file_count", -1) == 2,
		 "workspace audit details are not {root_hash, file_count}: %s", text);
	IT_CHECK(it_json_str(rec, "actor_token_id") &&
		     strncmp(it_json_str(rec, "actor_token_id"), "tok_", 4) == 0,
		 "actor_token_id: %s", text);
	free(text);
	json_decref(recs);

	/* envelope.submitted {verdict, failure_codes}, envelope.verified: one chain */
	snprintf(path, sizeof path, "/v1/audit?resource_type=envelope&resource_id=%s", id);
	recs = list_all(t.admin, path);
	text = dump(recs);
	IT_CHECK(json_array_size(recs) == 2, "envelope audit: %s", text);
	json_t *sub = json_array_get(recs, 0), *ver = json_array_get(recs, 1);
	IT_CHECK(it_json_str_is(sub, "action", "envelope.submitted") &&
		     it_json_int(sub, "revision_after", -1) == 1 &&
		     it_json_has_null(sub, "prev_hash"),
		 "envelope.submitted record: %s", text);
	d = json_object_get(sub, "details");
	IT_CHECK(it_json_str_is(d, "verdict", "UNVERIFIABLE") &&
		     json_equal(json_object_get(d, "failure_codes"), codes),
		 "envelope.submitted details are not {verdict, failure_codes}: %s", text);
	IT_CHECK(it_json_str_is(ver, "action", "envelope.verified") &&
		     it_json_int(ver, "revision_before", -1) == 1 &&
		     it_json_int(ver, "revision_after", -1) == 2 &&
		     it_json_str_is(ver, "prev_hash", it_json_str(sub, "hash")),
		 "envelope.verified record: %s", text);
	free(text);
	json_decref(recs);
	json_decref(codes);
	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=envelope&resource_id=%s", id);
	get(path, t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == 2,
		 "audit verify: %s", r.body);
	it_resp_free(&r);

	/* no claim text anywhere in the raw audit */
	get("/v1/audit?limit=200", t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the audit holds claim text: %s", r.body);
	it_resp_free(&r);

	/* a rejected submission and a stale snapshot write audit nothing */
	e = happy_copy();
	set_new(e, "summary.claims[0].text", json_integer(5));
	env_post(t.rw, ws, e, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	it_resp_free(&r);
	snap_put(t.rw, ws, snap_body(EXP_NULL, happy_root(), "h", json_array()), NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	IT_CHECK(audit_count(t.admin, "envelope", NULL) == 2 &&
		     audit_count(t.admin, "workspace", NULL) == 1,
		 "a rejected request was audited");
	tenant_free(&t);
}

/* ================================================================ scopes */

static void test_scopes(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "env-scope");
	char *writer = token_for(t.name, "envelopes:write", "it-writer");
	char *other =
	    token_for(t.name, "memory:read,memory:write,preferences:read,audit:read", "it-other");
	char ws[ID_MAX], id[ID_MAX], path[256];
	ws_fresh(ws);
	snap_path(ws, path, sizeof path);
	struct it_resp r;

	/* envelopes:read cannot write */
	snap_put(t.reader, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	snap_put(other, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	snap_put(NULL, ws, snap_body(EXP_NULL, happy_root(), happy_head(), happy_files()), NULL,
		 &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	get(path, t.reader, &r);
	IT_PROBLEM(&r, 404, "not_found"); /* nothing was written */
	it_resp_free(&r);

	/* envelopes:write alone writes */
	snap_ok(writer, ws, EXP_NULL, happy_root(), happy_head(), happy_files());
	env_post(t.reader, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_post(other, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_post(NULL, ws, happy_copy(), &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	IT_CHECK(audit_count(t.admin, "envelope", NULL) == 0, "a refused submission was stored");
	env_post(writer, ws, happy_copy(), &r);
	EXPECT_ENV(&r, "MATCH", NO_CODES, true, "envelopes:write submits");
	copy_str(id, sizeof id, it_json_str(r.json, "envelope_id"));
	it_resp_free(&r);
	env_verify(t.reader, id, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_verify(other, id, &r);
	IT_PROBLEM(&r, 403, "forbidden");
	it_resp_free(&r);
	env_verify(writer, id, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* reading needs envelopes:read */
	env_get(t.reader, id, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 2, "the reader does not see revision 2");
	it_resp_free(&r);
	get(path, t.reader, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	const char *no_read[] = {writer, other};
	for (size_t i = 0; i < 2; i++) {
		env_get(no_read[i], id, &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		get(path, no_read[i], &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
		relevance_doc(no_read[i], relevance_copy(), &r);
		IT_PROBLEM(&r, 403, "forbidden");
		it_resp_free(&r);
	}
	env_get(NULL, id, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	relevance_doc(NULL, relevance_copy(), &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	/* the relevance check is a read */
	relevance_doc(t.reader, relevance_copy(), &r);
	EXPECT_REL(&r, "MATCH", NO_CODES, true, "envelopes:read checks relevance");
	it_resp_free(&r);
	/* admin implies both */
	env_verify(t.admin, id, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	free(writer);
	free(other);
	tenant_free(&t);
}

/* ================================================================ privacy of the log */

static void test_log_privacy(void **state)
{
	(void)state;
	/* the audit test sent claims with the marker; add a rejected one */
	json_t *e = happy_copy();
	char *big = text_of(CLAIM_MARKER " too long ", 4001);
	set_new(e, "summary.claims[0].text", json_string(big));
	free(big);
	struct it_resp r;
	env_post(ta.rw, ws_match, e, &r);
	IT_PROBLEM(&r, 422, "validation_failed");
	IT_CHECK(!strstr(r.body, CLAIM_MARKER), "the 422 repeats claim text: %.500s", r.body);
	it_resp_free(&r);

	int st = it_server_stop(&srv);
	IT_CHECK(st == 0, "the server exited with status %d after SIGTERM", st);
	size_t len = 0;
	char *log = it_log_read(&srv, &len);
	IT_CHECK(log != NULL && len > 0, "no server log at %s", srv.log_path);
	const char *hit = memmem(log, len, CLAIM_MARKER, strlen(CLAIM_MARKER));
	if (hit) {
		const char *from = hit - log > 200 ? hit - 200 : log;
		fprintf(stderr, "  log excerpt: %.400s\n", from);
	}
	IT_CHECK(hit == NULL, "the server log %s contains claim text", srv.log_path);
	free(log);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_tenant), /* first: tenant A and its workspace */
	    cmocka_unit_test(test_happy_path),
	    cmocka_unit_test(test_negative_cases),
	    cmocka_unit_test(test_relevance_variants),
	    cmocka_unit_test(test_combined_failures),
	    cmocka_unit_test(test_findings_table),
	    cmocka_unit_test(test_freshness_rules),
	    cmocka_unit_test(test_verify_flip),
	    cmocka_unit_test(test_relevance_load_receipt),
	    cmocka_unit_test(test_snapshot_cas),
	    cmocka_unit_test(test_limits_snapshot),
	    cmocka_unit_test(test_limits_envelope),
	    cmocka_unit_test(test_limits_relevance),
	    cmocka_unit_test(test_races),
	    cmocka_unit_test(test_protocol),
	    cmocka_unit_test(test_isolation),
	    cmocka_unit_test(test_audit),
	    cmocka_unit_test(test_scopes),
	    cmocka_unit_test(test_log_privacy), /* last: stops the server and reads its log */
	};
	int rc = cmocka_run_group_tests_name("it_envelopes", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
