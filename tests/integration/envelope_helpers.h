/* What the it_envelopes_* executables share (envelope_helpers.c, envelope_verdicts.c, linked
 * as it_envelope_helpers): the seed fixture, tenant A and its matching workspace, requests to
 * the envelope, relevance and snapshot endpoints, JSON mutations, and the checks of a verdict
 * answer against the contract's tables. Each executable starts its own server (group_setup)
 * and creates tenant A in its first test (test_setup_tenant). The helpers fail the running
 * cmocka test on any unexpected answer. openapi/openapi.yaml "Conventions",
 * "Context envelopes"; docs/envelope-contract.md. */
#ifndef IT_ENVELOPE_HELPERS_H
#define IT_ENVELOPE_HELPERS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

#ifndef RG_FIXTURES_DIR
#error "RG_FIXTURES_DIR (tests/fixtures) must be defined by the build"
#endif

#define ENV_DIR RG_FIXTURES_DIR "/envelopes"
#define SEED_FILE ENV_DIR "/context-envelope-v1.json"
#define NEG_DIR ENV_DIR "/negative"

#define EXP_NULL LLONG_MIN /* expected_revision: null */
#define ID_MAX 80

/* the contract's limits (docs/envelope-contract.md) */
#define MAX_SOURCE_REFS 256
#define MAX_CLAIMS 256
#define MAX_CLAIM_BYTES 4000
#define MAX_CLAIM_REFS 32
#define MAX_RECEIPTS 64
#define MAX_FILES 10000
#define MAX_REL_INPUTS 256
#define DEFAULT_MAX_BODY 1048576

/* ================================================================ the fixture, tenant A */

/* The server every test of an executable talks to (group_setup starts it). */
extern struct it_server srv;
extern json_t *seed;             /* the fixture file */
extern const json_t *happy;      /* borrowed: conformance_fixture.happy_path */
extern const json_t *relevance0; /* borrowed: conformance_fixture.context_relevance */

struct tenant {
	char *name;
	char *admin;  /* admin */
	char *rw;     /* envelopes:read,envelopes:write */
	char *reader; /* envelopes:read */
};

/* tenant A: every test that does not need a tenant of its own */
extern struct tenant ta;
extern char ws_match[ID_MAX]; /* A's workspace whose snapshot matches the happy path */

/* cmocka group setup and teardown: read the seed, start and stop srv, free tenant A. */
int group_setup(void **state);
int group_teardown(void **state);

/* tenant A and its matching workspace: the first test of every executable */
void test_setup_tenant(void **state);

/* ================================================================ checks of the contract */

struct check_def {
	const char *check;
	const char *code; /* NULL: declared_failure (any known code) */
};

/* the contract's tables, in their order */
extern const struct check_def env_checks[];
extern const size_t n_env_checks;
extern const struct check_def rel_checks[];
extern const size_t n_rel_checks;

/* ================================================================ small helpers */




/* new: `count` copies of the UTF-8 sequence unit, then suffix */
char *repeat_utf8(const char *unit, size_t count, const char *suffix);

/* "sha256:" + 64 lowercase hex derived from n (distinct n, distinct hashes) */
void hash_of(unsigned long long n, char out[72]);

/* new: the compact text of j */
char *dump(const json_t *j);

/* new: the compact text of j, which it steals */
char *dump_new(json_t *j);

/* appends one reason to why (a NUL-terminated buffer of n bytes) */
void soft(char *why, size_t n, const char *fmt, ...) IT_PRINTF(3, 4);

/* new: the JSON file at path, duplicate keys rejected (NULL, with a message, when unreadable) */
json_t *load_json(const char *path);

/* ================================================================ tenants and requests */

/* new */
char *token_for(const char *tenant, const char *scopes, const char *name);

void tenant_new(struct tenant *t, const char *prefix);

void tenant_free(struct tenant *t);

/* body: steals */
void send_json(const char *method, const char *path, const char *token, json_t *body,
	       const char *const *headers, struct it_resp *r);

