/*
 * it_memory — memory governance end to end (API.md §0, §3, §4; docs/memory-contract.md; the
 * seed memory-source-policy-proposal.txt; issue 4):
 *
 *  - the seed's six acceptance tests, one cmocka test each, with the seed's wording;
 *  - two-level derivative chains following their root (cold → active → cold), revisions that
 *    never move on recomputation;
 *  - derivative creation errors (stale upstream, ineligible upstream, unknown upstream) that
 *    store nothing;
 *  - assent revoked and assent expired after admission;
 *  - the load receipt (counts, beyond_limit and budget_exceeded, hashes, stored read-back);
 *  - every limit at its edge;
 *  - tenant isolation on every endpoint;
 *  - audit records for every mutation, without content, URIs or labels;
 *  - scopes.
 *
 * Every test runs in its own tenant (so lists, searches and audit logs hold only what the test
 * wrote) and uses distinctive marker words (qz…) so that full-text queries are precise and the
 * "no content" assertions on raw bodies mean something.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "harness.h"

#define ID_MAX 80
#define REF_LEN 72 /* "sha256:" + 64 hex + NUL */
#define FAR_FUTURE "2099-01-01T00:00:00.000Z"
#define UNKNOWN_SRC "src_00000000000000000000000000000000"
#define UNKNOWN_DRV "drv_00000000000000000000000000000000"
#define UNKNOWN_ASN "asn_00000000000000000000000000000000"
#define UNKNOWN_LRC "lrc_00000000000000000000000000000000"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct it_server srv;

/* ================================================================ small helpers */

/* "sha256:" + hex SHA-256 of the bytes */
static void sha256_ref(const void *data, size_t n, char out[REF_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	memcpy(out, "sha256:", 7);
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

static void sha256_str(const char *s, char out[REF_LEN])
{
	sha256_ref(s, strlen(s), out);
}

/* source_identity of a pointer: sha256(owner + "\n" + uri + "\n" + content_hash) */
static void identity_of(const char *owner, const char *uri, const char *content_hash,
			char out[REF_LEN])
{
	size_t n = strlen(owner) + strlen(uri) + strlen(content_hash) + 3;
	char *buf = malloc(n);
	assert_non_null(buf);
	snprintf(buf, n, "%s\n%s\n%s", owner, uri, content_hash);
	sha256_ref(buf, strlen(buf), out);
	free(buf);
}

/* new: exactly n bytes: prefix (cut at n), then ASCII filler words */
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

/* new: prefix followed by `count` copies of `unit` then `suffix` */
static char *repeat_text(const char *prefix, const char *unit, size_t count, const char *suffix)
{
	size_t p = strlen(prefix), u = strlen(unit), x = strlen(suffix);
	char *s = malloc(p + u * count + x + 1);
	assert_non_null(s);
	memcpy(s, prefix, p);
	for (size_t i = 0; i < count; i++)
		memcpy(s + p + i * u, unit, u);
	memcpy(s + p + u * count, suffix, x + 1);
	return s;
}

static bool contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
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

static void copy_str(char *dst, size_t n, const char *src)
{
	IT_CHECK(src != NULL, "a string member is missing");
	snprintf(dst, n, "%s", src);
}

/* ================================================================ tenants and tokens */

struct tenant {
	char *name;
	char *admin; /* scope admin, name it-admin */
};

static void tenant_new(struct tenant *t, const char *prefix)
{
	t->name = it_unique(prefix);
	t->admin = it_token(t->name, "admin", "it-admin");
	IT_CHECK(t->admin != NULL, "cannot create an admin token for %s", t->name);
}

static void tenant_free(struct tenant *t)
{
	free(t->name);
	free(t->admin);
	t->name = t->admin = NULL;
}

/* new */
static char *token_for(const struct tenant *t, const char *scopes, const char *name)
{
	char *tok = it_token(t->name, scopes, name);
	IT_CHECK(tok != NULL, "cannot create a %s token for %s", scopes, t->name);
	return tok;
}

/* ================================================================ requests */

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

#define expect_422(r, code, field, exact, what) IT_422(r, code, field, exact, what)

/* new: every item of a paginated list, walking next_cursor (limit 200 per page) */
static json_t *list_all(const char *token, const char *path)
{
	json_t *all = json_array();
	char *cursor = NULL;
	const char *sep = strchr(path, '?') ? "&" : "?";
	for (int page = 0;; page++) {
		char p[1024];
		if (cursor) {
			char *esc = it_url_escape(cursor);
			snprintf(p, sizeof p, "%s%slimit=200&after=%s", path, sep, esc);
			free(esc);
		} else {
			snprintf(p, sizeof p, "%s%slimit=200", path, sep);
		}
		struct it_resp r;
		get(p, token, &r);
		IT_STATUS(&r, 200);
		json_t *items = json_object_get(r.json, "items");
		json_t *next = json_object_get(r.json, "next_cursor");
		IT_CHECK(json_is_array(items), "%s: items is not an array: %s", p, r.body);
		IT_CHECK(json_is_string(next) || json_is_null(next),
			 "%s: next_cursor is not string|null: %s", p, r.body);
		json_array_extend(all, items);
		free(cursor);
		cursor = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
		it_resp_free(&r);
		if (!cursor)
			break;
		IT_CHECK(page < 100, "%s: pagination does not end", path);
	}
	return all;
}

static bool array_has_id(const json_t *items, const char *key, const char *id)
{
	size_t i;
	const json_t *e;
	json_array_foreach (items, i, e) {
		if (it_json_str_is(e, key, id))
			return true;
	}
	return false;
}

/* borrowed: the element of items whose key is id, or NULL */
static const json_t *item_by(const json_t *items, const char *key, const char *id)
{
	size_t i;
	const json_t *e;
	json_array_foreach (items, i, e) {
		if (it_json_str_is(e, key, id))
			return e;
	}
	return NULL;
}

/* items[].key is exactly the set of the NULL-terminated ids (order ignored) */
static void expect_id_set(const json_t *items, const char *key, const char *what, ...)
{
	va_list ap;
	size_t want = 0;
	char *text = json_dumps(items, JSON_COMPACT);
	va_start(ap, what);
	for (const char *id = va_arg(ap, const char *); id; id = va_arg(ap, const char *)) {
		want++;
		if (!array_has_id(items, key, id)) {
			fprintf(stderr, "  %s: %s missing from %s\n", what, id, text ? text : "?");
			va_end(ap);
			IT_FAIL("%s: expected record %s", what, id);
		}
	}
	va_end(ap);
	IT_CHECK(json_array_size(items) == want, "%s: expected exactly %zu records, got %zu: %s",
		 what, want, json_array_size(items), text ? text : "?");
	free(text);
}

/* "a,b" from a JSON array of strings */
static void join_strings(const json_t *arr, char *buf, size_t n)
{
	size_t i, used = 0;
	const json_t *e;
	buf[0] = '\0';
	IT_CHECK(json_is_array(arr), "ineligible_reasons is not an array");
	json_array_foreach (arr, i, e) {
		IT_CHECK(json_is_string(e), "ineligible_reasons holds a non-string");
		int w = snprintf(buf + used, n - used, "%s%s", i ? "," : "", json_string_value(e));
		IT_CHECK(w >= 0 && (size_t)w < n - used, "reasons too long");
		used += (size_t)w;
	}
}

static void expect_reasons(const json_t *obj, const char *want, const char *what)
{
	char got[512];
	join_strings(json_object_get(obj, "ineligible_reasons"), got, sizeof got);
	IT_CHECK(strcmp(got, want) == 0, "%s: ineligible_reasons are [%s], expected [%s]", what,
		 got, want);
}

/* ================================================================ sources */

/* new: a note body */
static json_t *note_body(const char *content, const char *classification, const char *thread)
{
	json_t *b = json_object();
	json_object_set_new(b, "source_kind", json_string("note"));
	json_object_set_new(b, "content", json_string(content));
	if (classification)
		json_object_set_new(b, "classification", json_string(classification));
	if (thread)
		json_object_set_new(b, "thread_id", json_string(thread));
	return b;
}

/* new: a pointer body (foreign when owner is not NULL; assent_id only when not NULL) */
static json_t *pointer_body(const char *uri, const char *hash, const char *owner,
			    const char *assent_id)
{
	json_t *b = json_object();
	json_object_set_new(b, "source_kind", json_string("document"));
	json_t *p = json_object();
	json_object_set_new(p, "uri", json_string(uri));
	json_object_set_new(p, "content_hash", json_string(hash));
	json_object_set_new(b, "pointer", p);
	if (owner) {
		json_t *f = json_object();
		json_object_set_new(f, "owner", json_string(owner));
		if (assent_id)
			json_object_set_new(f, "assent_id", json_string(assent_id));
		json_object_set_new(b, "foreign", f);
	}
	return b;
}

/* new: the 201 answer of POST /v1/memory/sources (body stolen); its source_id into id */
static json_t *create_source(const char *token, json_t *body, char id[ID_MAX])
{
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", token, body, NULL, &r);
	IT_STATUS(&r, 201);
	const char *sid = it_json_str(r.json, "source_id");
	IT_CHECK(has_prefix_hex(sid, "src_"), "source_id is not src_ + 32 hex: %s", r.body);
	copy_str(id, ID_MAX, sid);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	IT_CHECK(it_is_sha256_ref(it_json_str(r.json, "content_hash")),
		 "content_hash is not sha256:<hex>: %s", r.body);
	IT_CHECK(it_is_sha256_ref(it_json_str(r.json, "source_identity")),
		 "source_identity is not sha256:<hex>: %s", r.body);
	IT_CHECK(it_is_timestamp_ms(it_json_str(r.json, "created_at")),
		 "created_at is malformed: %s", r.body);
	IT_CHECK(json_is_array(json_object_get(r.json, "ineligible_reasons")),
		 "ineligible_reasons is not an array: %s", r.body);
	const char *st = it_json_str(r.json, "effective_retrieval_state");
	IT_CHECK(st && (strcmp(st, "eligible") == 0 || strcmp(st, "ineligible") == 0),
		 "effective_retrieval_state: %s", r.body);
	IT_CHECK((strcmp(st, "eligible") == 0) ==
		     (json_array_size(json_object_get(r.json, "ineligible_reasons")) == 0),
		 "state and ineligible_reasons disagree: %s", r.body);
	char loc[256];
	snprintf(loc, sizeof loc, "/v1/memory/sources/%s", sid);
	const char *got = it_resp_header(&r, "Location");
	IT_CHECK(got && strlen(got) >= strlen(loc) &&
		     strcmp(got + strlen(got) - strlen(loc), loc) == 0,
		 "Location is %s, expected …%s", got ? got : "none", loc);
	json_t *out = json_incref(r.json);
	it_resp_free(&r);
	return out;
}

/* an inline note; content_hash and source_identity checked; hash into hash_out if not NULL */
static void note(const char *token, const char *content, const char *classification,
		 const char *thread, char id[ID_MAX], char *hash_out)
{
	json_t *s = create_source(token, note_body(content, classification, thread), id);
	char want[REF_LEN];
	sha256_str(content, want);
	IT_CHECK(it_json_str_is(s, "content_hash", want),
		 "content_hash is not sha256 of the content (%s)", want);
	IT_CHECK(it_json_str_is(s, "source_identity", want),
		 "source_identity of inline content is not its content_hash");
	IT_CHECK(it_json_str_is(s, "source_kind", "note"), "source_kind is not note");
	const char *cls = classification ? classification : "active";
	IT_CHECK(it_json_str_is(s, "classification", cls), "classification is not %s", cls);
	if (strcmp(cls, "cold") == 0) {
		IT_CHECK(it_json_str_is(s, "effective_retrieval_state", "ineligible"),
			 "a cold source is not ineligible");
		expect_reasons(s, "classification_cold", "new cold source");
	} else {
		IT_CHECK(it_json_str_is(s, "effective_retrieval_state", "eligible"),
			 "a new active source is not eligible");
	}
	if (hash_out)
		memcpy(hash_out, want, REF_LEN);
	json_decref(s);
}

/* GET /v1/memory/sources/{id}/content is {content: want} */
static void expect_content(const char *token, const char *id, const char *want)
{
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", id);
	get(path, token, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "content", want), "%s: content differs from what was sent",
		 path);
	it_resp_free(&r);
}

/* new: GET the metadata of a source (or derivative) through /v1/memory/sources/{id} */
static json_t *source_meta(const char *token, const char *id)
{
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/sources/%s", id);
	get(path, token, &r);
	IT_STATUS(&r, 200);
	json_t *out = json_incref(r.json);
	it_resp_free(&r);
	return out;
}

/* the record's state, reasons and revision (GET …/sources/{id} for src_, GET
 * …/derivatives/{id} for drv_); a source's ETag is its revision */
static void expect_state(const char *token, const char *id, const char *state,
			 const char *reasons, long long rev)
{
	char path[256];
	struct it_resp r;
	bool drv = strncmp(id, "drv_", 4) == 0;
	snprintf(path, sizeof path, "/v1/memory/%s/%s", drv ? "derivatives" : "sources", id);
	get(path, token, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, drv ? "derivative_id" : "source_id", id),
		 "%s: the id is not echoed: %s", path, r.body);
	IT_CHECK(it_json_str_is(r.json, "effective_retrieval_state", state),
		 "%s: effective_retrieval_state is not %s: %s", path, state, r.body);
	expect_reasons(r.json, reasons, path);
	IT_CHECK(it_json_int(r.json, "revision", -1) == rev, "%s: revision is not %lld: %s", path,
		 rev, r.body);
	if (!drv) {
		char etag[32];
		snprintf(etag, sizeof etag, "\"%lld\"", rev);
		const char *got = it_resp_header(&r, "ETag");
		IT_CHECK(got && strcmp(got, etag) == 0, "%s: ETag is %s, expected %s", path,
			 got ? got : "none", etag);
	}
	it_resp_free(&r);
}

static void classify(const char *token, const char *id, long long expected, const char *cls,
		     const char *const *headers, struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "classification", json_string(cls));
	send_json("PUT", path, token, b, headers, r);
}

static void classify_ok(const char *token, const char *id, long long expected, const char *cls,
			const char *previous)
{
	struct it_resp r;
	classify(token, id, expected, cls, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "source_id", id) &&
		     it_json_str_is(r.json, "previous_classification", previous) &&
		     it_json_str_is(r.json, "classification", cls) &&
		     it_json_int(r.json, "revision", -1) == expected + 1 &&
		     it_is_timestamp_ms(it_json_str(r.json, "effective_at")),
		 "classification %s → %s at revision %lld: %s", previous, cls, expected, r.body);
	it_resp_free(&r);
}

static void revoke_source(const char *token, const char *id, long long expected,
			  const char *reason, struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "reason_code", json_string(reason));
	send_json("POST", path, token, b, NULL, r);
}

/* new: GET …/readback */
static json_t *readback(const char *token, const char *id)
{
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/sources/%s/readback", id);
	get(path, token, &r);
	IT_STATUS(&r, 200);
	json_t *out = json_incref(r.json);
	it_resp_free(&r);
	return out;
}

/* ================================================================ derivatives */

/* new: [{source_id, revision}] */
static json_t *df(const char *id, long long rev)
{
	json_t *a = json_array();
	json_t *e = json_object();
	json_object_set_new(e, "source_id", json_string(id));
	json_object_set_new(e, "revision", json_integer(rev));
	json_array_append_new(a, e);
	return a;
}

/* appends {source_id, revision} to a, returns a */
static json_t *df_add(json_t *a, const char *id, long long rev)
{
	json_t *e = json_object();
	json_object_set_new(e, "source_id", json_string(id));
	json_object_set_new(e, "revision", json_integer(rev));
	json_array_append_new(a, e);
	return a;
}

/* new: a derivative body (from stolen) */
static json_t *derivative_body(const char *kind, json_t *from, const char *content)
{
	json_t *b = json_object();
	json_object_set_new(b, "kind", json_string(kind));
	json_object_set_new(b, "derived_from", from);
	json_object_set_new(b, "content", json_string(content));
	return b;
}

static void post_derivative(const char *token, const char *kind, json_t *from,
			    const char *content, struct it_resp *r)
{
	send_json("POST", "/v1/memory/derivatives", token, derivative_body(kind, from, content),
		  NULL, r);
}

