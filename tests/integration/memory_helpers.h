/* What the it_memory_* executables share (memory_helpers.c, memory_records.c,
 * memory_retrieve.c, linked as it_memory_helpers). Each executable starts its own server
 * (group_setup) and every test runs in its own tenant. The helpers fail the running cmocka
 * test on any unexpected answer. */
#ifndef IT_MEMORY_HELPERS_H
#define IT_MEMORY_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* ================================================================ helpers, tenants, requests */

#define ID_MAX 80
#define REF_LEN 72 /* "sha256:" + 64 hex + NUL */
#define FAR_FUTURE "2099-01-01T00:00:00.000Z"

/* The server every test of an executable talks to (group_setup starts it). */
extern struct it_server srv;

/* "sha256:" + hex SHA-256 of the bytes */
void sha256_ref(const void *data, size_t n, char out[REF_LEN]);

void sha256_str(const char *s, char out[REF_LEN]);

/* source_identity of a pointer: sha256(owner + "\n" + uri + "\n" + content_hash) */
void identity_of(const char *owner, const char *uri, const char *content_hash,
		 char out[REF_LEN]);


/* new: prefix followed by `count` copies of `unit` then `suffix` */
char *repeat_text(const char *prefix, const char *unit, size_t count, const char *suffix);

bool contains(const char *hay, const char *needle);



struct tenant {
	char *name;
	char *admin; /* scope admin, name it-admin */
};

void tenant_new(struct tenant *t, const char *prefix);

void tenant_free(struct tenant *t);

/* new */
char *token_for(const struct tenant *t, const char *scopes, const char *name);

/* body: steals */
void send_json(const char *method, const char *path, const char *token, json_t *body,
	       const char *const *headers, struct it_resp *r);

void get(const char *path, const char *token, struct it_resp *r);

#define expect_422(r, code, field, exact, what) IT_422(r, code, field, exact, what)

/* new: every item of a paginated list, walking next_cursor (limit 200 per page) */
json_t *list_all(const char *token, const char *path);

bool array_has_id(const json_t *items, const char *key, const char *id);

/* borrowed: the element of items whose key is id, or NULL */
const json_t *item_by(const json_t *items, const char *key, const char *id);

/* items[].key is exactly the set of the NULL-terminated ids (order ignored) */
void expect_id_set(const json_t *items, const char *key, const char *what, ...);

/* "a,b" from a JSON array of strings */
void join_strings(const json_t *arr, char *buf, size_t n);

void expect_reasons(const json_t *obj, const char *want, const char *what);

/* cmocka group setup and teardown: start and stop srv. */
int group_setup(void **state);
int group_teardown(void **state);

/* ================================================================ memory_records.c */

/* new: a note body */
json_t *note_body(const char *content, const char *classification, const char *thread);

/* new: a pointer body (foreign when owner is not NULL; assent_id only when not NULL) */
json_t *pointer_body(const char *uri, const char *hash, const char *owner,
		     const char *assent_id);

/* new: the 201 answer of POST /v1/memory/sources (body stolen); its source_id into id */
json_t *create_source(const char *token, json_t *body, char id[ID_MAX]);

/* an inline note; content_hash and source_identity checked; hash into hash_out if not NULL */
void note(const char *token, const char *content, const char *classification,
	  const char *thread, char id[ID_MAX], char *hash_out);

/* GET /v1/memory/sources/{id}/content is {content: want} */
void expect_content(const char *token, const char *id, const char *want);

/* new: GET the metadata of a source (or derivative) through /v1/memory/sources/{id} */
json_t *source_meta(const char *token, const char *id);

/* the record's state, reasons and revision (GET …/sources/{id} for src_, GET
 * …/derivatives/{id} for drv_); a source's ETag is its revision */
void expect_state(const char *token, const char *id, const char *state,
		  const char *reasons, long long rev);

void classify(const char *token, const char *id, long long expected, const char *cls,
	      const char *const *headers, struct it_resp *r);

void classify_ok(const char *token, const char *id, long long expected, const char *cls,
		 const char *previous);

void revoke_source(const char *token, const char *id, long long expected,
		   const char *reason, struct it_resp *r);

/* new: GET …/readback */
json_t *readback(const char *token, const char *id);

/* new: [{source_id, revision}] */
json_t *df(const char *id, long long rev);

/* appends {source_id, revision} to a, returns a */
json_t *df_add(json_t *a, const char *id, long long rev);

/* new: a derivative body (from stolen) */
json_t *derivative_body(const char *kind, json_t *from, const char *content);

void post_derivative(const char *token, const char *kind, json_t *from,
		     const char *content, struct it_resp *r);

/* a new eligible derivative (from stolen); id into id */
void derive(const char *token, const char *kind, json_t *from, const char *content,
	    char id[ID_MAX]);

void assent_post(const char *token, const char *owner, const char *identity,
		 const char *expires_at, struct it_resp *r);

void assent_grant(const char *token, const char *owner, const char *identity,
		  const char *expires_at, char id[ID_MAX]);

void assent_revoke(const char *token, const char *id, long long expected,
		   struct it_resp *r);

/* ================================================================ memory_retrieve.c */

enum endpoint { SEARCH, EXPLAIN, CONTEXT };

const char *endpoint_path(enum endpoint e);

/* new: {query, thread_id?} */
json_t *qbody(const char *query, const char *thread);

void retrieve(enum endpoint e, const char *token, json_t *body, struct it_resp *r);

void check_search_shape(const json_t *j, const char *raw);

void check_explain_shape(const json_t *j, const char *query, const char *raw);

void check_context_shape(const json_t *j, const char *raw);

/* new: the 200 answer of an endpoint (body stolen), shape checked */
json_t *retrieve_ok(enum endpoint e, const char *token, json_t *body);

json_t *search_ok(const char *token, const char *query, const char *thread);

json_t *explain_ok(const char *token, const char *query, const char *thread);

json_t *context_ok(const char *token, const char *query, const char *thread);

const json_t *items_of(const json_t *j);

/* the explain entry of id: included, reason, classification (NULL: null), revision */
void expect_ex(const json_t *ex, const char *id, bool included, const char *reason,
	       const char *cls, long long rev);

void expect_same_json(const json_t *a, const json_t *b, const char *what);

/* number of audit records of one resource */
size_t audit_count(const char *token, const char *type, const char *id);

void expect_nothing_retrieved(const char *token, const char *query, const char *what);

/* ================================================================ disclosures */

/* GET a record's content */
void get_content(const char *token, const char *id, struct it_resp *r);

/* new: GET path with token, 200 expected, the answer's JSON */
json_t *get_ok(const char *token, const char *path);

/* new: one context load of query (thread may be NULL); its receipt id into receipt (if not
 * NULL) */
json_t *load_context(const char *token, const char *query, const char *thread,
		     char receipt[ID_MAX]);

/* A source and a summary derivative of it, both matching `word`. */
void source_and_summary(const struct tenant *t, const char *word, char src[ID_MAX],
			char drv[ID_MAX]);

#endif
