/*
 * harness_http.c — see harness.h: the libcurl client that talks to the server, and the checks
 * on its answers (status, problem+json shape, errors[] fields) that fail the running cmocka
 * test with the request and the answer printed.
 */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include "core/problem.h"
#include <curl/curl.h>

#include "harness_internal.h"

#define IT_REQUEST_TIMEOUT_MS 60000L

/* ================================================================ HTTP */

char *it_url_escape(const char *s)
{
	CURL *c = curl_easy_init();
	char *e = c ? curl_easy_escape(c, s, 0) : NULL;
	char *out = xstrdup(e ? e : "");
	curl_free(e);
	if (c)
		curl_easy_cleanup(c);
	return out;
}

struct upload {
	const char *data;
	size_t len;
	size_t pos;
};

static size_t read_cb(char *dst, size_t size, size_t nmemb, void *ud)
{
	struct upload *u = ud;
	size_t room = size * nmemb;
	size_t left = u->len - u->pos;
	/* small pieces, so that a chunked upload really is many chunks */
	size_t n = left < room ? left : room;
	if (n > 16384)
		n = 16384;
	memcpy(dst, u->data + u->pos, n);
	u->pos += n;
	return n;
}

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	buf_append(ud, src, size * nmemb);
	return size * nmemb;
}

static size_t header_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct it_resp *r = ud;
	size_t n = size * nmemb;
	if (n >= 5 && strncmp(src, "HTTP/", 5) == 0) {
		/* a new status line (after 100 Continue, say): forget earlier headers */
		for (size_t i = 0; i < r->nheaders; i++) {
			free(r->headers[i].name);
			free(r->headers[i].value);
		}
		free(r->headers);
		r->headers = NULL;
		r->nheaders = 0;
		return n;
	}
	const char *colon = memchr(src, ':', n);
	if (!colon)
		return n;
	size_t name_len = (size_t)(colon - src);
	const char *v = colon + 1;
	const char *end = src + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	struct it_header *h = realloc(r->headers, (r->nheaders + 1) * sizeof *h);
	if (!h)
		return 0;
	r->headers = h;
	char *name = xmalloc(name_len + 1);
	memcpy(name, src, name_len);
	name[name_len] = '\0';
	char *value = xmalloc((size_t)(end - v) + 1);
	memcpy(value, v, (size_t)(end - v));
	value[end - v] = '\0';
	r->headers[r->nheaders].name = name;
	r->headers[r->nheaders].value = value;
	r->nheaders++;
	return n;
}

static bool header_given(const char *const *headers, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; headers && headers[i]; i++) {
		if (strncasecmp(headers[i], name, n) == 0 && headers[i][n] == ':')
			return true;
	}
	return false;
}

int it_send(const struct it_server *s, const struct it_req *rq, struct it_resp *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->desc, sizeof out->desc, "%s %.250s", rq->method, rq->path);

	CURL *c = curl_easy_init();
	if (!c) {
		snprintf(out->curl_error, sizeof out->curl_error, "curl_easy_init failed");
		return -1;
	}
	size_t url_len = strlen(s->base_url) + strlen(rq->path) + 1;
	char *url = xmalloc(url_len);
	snprintf(url, url_len, "%s%s", s->base_url, rq->path);

	struct curl_slist *hl = NULL;
	char *auth = NULL;
	if (rq->token) {
		size_t n = strlen(rq->token) + 32;
		auth = xmalloc(n);
		snprintf(auth, n, "Authorization: Bearer %s", rq->token);
		hl = curl_slist_append(hl, auth);
	}
	if (rq->body && !rq->no_default_ct && !header_given(rq->headers, "Content-Type"))
		hl = curl_slist_append(hl, "Content-Type: application/json");
	if (rq->chunked)
		hl = curl_slist_append(hl, "Transfer-Encoding: chunked");
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		hl = curl_slist_append(hl, rq->headers[i]);

	struct buf body = {0};
	struct upload up = {rq->body, rq->body_len, 0};
	char errbuf[CURL_ERROR_SIZE] = "";

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, IT_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
	if (strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (rq->body) {
		if (rq->chunked) {
			curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
			curl_easy_setopt(c, CURLOPT_READDATA, &up);
		} else {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body);
		}
	}
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

	CURLcode cc = curl_easy_perform(c);
	out->curl_code = (int)cc;
	if (cc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	} else {
		out->status = 0;
		snprintf(out->curl_error, sizeof out->curl_error, "%.100s: %.150s",
			 curl_easy_strerror(cc), errbuf);
	}
	out->body = buf_take(&body, &out->body_len);
	const char *ct = it_resp_header(out, "Content-Type");
	if (out->body_len > 0 && ct && strstr(ct, "json")) {
		json_error_t jerr;
		out->json = json_loadb(out->body, out->body_len, JSON_DECODE_ANY, &jerr);
	}
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	free(auth);
	free(url);
	return cc == CURLE_OK ? 0 : -1;
}