/* a new eligible derivative (from stolen); id into id */
static void derive(const char *token, const char *kind, json_t *from, const char *content,
		   char id[ID_MAX])
{
	struct it_resp r;
	json_t *want = json_deep_copy(from);
	post_derivative(token, kind, from, content, &r);
	IT_STATUS(&r, 201);
	const char *did = it_json_str(r.json, "derivative_id");
	IT_CHECK(has_prefix_hex(did, "drv_"), "derivative_id is not drv_ + 32 hex: %s", r.body);
	copy_str(id, ID_MAX, did);
	IT_CHECK(it_json_str_is(r.json, "kind", kind), "kind is not %s: %s", kind, r.body);
	IT_CHECK(it_json_int(r.json, "revision", -1) == 1, "revision is not 1: %s", r.body);
	IT_CHECK(json_equal(json_object_get(r.json, "provenance"), want),
		 "provenance is not derived_from: %s", r.body);
	IT_CHECK(it_json_str_is(r.json, "effective_retrieval_state", "eligible"),
		 "a new derivative of eligible records is not eligible: %s", r.body);
	expect_reasons(r.json, "", "new derivative");
	char hash[REF_LEN];
	sha256_str(content, hash);
	IT_CHECK(it_json_str_is(r.json, "content_hash", hash),
		 "derivative content_hash is not sha256 of its content: %s", r.body);
	json_decref(want);
	it_resp_free(&r);
}

/* ================================================================ assents */

static void assent_post(const char *token, const char *owner, const char *identity,
			const char *expires_at, struct it_resp *r)
{
	json_t *b = json_object();
	json_object_set_new(b, "owner", json_string(owner));
	json_object_set_new(b, "source_identity", json_string(identity));
	json_object_set_new(b, "expires_at", json_string(expires_at));
	send_json("POST", "/v1/assents", token, b, NULL, r);
}

static void assent_grant(const char *token, const char *owner, const char *identity,
			 const char *expires_at, char id[ID_MAX])
{
	struct it_resp r;
	assent_post(token, owner, identity, expires_at, &r);
	IT_STATUS(&r, 201);
	const char *aid = it_json_str(r.json, "assent_id");
	IT_CHECK(has_prefix_hex(aid, "asn_"), "assent_id is not asn_ + 32 hex: %s", r.body);
	copy_str(id, ID_MAX, aid);
	IT_CHECK(it_json_str_is(r.json, "owner", owner) &&
		     it_json_str_is(r.json, "source_identity", identity) &&
		     it_json_int(r.json, "revision", -1) == 1 &&
		     it_is_timestamp_ms(it_json_str(r.json, "expires_at")),
		 "assent answer: %s", r.body);
	it_resp_free(&r);
}

static void assent_revoke(const char *token, const char *id, long long expected,
			  struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/assents/%s/revoke", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	send_json("POST", path, token, b, NULL, r);
}

/* ================================================================ retrieval */

enum endpoint { SEARCH, EXPLAIN, CONTEXT };

static const char *endpoint_path(enum endpoint e)
{
	return e == SEARCH ? "/v1/memory/search"
	       : e == EXPLAIN ? "/v1/memory/retrieval/explain"
			      : "/v1/memory/context";
}

/* new: {query, thread_id?} */
static json_t *qbody(const char *query, const char *thread)
{
	json_t *b = json_object();
	json_object_set_new(b, "query", json_string(query));
	if (thread)
		json_object_set_new(b, "thread_id", json_string(thread));
	return b;
}

static void retrieve(enum endpoint e, const char *token, json_t *body, struct it_resp *r)
{
	send_json("POST", endpoint_path(e), token, body, NULL, r);
}

static void check_search_shape(const json_t *j, const char *raw)
{
	const json_t *items = json_object_get(j, "items");
	IT_CHECK(json_is_array(items), "search items is not an array: %s", raw);
	size_t i;
	const json_t *it;
	double prev = 0;
	json_array_foreach (items, i, it) {
		const char *id = it_json_str(it, "record_id");
		const char *kind = it_json_str(it, "record_kind");
		IT_CHECK(id && kind &&
			     ((strcmp(kind, "source") == 0 && strncmp(id, "src_", 4) == 0) ||
			      (strcmp(kind, "derivative") == 0 && strncmp(id, "drv_", 4) == 0)),
			 "search item %zu: record_id/record_kind: %s", i, raw);
		IT_CHECK(it_json_int(it, "revision", -1) >= 1, "search item %zu: revision: %s", i,
			 raw);
		IT_CHECK(it_is_sha256_ref(it_json_str(it, "content_hash")),
			 "search item %zu: content_hash: %s", i, raw);
		const json_t *score = json_object_get(it, "score");
		IT_CHECK(json_is_number(score), "search item %zu: score is not a number: %s", i,
			 raw);
		double sc = json_number_value(score);
		IT_CHECK(i == 0 || sc <= prev, "search items are not best score first: %s", raw);
		prev = sc;
	}
}

static void check_explain_shape(const json_t *j, const char *query, const char *raw)
{
	char qh[REF_LEN];
	sha256_str(query, qh);
	IT_CHECK(it_json_str_is(j, "query_sha256", qh), "query_sha256 is not %s: %s", qh, raw);
	IT_CHECK(json_is_boolean(json_object_get(j, "truncated")), "truncated is not a boolean: %s",
		 raw);
	const json_t *items = json_object_get(j, "items");
	IT_CHECK(json_is_array(items), "explain items is not an array: %s", raw);
	size_t i;
	const json_t *it;
	json_array_foreach (items, i, it) {
		const char *id = it_json_str(it, "record_id");
		const char *kind = it_json_str(it, "record_kind");
		IT_CHECK(id && kind &&
			     ((strcmp(kind, "source") == 0 && strncmp(id, "src_", 4) == 0) ||
			      (strcmp(kind, "derivative") == 0 && strncmp(id, "drv_", 4) == 0)),
			 "explain item %zu: record_id/record_kind: %s", i, raw);
		IT_CHECK(it_json_int(it, "revision", -1) >= 1, "explain item %zu: revision: %s", i,
			 raw);
		const json_t *cls = json_object_get(it, "classification");
		IT_CHECK(strcmp(kind, "derivative") == 0 ? json_is_null(cls) : json_is_string(cls),
			 "explain item %zu: classification (null for a derivative): %s", i, raw);
		const json_t *inc = json_object_get(it, "included");
		const char *reason = it_json_str(it, "reason");
		IT_CHECK(json_is_boolean(inc) && reason, "explain item %zu: included/reason: %s", i,
			 raw);
		IT_CHECK(json_is_true(inc) == (strcmp(reason, "selected") == 0),
			 "explain item %zu: included disagrees with reason: %s", i, raw);
		IT_CHECK(json_is_array(json_object_get(it, "ineligible_reasons")),
			 "explain item %zu: ineligible_reasons: %s", i, raw);
	}
}

static void check_context_shape(const json_t *j, const char *raw)
{
	const json_t *items = json_object_get(j, "items");
	const json_t *rc = json_object_get(j, "load_receipt");
	IT_CHECK(json_is_array(items) && json_is_object(rc), "context answer shape: %s", raw);
	size_t i;
	const json_t *it;
	json_array_foreach (items, i, it) {
		IT_CHECK(it_json_str(it, "input_id") && it_json_str(it, "record_id") &&
			     it_json_int(it, "revision", -1) >= 1 && it_json_str(it, "content") &&
			     it_json_str_is(it, "trust", "untrusted_advisory"),
			 "context item %zu: %s", i, raw);
	}
	IT_CHECK(has_prefix_hex(it_json_str(rc, "receipt_id"), "lrc_"),
		 "receipt_id is not lrc_ + 32 hex: %s", raw);
	IT_CHECK(it_json_str_is(rc, "event_type", "context.load"), "event_type: %s", raw);
	IT_CHECK(json_is_false(json_object_get(rc, "claims_usefulness")),
		 "claims_usefulness is not false: %s", raw);
	long long cand = it_json_int(rc, "candidate_count", -1);
	long long sel = it_json_int(rc, "selected_count", -1);
	long long del = it_json_int(rc, "delivered_count", -1);
	long long sup = it_json_int(rc, "suppressed_count", -1);
	IT_CHECK(cand >= 0 && sel >= 0 && del >= 0 && sup >= 0, "receipt counts: %s", raw);
	IT_CHECK(cand == del + sup, "candidate_count != delivered_count + suppressed_count: %s",
		 raw);
	IT_CHECK(del <= sel && sel <= cand, "delivered <= selected <= candidates fails: %s", raw);
	IT_CHECK((long long)json_array_size(items) == del, "items.length != delivered_count: %s",
		 raw);
	IT_CHECK((long long)json_array_size(json_object_get(rc, "loaded_inputs")) == del,
		 "loaded_inputs.length != delivered_count: %s", raw);
	IT_CHECK((long long)json_array_size(json_object_get(rc, "suppressed_inputs")) == sup,
		 "suppressed_inputs.length != suppressed_count: %s", raw);
}

/* new: the 200 answer of an endpoint (body stolen), shape checked */
static json_t *retrieve_ok(enum endpoint e, const char *token, json_t *body)
{
	char query[1100];
	copy_str(query, sizeof query, it_json_str(body, "query"));
	struct it_resp r;
	retrieve(e, token, body, &r);
	IT_STATUS(&r, 200);
	if (e == SEARCH)
		check_search_shape(r.json, r.body);
	else if (e == EXPLAIN)
		check_explain_shape(r.json, query, r.body);
	else
		check_context_shape(r.json, r.body);
	json_t *out = json_incref(r.json);
	it_resp_free(&r);
	return out;
}

static json_t *search_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(SEARCH, token, qbody(query, thread));
}

static json_t *explain_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(EXPLAIN, token, qbody(query, thread));
}

static json_t *context_ok(const char *token, const char *query, const char *thread)
{
	return retrieve_ok(CONTEXT, token, qbody(query, thread));
}

static const json_t *items_of(const json_t *j)
{
	return json_object_get(j, "items");
}

/* the explain entry of id: included, reason, classification (NULL: null), revision */
static void expect_ex(const json_t *ex, const char *id, bool included, const char *reason,
		      const char *cls, long long rev)
{
	const json_t *it = item_by(items_of(ex), "record_id", id);
	char *text = json_dumps(ex, JSON_COMPACT);
	IT_CHECK(it != NULL, "explain does not list %s: %s", id, text ? text : "?");
	IT_CHECK(json_is_boolean(json_object_get(it, "included")) &&
		     json_is_true(json_object_get(it, "included")) == included,
		 "explain %s: included is not %s: %s", id, included ? "true" : "false", text);
	IT_CHECK(it_json_str_is(it, "reason", reason), "explain %s: reason is not %s: %s", id,
		 reason, text);
	IT_CHECK(cls ? it_json_str_is(it, "classification", cls)
		     : it_json_has_null(it, "classification"),
		 "explain %s: classification is not %s: %s", id, cls ? cls : "null", text);
	IT_CHECK(it_json_int(it, "revision", -1) == rev, "explain %s: revision is not %lld: %s",
		 id, rev, text);
	free(text);
}

/* new: explain items sorted by record_id (explain's order is not part of the contract) */
static json_t *sorted_items(const json_t *ex)
{
	json_t *items = json_deep_copy(items_of(ex));
	size_t n = json_array_size(items);
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0; j--) {
			const char *a = it_json_str(json_array_get(items, j - 1), "record_id");
			const char *b = it_json_str(json_array_get(items, j), "record_id");
			if (!a || !b || strcmp(a, b) <= 0)
				break;
			json_t *x = json_incref(json_array_get(items, j - 1));
			json_array_set(items, j - 1, json_array_get(items, j));
			json_array_set_new(items, j, x);
		}
	}
	return items;
}

static void expect_same_explain(const json_t *a, const json_t *b, const char *what)
{
	json_t *sa = sorted_items(a), *sb = sorted_items(b);
	char *ta = json_dumps(sa, JSON_COMPACT), *tb = json_dumps(sb, JSON_COMPACT);
	IT_CHECK(json_equal(sa, sb) && it_json_str_is(a, "query_sha256", it_json_str(b, "query_sha256")),
		 "%s: explanations differ:\n  before: %s\n  after:  %s", what, ta ? ta : "?",
		 tb ? tb : "?");
	free(ta);
	free(tb);
	json_decref(sa);
	json_decref(sb);
}

static void expect_same_json(const json_t *a, const json_t *b, const char *what)
{
	char *ta = json_dumps(a, JSON_COMPACT), *tb = json_dumps(b, JSON_COMPACT);
	IT_CHECK(json_equal(a, b), "%s: differ:\n  before: %s\n  after:  %s", what, ta ? ta : "?",
		 tb ? tb : "?");
	free(ta);
	free(tb);
}

/* number of audit records of one resource */
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

static void put_thread_mode(const char *token, const char *thread, long long expected,
			    const char *mode, const char *previous)
{
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "mode", json_string(mode));
	send_json("PUT", path, token, b, NULL, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", mode) &&
		     it_json_str_is(r.json, "previous_mode", previous) &&
		     it_json_int(r.json, "revision", -1) == expected + 1,
		 "memory-mode %s → %s: %s", previous, mode, r.body);
	it_resp_free(&r);
}

/* ================================================================ group setup */

static int group_setup(void **state)
{
	(void)state;
	return it_server_start(&srv, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		return -1;
	return 0;
}

/* ================================================================ acceptance 1 */

/*
 * Seed acceptance test 1: "Two native sources, one active and one cold, remain stored while
 * matching retrieval selects and injects only the active source."
 */
static void test_acceptance1_active_and_cold(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc1");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *ca = "qzacconeword zebraquokka alpha note that stays active";
	const char *cc = "qzacconeword zebraquokka bravo note that is kept cold";
	char a[ID_MAX], c[ID_MAX], ha[REF_LEN], hc[REF_LEN];
	note(t.admin, ca, NULL, NULL, a, ha);
	note(t.admin, cc, "cold", NULL, c, hc);

	/* both remain stored: metadata and bytes */
	expect_state(reader, a, "eligible", "", 1);
	expect_state(reader, c, "ineligible", "classification_cold", 1);
	json_t *m = source_meta(reader, c);
	IT_CHECK(it_json_str_is(m, "classification", "cold") &&
		     it_json_str_is(m, "content_hash", hc) &&
		     it_json_str_is(m, "source_kind", "note") && it_json_has_null(m, "provenance"),
		 "metadata of the cold source");
	IT_CHECK(!json_object_get(m, "content"), "metadata carries content");
	json_decref(m);
	expect_content(reader, a, ca);
	expect_content(reader, c, cc);

	json_t *all = list_all(reader, "/v1/memory/sources");
	expect_id_set(all, "source_id", "list", a, c, NULL);
	char *text = json_dumps(all, JSON_COMPACT);
	IT_CHECK(!contains(text, "zebraquokka"), "the list carries content: %s", text);
	free(text);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?classification=cold");
	expect_id_set(all, "source_id", "list classification=cold", c, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?classification=active");
	expect_id_set(all, "source_id", "list classification=active", a, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?state=eligible");
	expect_id_set(all, "source_id", "list state=eligible", a, NULL);
	json_decref(all);
	all = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(all, "source_id", "list state=ineligible", c, NULL);
	json_decref(all);

	/* search selects only the active one */
	json_t *s = search_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(s), "record_id", "search", a, NULL);
	IT_CHECK(it_json_str_is(json_array_get(items_of(s), 0), "content_hash", ha) &&
		     it_json_str_is(json_array_get(items_of(s), 0), "record_kind", "source") &&
		     it_json_int(json_array_get(items_of(s), 0), "revision", -1) == 1,
		 "search item of the active source");
	json_decref(s);
	/* a query that only the cold source matches finds nothing */
	s = search_ok(reader, "zebraquokka bravo", NULL);
	expect_id_set(items_of(s), "record_id", "search matching only the cold source", NULL);
	json_decref(s);

	/* context assembly injects only the active one */
	json_t *cx = context_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(cx), "record_id", "context", a, NULL);
	IT_CHECK(it_json_str_is(json_array_get(items_of(cx), 0), "content", ca),
		 "the injected content is not the active source's bytes");
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "candidate_count", -1) == 1 &&
		     it_json_int(rc, "delivered_count", -1) == 1,
		 "receipt counts: one candidate, one delivered");
	text = json_dumps(cx, JSON_COMPACT);
	IT_CHECK(!contains(text, c), "the context answer mentions the cold source: %s", text);
	free(text);
	json_decref(cx);
	cx = context_ok(reader, "zebraquokka bravo", NULL);
	expect_id_set(items_of(cx), "record_id", "context matching only the cold source", NULL);
	json_decref(cx);

	/* explain: both, the active one selected */
	json_t *ex = explain_ok(reader, "qzacconeword", NULL);
	expect_id_set(items_of(ex), "record_id", "explain", a, c, NULL);
	expect_ex(ex, a, true, "selected", "active", 1);
	expect_ex(ex, c, false, "classification_cold", "cold", 1);
	json_decref(ex);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 2 */

