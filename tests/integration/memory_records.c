/* it_memory_* shared helpers (memory_helpers.h): sources, derivatives and assents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memory_helpers.h"

/* ================================================================ sources */

json_t *note_body(const char *content, const char *classification, const char *thread)
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

json_t *pointer_body(const char *uri, const char *hash, const char *owner,
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

json_t *create_source(const char *token, json_t *body, char id[ID_MAX])
{
	struct it_resp r;
	send_json("POST", "/v1/memory/sources", token, body, NULL, &r);
	IT_STATUS(&r, 201);
	const char *sid = it_json_str(r.json, "source_id");
	IT_CHECK(it_has_prefix_hex(sid, "src_"), "source_id is not src_ + 32 hex: %s", r.body);
	it_copy_str(id, ID_MAX, sid);
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

void note(const char *token, const char *content, const char *classification,
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

void expect_content(const char *token, const char *id, const char *want)
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

json_t *source_meta(const char *token, const char *id)
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

void expect_state(const char *token, const char *id, const char *state,
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

void classify(const char *token, const char *id, long long expected, const char *cls,
	      const char *const *headers, struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/classification", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "classification", json_string(cls));
	send_json("PUT", path, token, b, headers, r);
}

void classify_ok(const char *token, const char *id, long long expected, const char *cls,
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

void revoke_source(const char *token, const char *id, long long expected,
		   const char *reason, struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/memory/sources/%s/revoke", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	json_object_set_new(b, "reason_code", json_string(reason));
	send_json("POST", path, token, b, NULL, r);
}

json_t *readback(const char *token, const char *id)
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

json_t *df(const char *id, long long rev)
{
	json_t *a = json_array();
	json_t *e = json_object();
	json_object_set_new(e, "source_id", json_string(id));
	json_object_set_new(e, "revision", json_integer(rev));
	json_array_append_new(a, e);
	return a;
}

json_t *df_add(json_t *a, const char *id, long long rev)
{
	json_t *e = json_object();
	json_object_set_new(e, "source_id", json_string(id));
	json_object_set_new(e, "revision", json_integer(rev));
	json_array_append_new(a, e);
	return a;
}

json_t *derivative_body(const char *kind, json_t *from, const char *content)
{
	json_t *b = json_object();
	json_object_set_new(b, "kind", json_string(kind));
	json_object_set_new(b, "derived_from", from);
	json_object_set_new(b, "content", json_string(content));
	return b;
}

void post_derivative(const char *token, const char *kind, json_t *from,
		     const char *content, struct it_resp *r)
{
	send_json("POST", "/v1/memory/derivatives", token, derivative_body(kind, from, content),
		  NULL, r);
}

void derive(const char *token, const char *kind, json_t *from, const char *content,
	    char id[ID_MAX])
{
	struct it_resp r;
	json_t *want = json_deep_copy(from);
	post_derivative(token, kind, from, content, &r);
	IT_STATUS(&r, 201);
	const char *did = it_json_str(r.json, "derivative_id");
	IT_CHECK(it_has_prefix_hex(did, "drv_"), "derivative_id is not drv_ + 32 hex: %s", r.body);
	it_copy_str(id, ID_MAX, did);
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

void assent_post(const char *token, const char *owner, const char *identity,
		 const char *expires_at, struct it_resp *r)
{
	json_t *b = json_object();
	json_object_set_new(b, "owner", json_string(owner));
	json_object_set_new(b, "source_identity", json_string(identity));
	json_object_set_new(b, "expires_at", json_string(expires_at));
	send_json("POST", "/v1/assents", token, b, NULL, r);
}

void assent_grant(const char *token, const char *owner, const char *identity,
		  const char *expires_at, char id[ID_MAX])
{
	struct it_resp r;
	assent_post(token, owner, identity, expires_at, &r);
	IT_STATUS(&r, 201);
	const char *aid = it_json_str(r.json, "assent_id");
	IT_CHECK(it_has_prefix_hex(aid, "asn_"), "assent_id is not asn_ + 32 hex: %s", r.body);
	it_copy_str(id, ID_MAX, aid);
	IT_CHECK(it_json_str_is(r.json, "owner", owner) &&
		     it_json_str_is(r.json, "source_identity", identity) &&
		     it_json_int(r.json, "revision", -1) == 1 &&
		     it_is_timestamp_ms(it_json_str(r.json, "expires_at")),
		 "assent answer: %s", r.body);
	it_resp_free(&r);
}

void assent_revoke(const char *token, const char *id, long long expected,
		   struct it_resp *r)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/assents/%s/revoke", id);
	json_t *b = json_object();
	json_object_set_new(b, "expected_revision", json_integer(expected));
	send_json("POST", path, token, b, NULL, r);
}