int it_request(const struct it_server *s, const char *method, const char *path, const char *token,
	       const char *body, const char *const *extra_headers, struct it_resp *out)
{
	struct it_req rq = {
	    .method = method,
	    .path = path,
	    .token = token,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .headers = extra_headers,
	};
	return it_send(s, &rq, out);
}

int it_request_json(const struct it_server *s, const char *method, const char *path,
		    const char *token, const json_t *body, const char *const *extra_headers,
		    struct it_resp *out)
{
	char *text = json_dumps(body, JSON_COMPACT);
	if (text == NULL)
		it_fail_at(__FILE__, __LINE__, "cannot serialise a request body");
	int rc = it_request(s, method, path, token, text, extra_headers, out);
	free(text);
	return rc;
}

const char *it_resp_header(const struct it_resp *r, const char *name)
{
	for (size_t i = r->nheaders; i > 0; i--) {
		if (strcasecmp(r->headers[i - 1].name, name) == 0)
			return r->headers[i - 1].value;
	}
	return NULL;
}

void it_resp_free(struct it_resp *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof *r);
}

json_t *it_list_all(const struct it_server *s, const char *token, const char *path)
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
		it_request(s, "GET", p, token, NULL, NULL, &r);
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

/* ================================================================ answer checks */

bool it_problem_has_field(const struct it_resp *r, const char *field)
{
	const json_t *errs = json_is_object(r->json) ? json_object_get(r->json, "errors") : NULL;
	size_t i;
	const json_t *e;
	if (!json_is_array(errs))
		return false;
	json_array_foreach (errs, i, e) {
		const char *f = it_json_str(e, "field");
		if (f && strcmp(f, field) == 0)
			return true;
	}
	return false;
}