/*
 * Seed acceptance test 2: "Retrieval explanation reports the cold source as filtered with
 * source ID, revision, classification, and reason, without raw source content by default."
 */
static void test_acceptance2_explain_cold(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc2");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *uri = "https://qzuriacctwohost.example/private/qzuripathsecret";
	char phash[REF_LEN];
	sha256_str("qzacctwo pointed-to bytes", phash);

	char a[ID_MAX], c[ID_MAX], p[ID_MAX], d[ID_MAX];
	json_t *b = note_body("qzacctwo qzcontentsecretactive alpha body", NULL, NULL);
	json_t *labels = json_object();
	json_object_set_new(labels, "qzlabelkeyone", json_string("qzlabelvaluesecretone"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, a));
	b = note_body("qzacctwo qzcontentsecretcold bravo body", "cold", NULL);
	labels = json_object();
	json_object_set_new(labels, "qzlabelkeytwo", json_string("qzlabelvaluesecrettwo"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, c));
	json_decref(create_source(t.admin, pointer_body(uri, phash, NULL, NULL), p));
	derive(t.admin, "summary", df(p, 1), "qzacctwo qzcontentsecretsummary of the pointer", d);

	static const char *const secrets[] = {
	    "qzacctwo",		/* the query text (and a content word) */
	    "qzcontentsecret", /* content bytes */
	    "qzuri",		/* the URI */
	    "example/private", "qzlabel", /* label keys and values */
	};
	/* the cold source only, and all matching records */
	const char *queries[] = {"qzacctwo qzcontentsecretcold", "qzacctwo"};
	for (size_t q = 0; q < 2; q++) {
		struct it_resp r;
		retrieve(EXPLAIN, reader, qbody(queries[q], NULL), &r);
		IT_STATUS(&r, 200);
		check_explain_shape(r.json, queries[q], r.body);
		for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
			IT_CHECK(!contains(r.body, secrets[i]),
				 "explain (%s) body contains \"%s\": %s", queries[q], secrets[i],
				 r.body);
		expect_ex(r.json, c, false, "classification_cold", "cold", 1);
		const json_t *it = item_by(items_of(r.json), "record_id", c);
		IT_CHECK(it_json_str_is(it, "record_kind", "source"), "record_kind of the cold one");
		expect_reasons(it, "classification_cold", "explain of the cold source");
		if (q == 0) {
			expect_id_set(items_of(r.json), "record_id", "explain cold-only query", c,
				      NULL);
		} else {
			/* the pointer has no text: never matched; its summary is */
			expect_id_set(items_of(r.json), "record_id", "explain", a, c, d, NULL);
			expect_ex(r.json, a, true, "selected", "active", 1);
			expect_ex(r.json, d, true, "selected", NULL, 1);
			expect_reasons(item_by(items_of(r.json), "record_id", a), "",
				       "explain of the active source");
		}
		IT_CHECK(json_is_false(json_object_get(r.json, "truncated")),
			 "truncated is not false");
		it_resp_free(&r);
	}

	/* metadata surfaces carry no content, URI or labels by default */
	struct it_resp r;
	get("/v1/memory/sources?limit=200", reader, &r);
	IT_STATUS(&r, 200);
	for (size_t i = 1; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(r.body, secrets[i]), "the list contains \"%s\": %s", secrets[i],
			 r.body);
	it_resp_free(&r);
	get("/v1/memory/sources?include=labels&limit=200", reader, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(contains(r.body, "qzlabelvaluesecretone") && !contains(r.body, "qzuri") &&
		     !contains(r.body, "qzcontentsecret"),
		 "include=labels does not show exactly the labels: %s", r.body);
	it_resp_free(&r);
	const char *ids[] = {a, c, p, d};
	for (size_t i = 0; i < 4; i++) {
		char path[256];
		snprintf(path, sizeof path, "/v1/memory/sources/%s", ids[i]);
		get(path, reader, &r);
		IT_STATUS(&r, 200);
		for (size_t k = 1; k < sizeof secrets / sizeof *secrets; k++)
			IT_CHECK(!contains(r.body, secrets[k]), "%s contains \"%s\": %s", path,
				 secrets[k], r.body);
		it_resp_free(&r);
	}
	/* the content surface is the one that shows the pointer */
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", p);
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	const json_t *ptr = json_object_get(r.json, "pointer");
	IT_CHECK(it_json_str_is(ptr, "uri", uri) && it_json_str_is(ptr, "content_hash", phash),
		 "pointer content: %s", r.body);
	it_resp_free(&r);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 3 */

/* new: the context answer's items (without the receipt, whose id and time are new each call) */
static json_t *context_items(const char *token, const char *query, const char *thread)
{
	json_t *cx = context_ok(token, query, thread);
	json_t *items = json_incref(json_object_get(cx, "items"));
	json_decref(cx);
	return items;
}

/*
 * Seed acceptance test 3: "A stale revision fails without changing effective retrieval state;
 * a compensating compare-and-swap restores the exact prior explanation and selection result."
 */
static void test_acceptance3_stale_and_compensate(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc3");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *q = "qzaccthree";
	char a[ID_MAX], b[ID_MAX], c[ID_MAX];
	note(t.admin, "qzaccthree first active record", NULL, NULL, a, NULL);
	note(t.admin, "qzaccthree qzaccthree second active record", NULL, NULL, b, NULL);
	note(t.admin, "qzaccthree third record kept cold", "cold", NULL, c, NULL);

	json_t *s0 = search_ok(reader, q, NULL);
	json_t *e0 = explain_ok(reader, q, NULL);
	json_t *c0 = context_items(reader, q, NULL);
	json_t *l0 = list_all(reader, "/v1/memory/sources");
	expect_id_set(items_of(s0), "record_id", "baseline search", a, b, NULL);
	expect_ex(e0, c, false, "classification_cold", "cold", 1);

	/* stale writes: 409 with current_revision, nothing changes */
	struct it_resp r;
	long long stale[] = {2, 9};
	for (size_t i = 0; i < 2; i++) {
		classify(t.admin, c, stale[i], "active", NULL, &r);
		IT_PROBLEM(&r, 409, "stale_revision");
		IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1,
			 "current_revision is not 1: %s", r.body);
		it_resp_free(&r);
	}
	classify(t.admin, a, 3, "cold", NULL, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	/* If-Match naming another revision: 412 */
	const char *im[] = {"If-Match: \"5\"", NULL};
	classify(t.admin, c, 1, "active", im, &r);
	IT_PROBLEM(&r, 412, "precondition_failed");
	it_resp_free(&r);

	json_t *s1 = search_ok(reader, q, NULL);
	json_t *e1 = explain_ok(reader, q, NULL);
	json_t *c1 = context_items(reader, q, NULL);
	json_t *l1 = list_all(reader, "/v1/memory/sources");
	expect_same_json(s0, s1, "search after stale writes");
	expect_same_explain(e0, e1, "explain after stale writes");
	expect_same_json(c0, c1, "context selection after stale writes");
	expect_same_json(l0, l1, "source metadata after stale writes");
	expect_state(reader, c, "ineligible", "classification_cold", 1);
	IT_CHECK(audit_count(t.admin, "source", c) == 1 && audit_count(t.admin, "source", a) == 1,
		 "a stale write was audited");
	json_decref(s1);
	json_decref(e1);
	json_decref(c1);
	json_decref(l1);

	/* compensating compare-and-swap: cold → active → cold */
	classify_ok(t.admin, c, 1, "active", "cold");
	expect_state(reader, c, "eligible", "", 2);
	json_t *s2 = search_ok(reader, q, NULL);
	expect_id_set(items_of(s2), "record_id", "search with c active", a, b, c, NULL);
	json_decref(s2);
	json_t *e2 = explain_ok(reader, q, NULL);
	expect_ex(e2, c, true, "selected", "active", 2);
	json_decref(e2);
	classify(t.admin, c, 1, "cold", NULL, &r); /* stale again in between */
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	classify_ok(t.admin, c, 2, "cold", "active");
	expect_state(reader, c, "ineligible", "classification_cold", 3);

	/* the exact prior explanation and selection (c's own revision moved: 1 → 3) */
	json_t *s3 = search_ok(reader, q, NULL);
	json_t *e3 = explain_ok(reader, q, NULL);
	json_t *c3 = context_items(reader, q, NULL);
	expect_same_json(s0, s3, "search after the compensating CAS");
	expect_same_json(c0, c3, "context selection after the compensating CAS");
	expect_ex(e3, c, false, "classification_cold", "cold", 3);
	json_t *e0c = json_deep_copy(e0);
	json_t *it = (json_t *)item_by(items_of(e0c), "record_id", c);
	json_object_set_new(it, "revision", json_integer(3));
	expect_same_explain(e0c, e3, "explain after the compensating CAS");
	json_decref(e0c);
	json_decref(s3);
	json_decref(e3);
	json_decref(c3);
	/* a and b were never touched */
	expect_state(reader, a, "eligible", "", 1);
	expect_state(reader, b, "eligible", "", 1);

	json_decref(s0);
	json_decref(e0);
	json_decref(c0);
	json_decref(l0);
	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 4 */

static void expect_denied(const struct it_resp *r, const char *code, const char *identity)
{
	IT_PROBLEM(r, 403, code);
	IT_CHECK(it_json_str_is(r->json, "source_identity", identity),
		 "the %s 403 does not carry source_identity %s: %s", code, identity, r->body);
}

/*
 * Seed acceptance test 4: "A foreign-source candidate without valid canonical-owner assent
 * creates no derivative; a valid thin pointer can be admitted."
 */
static void test_acceptance4_foreign_assent(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc4");
	char *owner = it_unique("ownerx");
	char *other_owner = it_unique("ownery");
	char *granter = token_for(&t, "assent:grant", owner);
	char *writer = token_for(&t, "memory:write", "it-writer");
	const char *uri = "https://foreign-qzaccfour.example/facts/1";
	char phash[REF_LEN], ident[REF_LEN], other_ident[REF_LEN];
	sha256_str("the foreign fact's bytes (acc4)", phash);
	identity_of(owner, uri, phash, ident);
	identity_of(owner, "https://foreign-qzaccfour.example/facts/2", phash, other_ident);

	/* an assent that will expire while the other cases run */
	char expiring[ID_MAX], when[IT_TIME_LEN];
	long long expires = it_now_ms() + 2000;
	it_rfc3339_ms(expires, when);
	assent_grant(granter, owner, ident, when, expiring);

	json_t *src0 = list_all(t.admin, "/v1/memory/sources");
	json_t *drv0 = list_all(t.admin, "/v1/memory/derivatives");
	size_t audit0 = audit_count(t.admin, "source", NULL);
	IT_CHECK(json_array_size(src0) == 0 && json_array_size(drv0) == 0, "a fresh tenant");
	struct it_resp r;

	/* no assent_id */
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, NULL), NULL,
		  &r);
	expect_denied(&r, "assent_missing", ident);
	it_resp_free(&r);
	/* unknown id */
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, UNKNOWN_ASN), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, "not-an-assent"), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	/* another owner's assent, bound to this very identity */
	char foreign_owned[ID_MAX];
	assent_grant(t.admin, other_owner, ident, FAR_FUTURE, foreign_owned);
	send_json("POST", "/v1/memory/sources", writer,
		  pointer_body(uri, phash, owner, foreign_owned), NULL, &r);
	expect_denied(&r, "assent_invalid", ident);
	it_resp_free(&r);
	/* revoked */
	char revoked[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, revoked);
	assent_revoke(granter, revoked, 1, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_is_timestamp_ms(it_json_str(r.json, "revoked_at")) &&
		     it_json_int(r.json, "revision", -1) == 2,
		 "assent revoke answer: %s", r.body);
	it_resp_free(&r);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, revoked),
		  NULL, &r);
	expect_denied(&r, "assent_revoked", ident);
	it_resp_free(&r);
	/* bound to another identity */
	char stale[ID_MAX];
	assent_grant(granter, owner, other_ident, FAR_FUTURE, stale);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, stale),
		  NULL, &r);
	expect_denied(&r, "assent_stale", ident);
	it_resp_free(&r);
	/* expired */
	it_sleep_until_ms(expires + 600);
	send_json("POST", "/v1/memory/sources", writer, pointer_body(uri, phash, owner, expiring),
		  NULL, &r);
	expect_denied(&r, "assent_expired", ident);
	it_resp_free(&r);

	/* nothing was stored: no source, no derivative, no audit record */
	json_t *src1 = list_all(t.admin, "/v1/memory/sources");
	json_t *drv1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(src0, src1, "sources after refused admissions");
	expect_same_json(drv0, drv1, "derivatives after refused admissions");
	IT_CHECK(audit_count(t.admin, "source", NULL) == audit0, "a refused admission was audited");
	json_decref(src1);
	json_decref(drv1);

	/* a live assent with inline content: a thin pointer is required */
	char live[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, live);
	json_t *b = note_body("qzaccfour inline foreign fact", NULL, NULL);
	json_t *f = json_object();
	json_object_set_new(f, "owner", json_string(owner));
	json_object_set_new(f, "assent_id", json_string(live));
	json_object_set_new(b, "foreign", f);
	send_json("POST", "/v1/memory/sources", writer, b, NULL, &r);
	expect_422(&r, "thin_pointer_required", "content", true, "foreign inline content");
	it_resp_free(&r);
	src1 = list_all(t.admin, "/v1/memory/sources");
	expect_same_json(src0, src1, "sources after an inline foreign candidate");
	json_decref(src1);

	/* the valid thin pointer with live assent is admitted */
	char fid[ID_MAX];
	json_t *s = create_source(writer, pointer_body(uri, phash, owner, live), fid);
	IT_CHECK(it_json_str_is(s, "source_identity", ident),
		 "the admitted source's identity is not sha256(owner\\nuri\\ncontent_hash)");
	IT_CHECK(it_json_str_is(s, "content_hash", phash),
		 "a pointer's content_hash is not the pointer's");
	IT_CHECK(it_json_str_is(s, "effective_retrieval_state", "eligible"),
		 "the admitted source is not eligible");
	json_decref(s);
	expect_state(t.admin, fid, "eligible", "", 1);
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/content", fid);
	get(path, t.admin, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(json_object_get(r.json, "pointer"), "uri", uri) &&
		     !json_object_get(r.json, "content"),
		 "content of the admitted pointer: %s", r.body);
	it_resp_free(&r);
	src1 = list_all(t.admin, "/v1/memory/sources");
	expect_id_set(src1, "source_id", "sources after admission", fid, NULL);
	json_decref(src1);
	drv1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(drv0, drv1, "admission creates no derivative");
	json_decref(drv1);

	json_decref(src0);
	json_decref(drv0);
	free(owner);
	free(other_owner);
	free(granter);
	free(writer);
	tenant_free(&t);
}

/* ================================================================ acceptance 5 */

