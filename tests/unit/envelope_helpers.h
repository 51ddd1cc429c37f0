/* What the unit_envelope_* executables share (envelope_helpers.c, envelope_cases.c and
 * relevance_cases.c, linked as unit_envelope_helpers): the seed fixture
 * (context-envelope-v1.json, loaded by the group setup), JSON-pointer mutations, the assertions
 * on a verdict, and the two case tables. An envelope case is the seed's happy_path, a few
 * mutations, a workspace snapshot, and the expected per-check results, failure codes and
 * verdict; a relevance case is built the same way from the seed's context_relevance, its
 * load_only_variant, or a load receipt shaped like openapi/openapi.yaml "LoadReceipt". The
 * helpers fail the running cmocka test on any surprise. */
#ifndef RG_TESTS_UNIT_ENVELOPE_HELPERS_H
#define RG_TESTS_UNIT_ENVELOPE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/envelope.h"

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

/* ---- the seed ------------------------------------------------------------------------- */

extern json_t *seed; /* the whole fixture, loaded by the group setup */

/* borrowed: the seed's conformance_fixture.happy_path / .context_relevance */
const json_t *happy_path(void);

const json_t *context_relevance(void);

/* cmocka group setup and teardown: load and free seed. */
int load_seed(void **state);

int free_seed(void **state);

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

/* Applies muts (up to the OP_END entry) to doc. */
void apply(json_t *doc, const struct mutation *muts);

/* ---- shared assertions ---------------------------------------------------------------- */

#define MAX_CODES 10
#define MAX_FAILS 11 /* ten checks and the terminating NULL */

/* s is one of the NULL-terminated list. */
bool listed(const char *const *list, const char *s);

/* The seed's verdict of a code, from negative_test_cases (not from core). */
const char *seed_verdict(const char *code);

/* failure_codes equals codes exactly (order included), has no duplicates, and the verdict is
 * the row's, which must itself be the worst of the codes' seed verdicts (a table sanity check). */
void assert_codes(const struct env_verdict *v, const char *const *codes, const char *verdict);

/* checks[] lists exactly names, in order, each {check, result, detail}; result is expected(i). */
void assert_checks(const struct env_verdict *v, const char *const *names, size_t count,
		   const char *const *expected, const char *unasserted);

/* Table sanity: every name in fails is one of the checks. */
void assert_known_checks(const char *const *fails, const char *const *names, size_t count);

/* ---- envelope cases (envelope_cases.c) ------------------------------------------------ */

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

/* the rows of env_cases; envelope_cases.c checks the number at compile time */
#define ENV_CASE_COUNT 97
extern struct env_case env_cases[];

/* ---- relevance cases (relevance_cases.c) ---------------------------------------------- */

enum rel_base {
	REL_CONTEXT,   /* the seed's context_relevance, via core_relevance_from_context */
	REL_LOAD_ONLY, /* the seed's load_only_variant, via core_relevance_from_context */
	REL_RECEIPT,   /* {load_receipt: <openapi/openapi.yaml "LoadReceipt" shape>, relevance:
			* <seed relevance>}, via core_relevance_from_receipt (relevance NULL
			* when the member is absent) */
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

/* the rows of rel_cases; relevance_cases.c checks the number at compile time */
#define REL_CASE_COUNT 40
extern struct rel_case rel_cases[];

#endif