bool it_problem_has_field_prefix(const struct it_resp *r, const char *prefix)
{
	const json_t *errs = json_is_object(r->json) ? json_object_get(r->json, "errors") : NULL;
	size_t i;
	const json_t *e;
	json_array_foreach (errs, i, e) {
		const char *f = it_json_str(e, "field");
		if (f && strncmp(f, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

static void describe(const struct it_resp *r)
{
	if (!r)
		return;
	if (r->status == 0) {
		fprintf(stderr, "  request: %s\n  transfer failed: %s\n", r->desc, r->curl_error);
		return;
	}
	fprintf(stderr, "  request: %s\n  answer:  %ld\n", r->desc, r->status);
	for (size_t i = 0; i < r->nheaders; i++)
		fprintf(stderr, "    %s: %s\n", r->headers[i].name, r->headers[i].value);
	if (r->body_len > 0)
		fprintf(stderr, "  body: %.2000s%s\n", r->body, r->body_len > 2000 ? " ..." : "");
}

_Noreturn static void fail_now(const char *file, int line)
{
	fflush(stderr);
	_fail(file, line);
	abort(); /* _fail longjmps back into the cmocka runner */
}

_Noreturn void it_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fail_now(file, line);
}

void it_expect_status_at(const struct it_resp *r, long status, const char *file, int line)
{
	if (r->status == status)
		return;
	fprintf(stderr, "%s:%d: expected status %ld\n", file, line, status);
	describe(r);
	fail_now(file, line);
}

static void problem_fail(const struct it_resp *r, const char *file, int line, const char *what,
			 long status, const char *code)
{
	fprintf(stderr, "%s:%d: expected a %ld %s problem: %s\n", file, line, status, code, what);
	describe(r);
	fail_now(file, line);
}

void it_expect_problem_at(const struct it_resp *r, long status, const char *code, const char *file,
			  int line)
{
	char type[160];
	if (r->status != status)
		problem_fail(r, file, line, "wrong status", status, code);
	const char *ct = it_resp_header(r, "Content-Type");
	if (!ct || strncasecmp(ct, "application/problem+json", 24) != 0)
		problem_fail(r, file, line, "Content-Type is not application/problem+json", status,
			     code);
	if (!json_is_object(r->json))
		problem_fail(r, file, line, "body is not a JSON object", status, code);
	snprintf(type, sizeof type, "urn:recallgate:problem:%s", code);
	const char *t = it_json_str(r->json, "type");
	if (!t || strcmp(t, type) != 0)
		problem_fail(r, file, line, "wrong or missing `type`", status, code);
	if (it_json_int(r->json, "status", -1) != status)
		problem_fail(r, file, line, "wrong or missing `status` member", status, code);
	const char *c = it_json_str(r->json, "code");
	if (!c || strcmp(c, code) != 0)
		problem_fail(r, file, line, "wrong or missing `code`", status, code);
	/* every 503 database_unavailable says when to come back (openapi.yaml DatabaseUnavailable) */
	const char *retry = it_resp_header(r, "Retry-After");
	if (strcmp(code, "database_unavailable") == 0 && (!retry || strcmp(retry, "1") != 0))
		problem_fail(r, file, line, "no Retry-After: 1", status, code);
	const char *title = it_json_str(r->json, "title");
	const char *want_title = core_problem_title(core_problem_from_code(code));
	if (!title || !want_title || strcmp(title, want_title) != 0)
		problem_fail(r, file, line, "`title` is not the code's own title", status, code);
	const char *detail = it_json_str(r->json, "detail");
	if (!detail || !*detail)
		problem_fail(r, file, line, "missing `detail`", status, code);
	const char *rid = it_json_str(r->json, "request_id");
	const char *hrid = it_resp_header(r, "X-Request-Id");
	if (!rid || !*rid)
		problem_fail(r, file, line, "missing `request_id`", status, code);
	if (!hrid || strcmp(hrid, rid) != 0)
		problem_fail(r, file, line, "`request_id` differs from the X-Request-Id header",
			     status, code);
}

void it_expect_field_at(const struct it_resp *r, const char *field, const char *file, int line)
{
	if (it_problem_has_field(r, field))
		return;
	fprintf(stderr, "%s:%d: expected errors[] to name field \"%s\"\n", file, line, field);
	describe(r);
	fail_now(file, line);
}

void it_expect_422_at(const struct it_resp *r, const char *code, const char *field, bool exact,
		      const char *what, const char *file, int line)
{
	if (r->status != 422)
		fprintf(stderr, "  case: %s\n", what);
	it_expect_problem_at(r, 422, code, file, line);
	if (!field)
		return;
	if (exact && !it_problem_has_field(r, field))
		it_fail_at(file, line, "%s: errors[] does not name \"%s\": %s", what, field,
			   r->body);
	if (!exact && !it_problem_has_field_prefix(r, field))
		it_fail_at(file, line, "%s: errors[] names no field under \"%s\": %s", what, field,
			   r->body);
}