static void expect_readback(const json_t *rb, const char *id, bool revoked, long long residual,
			    const char *d1, const char *d1_state, const char *d2,
			    const char *d2_state)
{
	char *text = json_dumps(rb, JSON_COMPACT);
	IT_CHECK(it_json_str_is(rb, "source_id", id), "readback source_id: %s", text);
	IT_CHECK(json_is_boolean(json_object_get(rb, "revoked")) &&
		     json_is_true(json_object_get(rb, "revoked")) == revoked,
		 "readback revoked is not %s: %s", revoked ? "true" : "false", text);
	IT_CHECK(it_json_int(rb, "residual_eligible", -1) == residual,
		 "residual_eligible is not %lld: %s", residual, text);
	IT_CHECK(json_is_boolean(json_object_get(rb, "clean")) &&
		     json_is_true(json_object_get(rb, "clean")) == (residual == 0),
		 "clean is not residual_eligible == 0: %s", text);
	const json_t *ds = json_object_get(rb, "derivatives");
	IT_CHECK(json_is_array(ds) && json_array_size(ds) == 2, "readback derivatives: %s", text);
	const json_t *e1 = item_by(ds, "derivative_id", d1);
	const json_t *e2 = item_by(ds, "derivative_id", d2);
	IT_CHECK(e1 && e2, "readback does not list both derivatives: %s", text);
	IT_CHECK(it_json_str_is(e1, "effective_retrieval_state", d1_state) &&
		     it_json_str_is(e2, "effective_retrieval_state", d2_state) &&
		     it_json_str_is(e1, "kind", "summary") && it_json_str_is(e2, "kind", "summary"),
		 "readback derivative states/kinds: %s", text);
	/* oldest first */
	IT_CHECK(it_json_str_is(json_array_get(ds, 0), "derivative_id", d1),
		 "readback derivatives are not oldest first: %s", text);
	free(text);
}

static void expect_nothing_retrieved(const char *token, const char *query, const char *what)
{
	json_t *s = search_ok(token, query, NULL);
	expect_id_set(items_of(s), "record_id", what, NULL);
	json_decref(s);
	json_t *cx = context_ok(token, query, NULL);
	expect_id_set(items_of(cx), "record_id", what, NULL);
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "candidate_count", -1) == 0 &&
		     it_json_int(rc, "delivered_count", -1) == 0,
		 "%s: the load receipt counts candidates", what);
	json_decref(cx);
}

/*
 * Seed acceptance test 5: "Revocation prevents future native query and prompt use, and
 * readback shows no residual derivative eligible for retrieval."
 */
static void test_acceptance5_revocation(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc5");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char s[ID_MAX], d1[ID_MAX], d2[ID_MAX], u[ID_MAX];
	const char *cs = "qzaccfive root source qzrootword to be revoked";
	note(t.admin, cs, NULL, NULL, s, NULL);
	derive(t.admin, "summary", df(s, 1), "qzaccfive summary of the root", d1);
	derive(t.admin, "summary", df(d1, 1), "qzaccfive second level summary", d2);
	note(t.admin, "qzunrelatedfive other source", NULL, NULL, u, NULL);

	json_t *sr = search_ok(reader, "qzaccfive", NULL);
	expect_id_set(items_of(sr), "record_id", "search before revocation", s, d1, d2, NULL);
	json_decref(sr);
	json_t *rb = readback(reader, s);
	expect_readback(rb, s, false, 2, d1, "eligible", d2, "eligible");
	json_decref(rb);

	struct it_resp r;
	revoke_source(t.admin, s, 2, "owner_request", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	revoke_source(t.admin, s, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "source_id", s) && it_json_int(r.json, "revision", -1) == 2 &&
		     it_is_timestamp_ms(it_json_str(r.json, "revoked_at")),
		 "revoke answer: %s", r.body);
	expect_readback(json_object_get(r.json, "readback"), s, true, 0, d1, "ineligible", d2,
			"ineligible");
	it_resp_free(&r);

	rb = readback(reader, s);
	expect_readback(rb, s, true, 0, d1, "ineligible", d2, "ineligible");
	json_decref(rb);
	expect_state(reader, s, "ineligible", "revoked", 2);
	expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzaccfive", "after revocation");
	expect_nothing_retrieved(reader, "qzrootword", "after revocation (root-only word)");
	json_t *ex = explain_ok(reader, "qzaccfive", NULL);
	expect_id_set(items_of(ex), "record_id", "explain after revocation", s, d1, d2, NULL);
	expect_ex(ex, s, false, "revoked", "active", 2);
	expect_ex(ex, d1, false, "upstream_ineligible", NULL, 1);
	expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	/* the bytes stay */
	expect_content(reader, s, cs);
	/* an unrelated source is untouched */
	sr = search_ok(reader, "qzunrelatedfive", NULL);
	expect_id_set(items_of(sr), "record_id", "unrelated search", u, NULL);
	json_decref(sr);

	/* revocation is final, whatever the classification later */
	revoke_source(t.admin, s, 2, "owner_request", &r);
	IT_PROBLEM(&r, 409, "already_revoked");
	it_resp_free(&r);
	classify_ok(t.admin, s, 2, "cold", "active");
	expect_state(reader, s, "ineligible", "revoked,classification_cold", 3);
	classify_ok(t.admin, s, 3, "active", "cold");
	expect_state(reader, s, "ineligible", "revoked", 4);
	expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzaccfive", "after revocation and re-activation");
	ex = explain_ok(reader, "qzaccfive", NULL);
	expect_ex(ex, s, false, "revoked", "active", 4);
	expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	rb = readback(reader, s);
	expect_readback(rb, s, true, 0, d1, "ineligible", d2, "ineligible");
	json_decref(rb);

	free(reader);
	tenant_free(&t);
}

/* ================================================================ acceptance 6 */

/*
 * Seed acceptance test 6: "Unrelated sources and threads retain baseline behavior;
 * thread-level eligibility changes remain separate from source classification."
 */
static void test_acceptance6_threads(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-acc6");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char *thread_x = it_unique("thrx");
	char *thread_y = it_unique("thry");
	const char *q = "qzaccsix";
	char s1[ID_MAX], s2[ID_MAX], s3[ID_MAX], d[ID_MAX];
	note(t.admin, "qzaccsix source written in the disabled thread", NULL, thread_x, s1, NULL);
	note(t.admin, "qzaccsix source of another thread", NULL, thread_y, s2, NULL);
	note(t.admin, "qzaccsix cold source of no thread", "cold", NULL, s3, NULL);
	derive(t.admin, "summary", df(s2, 1), "qzaccsix summary of the other thread", d);

	json_t *sn0 = search_ok(reader, q, NULL);
	json_t *sy0 = search_ok(reader, q, thread_y);
	json_t *en0 = explain_ok(reader, q, NULL);
	json_t *ey0 = explain_ok(reader, q, thread_y);
	json_t *cn0 = context_items(reader, q, NULL);
	json_t *cy0 = context_items(reader, q, thread_y);
	json_t *l0 = list_all(reader, "/v1/memory/sources");
	json_t *dl0 = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(items_of(sn0), "record_id", "baseline search", s1, s2, d, NULL);
	expect_same_json(sn0, sy0, "search with thread Y vs no thread (baseline)");
	json_t *sx0 = search_ok(reader, q, thread_x);
	expect_same_json(sn0, sx0, "search with thread X before disabling");
	json_decref(sx0);

	put_thread_mode(t.admin, thread_x, 0, "disabled", "enabled");

	/* thread X receives no memory */
	json_t *sx = search_ok(reader, q, thread_x);
	expect_id_set(items_of(sx), "record_id", "search for the disabled thread", NULL);
	json_decref(sx);
	json_t *ex = explain_ok(reader, q, thread_x);
	expect_id_set(items_of(ex), "record_id", "explain for the disabled thread", s1, s2, s3, d,
		      NULL);
	expect_ex(ex, s1, false, "thread_memory_disabled", "active", 1);
	expect_ex(ex, s2, false, "thread_memory_disabled", "active", 1);
	expect_ex(ex, s3, false, "thread_memory_disabled", "cold", 1);
	expect_ex(ex, d, false, "thread_memory_disabled", NULL, 1);
	json_decref(ex);
	json_t *cx = context_ok(reader, q, thread_x);
	const json_t *rc = json_object_get(cx, "load_receipt");
	IT_CHECK(json_array_size(items_of(cx)) == 0 && it_json_int(rc, "selected_count", -1) == 0 &&
		     it_json_int(rc, "delivered_count", -1) == 0 &&
		     json_array_size(json_object_get(rc, "loaded_inputs")) == 0,
		 "context for the disabled thread selected something");
	json_decref(cx);

	/* other threads (or none) keep their baseline, including thread X's own sources */
	json_t *sn1 = search_ok(reader, q, NULL);
	json_t *sy1 = search_ok(reader, q, thread_y);
	json_t *en1 = explain_ok(reader, q, NULL);
	json_t *ey1 = explain_ok(reader, q, thread_y);
	json_t *cn1 = context_items(reader, q, NULL);
	json_t *cy1 = context_items(reader, q, thread_y);
	expect_same_json(sn0, sn1, "search without thread after disabling X");
	expect_same_json(sy0, sy1, "search with thread Y after disabling X");
	expect_same_explain(en0, en1, "explain without thread after disabling X");
	expect_same_explain(ey0, ey1, "explain with thread Y after disabling X");
	expect_same_json(cn0, cn1, "context without thread after disabling X");
	expect_same_json(cy0, cy1, "context with thread Y after disabling X");
	IT_CHECK(array_has_id(items_of(sy1), "record_id", s1),
		 "the disabled thread's own source is not retrievable from thread Y");
	json_decref(sn1);
	json_decref(sy1);
	json_decref(en1);
	json_decref(ey1);
	json_decref(cn1);
	json_decref(cy1);

	/* the mode change touched no source or derivative */
	json_t *l1 = list_all(reader, "/v1/memory/sources");
	json_t *dl1 = list_all(reader, "/v1/memory/derivatives");
	expect_same_json(l0, l1, "sources after a thread mode change");
	expect_same_json(dl0, dl1, "derivatives after a thread mode change");
	json_decref(l1);
	json_decref(dl1);
	IT_CHECK(audit_count(t.admin, "source", NULL) == 3 &&
		     audit_count(t.admin, "derivative", NULL) == 1,
		 "a thread mode change wrote source or derivative audit records");

	/* a source classification change leaves the thread gate alone and the others as they were */
	classify_ok(t.admin, s3, 1, "active", "cold");
	json_t *sy2 = search_ok(reader, q, thread_y);
	expect_id_set(items_of(sy2), "record_id", "search Y after activating s3", s1, s2, s3, d,
		      NULL);
	size_t i;
	const json_t *it;
	json_array_foreach (items_of(sy0), i, it) {
		const json_t *now = item_by(items_of(sy2), "record_id", it_json_str(it, "record_id"));
		IT_CHECK(now && it_json_int(now, "revision", -1) == it_json_int(it, "revision", -2),
			 "an unrelated record's revision changed");
	}
	json_decref(sy2);
	sx = search_ok(reader, q, thread_x);
	expect_id_set(items_of(sx), "record_id", "search X after activating s3", NULL);
	json_decref(sx);
	char path[256];
	snprintf(path, sizeof path, "/v1/threads/%s/memory-mode", thread_x);
	struct it_resp r;
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "mode", "disabled") && it_json_int(r.json, "revision", -1) == 1,
		 "a classification change moved the thread mode: %s", r.body);
	it_resp_free(&r);

	/* re-enabled: thread X gets what everyone gets */
	put_thread_mode(t.admin, thread_x, 1, "enabled", "disabled");
	sx = search_ok(reader, q, thread_x);
	json_t *sy3 = search_ok(reader, q, thread_y);
	expect_same_json(sy3, sx, "search X re-enabled vs Y");
	json_decref(sx);
	json_decref(sy3);
	expect_state(reader, s1, "eligible", "", 1);
	expect_state(reader, s2, "eligible", "", 1);
	expect_state(reader, s3, "eligible", "", 2);
	expect_state(reader, d, "eligible", "", 1);

	json_decref(sn0);
	json_decref(sy0);
	json_decref(en0);
	json_decref(ey0);
	json_decref(cn0);
	json_decref(cy0);
	json_decref(l0);
	json_decref(dl0);
	free(thread_x);
	free(thread_y);
	free(reader);
	tenant_free(&t);
}

/* ================================================================ derivative chains */

