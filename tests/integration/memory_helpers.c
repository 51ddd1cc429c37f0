/* it_memory_* shared helpers (memory_helpers.h): hashes, texts, tenants and tokens,
 * requests and list checks, the server and its group setup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "memory_helpers.h"

struct it_server srv;

/* ================================================================ small helpers */

void sha256_ref(const void *data, size_t n, char out[REF_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	memcpy(out, "sha256:", 7);
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

void sha256_str(const char *s, char out[REF_LEN])
{
	sha256_ref(s, strlen(s), out);
}

void identity_of(const char *owner, const char *uri, const char *content_hash,
		 char out[REF_LEN])
{
	size_t n = strlen(owner) + strlen(uri) + strlen(content_hash) + 3;
	char *buf = malloc(n);
	assert_non_null(buf);
	snprintf(buf, n, "%s\n%s\n%s", owner, uri, content_hash);
	sha256_ref(buf, strlen(buf), out);
	free(buf);
}

char *repeat_text(const char *prefix, const char *unit, size_t count, const char *suffix)
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

bool contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}

/* ================================================================ tenants and tokens */

void tenant_new(struct tenant *t, const char *prefix)
{
	t->name = it_unique(prefix);
	t->admin = it_token(t->name, "admin", "it-admin");
	IT_CHECK(t->admin != NULL, "cannot create an admin token for %s", t->name);
}

void tenant_free(struct tenant *t)
{
	free(t->name);
	free(t->admin);
	t->name = t->admin = NULL;
}

char *token_for(const struct tenant *t, const char *scopes, const char *name)
{
	char *tok = it_token(t->name, scopes, name);
	IT_CHECK(tok != NULL, "cannot create a %s token for %s", scopes, t->name);
	return tok;
}

/* ================================================================ requests */

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

json_t *list_all(const char *token, const char *path)
{
	return it_list_all(&srv, token, path);
}

bool array_has_id(const json_t *items, const char *key, const char *id)
{
	size_t i;
	const json_t *e;
	json_array_foreach (items, i, e) {
		if (it_json_str_is(e, key, id))
			return true;
	}
	return false;
}

const json_t *item_by(const json_t *items, const char *key, const char *id)
{
	size_t i;
	const json_t *e;
	json_array_foreach (items, i, e) {
		if (it_json_str_is(e, key, id))
			return e;
	}
	return NULL;
}

void expect_id_set(const json_t *items, const char *key, const char *what, ...)
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

void join_strings(const json_t *arr, char *buf, size_t n)
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

void expect_reasons(const json_t *obj, const char *want, const char *what)
{
	char got[512];
	join_strings(json_object_get(obj, "ineligible_reasons"), got, sizeof got);
	IT_CHECK(strcmp(got, want) == 0, "%s: ineligible_reasons are [%s], expected [%s]", what,
		 got, want);
}

/* ================================================================ group setup */

int group_setup(void **state)
{
	(void)state;
	return it_server_start(&srv, NULL) == 0 ? 0 : -1;
}

int group_teardown(void **state)
{
	(void)state;
	if (srv.pid > 0 && it_server_stop(&srv) != 0)
		return -1;
	return 0;
}
