/* it_envelopes_* shared helpers (envelope_helpers.h): the seed fixture and the server, tenant
 * A, small helpers, requests, JSON mutations, snapshots, envelope and relevance requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envelope_helpers.h"

struct it_server srv;
json_t *seed;
const json_t *happy;
const json_t *relevance0;
struct tenant ta;
char ws_match[ID_MAX];

/* ================================================================ small helpers */

/* new: `count` copies of the UTF-8 sequence unit, then suffix */
char *repeat_utf8(const char *unit, size_t count, const char *suffix)
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
void hash_of(unsigned long long n, char out[72])
{
	snprintf(out, 72, "sha256:%064llx", n);
}

char *dump(const json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	assert_non_null(t);
	return t;
}

/* new: the compact text of j, which it steals */
char *dump_new(json_t *j)
{
	char *t = dump(j);
	json_decref(j);
	return t;
}

/* appends one reason to why (a NUL-terminated buffer of n bytes) */
void soft(char *why, size_t n, const char *fmt, ...)
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

char *token_for(const char *tenant, const char *scopes, const char *name)
{
	char *tok = it_token(tenant, scopes, name);
	IT_CHECK(tok != NULL, "cannot create a %s token for %s", scopes, tenant);
	return tok;
}

void tenant_new(struct tenant *t, const char *prefix)
{
	t->name = it_unique(prefix);
	t->admin = token_for(t->name, "admin", "it-admin");
	t->rw = token_for(t->name, "envelopes:read,envelopes:write", "it-rw");
	t->reader = token_for(t->name, "envelopes:read", "it-reader");
}

void tenant_free(struct tenant *t)
{
	free(t->name);
	free(t->admin);
	free(t->rw);
	free(t->reader);
	memset(t, 0, sizeof *t);
}

/* body: steals */
void send_json(const char *method, const char *path, const char *token, json_t *body,
	       const char *const *headers, struct it_resp *r)
{
	it_request_json(&srv, method, path, token, body, headers, r);
	json_decref(body);
}

void get(const char *path, const char *token, struct it_resp *r)
{
	it_request(&srv, "GET", path, token, NULL, NULL, r);
}

void expect_422(const struct it_resp *r, const char *code, const char *field, const char *what)
{
	expect_422x(r, code, field, true, what);
}

void expect_etag(const struct it_resp *r, long long rev)
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
void mutate(json_t *root, const char *op, const char *path, const json_t *value)
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
void set_new(json_t *doc, const char *path, json_t *value)
{
	mutate(doc, "set", path, value);
	json_decref(value);
}

void del(json_t *doc, const char *path)
{
	mutate(doc, "delete", path, NULL);
}

/* new: a copy of the happy path / the relevance base */
json_t *happy_copy(void)
{
	return json_deep_copy(happy);
}

json_t *relevance_copy(void)
{
	return json_deep_copy(relevance0);
}

/* ================================================================ snapshots */

/* new: the two files of the happy path with its hashes */
json_t *happy_files(void)
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

const char *happy_root(void)
{
	return it_json_str(json_object_get(happy, "workspace"), "root_hash");
}

const char *happy_head(void)
{
	return it_json_str(json_object_get(happy, "workspace"), "git_head");
}

/* new: {expected_revision, root_hash, git_head, files} (files: steals) */
json_t *snap_body(long long expected, const char *root, const char *head, json_t *files)
{
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision",
			    expected == EXP_NULL ? json_null() : json_integer(expected));
	json_object_set_new(b, "root_hash", json_string(root));
	json_object_set_new(b, "git_head", json_string(head));
	json_object_set_new(b, "files", files);
	return b;
}

void snap_path(const char *ws, char *buf, size_t n)
{
	snprintf(buf, n, "/v1/workspaces/%s/snapshot", ws);
}

/* body: steals */
void snap_put(const char *token, const char *ws, json_t *body, const char *const *headers,
	      struct it_resp *r)
{
	char path[256];
	snap_path(ws, path, sizeof path);
	send_json("PUT", path, token, body, headers, r);
}

/* the PUT/GET answer: {workspace_id, revision, root_hash, git_head, file_count} (+ files) */
void check_snap_answer(const struct it_resp *r, const char *ws, long long rev, const char *root,
		       const char *head, size_t nfiles, bool with_files)
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
void snap_ok(const char *token, const char *ws, long long expected, const char *root,
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
void ws_fresh(char ws[ID_MAX])
{
	char *u = it_unique("ws");
	it_copy_str(ws, ID_MAX, u);
	free(u);
}

/* ================================================================ envelopes */

/* new: {workspace_id?, envelope} (envelope: steals) */
json_t *env_body(const char *ws, json_t *envelope)
{
	json_t *b = json_object();
	if (ws)
		json_object_set_new(b, "workspace_id", json_string(ws));
	json_object_set_new(b, "envelope", envelope);
	return b;
}

/* envelope: steals */
void env_post(const char *token, const char *ws, json_t *envelope, struct it_resp *r)
{
	send_json("POST", "/v1/envelopes", token, env_body(ws, envelope), NULL, r);
}

void env_get(const char *token, const char *id, struct it_resp *r)
{
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s", id);
	get(path, token, r);
}

void env_verify(const char *token, const char *id, struct it_resp *r)
{
	char path[128];
	snprintf(path, sizeof path, "/v1/envelopes/%s/verify", id);
	it_request(&srv, "POST", path, token, "{}", NULL, r);
}

/* body: steals */
void relevance_post(const char *token, json_t *body, struct it_resp *r)
{
	send_json("POST", "/v1/context/relevance-checks", token, body, NULL, r);
}

/* {context_relevance: doc} (doc: steals) */
void relevance_doc(const char *token, json_t *doc, struct it_resp *r)
{
	json_t *b = json_object();
	json_object_set_new(b, "context_relevance", doc);
	relevance_post(token, b, r);
}

/* ================================================================ audit */

/* new: every item of a paginated list, walking next_cursor */
json_t *list_all(const char *token, const char *path)
{
	return it_list_all(&srv, token, path);
}

size_t audit_count(const char *token, const char *type, const char *id)
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

json_t *load_json(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!j)
		fprintf(stderr, "cannot read %s: %s (line %d)\n", path, err.text, err.line);
	return j;
}

int group_setup(void **state)
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

int group_teardown(void **state)
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
void test_setup_tenant(void **state)
{
	(void)state;
	tenant_new(&ta, "env-a");
	ws_fresh(ws_match);
	snap_ok(ta.rw, ws_match, EXP_NULL, happy_root(), happy_head(), happy_files());
}