static void test_derivative_chain(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-chain");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char root[ID_MAX], root2[ID_MAX], d1[ID_MAX], d2[ID_MAX], d3[ID_MAX];
	note(t.admin, "qzchainroot original text", NULL, NULL, root, NULL);
	note(t.admin, "qzchainother second root", NULL, NULL, root2, NULL);
	derive(t.admin, "summary", df(root, 1), "qzchainone first level summary", d1);
	derive(t.admin, "cache", df(d1, 1), "qzchaintwo second level cache", d2);
	derive(t.admin, "transclusion", df_add(df(root, 1), root2, 1),
	       "qzchainthree transclusion of both roots", d3);

	/* metadata of a derivative */
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/memory/derivatives/%s", d2);
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	json_t *want = df(d1, 1);
	IT_CHECK(it_json_str_is(r.json, "kind", "cache") &&
		     json_equal(json_object_get(r.json, "provenance"), want) &&
		     it_is_timestamp_ms(it_json_str(r.json, "created_at")),
		 "GET derivative: %s", r.body);
	json_decref(want);
	it_resp_free(&r);
	json_t *m = source_meta(reader, d1);
	want = df(root, 1);
	IT_CHECK(it_json_str_is(m, "source_id", d1) && it_json_has_null(m, "classification") &&
		     it_json_has_null(m, "source_kind") && it_json_str_is(m, "kind", "summary") &&
		     json_equal(json_object_get(m, "provenance"), want),
		 "GET /v1/memory/sources/{drv}: source_id, classification null, source_kind null, "
		 "kind, provenance");
	json_decref(want);
	json_decref(m);
	/* a derivative has no classification to set */
	classify(t.admin, d1, 1, "cold", NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	json_t *dl = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(dl, "derivative_id", "derivative list", d1, d2, d3, NULL);
	json_decref(dl);

	for (int round = 0; round < 2; round++) {
		long long rev = 1 + 2 * round;
		classify_ok(t.admin, root, rev, "cold", "active");
		expect_state(reader, root, "ineligible", "classification_cold", rev + 1);
		expect_state(reader, d1, "ineligible", "upstream_ineligible", 1);
		expect_state(reader, d2, "ineligible", "upstream_ineligible", 1);
		expect_state(reader, d3, "ineligible", "upstream_ineligible", 1);
		json_t *s;
		const char *qs[] = {"qzchainroot", "qzchainone", "qzchaintwo", "qzchainthree"};
		for (size_t i = 0; i < 4; i++) {
			s = search_ok(reader, qs[i], NULL);
			expect_id_set(items_of(s), "record_id", qs[i], NULL);
			json_decref(s);
		}
		json_t *ex = explain_ok(reader, "qzchaintwo", NULL);
		expect_ex(ex, d2, false, "upstream_ineligible", NULL, 1);
		expect_reasons(item_by(items_of(ex), "record_id", d2), "upstream_ineligible",
			       "explain of the second level");
		json_decref(ex);
		s = search_ok(reader, "qzchainother", NULL);
		expect_id_set(items_of(s), "record_id", "the other root stays", root2, NULL);
		json_decref(s);

		classify_ok(t.admin, root, rev + 1, "active", "cold");
		expect_state(reader, root, "eligible", "", rev + 2);
		expect_state(reader, d1, "eligible", "", 1);
		expect_state(reader, d2, "eligible", "", 1);
		expect_state(reader, d3, "eligible", "", 1);
		for (size_t i = 0; i < 4; i++) {
			s = search_ok(reader, qs[i], NULL);
			IT_CHECK(json_array_size(items_of(s)) == 1, "%s after re-activation: %zu",
				 qs[i], json_array_size(items_of(s)));
			json_decref(s);
		}
		ex = explain_ok(reader, "qzchaintwo", NULL);
		expect_ex(ex, d2, true, "selected", NULL, 1);
		json_decref(ex);
	}
	/* any upstream ineligible excludes the derivative */
	classify_ok(t.admin, root2, 1, "cold", "active");
	expect_state(reader, d3, "ineligible", "upstream_ineligible", 1);
	expect_state(reader, d1, "eligible", "", 1);
	json_t *s = search_ok(reader, "qzchainthree", NULL);
	expect_id_set(items_of(s), "record_id", "d3 with one cold root", NULL);
	json_decref(s);
	/* readback of the root lists every transitive descendant */
	json_t *rb = readback(reader, root);
	IT_CHECK(json_is_false(json_object_get(rb, "revoked")) &&
		     json_array_size(json_object_get(rb, "derivatives")) == 3 &&
		     it_json_int(rb, "residual_eligible", -1) == 2 &&
		     json_is_false(json_object_get(rb, "clean")),
		 "readback of the root (d1, d2 eligible; d3 not)");
	json_decref(rb);
	/* derivatives were never rewritten: one audit record each */
	IT_CHECK(audit_count(t.admin, "derivative", d1) == 1 &&
		     audit_count(t.admin, "derivative", d2) == 1 &&
		     audit_count(t.admin, "derivative", d3) == 1,
		 "a recomputation wrote a derivative audit record");
	free(reader);
	tenant_free(&t);
}

/* ================================================================ derivative errors */

static void test_derivative_errors(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-drverr");
	char *writer = token_for(&t, "memory:write", "it-writer");
	char r1[ID_MAX], r2[ID_MAX], r3[ID_MAX], cold[ID_MAX], gone[ID_MAX], e[ID_MAX],
	    de[ID_MAX];
	note(t.admin, "qzdrverr root one", NULL, NULL, r1, NULL);
	note(t.admin, "qzdrverr root two", NULL, NULL, r2, NULL);
	note(t.admin, "qzdrverr root three", NULL, NULL, r3, NULL);
	note(t.admin, "qzdrverr cold root", "cold", NULL, cold, NULL);
	note(t.admin, "qzdrverr revoked root", NULL, NULL, gone, NULL);
	note(t.admin, "qzdrverr root that turns cold", NULL, NULL, e, NULL);
	derive(writer, "index", df(e, 1), "qzdrverr index of e", de);
	classify_ok(t.admin, r1, 1, "active", "active"); /* same again: revision 2 */
	classify_ok(t.admin, r3, 1, "cold", "active");
	classify_ok(t.admin, r3, 2, "active", "cold"); /* revision 3 */
	classify_ok(t.admin, e, 1, "cold", "active");
	struct it_resp r;
	revoke_source(t.admin, gone, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	json_t *dl0 = list_all(t.admin, "/v1/memory/derivatives");
	size_t audit0 = audit_count(t.admin, "derivative", NULL);
	expect_id_set(dl0, "derivative_id", "derivatives before", de, NULL);

	/* stale */
	post_derivative(writer, "summary", df(r1, 1), "qzdrverr stale one", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	post_derivative(writer, "summary", df(r1, 3), "qzdrverr stale future", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 2, "current_revision: %s", r.body);
	it_resp_free(&r);
	/* the first stale upstream's current_revision */
	post_derivative(writer, "summary", df_add(df_add(df(r2, 1), r3, 1), r1, 1),
			"qzdrverr stale among several", &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 3,
		 "current_revision is not the first stale upstream's (3): %s", r.body);
	it_resp_free(&r);
	/* ineligible: cold, revoked, a derivative of a now-cold root */
	post_derivative(writer, "summary", df(cold, 1), "qzdrverr of a cold root", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(gone, 2), "qzdrverr of a revoked root", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(de, 1), "qzdrverr of an ineligible derivative", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	post_derivative(writer, "prompt", df_add(df(r2, 1), cold, 1),
			"qzdrverr one eligible, one cold", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);
	/* unknown */
	post_derivative(writer, "summary", df(UNKNOWN_SRC, 1), "qzdrverr of nothing", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	post_derivative(writer, "summary", df(UNKNOWN_DRV, 1), "qzdrverr of no derivative", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
	post_derivative(writer, "summary", df_add(df(r2, 1), UNKNOWN_SRC, 1),
			"qzdrverr one known, one unknown", &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	json_t *dl1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_same_json(dl0, dl1, "derivatives after refused creations");
	json_decref(dl1);
	IT_CHECK(audit_count(t.admin, "derivative", NULL) == audit0,
		 "a refused derivative was audited");
	json_t *s = search_ok(t.admin, "qzdrverr", NULL);
	expect_id_set(items_of(s), "record_id", "search after refused derivatives", r1, r2, r3,
		      NULL);
	json_decref(s);
	/* the readback of each refused upstream lists no derivative */
	const char *ups[] = {r1, r2, r3, cold, gone};
	for (size_t i = 0; i < 5; i++) {
		json_t *rb = readback(t.admin, ups[i]);
		IT_CHECK(json_array_size(json_object_get(rb, "derivatives")) == 0,
			 "readback of %s lists a derivative", ups[i]);
		json_decref(rb);
	}

	/* with current revisions it works */
	char ok[ID_MAX];
	derive(writer, "summary", df_add(df_add(df(r2, 1), r3, 3), r1, 2),
	       "qzdrverr fresh summary", ok);
	dl1 = list_all(t.admin, "/v1/memory/derivatives");
	expect_id_set(dl1, "derivative_id", "derivatives after one good creation", de, ok, NULL);
	json_decref(dl1);

	json_decref(dl0);
	free(writer);
	tenant_free(&t);
}

/* ================================================================ assent after admission */

struct admitted {
	char assent[ID_MAX];
	char source[ID_MAX];
	char derivative[ID_MAX];
	char identity[REF_LEN];
};

static void admit(const char *granter, const char *writer, const char *owner, const char *uri,
		  const char *expires_at, const char *summary, struct admitted *a)
{
	char phash[REF_LEN];
	sha256_str(uri, phash);
	identity_of(owner, uri, phash, a->identity);
	assent_grant(granter, owner, a->identity, expires_at, a->assent);
	json_t *s = create_source(writer, pointer_body(uri, phash, owner, a->assent), a->source);
	IT_CHECK(it_json_str_is(s, "source_identity", a->identity) &&
		     it_json_str_is(s, "effective_retrieval_state", "eligible"),
		 "admission of %s", uri);
	json_decref(s);
	derive(writer, "summary", df(a->source, 1), summary, a->derivative);
}

static void test_assent_revoked_after_admission(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-asnrev");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	char *writer = token_for(&t, "memory:write", "it-writer");
	char *reader = token_for(&t, "memory:read", "it-reader");
	struct admitted a, keep;
	admit(granter, writer, owner, "https://asnrev.example/one", FAR_FUTURE,
	      "qzasnrev summary of a foreign fact", &a);
	admit(granter, writer, owner, "https://asnrev.example/two", FAR_FUTURE,
	      "qzasnkeep summary of another foreign fact", &keep);
	json_t *s = search_ok(reader, "qzasnrev", NULL);
	expect_id_set(items_of(s), "record_id", "search before the assent is revoked",
		      a.derivative, NULL);
	json_decref(s);

	struct it_resp r;
	assent_revoke(granter, a.assent, 2, &r);
	IT_PROBLEM(&r, 409, "stale_revision");
	IT_CHECK(it_json_int(r.json, "current_revision", -1) == 1, "current_revision: %s", r.body);
	it_resp_free(&r);
	expect_state(reader, a.source, "eligible", "", 1);
	assent_revoke(granter, a.assent, 1, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(it_json_str_is(r.json, "assent_id", a.assent) &&
		     it_json_str_is(r.json, "owner", owner) &&
		     it_json_str_is(r.json, "source_identity", a.identity) &&
		     it_json_int(r.json, "revision", -1) == 2 &&
		     it_is_timestamp_ms(it_json_str(r.json, "revoked_at")),
		 "assent revoke answer: %s", r.body);
	it_resp_free(&r);
	assent_revoke(granter, a.assent, 2, &r);
	IT_PROBLEM(&r, 409, "already_revoked");
	it_resp_free(&r);

	/* at once: the source and its derivative */
	expect_state(reader, a.source, "ineligible", "assent_revoked", 1);
	expect_state(reader, a.derivative, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzasnrev", "after the assent was revoked");
	json_t *ex = explain_ok(reader, "qzasnrev", NULL);
	expect_ex(ex, a.derivative, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	json_t *l = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(l, "source_id", "ineligible sources", a.source, NULL);
	json_decref(l);
	json_t *rb = readback(reader, a.source);
	IT_CHECK(json_is_false(json_object_get(rb, "revoked")) &&
		     it_json_int(rb, "residual_eligible", -1) == 0 &&
		     json_is_true(json_object_get(rb, "clean")) &&
		     it_json_str_is(json_array_get(json_object_get(rb, "derivatives"), 0),
				    "effective_retrieval_state", "ineligible"),
		 "readback after the assent was revoked");
	json_decref(rb);
	/* the other admission (another assent) is untouched */
	expect_state(reader, keep.source, "eligible", "", 1);
	s = search_ok(reader, "qzasnkeep", NULL);
	expect_id_set(items_of(s), "record_id", "the other foreign summary", keep.derivative, NULL);
	json_decref(s);

	free(owner);
	free(granter);
	free(writer);
	free(reader);
	tenant_free(&t);
}

static void test_assent_expired_after_admission(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-asnexp");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	char *reader = token_for(&t, "memory:read", "it-reader");
	struct admitted a;
	char when[IT_TIME_LEN];
	long long expires = it_now_ms() + 3000;
	it_rfc3339_ms(expires, when);
	admit(granter, t.admin, owner, "https://asnexp.example/one", when,
	      "qzasnexp summary of a foreign fact", &a);
	json_t *s = search_ok(reader, "qzasnexp", NULL);
	IT_CHECK(it_now_ms() < expires, "the test was too slow to see the live assent");
	expect_id_set(items_of(s), "record_id", "search before expiry", a.derivative, NULL);
	json_decref(s);
	expect_state(reader, a.source, "eligible", "", 1);

	it_sleep_until_ms(expires + 600);
	expect_state(reader, a.source, "ineligible", "assent_expired", 1);
	expect_state(reader, a.derivative, "ineligible", "upstream_ineligible", 1);
	expect_nothing_retrieved(reader, "qzasnexp", "after the assent expired");
	json_t *ex = explain_ok(reader, "qzasnexp", NULL);
	expect_ex(ex, a.derivative, false, "upstream_ineligible", NULL, 1);
	json_decref(ex);
	json_t *l = list_all(reader, "/v1/memory/sources?state=ineligible");
	expect_id_set(l, "source_id", "ineligible sources after expiry", a.source, NULL);
	json_decref(l);
	l = list_all(reader, "/v1/memory/sources?state=eligible");
	expect_id_set(l, "source_id", "eligible sources after expiry", NULL);
	json_decref(l);
	/* a derivative of it can no longer be made */
	struct it_resp r;
	post_derivative(t.admin, "summary", df(a.source, 1), "qzasnexp late summary", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);

	free(owner);
	free(granter);
	free(reader);
	tenant_free(&t);
}

/* ================================================================ load receipt */

struct lr_item {
	char id[ID_MAX];
	char hash[REF_LEN];
	char *content;
	size_t bytes;
};

static const struct lr_item *lr_find(const struct lr_item *items, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++) {
		if (id && strcmp(items[i].id, id) == 0)
			return &items[i];
	}
	return NULL;
}

/* new: one context call with max_items/budget (0: absent) checked against the rules */
static json_t *check_context_call(const char *token, const char *query, int max_items,
				  int budget, const struct lr_item *items, size_t n,
				  const json_t *search_order)
{
	json_t *b = qbody(query, NULL);
	if (max_items)
		json_object_set_new(b, "max_items", json_integer(max_items));
	if (budget)
		json_object_set_new(b, "budget_tokens", json_integer(budget));
	json_t *cx = retrieve_ok(CONTEXT, token, b);
	char *text = json_dumps(cx, JSON_COMPACT);
	const json_t *rc = json_object_get(cx, "load_receipt");
	long long cand = it_json_int(rc, "candidate_count", -1);
	long long mi = max_items ? max_items : 8;
	long long left = budget ? budget : 4000;
	IT_CHECK(cand == (long long)n, "candidate_count is not %zu: %s", n, text);
	IT_CHECK(it_json_int(rc, "selected_count", -1) == (cand < mi ? cand : mi),
		 "selected_count is not min(candidates, max_items): %s", text);

	const json_t *loaded = json_object_get(rc, "loaded_inputs");
	const json_t *supp = json_object_get(rc, "suppressed_inputs");
	long long delivered = 0, suppressed = 0;
	for (long long rank = 1; rank <= cand; rank++) {
		char inp[32];
		snprintf(inp, sizeof inp, "inp_%lld", rank);
		const json_t *l = item_by(loaded, "input_id", inp);
		const json_t *s = item_by(supp, "input_id", inp);
		IT_CHECK((l != NULL) != (s != NULL),
			 "rank %lld is not exactly once in loaded or suppressed inputs: %s", rank,
			 text);
		const json_t *e = l ? l : s;
		IT_CHECK(it_json_int(e, "rank", -1) == rank, "%s: rank is not %lld: %s", inp, rank,
			 text);
		const char *rid = it_json_str(e, "record_id");
		const struct lr_item *want = lr_find(items, n, rid);
		IT_CHECK(want != NULL, "%s names an unknown record: %s", inp, text);
		IT_CHECK(it_json_str_is(e, "source_hash", want->hash),
			 "%s: source_hash is not the record's content_hash: %s", inp, text);
		/* candidates are in search's rank order */
		IT_CHECK(it_json_str_is(json_array_get(items_of(search_order), (size_t)rank - 1),
					"record_id", rid),
			 "rank %lld differs from search's order: %s", rank, text);
		long long tokens = (long long)((want->bytes + 3) / 4);
		const char *expect_reason = NULL;
		if (rank > mi)
			expect_reason = "beyond_limit";
		else if (tokens > left)
			expect_reason = "budget_exceeded";
		else
			left -= tokens;
		if (expect_reason) {
			IT_CHECK(s != NULL, "%s (%lld tokens) should be suppressed (%s): %s", inp,
				 tokens, expect_reason, text);
			IT_CHECK(it_json_str_is(s, "suppression_reason", expect_reason),
				 "%s: suppression_reason is not %s: %s", inp, expect_reason, text);
			suppressed++;
		} else {
			IT_CHECK(l != NULL, "%s (%lld tokens) should be delivered: %s", inp, tokens,
				 text);
			char dh[REF_LEN];
			sha256_ref(want->content, want->bytes, dh);
			IT_CHECK(it_json_str_is(l, "delivered_hash", dh),
				 "%s: delivered_hash is not sha256 of the delivered bytes: %s", inp,
				 text);
			const json_t *ci = item_by(items_of(cx), "input_id", inp);
			IT_CHECK(ci && it_json_str_is(ci, "record_id", rid) &&
				     it_json_str_is(ci, "content", want->content) &&
				     it_json_int(ci, "revision", -1) == 1,
				 "%s: the delivered item is not the record's whole content", inp);
			char got_dh[REF_LEN];
			const char *c = it_json_str(ci, "content");
			sha256_ref(c, strlen(c), got_dh);
			IT_CHECK(strcmp(got_dh, dh) == 0, "delivered bytes differ");
			delivered++;
		}
	}
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == delivered &&
		     it_json_int(rc, "suppressed_count", -1) == suppressed,
		 "delivered/suppressed counts are not %lld/%lld: %s", delivered, suppressed, text);
	free(text);
	return cx;
}

static void expect_stored_receipt(const char *token, const json_t *cx, const char *secret)
{
	const json_t *rc = json_object_get(cx, "load_receipt");
	char path[256];
	struct it_resp r;
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", it_json_str(rc, "receipt_id"));
	get(path, token, &r);
	IT_STATUS(&r, 200);
	char *want = json_dumps(rc, JSON_COMPACT);
	IT_CHECK(json_equal(r.json, rc), "the stored receipt differs:\n  answer: %s\n  stored: %s",
		 want ? want : "?", r.body);
	free(want);
	IT_CHECK(!contains(r.body, secret) && !contains(r.body, "lorem"),
		 "the stored receipt holds content: %s", r.body);
	it_resp_free(&r);
}

static void test_load_receipt(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-lrc");
	char *reader = token_for(&t, "memory:read", "it-reader");
	const char *secret = "qzlrcbodysecret";
	/* 400, 800 (multi-byte: fewer characters than bytes), 1200, 2000, 100 bytes:
	 * 100, 200, 300, 500, 25 tokens; the marker repeated so that ranks differ */
	struct lr_item items[5];
	memset(items, 0, sizeof items);
	items[0].content = text_of("qzlrc qzlrc qzlrc qzlrcbodysecret one", 400);
	static const char mb_prefix[] = "qzlrc qzlrc qzlrcbodysecret ";
	/* "café " is 6 bytes and 5 characters */
	char *mb = repeat_text(mb_prefix, "café ", (800 - (sizeof mb_prefix - 1)) / 6, "");
	size_t mbl = strlen(mb);
	IT_CHECK(mbl <= 800, "multi-byte text too long");
	items[1].content = malloc(801);
	assert_non_null(items[1].content);
	memcpy(items[1].content, mb, mbl);
	memset(items[1].content + mbl, 'z', 800 - mbl);
	items[1].content[800] = '\0';
	free(mb);
	items[2].content = text_of("qzlrc qzlrc qzlrc qzlrc qzlrcbodysecret three", 1200);
	items[3].content = text_of("qzlrc qzlrc qzlrc qzlrc qzlrc qzlrcbodysecret four", 2000);
	items[4].content = text_of("qzlrc qzlrcbodysecret five", 100);
	for (size_t i = 0; i < 5; i++) {
		items[i].bytes = strlen(items[i].content);
		note(t.admin, items[i].content, NULL, NULL, items[i].id, items[i].hash);
	}
	IT_CHECK(items[0].bytes == 400 && items[1].bytes == 800 && items[2].bytes == 1200 &&
		     items[3].bytes == 2000 && items[4].bytes == 100,
		 "content sizes");
	char cold[ID_MAX];
	note(t.admin, "qzlrc qzlrcbodysecret cold, never a candidate", "cold", NULL, cold, NULL);

	json_t *so = search_ok(reader, "qzlrc", NULL);
	IT_CHECK(json_array_size(items_of(so)) == 5, "search finds the five active records");

	/* beyond_limit and budget_exceeded together: 500 tokens never fit 450 */
	json_t *cx = check_context_call(reader, "qzlrc", 4, 450, items, 5, so);
	const json_t *rc = json_object_get(cx, "load_receipt");
	size_t i;
	const json_t *e;
	bool beyond = false, budget = false;
	json_array_foreach (json_object_get(rc, "suppressed_inputs"), i, e) {
		beyond |= it_json_str_is(e, "suppression_reason", "beyond_limit");
		budget |= it_json_str_is(e, "suppression_reason", "budget_exceeded");
	}
	IT_CHECK(beyond && it_json_int(rc, "delivered_count", -1) >= 1,
		 "max_items 4 of 5: a beyond_limit and a delivery expected");
	char *text = json_dumps(cx, JSON_COMPACT);
	IT_CHECK(!contains(text, cold), "the cold record is in the receipt: %s", text);
	free(text);
	expect_stored_receipt(reader, cx, secret);
	char first_id[ID_MAX];
	copy_str(first_id, sizeof first_id, it_json_str(rc, "receipt_id"));
	json_decref(cx);
	cx = check_context_call(reader, "qzlrc", 5, 450, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	budget = false;
	json_array_foreach (json_object_get(rc, "suppressed_inputs"), i, e)
		budget |= it_json_str_is(e, "suppression_reason", "budget_exceeded");
	IT_CHECK(budget, "the 500-token item must be budget_exceeded under 450");
	IT_CHECK(!it_json_str_is(rc, "receipt_id", first_id), "two calls, one receipt id");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* max_items 1: one delivered, four beyond_limit */
	cx = check_context_call(reader, "qzlrc", 1, 32000, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 1 &&
		     it_json_int(rc, "suppressed_count", -1) == 4,
		 "max_items 1: 1 delivered, 4 suppressed");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* budget 1: everything selected is budget_exceeded */
	cx = check_context_call(reader, "qzlrc", 20, 1, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 0 &&
		     it_json_int(rc, "selected_count", -1) == 5 && json_array_size(items_of(cx)) == 0,
		 "budget 1: nothing delivered");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	/* defaults: max_items 8, budget 4000 (1125 tokens in all) */
	cx = check_context_call(reader, "qzlrc", 0, 0, items, 5, so);
	rc = json_object_get(cx, "load_receipt");
	IT_CHECK(it_json_int(rc, "delivered_count", -1) == 5, "defaults deliver all five");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);

	/* tokens = ceil(bytes / 4): 401 bytes are 101 tokens */
	struct lr_item edge;
	memset(&edge, 0, sizeof edge);
	edge.content = text_of("qzceiledge qzlrcbodysecret", 401);
	edge.bytes = 401;
	note(t.admin, edge.content, NULL, NULL, edge.id, edge.hash);
	json_t *se = search_ok(reader, "qzceiledge", NULL);
	cx = check_context_call(reader, "qzceiledge", 1, 101, &edge, 1, se);
	IT_CHECK(it_json_int(json_object_get(cx, "load_receipt"), "delivered_count", -1) == 1,
		 "401 bytes do not fit 101 tokens");
	json_decref(cx);
	cx = check_context_call(reader, "qzceiledge", 1, 100, &edge, 1, se);
	IT_CHECK(it_json_int(json_object_get(cx, "load_receipt"), "delivered_count", -1) == 0,
		 "401 bytes fit 100 tokens");
	expect_stored_receipt(reader, cx, secret);
	json_decref(cx);
	json_decref(se);
	free(edge.content);

	/* explain with limit 2: the two best selected, the rest beyond_limit */
	json_t *b = qbody("qzlrc", NULL);
	json_object_set_new(b, "limit", json_integer(2));
	json_t *ex = retrieve_ok(EXPLAIN, reader, b);
	b = qbody("qzlrc", NULL);
	json_object_set_new(b, "limit", json_integer(2));
	json_t *s2 = retrieve_ok(SEARCH, reader, b);
	IT_CHECK(json_array_size(items_of(s2)) == 2, "search limit 2 answers 2");
	json_array_foreach (items_of(so), i, e) {
		const char *id = it_json_str(e, "record_id");
		bool top = array_has_id(items_of(s2), "record_id", id);
		expect_ex(ex, id, top, top ? "selected" : "beyond_limit", "active", 1);
	}
	expect_ex(ex, cold, false, "classification_cold", "cold", 1);
	json_decref(ex);
	json_decref(s2);

	/* unknown receipt */
	struct it_resp r;
	get("/v1/context/load-receipts/" UNKNOWN_LRC, reader, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);

	json_decref(so);
	for (size_t k = 0; k < 5; k++)
		free(items[k].content);
	free(reader);
	tenant_free(&t);
}

/* ================================================================ limits */

static void post_source_raw(const char *token, const char *body, struct it_resp *r)
{
	it_request(&srv, "POST", "/v1/memory/sources", token, body, NULL, r);
}

struct raw_case {
	const char *body;
	const char *code;  /* 422 code */
	const char *field; /* errors[].field prefix, NULL: not checked */
};

static void test_limits(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-lim");
	const char *tok = t.admin;
	struct it_resp r;
	size_t created = 0;
	char id[ID_MAX];

	/* ---- content: 1..65536 bytes */
	char *c = text_of("qzlimbig", 65536);
	note(tok, c, NULL, NULL, id, NULL);
	created++;
	expect_content(tok, id, c);
	free(c);
	c = text_of("qzlimbig", 65537);
	send_json("POST", "/v1/memory/sources", tok, note_body(c, NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	/* bytes, not characters: 21845 × "é " + "a" = 65536 bytes */
	c = repeat_text("", "é ", 21845, "a");
	IT_CHECK(strlen(c) == 65536, "multi-byte content size");
	note(tok, c, NULL, NULL, id, NULL);
	created++;
	free(c);
	c = repeat_text("", "é ", 21845, "ab");
	send_json("POST", "/v1/memory/sources", tok, note_body(c, NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "multi-byte content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	send_json("POST", "/v1/memory/sources", tok, note_body("", NULL, NULL), NULL, &r);
	expect_422(&r, "validation_failed", "content", true, "empty content");
	it_resp_free(&r);

	/* ---- labels: ≤ 32 members, values 1..256 bytes */
	for (int n = 32; n <= 33; n++) {
		json_t *b = note_body("qzlimlabels", NULL, NULL);
		json_t *l = json_object();
		for (int k = 0; k < n; k++) {
			char key[16];
			snprintf(key, sizeof key, "k%02d", k);
			json_object_set_new(l, key, json_string("v"));
		}
		json_object_set_new(b, "labels", l);
		if (n == 32) {
			json_decref(create_source(tok, b, id));
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok, b, NULL, &r);
			expect_422(&r, "validation_failed", "labels", false, "33 labels");
			it_resp_free(&r);
		}
	}
	for (size_t n = 256; n <= 257; n++) {
		char *v = text_of("qzlabelval", n);
		json_t *b = note_body("qzlimlabelvalue", NULL, NULL);
		json_t *l = json_object();
		json_object_set_new(l, "team", json_string(v));
		json_object_set_new(b, "labels", l);
		if (n == 256) {
			json_decref(create_source(tok, b, id));
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok, b, NULL, &r);
			expect_422(&r, "validation_failed", "labels", false,
				   "a label value of 257 bytes");
			it_resp_free(&r);
		}
		free(v);
	}

	/* ---- pointer uri: 1..2048 bytes */
	char hash[REF_LEN];
	sha256_str("qzlim pointer", hash);
	for (size_t n = 2048; n <= 2049; n++) {
		char *uri = text_of("https://qzlim.example/", n);
		for (size_t k = 22; k < n; k++) {
			if (uri[k] == ' ')
				uri[k] = '_';
		}
		if (n == 2048) {
			char want[REF_LEN];
			json_t *s = create_source(tok, pointer_body(uri, hash, NULL, NULL), id);
			identity_of("", uri, hash, want);
			IT_CHECK(it_json_str_is(s, "source_identity", want),
				 "a non-foreign pointer's identity is not sha256(\"\\n\"+uri+\"\\n\"+"
				 "hash)");
			IT_CHECK(it_json_str_is(s, "content_hash", hash),
				 "a pointer's content_hash");
			json_decref(s);
			created++;
		} else {
			send_json("POST", "/v1/memory/sources", tok,
				  pointer_body(uri, hash, NULL, NULL), NULL, &r);
			expect_422(&r, "validation_failed", "pointer", false, "uri of 2049 bytes");
			it_resp_free(&r);
		}
		free(uri);
	}

	/* ---- table of small bodies that must fail */
	static const struct raw_case cases[] = {
	    {"{\"source_kind\":\"note\"}", "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"pointer\":{\"uri\":\"https://a.example/"
	     "\",\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"colour\":\"red\"}", "unknown_field",
	     NULL},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "\",\"extra\":1}}",
	     "unknown_field", NULL},
	    {"{\"source_kind\":\"memo\",\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"source_kind\":7,\"content\":\"x\"}", "validation_failed", "source_kind"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"classification\":\"warm\"}",
	     "validation_failed", "classification"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"thread_id\":\"-bad\"}",
	     "validation_failed", "thread_id"},
	    {"{\"source_kind\":\"note\",\"content\":7}", "validation_failed", "content"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"Bad Key\":\"v\"}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":\"\"}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":7}}",
	     "validation_failed", "labels"},
	    {"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":[]}", "validation_failed",
	     "labels"},
	    /* content_hash formats */
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	     "abcde\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789"
	     "abcdef\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"md5:0123456789abcdef0123456789abcdef\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "0\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"no scheme\","
	     "\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"\","
	     "\"content_hash\":\"sha256:" HEX64 "\"}}",
	     "validation_failed", "pointer"},
	    {"{\"source_kind\":\"document\",\"pointer\":{\"uri\":\"https://a.example/\","
	     "\"content_hash\":\"sha256:" HEX64 "\"},\"foreign\":{\"owner\":\"-bad owner\"}}",
	     "validation_failed", "foreign"},
	    {"[]", "validation_failed", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		post_source_raw(tok, cases[i].body, &r);
		expect_422(&r, cases[i].code, cases[i].field, false, cases[i].body);
		it_resp_free(&r);
	}
	post_source_raw(tok, "{\"source_kind\":", &r);
	IT_PROBLEM(&r, 400, "invalid_json");
	it_resp_free(&r);

	/* ---- a label name is private: errors name a label by its position as sent, and no
	 * label name reaches the answer or the log */
	post_source_raw(tok,
			"{\"source_kind\":\"note\",\"content\":\"x\",\"labels\":{\"team\":\"a\","
			"\"qzsecretlabelname\":\"\",\"Qz Secret Label\":\"v\",\"qzsecretother\":7}}",
			&r);
	expect_422(&r, "validation_failed", "labels[1]", true, "an empty label value");
	IT_CHECK(it_problem_has_field(&r, "labels[2]"), "bad label key not by position: %s", r.body);
	IT_CHECK(it_problem_has_field(&r, "labels[3]"), "bad label value not by position: %s",
		 r.body);
	IT_CHECK(strstr(r.body, "qzsecret") == NULL && strstr(r.body, "Qz Secret") == NULL,
		 "a label name in the 422: %s", r.body);
	it_resp_free(&r);
	IT_CHECK(!it_log_contains(&srv, "qzsecret") && !it_log_contains(&srv, "Qz Secret"),
		 "a label name in the log");
	json_t *all = list_all(tok, "/v1/memory/sources");
	IT_CHECK(json_array_size(all) == created, "%zu sources stored, expected %zu",
		 json_array_size(all), created);
	json_decref(all);

	/* ---- query 1..1000 bytes, search/explain limit 1..50, context bounds */
	char *q1000 = text_of("qzlimquery", 1000);
	char *q1001 = text_of("qzlimquery", 1001);
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	for (size_t k = 0; k < 3; k++) {
		json_decref(retrieve_ok(eps[k], tok, qbody(q1000, NULL)));
		retrieve(eps[k], tok, qbody(q1001, NULL), &r);
		expect_422(&r, "validation_failed", "query", true, "query of 1001 bytes");
		it_resp_free(&r);
		retrieve(eps[k], tok, qbody("", NULL), &r);
		expect_422(&r, "validation_failed", "query", true, "empty query");
		it_resp_free(&r);
		retrieve(eps[k], tok, json_object(), &r);
		expect_422(&r, "validation_failed", "query", true, "no query");
		it_resp_free(&r);
		retrieve(eps[k], tok, qbody("qzlim", "-bad"), &r);
		expect_422(&r, "validation_failed", "thread_id", true, "bad thread_id");
		it_resp_free(&r);
		json_t *b = qbody("qzlim", NULL);
		json_object_set_new(b, "colour", json_string("red"));
		retrieve(eps[k], tok, b, &r);
		expect_422(&r, "unknown_field", NULL, false, "unknown retrieval field");
		it_resp_free(&r);
	}
	free(q1000);
	free(q1001);

	struct {
		enum endpoint ep;
		const char *field;
		long long lo, hi;
	} ranges[] = {
	    {SEARCH, "limit", 1, 50},
	    {EXPLAIN, "limit", 1, 50},
	    {CONTEXT, "max_items", 1, 20},
	    {CONTEXT, "budget_tokens", 1, 32000},
	};
	for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
		long long ok[] = {ranges[k].lo, ranges[k].hi};
		long long bad[] = {ranges[k].lo - 1, ranges[k].hi + 1};
		for (size_t j = 0; j < 2; j++) {
			json_t *b = qbody("qzlimbig", NULL);
			json_object_set_new(b, ranges[k].field, json_integer(ok[j]));
			json_decref(retrieve_ok(ranges[k].ep, tok, b));
			b = qbody("qzlimbig", NULL);
			json_object_set_new(b, ranges[k].field, json_integer(bad[j]));
			retrieve(ranges[k].ep, tok, b, &r);
			char what[96];
			snprintf(what, sizeof what, "%s = %lld", ranges[k].field, bad[j]);
			expect_422(&r, "validation_failed", ranges[k].field, true, what);
			it_resp_free(&r);
		}
		json_t *b = qbody("qzlimbig", NULL);
		json_object_set_new(b, ranges[k].field, json_real(1.5));
		retrieve(ranges[k].ep, tok, b, &r);
		expect_422(&r, "validation_failed", ranges[k].field, true, "a fractional count");
		it_resp_free(&r);
		b = qbody("qzlimbig", NULL);
		json_object_set_new(b, ranges[k].field, json_string("5"));
		retrieve(ranges[k].ep, tok, b, &r);
		expect_422(&r, "validation_failed", ranges[k].field, true, "a string count");
		it_resp_free(&r);
	}
	/* kinds: 1..2 unique of source|derivative */
	const char *bad_kinds[] = {"[]", "[\"source\",\"source\"]", "[\"thing\"]", "\"source\""};
	for (size_t k = 0; k < sizeof bad_kinds / sizeof *bad_kinds; k++) {
		json_t *b = qbody("qzlimbig", NULL);
		json_object_set_new(b, "kinds", json_loads(bad_kinds[k], JSON_DECODE_ANY, NULL));
		retrieve(SEARCH, tok, b, &r);
		expect_422(&r, "validation_failed", "kinds", false, bad_kinds[k]);
		it_resp_free(&r);
	}
	char src_id[ID_MAX], drv_id[ID_MAX];
	note(tok, "qzlimkinds source", NULL, NULL, src_id, NULL);
	created++;
	derive(tok, "index", df(src_id, 1), "qzlimkinds derivative", drv_id);
	json_t *b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"derivative\"]", 0, NULL));
	json_t *s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [derivative]", drv_id, NULL);
	json_decref(s);
	b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"source\"]", 0, NULL));
	s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [source]", src_id, NULL);
	json_decref(s);
	b = qbody("qzlimkinds", NULL);
	json_object_set_new(b, "kinds", json_loads("[\"derivative\",\"source\"]", 0, NULL));
	s = retrieve_ok(SEARCH, tok, b);
	expect_id_set(items_of(s), "record_id", "kinds [both]", src_id, drv_id, NULL);
	json_decref(s);

	/* ---- derivatives: derived_from 1..32 unique, content 1..65536, kind */
	json_t *roots = json_array();
	for (int k = 0; k < 33; k++) {
		char content[64], rid[ID_MAX];
		snprintf(content, sizeof content, "qzlimroot number %d", k);
		note(tok, content, NULL, NULL, rid, NULL);
		created++;
		df_add(roots, rid, 1);
	}
	json_t *from32 = json_deep_copy(roots);
	json_array_remove(from32, 32);
	char d32[ID_MAX];
	derive(tok, "index", from32, "qzlimderived from thirty-two", d32);
	json_t *dl0 = list_all(tok, "/v1/memory/derivatives");
	post_derivative(tok, "index", json_deep_copy(roots), "qzlimderived from 33", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "derived_from of 33");
	it_resp_free(&r);
	post_derivative(tok, "index", json_array(), "qzlimderived from none", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "empty derived_from");
	it_resp_free(&r);
	json_t *dup = df_add(df(src_id, 1), src_id, 1);
	post_derivative(tok, "index", dup, "qzlimderived twice", &r);
	expect_422(&r, "validation_failed", "derived_from", false, "duplicate upstream");
	it_resp_free(&r);
	post_derivative(tok, "essay", df(src_id, 1), "qzlim essay", &r);
	expect_422(&r, "validation_failed", "kind", true, "kind essay");
	it_resp_free(&r);
	c = text_of("qzlimderived", 65537);
	post_derivative(tok, "index", df(src_id, 1), c, &r);
	expect_422(&r, "validation_failed", "content", true, "derivative content of 65537 bytes");
	it_resp_free(&r);
	free(c);
	c = text_of("qzlimderived", 65536);
	char d64[ID_MAX];
	derive(tok, "index", df(src_id, 1), c, d64);
	free(c);
	post_derivative(tok, "index", df(src_id, 1), "", &r);
	expect_422(&r, "validation_failed", "content", true, "empty derivative content");
	it_resp_free(&r);
	it_request(&srv, "POST", "/v1/memory/derivatives", tok,
		   "{\"kind\":\"index\",\"derived_from\":[{\"source_id\":\"x\"}],\"content\":\"a\"}",
		   NULL, &r);
	expect_422(&r, "validation_failed", "derived_from", false, "an upstream without revision");
	it_resp_free(&r);
	json_t *ub = derivative_body("index", df(src_id, 1), "qzlimderived unknown");
	json_object_set_new(ub, "x", json_integer(1));
	send_json("POST", "/v1/memory/derivatives", tok, ub, NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	json_t *dl1 = list_all(tok, "/v1/memory/derivatives");
	IT_CHECK(json_array_size(dl1) == json_array_size(dl0) + 1 &&
		     array_has_id(dl1, "derivative_id", d64),
		 "refused derivatives were stored");
	size_t di;
	const json_t *de;
	json_array_foreach (dl0, di, de) {
		const json_t *now = item_by(dl1, "derivative_id", it_json_str(de, "derivative_id"));
		IT_CHECK(now && json_equal(now, de), "a listed derivative changed");
	}
	json_decref(dl0);
	json_decref(dl1);
	json_decref(roots);

	/* ---- classification, revocation, assents */
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", src_id);
	const char *cls_bad[] = {
	    "{\"expected_revision\":0,\"classification\":\"cold\"}",
	    "{\"expected_revision\":1,\"classification\":\"warm\"}",
	    "{\"classification\":\"cold\"}",
	    "{\"expected_revision\":1}",
	    "{\"expected_revision\":\"1\",\"classification\":\"cold\"}",
	};
	const char *cls_field[] = {"expected_revision", "classification", "expected_revision",
				   "classification", "expected_revision"};
	for (size_t k = 0; k < 5; k++) {
		it_request(&srv, "PUT", path, tok, cls_bad[k], NULL, &r);
		expect_422(&r, "validation_failed", cls_field[k], true, cls_bad[k]);
		it_resp_free(&r);
	}
	it_request(&srv, "PUT", path, tok,
		   "{\"expected_revision\":1,\"classification\":\"cold\",\"why\":\"x\"}", NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);
	snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", src_id);
	const char *rev_bad[] = {
	    "{\"expected_revision\":1,\"reason_code\":\"bad code!\"}",
	    "{\"expected_revision\":1}",
	    "{\"expected_revision\":1,\"reason_code\":\"\"}",
	};
	for (size_t k = 0; k < 3; k++) {
		it_request(&srv, "POST", path, tok, rev_bad[k], NULL, &r);
		expect_422(&r, "validation_failed", "reason_code", true, rev_bad[k]);
		it_resp_free(&r);
	}
	expect_state(tok, src_id, "eligible", "", 1);
	char past[IT_TIME_LEN];
	it_rfc3339_ms(it_now_ms() - 60000, past);
	char ident[REF_LEN];
	sha256_str("qzlim identity", ident);
	struct {
		const char *owner, *identity, *expires, *field, *what;
	} asn_bad[] = {
	    {"owner-a", ident, past, "expires_at", "assent expires_at in the past"},
	    {"owner-a", ident, "tomorrow", "expires_at", "assent expires_at not a time"},
	    {"owner-a", ident, "2099-02-30T00:00:00.000Z", "expires_at", "assent on 30 February"},
	    {"owner-a", "abc", FAR_FUTURE, "source_identity", "assent identity abc"},
	    {"owner-a", "sha256:ABCDEF", FAR_FUTURE, "source_identity", "assent identity short"},
	    {"-owner", ident, FAR_FUTURE, "owner", "assent owner -owner"},
	};
	for (size_t k = 0; k < sizeof asn_bad / sizeof *asn_bad; k++) {
		assent_post(tok, asn_bad[k].owner, asn_bad[k].identity, asn_bad[k].expires, &r);
		expect_422(&r, "validation_failed", asn_bad[k].field, true, asn_bad[k].what);
		it_resp_free(&r);
	}
	it_request(&srv, "POST", "/v1/assents", tok,
		   "{\"owner\":\"owner-a\",\"source_identity\":\"sha256:" HEX64
		   "\",\"expires_at\":\"" FAR_FUTURE "\",\"scope\":\"all\"}",
		   NULL, &r);
	IT_PROBLEM(&r, 422, "unknown_field");
	it_resp_free(&r);

	/* ---- list query parameters */
	const char *bad_lists[] = {
	    "/v1/memory/sources?limit=0",	    "/v1/memory/sources?limit=201",
	    "/v1/memory/sources?state=maybe",	    "/v1/memory/sources?classification=warm",
	    "/v1/memory/sources?source_kind=memo", "/v1/memory/derivatives?limit=0",
	    "/v1/memory/derivatives?limit=201",
	};
	for (size_t k = 0; k < sizeof bad_lists / sizeof *bad_lists; k++) {
		get(bad_lists[k], tok, &r);
		if (r.status != 422)
			fprintf(stderr, "  list: %s\n", bad_lists[k]);
		IT_PROBLEM(&r, 422, "validation_failed");
		it_resp_free(&r);
	}
	get("/v1/memory/sources?limit=1", tok, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_array_size(json_object_get(r.json, "items")) == 1 &&
		     json_is_string(json_object_get(r.json, "next_cursor")),
		 "limit=1 page: %s", r.body);
	it_resp_free(&r);
	all = list_all(tok, "/v1/memory/sources");
	IT_CHECK(json_array_size(all) == created, "%zu sources stored, expected %zu",
		 json_array_size(all), created);
	json_decref(all);
	tenant_free(&t);
}

/* ================================================================ tenant isolation */

static void expect_404(const char *method, const char *path, const char *token, json_t *body)
{
	struct it_resp r;
	if (body)
		send_json(method, path, token, body, NULL, &r);
	else
		it_request(&srv, method, path, token, NULL, NULL, &r);
	IT_PROBLEM(&r, 404, "not_found");
	it_resp_free(&r);
}

static json_t *exp_body(long long rev)
{
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(rev));
	return b;
}

static void test_tenant_isolation(void **state)
{
	(void)state;
	struct tenant a, b;
	tenant_new(&a, "mem-iso-a");
	tenant_new(&b, "mem-iso-b");
	char *owner = it_unique("owner");
	char *granter_a = token_for(&a, "assent:grant", owner);
	char s[ID_MAX], cold[ID_MAX], d[ID_MAX], asn[ID_MAX], f[ID_MAX], sb[ID_MAX];
	note(a.admin, "qziso tenant a source qzisoasecret", NULL, NULL, s, NULL);
	note(a.admin, "qziso tenant a cold source", "cold", NULL, cold, NULL);
	derive(a.admin, "summary", df(s, 1), "qziso tenant a summary", d);
	const char *uri = "https://qziso.example/fact";
	char phash[REF_LEN], ident[REF_LEN];
	sha256_str("qziso fact", phash);
	identity_of(owner, uri, phash, ident);
	assent_grant(granter_a, owner, ident, FAR_FUTURE, asn);
	json_decref(create_source(a.admin, pointer_body(uri, phash, owner, asn), f));
	json_t *cx = context_ok(a.admin, "qziso", NULL);
	char lrc[ID_MAX];
	copy_str(lrc, sizeof lrc, it_json_str(json_object_get(cx, "load_receipt"), "receipt_id"));
	json_decref(cx);

	/* B gets 404 for every one of A's resources */
	char path[256];
	const char *ids[] = {s, cold, d, f};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "/v1/memory/sources/%s", ids[i]);
		expect_404("GET", path, b.admin, NULL);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/content", ids[i]);
		expect_404("GET", path, b.admin, NULL);
	}
	const char *srcs[] = {s, cold, f};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "/v1/memory/sources/%s/readback", srcs[i]);
		expect_404("GET", path, b.admin, NULL);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", srcs[i]);
		json_t *body = exp_body(1);
		json_object_set_new(body, "classification", json_string("cold"));
		expect_404("PUT", path, b.admin, body);
		snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", srcs[i]);
		body = exp_body(1);
		json_object_set_new(body, "reason_code", json_string("owner_request"));
		expect_404("POST", path, b.admin, body);
	}
	snprintf(path, sizeof path, "/v1/memory/derivatives/%s", d);
	expect_404("GET", path, b.admin, NULL);
	snprintf(path, sizeof path, "/v1/assents/%s/revoke", asn);
	expect_404("POST", path, b.admin, exp_body(1));
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", lrc);
	expect_404("GET", path, b.admin, NULL);
	expect_404("POST", "/v1/memory/derivatives", b.admin,
		   derivative_body("summary", df(s, 1), "qziso b's summary of a's source"));
	expect_404("POST", "/v1/memory/derivatives", b.admin,
		   derivative_body("summary", df(d, 1), "qziso b's summary of a's derivative"));
	/* A's assent is no assent for B (same owner name, same identity) */
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", b.admin, pointer_body(uri, phash, owner, asn), NULL,
		  &r);
	IT_PROBLEM(&r, 403, "assent_invalid");
	IT_CHECK(it_json_str_is(r.json, "source_identity", ident), "source_identity: %s", r.body);
	it_resp_free(&r);

	/* B's own records only, in every list and retrieval */
	note(b.admin, "qziso tenant b source", NULL, NULL, sb, NULL);
	const char *a_ids[] = {s, cold, d, f, asn, lrc};
	const char *b_paths[] = {"/v1/memory/sources?limit=200", "/v1/memory/derivatives?limit=200",
				 "/v1/memory/sources?state=ineligible&limit=200",
				 "/v1/audit?limit=200"};
	for (size_t i = 0; i < sizeof b_paths / sizeof *b_paths; i++) {
		get(b_paths[i], b.admin, &r);
		IT_STATUS(&r, 200);
		for (size_t k = 0; k < 6; k++)
			IT_CHECK(!contains(r.body, a_ids[k]), "%s (tenant B) mentions %s: %s",
				 b_paths[i], a_ids[k], r.body);
		it_resp_free(&r);
	}
	json_t *l = list_all(b.admin, "/v1/memory/sources");
	expect_id_set(l, "source_id", "tenant B's sources", sb, NULL);
	json_decref(l);
	l = list_all(b.admin, "/v1/memory/derivatives");
	expect_id_set(l, "derivative_id", "tenant B's derivatives", NULL);
	json_decref(l);
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	for (size_t i = 0; i < 3; i++) {
		retrieve(eps[i], b.admin, qbody("qziso", NULL), &r);
		IT_STATUS(&r, 200);
		for (size_t k = 0; k < 6; k++)
			IT_CHECK(!contains(r.body, a_ids[k]), "%s (tenant B) mentions %s: %s",
				 endpoint_path(eps[i]), a_ids[k], r.body);
		IT_CHECK(!contains(r.body, "qzisoasecret"), "tenant B sees A's content");
		expect_id_set(items_of(r.json), "record_id", endpoint_path(eps[i]), sb, NULL);
		it_resp_free(&r);
	}
	snprintf(path, sizeof path, "/v1/audit?resource_type=source&resource_id=%s", s);
	l = list_all(b.admin, path);
	IT_CHECK(json_array_size(l) == 0, "tenant B reads A's audit records");
	json_decref(l);

	/* A's records are as they were */
	expect_state(a.admin, s, "eligible", "", 1);
	expect_state(a.admin, cold, "ineligible", "classification_cold", 1);
	expect_state(a.admin, d, "eligible", "", 1);
	expect_state(a.admin, f, "eligible", "", 1);
	json_t *sa = search_ok(a.admin, "qziso", NULL);
	expect_id_set(items_of(sa), "record_id", "tenant A's search", s, d, NULL);
	json_decref(sa);
	IT_CHECK(audit_count(a.admin, "source", s) == 1 && audit_count(a.admin, "assent", asn) == 1,
		 "B's refused writes were audited in A");

	free(owner);
	free(granter_a);
	tenant_free(&a);
	tenant_free(&b);
}

