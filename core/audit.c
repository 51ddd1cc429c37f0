#include "core/audit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timefmt.h"

#define MAX_DEPTH 64

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* A JSON string as PostgreSQL's escape_json writes it (to_json(text)::text). */
static void put_pg_string(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put(b, "\"", 1);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
		size_t n = 2;
		switch (*c) {
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		default:
			if (*c >= 0x20) {
				put(b, (const char *)c, 1);
				continue;
			}
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[*c >> 4];
			esc[5] = hex[*c & 0x0f];
			n = 6;
		}
		put(b, esc, n);
	}
	put(b, "\"", 1);
}

static void put_opt_string(struct buf *b, const char *s)
{
	if (s)
		put_pg_string(b, s);
	else
		puts_(b, "null");
}

/* ---------------------------------------------------------------- jsonb text → canonical */

struct member {
	char *key;   /* decoded, for ordering */
	size_t key_len;
	const char *raw; /* the key as printed, quotes included */
	size_t raw_len;
	struct buf value;
};

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* The end of the string starting at p (on its opening quote), or NULL. */
static const char *string_end(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && *++p == '\0')
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

/* The bytes a string stands for. jsonb prints \uXXXX only for control characters, so the
 * other code points need no decoding to compare in byte order. */
static char *decode_key(const char *p, const char *end, size_t *len)
{
	char *out = malloc((size_t)(end - p));
	size_t n = 0;
	if (out == NULL)
		return NULL;
	for (p++; p < end - 1; p++) {
		if (*p != '\\') {
			out[n++] = *p;
			continue;
		}
		p++;
		switch (*p) {
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u':
			if (end - p < 6) {
				free(out);
				return NULL;
			}
			out[n++] = (char)strtol((char[]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
			p += 4;
			break;
		default: out[n++] = *p;
		}
	}
	*len = n;
	return out;
}

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);
	return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static const char *value(const char *p, struct buf *out, int depth);

static const char *object(const char *p, struct buf *out, int depth)
{
	struct member *m = NULL;
	size_t n = 0, cap = 0;
	const char *ok = NULL;
	p = skip_ws(p + 1);
	while (*p != '}') {
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			struct member *grown = realloc(m, cap * sizeof *m);
			if (grown == NULL)
				goto out;
			m = grown;
		}
		const char *end = *p == '"' ? string_end(p) : NULL;
		if (end == NULL)
			goto out;
		m[n] = (struct member){.raw = p, .raw_len = (size_t)(end - p)};
		m[n].key = decode_key(p, end, &m[n].key_len);
		n++;
		p = skip_ws(end);
		if (m[n - 1].key == NULL || *p != ':')
			goto out;
		p = value(skip_ws(p + 1), &m[n - 1].value, depth + 1);
		if (p == NULL || m[n - 1].value.failed)
			goto out;
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != '}')
			goto out;
	}
	if (n > 1)
		qsort(m, n, sizeof *m, member_cmp);
	put(out, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(out, ",", 1);
		put(out, m[i].raw, m[i].raw_len);
		put(out, ":", 1);
		put(out, m[i].value.p, m[i].value.len);
	}
	put(out, "}", 1);
	ok = p + 1;
out:
	for (size_t i = 0; i < n; i++) {
		free(m[i].key);
		free(m[i].value.p);
	}
	free(m);
	return ok;
}

static const char *value(const char *p, struct buf *out, int depth)
{
	if (depth > MAX_DEPTH)
		return NULL;
	if (*p == '{')
		return object(p, out, depth);
	if (*p == '[') {
		put(out, "[", 1);
		p = skip_ws(p + 1);
		for (bool first = true; *p != ']'; first = false) {
			if (!first)
				put(out, ",", 1);
			p = value(p, out, depth + 1);
			if (p == NULL)
				return NULL;
			p = skip_ws(p);
			if (*p == ',')
				p = skip_ws(p + 1);
			else if (*p != ']')
				return NULL;
		}
		put(out, "]", 1);
		return p + 1;
	}
	const char *end = p;
	if (*p == '"')
		end = string_end(p);
	else
		while (*end && strchr("-+.0123456789eEtruefalsn", *end))
			end++;
	if (end == NULL || end == p)
		return NULL;
	put(out, p, (size_t)(end - p));
	return end;
}

bool core_canonical_jsonb(const char *text, char **out, size_t *out_len)
{
	struct buf b = {0};
	const char *end = value(skip_ws(text), &b, 0);
	if (end == NULL || *skip_ws(end) != '\0' || b.failed || b.p == NULL) {
		free(b.p);
		return false;
	}
	*out = b.p;
	*out_len = b.len;
	return true;
}

/* ---------------------------------------------------------------- the record hash */

/* An integer as jsonb prints a bigint. */
static void put_int(struct buf *b, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof num, "%" PRId64, v);
	put(b, num, (size_t)n);
}

static void put_opt_int(struct buf *b, int64_t v, bool null)
{
	if (null)
		puts_(b, "null");
	else
		put_int(b, v);
}

