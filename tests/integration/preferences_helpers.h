/* What the it_preferences_* executables share (preferences_helpers.c, preferences_journal.c,
 * linked as it_preferences_helpers). Each executable starts its own server (group_setup) with
 * two tenants and their tokens; every test uses its own journal (a unique goal and agent).
 * The helpers fail the running cmocka test on any unexpected answer.
 *
 * Every statement, quote and source_ref carries STMT-MARKER / QUOTE-MARKER / SREF-MARKER so
 * that the privacy assertions mean something: test_privacy (it_preferences_access) looks for
 * them in the audit records, /metrics and the server log, and every other executable makes
 * the same sweep over what its own tests wrote in its group teardown. */
#ifndef IT_PREFERENCES_HELPERS_H
#define IT_PREFERENCES_HELPERS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

#define EXP_NULL LLONG_MIN /* expected_revision: null (and "revision: null" in a view) */

#define M_STMT "STMT-MARKER"
#define M_QUOTE "QUOTE-MARKER"
#define M_SREF "SREF-MARKER"

/* the seed's example key; the intent table, the retry and the isolation tests write it */
#define REVIEW_KEY "review.collaboration"

enum action { REMEMBER, RETIRE };

/* The server every test of an executable talks to (group_setup starts it), its two tenants
 * and their tokens. */
extern struct it_server srv;
extern char *tenant_a, *tenant_b;
extern char *admin_a, *admin_b; /* admin: audit reads */
extern char *rw_a, *rw_b;       /* preferences:read,preferences:write */
extern char *reader_a;          /* preferences:read */
extern char *writer_a;          /* preferences:write */
extern char *other_a;           /* every scope but admin and preferences:* */

/* ================================================================ small helpers */

/* new: exactly n bytes: prefix (cut at n) then `fill` */
char *text_of(const char *prefix, size_t n, char fill);

/* the view shows the expires_at that was sent (the same string, or the same instant in the
 * API's millisecond form when whole seconds were sent) */
bool same_expiry(const char *got, const char *sent);

bool contains(const char *hay, const char *needle);

/* the body holds one of the markers */
bool has_marker(const char *body);

/* ================================================================ journals and requests */

struct journal {
	char goal[96];
	char agent[96];
};

/* a unique goal and agent */
void journal_fresh(struct journal *j);

void key_path(const struct journal *j, const char *key, enum action act, char *buf, size_t n);

void view_path(const struct journal *j, char *buf, size_t n);

/* the arguments of one remember or retire */
struct pw {
	const char *statement; /* remember only */
	const char *source_ref;
	const char *source_quote;
	long long expected; /* EXP_NULL: null */
	const char *operation_id;
	const char *expires_at; /* remember only; NULL: absent */
	bool execute;
};

/* new: the request body */
json_t *pw_body(enum action act, const struct pw *w);

/* body: borrowed */
void send_json(const char *method, const char *path, const char *token, const json_t *body,
	       const char *const *headers, struct it_resp *r);

/* a remember (PUT) or retire (POST) of key with w's arguments */
void pref_send(const char *token, const struct journal *j, enum action act, const char *key,
	       const struct pw *w, const char *const *headers, struct it_resp *r);

/* "sha256:" + hex SHA-256 of the compact, key-sorted intent object (contract: intent_hash) */
void intent_hash(enum action act, const char *key, const struct pw *w, char out[80]);

/* ================================================================ views */

/* the view's revision, EXP_NULL when null */
long long rev_of(const json_t *view);

/* borrowed: the entry of `key` in the view, or NULL */
const json_t *entry_of(const json_t *view, const char *key);

size_t entry_count(const json_t *view);

/* The view's shape (openapi/openapi.yaml "Preferences" and the contract's "Shapes"). */
void check_view(const json_t *v, const char *what);

/* the Content-Type is exactly `want` (case-insensitive), charset included */
void expect_content_type(const struct it_resp *r, const char *want);

/* the ETag names revision `rev` (EXP_NULL or 0: no ETag at all) */
void expect_etag(const struct it_resp *r, long long rev);

/* GET the view with `token` into r (200, shape and ETag checked) */
void view_get(const char *token, const struct journal *j, struct it_resp *r);

/* new: the current view (read with rw_a) */
json_t *view_now(const struct journal *j);

void expect_view_equal(const struct journal *j, const json_t *want, const char *why);

/* ================================================================ setup and privacy */

/* cmocka group setup: start srv (debug logging), make the tenants and their tokens. */
int group_setup(void **state);

/* cmocka group teardown: stop srv if it still runs, free the tokens. */
int group_teardown(void **state);

/* cmocka group teardown of the executables without test_privacy: first test_privacy's sweep
 * over what their tests wrote (tenant A's preference audit records, /metrics, the server log
 * after a clean stop), then group_teardown. */
int group_teardown_privacy(void **state);

/* main's exit status after cmocka_run_group_tests_name answered cmocka_rc: cmocka 1.1 prints
 * a failed group teardown but exits 0, so a failed sweep makes it 1 here. Also frees what a
 * failed sweep left. */
int prefs_exit_status(int cmocka_rc);

/* the preference_journal audit records `token` (an admin) reads hold no marker and only
 * {key, operation_id, intent_hash} details; there is at least one */
void expect_no_private(const char *token, const char *what);

/* /metrics holds no marker; then srv stops cleanly and its whole log holds none */
void expect_server_private(void);

/* ================================================================ preferences_journal.c */

void check_history_item(const json_t *it, const char *what);

/* new: every history item, walking pages of `limit` (0: the default page size, 20) */
json_t *history_walk(const char *token, const struct journal *j, int limit, size_t *pages);

/* new: the whole history (pages of 200) */
json_t *history_all(const char *token, const struct journal *j);

size_t history_count(const struct journal *j);

/* new: the journal's audit records, read with `token` (an admin of the journal's tenant) */
json_t *audit_of(const char *token, const struct journal *j);

/* the number of the journal's audit records (read with admin_a) */
size_t audit_count(const struct journal *j);

void expect_audit_verify(const char *token, const struct journal *j, long long checked);

/* a snapshot of everything a rejected or preview call must leave alone */
struct snap {
	json_t *view;
	size_t history;
	size_t audit;
};

void snap_take(const struct journal *j, struct snap *s);

void snap_expect_same(const struct journal *j, const struct snap *s, const char *why);

void snap_free(struct snap *s);

/* {status, receipt, view} with the given status; the view's shape */
void check_write_answer(const struct it_resp *r, const char *status);

void check_receipt(const json_t *rc, enum action act, const char *key, const struct pw *w,
		   long long rev_after, const char *supersedes);

/* the entry of `key` in `view` is what operation `w` (at revision rev) made of it */
void check_entry_after(const json_t *view, enum action act, const char *key, const struct pw *w,
		       long long rev, const char *what);

/* Sends one operation that must apply: 201 applied, the receipt, the view. Returns the
 * receipt (new). */
json_t *apply_op(const char *token, const struct journal *j, enum action act, const char *key,
		 const struct pw *w, const char *supersedes);

/* a remember (with rw_a) that must apply */
void remember_ok(const struct journal *j, const char *key, const char *statement,
		 const char *sref, const char *quote, long long expected, const char *op,
		 const char *supersedes);

/* a retirement (with rw_a) that must apply */
void retire_ok(const struct journal *j, const char *key, const char *sref, const char *quote,
	       long long expected, const char *op, const char *supersedes);

/* a problem answer that names no private text */
void expect_problem_private(const struct it_resp *r, long status, const char *code);

#endif