/* ================================================================ audit */

/* new: the audit records of one resource, after checking the chain and verify */
static json_t *audit_of(const char *token, const char *type, const char *id)
{
	char path[512];
	snprintf(path, sizeof path, "/v1/audit?resource_type=%s&resource_id=%s", type, id);
	json_t *recs = list_all(token, path);
	size_t i;
	json_t *rec;
	const char *prev = NULL;
	json_array_foreach (recs, i, rec) {
		IT_CHECK(it_json_str_is(rec, "resource_type", type) &&
			     it_json_str_is(rec, "resource_id", id),
			 "audit record of another resource");
		IT_CHECK(i == 0 ? it_json_has_null(rec, "prev_hash")
				: it_json_str_is(rec, "prev_hash", prev),
			 "%s %s record %zu: prev_hash breaks the chain", type, id, i);
		prev = it_json_str(rec, "hash");
		IT_CHECK(it_is_sha256_ref(prev), "hash is malformed");
		IT_CHECK(json_is_object(json_object_get(rec, "details")), "details is not an object");
	}
	snprintf(path, sizeof path, "/v1/audit/verify?resource_type=%s&resource_id=%s", type, id);
	struct it_resp r;
	get(path, token, &r);
	IT_STATUS(&r, 200);
	IT_CHECK(json_is_true(json_object_get(r.json, "ok")) &&
		     it_json_int(r.json, "checked", -1) == (long long)json_array_size(recs),
		 "%s: %s", path, r.body);
	it_resp_free(&r);
	return recs;
}