bool core_audit_hash(const struct core_audit_record *r, const char *at,
		     char out[RG_SHA256_TAGGED_SIZE])
{
	char *details = NULL;
	size_t details_len = 0;
	if (!core_canonical_jsonb(r->details ? r->details : "null", &details, &details_len))
		return false;
	/* The keys of audit_record_json in canonical_json's (bytewise) order. */
	struct buf b = {0};
	puts_(&b, r->prev_hash ? r->prev_hash : "");
	puts_(&b, "{\"action\":");
	put_pg_string(&b, r->action);
	puts_(&b, ",\"actor_token_id\":");
	put_opt_string(&b, r->actor_token_id);
	puts_(&b, ",\"at\":");
	put_pg_string(&b, at);
	puts_(&b, ",\"details\":");
	put(&b, details, details_len);
	puts_(&b, ",\"request_id\":");
	put_opt_string(&b, r->request_id);
	puts_(&b, ",\"resource_id\":");
	put_pg_string(&b, r->resource_id);
	puts_(&b, ",\"resource_type\":");
	put_pg_string(&b, r->resource_type);
	puts_(&b, ",\"revision_after\":");
	put_opt_int(&b, r->revision_after, r->no_revision_after);
	puts_(&b, ",\"revision_before\":");
	put_opt_int(&b, r->revision_before, r->no_revision_before);
	puts_(&b, ",\"seq\":");
	put_int(&b, r->seq);
	puts_(&b, "}");
	free(details);
	if (b.failed) {
		free(b.p);
		return false;
	}
	core_sha256_tagged(b.p, b.len, out);
	free(b.p);
	return true;
}

/* ---------------------------------------------------------------- the API's record */

static json_t *opt_int(int64_t v, bool null)
{
	return null ? json_null() : json_integer(v);
}

static json_t *opt_text(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *core_audit_record_json(const struct core_audit_record *r)
{
	char at[RG_TIME_SIZE];
	core_time_format(r->at_ms, at);
	json_t *details = r->details ? json_loads(r->details, 0, NULL) : NULL;
	return json_pack("{s:I, s:s, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "seq",
			 (json_int_t)r->seq, "at", at, "actor_token_id", opt_text(r->actor_token_id),
			 "action", r->action, "resource_type", r->resource_type, "resource_id",
			 r->resource_id, "revision_before",
			 opt_int(r->revision_before, r->no_revision_before), "revision_after",
			 opt_int(r->revision_after, r->no_revision_after), "request_id",
			 opt_text(r->request_id), "details", details ? details : json_object(),
			 "prev_hash", opt_text(r->prev_hash), "hash", r->hash);
}

/* ---------------------------------------------------------------- the verify cursor */

#define CURSOR_MAC_BYTES 12

static void cursor_mac(const char *tenant, const char *type, const char *id, int64_t seq,
		       unsigned char mac[32])
{
	struct buf b = {0};
	char num[24];
	int n = 0;
	uint64_t v = (uint64_t)seq;
	do
		num[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 23);
	put(&b, "recallgate audit verify cursor", 31); /* the NUL separates the parts */
	put(&b, tenant, strlen(tenant) + 1);
	put(&b, type ? "t" : "-", 1);
	put(&b, type ? type : "", type ? strlen(type) + 1 : 1);
	put(&b, id ? "i" : "-", 1);
	put(&b, id ? id : "", id ? strlen(id) + 1 : 1);
	for (; n > 0; n--)
		put(&b, &num[n - 1], 1);
	core_sha256(b.p ? b.p : "", b.p ? b.len : 0, mac);
	free(b.p);
}

void core_audit_cursor_encode(const char *tenant, const char *type, const char *id,
			      int64_t seq, char out[RG_AUDIT_CURSOR_SIZE])
{
	unsigned char raw[8 + CURSOR_MAC_BYTES], mac[32];
	for (int i = 0; i < 8; i++)
		raw[i] = (unsigned char)((uint64_t)seq >> (56 - 8 * i));
	cursor_mac(tenant, type, id, seq, mac);
	memcpy(raw + 8, mac, CURSOR_MAC_BYTES);
	core_hex(raw, sizeof raw, out);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool core_audit_cursor_decode(const char *tenant, const char *type, const char *id,
			      const char *s, int64_t *seq)
{
	unsigned char raw[8 + CURSOR_MAC_BYTES], mac[32];
	if (strlen(s) != 2 * sizeof raw)
		return false;
	for (size_t i = 0; i < sizeof raw; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		raw[i] = (unsigned char)(hi << 4 | lo);
	}
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | raw[i];
	if (v == 0 || v > INT64_MAX)
		return false;
	cursor_mac(tenant, type, id, (int64_t)v, mac);
	if (!core_equal_ct(mac, raw + 8, CURSOR_MAC_BYTES))
		return false;
	*seq = (int64_t)v;
	return true;
}