void get(const char *path, const char *token, struct it_resp *r);

#define expect_422x(r, code, field, exact, what) IT_422(r, code, field, exact, what)

void expect_422(const struct it_resp *r, const char *code, const char *field, const char *what);

void expect_etag(const struct it_resp *r, long long rev);

/* new: every item of a paginated list, walking next_cursor */
json_t *list_all(const char *token, const char *path);

/* number of audit records of one resource (id NULL: of the type) */
size_t audit_count(const char *token, const char *type, const char *id);

/* ================================================================ JSON mutations */

/* set (value: borrowed, copied; a missing member is added, index == size appends) or
 * delete (value ignored) the member at path ("a.b[2].c") */
void mutate(json_t *root, const char *op, const char *path, const json_t *value);

/* shorthands over a document: value steals */
void set_new(json_t *doc, const char *path, json_t *value);

void del(json_t *doc, const char *path);

/* new: a copy of the happy path / the relevance base */
json_t *happy_copy(void);

json_t *relevance_copy(void);

/* ================================================================ snapshots */

/* new: the two files of the happy path with its hashes */
json_t *happy_files(void);

const char *happy_root(void);

const char *happy_head(void);

/* new: {expected_revision, root_hash, git_head, files} (files: steals) */
json_t *snap_body(long long expected, const char *root, const char *head, json_t *files);

void snap_path(const char *ws, char *buf, size_t n);

/* body: steals */
void snap_put(const char *token, const char *ws, json_t *body, const char *const *headers,
	      struct it_resp *r);

/* the PUT/GET answer: {workspace_id, revision, root_hash, git_head, file_count} (+ files) */
void check_snap_answer(const struct it_resp *r, const char *ws, long long rev, const char *root,
		       const char *head, size_t nfiles, bool with_files);

/* PUT a snapshot that must succeed; files: steals */
void snap_ok(const char *token, const char *ws, long long expected, const char *root,
	     const char *head, json_t *files);

/* a fresh workspace id of tenant-independent form */
void ws_fresh(char ws[ID_MAX]);

/* ================================================================ envelopes, relevance */

/* new: {workspace_id?, envelope} (envelope: steals) */
json_t *env_body(const char *ws, json_t *envelope);

/* envelope: steals */
void env_post(const char *token, const char *ws, json_t *envelope, struct it_resp *r);

void env_get(const char *token, const char *id, struct it_resp *r);

void env_verify(const char *token, const char *id, struct it_resp *r);

/* body: steals */
void relevance_post(const char *token, json_t *body, struct it_resp *r);

/* {context_relevance: doc} (doc: steals) */
void relevance_doc(const char *token, json_t *doc, struct it_resp *r);

/* ======================================================== verdicts (envelope_verdicts.c) */

enum kind { ENVELOPE, RELEVANCE };

/* borrowed: the checks[] entry named `check`, or NULL */
const json_t *check_of(const json_t *ans, const char *check);

/*
 * The expected outcome (soft: reasons appended to why), the answer's shape and consistency
 * included. codes: NULL-terminated; exact: failure_codes is exactly codes (envelopes: in
 * that order; relevance: as a set); otherwise they are among failure_codes.
 */
bool outcome_ok(const struct it_resp *r, enum kind kind, long status, const char *verdict,
		const char *const *codes, bool exact, const char *declared, char *why, size_t n);

/* outcome_ok, failing the test at file:line */
void expect_outcome_at(const struct it_resp *r, enum kind kind, long status, const char *verdict,
		       const char *const *codes, bool exact, const char *declared, const char *what,
		       const char *file, int line);

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

/* POST a context_relevance document (steals) and expect the outcome */
#define REL_EXPECT(doc, verdict, codes, exact, what)                                               \
	do {                                                                                       \
		struct it_resp r_;                                                                 \
		relevance_doc(ta.reader, (doc), &r_);                                              \
		EXPECT_REL(&r_, (verdict), (codes), (exact), (what));                              \
		it_resp_free(&r_);                                                                 \
	} while (0)

#endif