static void expect_action(const json_t *recs, size_t i, const char *action, long long before,
			  long long after)
{
	const json_t *rec = json_array_get(recs, i);
	char *text = json_dumps(recs, JSON_COMPACT);
	IT_CHECK(it_json_str_is(rec, "action", action), "record %zu is not %s: %s", i, action,
		 text);
	if (before >= 0)
		IT_CHECK(it_json_int(rec, "revision_before", -1) == before &&
			     it_json_int(rec, "revision_after", -1) == after,
			 "record %zu (%s): revisions are not %lld → %lld: %s", i, action, before,
			 after, text);
	else
		IT_CHECK(it_json_int(rec, "revision_after", -1) == after,
			 "record %zu (%s): revision_after is not %lld: %s", i, action, after, text);
	IT_CHECK(it_json_str(rec, "actor_token_id") &&
		     strncmp(it_json_str(rec, "actor_token_id"), "tok_", 4) == 0,
		 "record %zu: actor_token_id: %s", i, text);
	free(text);
}

static void test_audit(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-audit");
	char *owner = it_unique("owner");
	char *granter = token_for(&t, "assent:grant", owner);
	const char *uri = "https://qzaudituri.example/secret/path";
	char s[ID_MAX], p[ID_MAX], d[ID_MAX], asn[ID_MAX], asn2[ID_MAX], f[ID_MAX];
	char shash[REF_LEN], phash[REF_LEN], ident[REF_LEN], ident2[REF_LEN];
	const char *content = "qzaudit qzauditcontentsecret words of the source";
	json_t *b = note_body(content, NULL, NULL);
	json_t *labels = json_object();
	json_object_set_new(labels, "qzauditlabelkey", json_string("qzauditlabelvalue"));
	json_object_set_new(b, "labels", labels);
	json_decref(create_source(t.admin, b, s));
	sha256_str(content, shash);
	sha256_str("qzaudit pointed bytes", phash);
	json_decref(create_source(t.admin, pointer_body(uri, phash, NULL, NULL), p));
	derive(t.admin, "summary", df(s, 1), "qzaudit qzauditderivsecret summary", d);
	classify_ok(t.admin, s, 1, "cold", "active");
	classify_ok(t.admin, s, 2, "active", "cold");
	struct it_resp r;
	classify(t.admin, s, 1, "cold", NULL, &r); /* stale: no record */
	IT_PROBLEM(&r, 409, "stale_revision");
	it_resp_free(&r);
	revoke_source(t.admin, s, 3, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	identity_of(owner, uri, phash, ident);
	identity_of(owner, "https://qzaudituri.example/other", phash, ident2);
	assent_grant(granter, owner, ident2, FAR_FUTURE, asn);
	assent_revoke(granter, asn, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	assent_grant(granter, owner, ident, FAR_FUTURE, asn2);
	json_decref(create_source(t.admin, pointer_body(uri, phash, owner, asn2), f));
	/* refused mutations: no record */
	send_json("POST", "/v1/memory/sources", t.admin, pointer_body(uri, phash, owner, asn), NULL,
		  &r);
	IT_PROBLEM(&r, 403, "assent_revoked");
	it_resp_free(&r);
	post_derivative(t.admin, "summary", df(s, 4), "qzaudit qzauditderivsecret late", &r);
	IT_PROBLEM(&r, 409, "upstream_ineligible");
	it_resp_free(&r);

	/* the source: created, classification ×2, revoked */
	json_t *recs = audit_of(t.admin, "source", s);
	IT_CHECK(json_array_size(recs) == 4, "source %s: %zu records, expected 4", s,
		 json_array_size(recs));
	expect_action(recs, 0, "source.created", -1, 1);
	expect_action(recs, 1, "source.classification.updated", 1, 2);
	expect_action(recs, 2, "source.classification.updated", 2, 3);
	expect_action(recs, 3, "source.revoked", 3, 4);
	const json_t *det = json_object_get(json_array_get(recs, 0), "details");
	IT_CHECK(it_json_str_is(det, "content_hash", shash) &&
		     it_json_str_is(det, "source_identity", shash) &&
		     it_json_str_is(det, "classification", "active") &&
		     it_json_str_is(det, "source_kind", "note") &&
		     json_is_false(json_object_get(det, "foreign")),
		 "source.created details");
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 1), "details"),
				"classification", "cold") &&
		     it_json_str_is(json_object_get(json_array_get(recs, 2), "details"),
				    "classification", "active"),
		 "classification details");
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 3), "details"), "reason_code",
				"owner_request"),
		 "source.revoked details");
	json_decref(recs);
	recs = audit_of(t.admin, "source", p);
	IT_CHECK(json_array_size(recs) == 1, "pointer source: one record");
	expect_action(recs, 0, "source.created", -1, 1);
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 0), "details"),
				"content_hash", phash),
		 "pointer source.created details");
	json_decref(recs);
	recs = audit_of(t.admin, "source", f);
	IT_CHECK(json_array_size(recs) == 1, "foreign source: one record");
	expect_action(recs, 0, "source.created", -1, 1);
	det = json_object_get(json_array_get(recs, 0), "details");
	IT_CHECK(json_is_true(json_object_get(det, "foreign")) &&
		     it_json_str_is(det, "source_identity", ident),
		 "foreign source.created details");
	json_decref(recs);
	recs = audit_of(t.admin, "derivative", d);
	IT_CHECK(json_array_size(recs) == 1, "derivative: one record");
	expect_action(recs, 0, "derivative.created", -1, 1);
	det = json_object_get(json_array_get(recs, 0), "details");
	json_t *prov = df(s, 1);
	char dhash[REF_LEN];
	sha256_str("qzaudit qzauditderivsecret summary", dhash);
	IT_CHECK(it_json_str_is(det, "kind", "summary") && it_json_str_is(det, "content_hash", dhash) &&
		     json_equal(json_object_get(det, "provenance"), prov),
		 "derivative.created details");
	json_decref(prov);
	json_decref(recs);
	recs = audit_of(t.admin, "assent", asn);
	IT_CHECK(json_array_size(recs) == 2, "assent: two records");
	expect_action(recs, 0, "assent.granted", -1, 1);
	expect_action(recs, 1, "assent.revoked", 1, 2);
	IT_CHECK(it_json_str_is(json_object_get(json_array_get(recs, 0), "details"),
				"source_identity", ident2),
		 "assent.granted details");
	json_decref(recs);
	recs = audit_of(t.admin, "assent", asn2);
	IT_CHECK(json_array_size(recs) == 1, "live assent: one record");
	expect_action(recs, 0, "assent.granted", -1, 1);
	json_decref(recs);
	IT_CHECK(audit_count(t.admin, "source", NULL) == 6 &&
		     audit_count(t.admin, "derivative", NULL) == 1 &&
		     audit_count(t.admin, "assent", NULL) == 3,
		 "record counts per resource type (6 source, 1 derivative, 3 assent)");

	/* no content, URI or label in any record */
	static const char *const secrets[] = {"qzaudit",	  "qzauditcontentsecret",
					      "qzauditderivsecret", "qzaudituri",
					      "secret/path",	  "qzauditlabelkey",
					      "qzauditlabelvalue"};
	json_t *all = list_all(t.admin, "/v1/audit");
	char *text = json_dumps(all, JSON_COMPACT);
	for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(text, secrets[i]), "the audit log contains \"%s\": %s",
			 secrets[i], text);
	free(text);
	json_decref(all);
	get("/v1/audit?limit=200", t.admin, &r);
	IT_STATUS(&r, 200);
	for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
		IT_CHECK(!contains(r.body, secrets[i]), "the raw audit body contains \"%s\"",
			 secrets[i]);
	it_resp_free(&r);

	free(owner);
	free(granter);
	tenant_free(&t);
}

/* ================================================================ scopes */

static void expect_forbidden(struct it_resp *r, const char *what)
{
	if (r->status != 403)
		fprintf(stderr, "  case: %s\n", what);
	IT_PROBLEM(r, 403, "forbidden");
	it_resp_free(r);
}

static void test_scopes(void **state)
{
	(void)state;
	struct tenant t;
	tenant_new(&t, "mem-scope");
	char *owner = it_unique("owner");
	char *reader = token_for(&t, "memory:read", "it-reader");
	char *writer = token_for(&t, "memory:write", "it-writer");
	char *madmin = token_for(&t, "memory:admin", "it-madmin");
	char *granter = token_for(&t, "assent:grant", owner);
	char *stranger = token_for(&t, "assent:grant", "somebody-else");
	char *other = token_for(&t, "audit:read,events:read,preferences:read", "it-other");
	struct it_resp r;
	char s[ID_MAX], s2[ID_MAX], d[ID_MAX];
	note(writer, "qzscope source by the writer", NULL, NULL, s, NULL);
	note(writer, "qzscope second source", NULL, NULL, s2, NULL);

	/* memory:read cannot create; a bad body is 422 before the scope */
	send_json("POST", "/v1/memory/sources", reader, note_body("qzscope by reader", NULL, NULL),
		  NULL, &r);
	expect_forbidden(&r, "memory:read creates a source");
	json_t *bad = note_body("qzscope bad", NULL, NULL);
	json_object_set_new(bad, "source_kind", json_string("memo"));
	send_json("POST", "/v1/memory/sources", reader, bad, NULL, &r);
	expect_422(&r, "validation_failed", "source_kind", true, "bad body, no scope");
	it_resp_free(&r);
	post_derivative(reader, "summary", df(s, 1), "qzscope reader summary", &r);
	expect_forbidden(&r, "memory:read creates a derivative");
	send_json("POST", "/v1/memory/sources", other, note_body("qzscope by other", NULL, NULL),
		  NULL, &r);
	expect_forbidden(&r, "no memory scope creates a source");
	derive(writer, "summary", df(s, 1), "qzscope writer summary", d);

	/* memory:write cannot classify, revoke, set a thread mode, or read */
	classify(writer, s, 1, "cold", NULL, &r);
	expect_forbidden(&r, "memory:write classifies");
	classify(reader, s, 1, "cold", NULL, &r);
	expect_forbidden(&r, "memory:read classifies");
	revoke_source(writer, s2, 1, "owner_request", &r);
	expect_forbidden(&r, "memory:write revokes");
	revoke_source(reader, s2, 1, "owner_request", &r);
	expect_forbidden(&r, "memory:read revokes");
	json_t *mb = json_object();
	json_object_set_new(mb, "expected_revision", json_integer(0));
	json_object_set_new(mb, "mode", json_string("disabled"));
	send_json("PUT", "/v1/threads/qzscope-thread/memory-mode", writer, mb, NULL, &r);
	expect_forbidden(&r, "memory:write sets a thread mode");
	char path[256];
	const char *reads[] = {"/v1/memory/sources", "/v1/memory/derivatives", NULL, NULL, NULL,
			       NULL};
	char p1[256], p2[256], p3[256], p4[256];
	snprintf(p1, sizeof p1, "/v1/memory/sources/%s", s);
	snprintf(p2, sizeof p2, "/v1/memory/sources/%s/content", s);
	snprintf(p3, sizeof p3, "/v1/memory/sources/%s/readback", s);
	snprintf(p4, sizeof p4, "/v1/memory/derivatives/%s", d);
	reads[2] = p1;
	reads[3] = p2;
	reads[4] = p3;
	reads[5] = p4;
	for (size_t i = 0; i < 6; i++) {
		get(reads[i], writer, &r);
		expect_forbidden(&r, reads[i]);
		get(reads[i], other, &r);
		expect_forbidden(&r, reads[i]);
		get(reads[i], reader, &r);
		IT_STATUS(&r, 200);
		it_resp_free(&r);
		get(reads[i], NULL, &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
	}
	enum endpoint eps[] = {SEARCH, EXPLAIN, CONTEXT};
	char lrc[ID_MAX] = "";
	for (size_t i = 0; i < 3; i++) {
		retrieve(eps[i], writer, qbody("qzscope", NULL), &r);
		expect_forbidden(&r, endpoint_path(eps[i]));
		retrieve(eps[i], NULL, qbody("qzscope", NULL), &r);
		IT_PROBLEM(&r, 401, "unauthenticated");
		it_resp_free(&r);
		json_t *ok = retrieve_ok(eps[i], reader, qbody("qzscope", NULL));
		if (eps[i] == CONTEXT)
			copy_str(lrc, sizeof lrc,
				 it_json_str(json_object_get(ok, "load_receipt"), "receipt_id"));
		json_decref(ok);
	}
	snprintf(path, sizeof path, "/v1/context/load-receipts/%s", lrc);
	get(path, writer, &r);
	expect_forbidden(&r, "memory:write reads a load receipt");
	get(path, reader, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* nothing refused was written */
	expect_state(reader, s, "eligible", "", 1);
	expect_state(reader, s2, "eligible", "", 1);
	json_t *l = list_all(reader, "/v1/memory/sources");
	expect_id_set(l, "source_id", "sources after refused writes", s, s2, NULL);
	json_decref(l);
	l = list_all(reader, "/v1/memory/derivatives");
	expect_id_set(l, "derivative_id", "derivatives after refused writes", d, NULL);
	json_decref(l);

	/* memory:admin classifies and revokes */
	classify_ok(madmin, s, 1, "cold", "active");
	revoke_source(madmin, s2, 1, "owner_request", &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	/* assents: assent:grant, and only for the token's own name unless admin */
	const char *uri = "https://qzscope.example/fact";
	char phash[REF_LEN], ident[REF_LEN];
	sha256_str("qzscope fact", phash);
	identity_of(owner, uri, phash, ident);
	assent_post(writer, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "memory:write grants");
	assent_post(reader, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "memory:read grants");
	assent_post(stranger, owner, ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "assent:grant for another owner");
	assent_post(granter, "somebody-else-entirely", ident, FAR_FUTURE, &r);
	expect_forbidden(&r, "assent:grant (owner) for a third owner");
	assent_post(NULL, owner, ident, FAR_FUTURE, &r);
	IT_PROBLEM(&r, 401, "unauthenticated");
	it_resp_free(&r);
	char asn[ID_MAX], asn_admin[ID_MAX];
	assent_grant(granter, owner, ident, FAR_FUTURE, asn);
	assent_grant(t.admin, owner, ident, FAR_FUTURE, asn_admin);
	assent_revoke(stranger, asn, 1, &r);
	expect_forbidden(&r, "another owner's assent:grant token revokes");
	assent_revoke(writer, asn, 1, &r);
	expect_forbidden(&r, "memory:write revokes an assent");
	/* body before scope before assent */
	send_json("POST", "/v1/memory/sources", reader, pointer_body(uri, phash, owner, NULL), NULL,
		  &r);
	expect_forbidden(&r, "memory:read with a foreign candidate (scope before assent)");
	json_t *inl = note_body("qzscope inline foreign", NULL, NULL);
	json_t *fo = json_object();
	json_object_set_new(fo, "owner", json_string(owner));
	json_object_set_new(inl, "foreign", fo);
	send_json("POST", "/v1/memory/sources", reader, inl, NULL, &r);
	expect_422(&r, "thin_pointer_required", "content", true,
		   "inline foreign by a reader (body before scope)");
	it_resp_free(&r);
	char f[ID_MAX];
	json_decref(create_source(writer, pointer_body(uri, phash, owner, asn), f));
	assent_revoke(granter, asn, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);
	expect_state(reader, f, "ineligible", "assent_revoked", 1);
	assent_revoke(t.admin, asn_admin, 1, &r);
	IT_STATUS(&r, 200);
	it_resp_free(&r);

	free(owner);
	free(reader);
	free(writer);
	free(madmin);
	free(granter);
	free(stranger);
	free(other);
	tenant_free(&t);
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_acceptance1_active_and_cold),
	    cmocka_unit_test(test_acceptance2_explain_cold),
	    cmocka_unit_test(test_acceptance3_stale_and_compensate),
	    cmocka_unit_test(test_acceptance4_foreign_assent),
	    cmocka_unit_test(test_acceptance5_revocation),
	    cmocka_unit_test(test_acceptance6_threads),
	    cmocka_unit_test(test_derivative_chain),
	    cmocka_unit_test(test_derivative_errors),
	    cmocka_unit_test(test_assent_revoked_after_admission),
	    cmocka_unit_test(test_assent_expired_after_admission),
	    cmocka_unit_test(test_load_receipt),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_tenant_isolation),
	    cmocka_unit_test(test_audit),
	    cmocka_unit_test(test_scopes),
	};
	int rc = cmocka_run_group_tests_name("it_memory", tests, group_setup, group_teardown);
	it_cleanup();
	return rc;
}
