/* Idempotency-Key (openapi/openapi.yaml "IdempotencyKey"), a step of the gate: a POST, PUT or
 * DELETE that carries a key runs in one transaction with its kept answer (db/idempotency.h).
 * The first request with a key runs and, when it succeeds (2xx), its answer is stored with the
 * write and both commit; the same request again gets that answer (Idempotent-Replayed: true)
 * and changes nothing; another request with the key is 409 operation_conflict, and so is one
 * that comes while the first is still running (with Retry-After: 1). A refused request wrote
 * nothing and keeps nothing: sent again, it runs again. Keys belong to the token and live 24 h.
 * A route that runs inline (it writes nothing) and one without a token ignore the key. Two
 * kinds refuse it (422 naming Idempotency-Key), so that a client or the gateway never takes
 * a write for keyed that is not: one that waits on a provider (decision-context retrieve,
 * semantic recall, a doctor, their MCP tools: the key's transaction would hold a pool
 * connection for the provider's deadline), and one whose answer holds a secret (a new
 * token: kept, it would sit in the database in clear for 24 h). */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "db/idempotency.h"
#include "server/log.h"
#include "server/request.h"

#define IDEM_HEADER "Idempotency-Key"
#define IDEM_MAX_KEY_BYTES 128

static bool is_write(const char *method)
{
	return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
	       strcmp(method, "PATCH") == 0 || strcmp(method, "DELETE") == 0;
}

/* 1..128 visible ASCII characters (%x21-7E), as openapi/openapi.yaml "IdempotencyKey" says. */
static bool key_valid(const char *k)
{
	size_t n = 0;
	for (; k[n]; n++)
		if ((unsigned char)k[n] < 0x21 || (unsigned char)k[n] > 0x7e)
			return false;
	return n >= 1 && n <= IDEM_MAX_KEY_BYTES;
}

void idem_note_path(struct request *r, const char *url)
{
	if (is_write(r->method) && header(r->conn, IDEM_HEADER))
		core_sha256(url, strlen(url), r->idem.path_sha);
}

/* SHA-256 of "<method> <the path's SHA-256> <the body's SHA-256>": the same request, byte for
 * byte, without copying the body. */
static void fingerprint(struct request *r)
{
	char path_hex[65], body_hex[65], line[16 + 2 * 65];
	core_hex(r->idem.path_sha, sizeof r->idem.path_sha, path_hex);
	core_sha256_hex(r->body ? r->body : "", r->body_len, body_hex);
	int n = snprintf(line, sizeof line, "%.15s %s %s", r->method, path_hex, body_hex);
	core_sha256_hex(line, (size_t)n, r->idem.fingerprint);
}

/* The kept answer becomes the handler's: its body, type, ETag, Location and headers, and
 * Idempotent-Replayed. answer's body passes to ctx. */
static void replay(struct request *r, struct db_idem_answer *a)
{
	struct h_ctx *ctx = &r->ctx;
	struct idem_request *idem = &r->idem;
	ctx->status = a->status;
	ctx->wrote = true; /* the kept answer's write committed: it carries a commit LSN */
	if (a->content_type) {
		idem->content_type = a->content_type; /* freed by idem_free */
		a->content_type = NULL;
		ctx->content_type = idem->content_type;
		ctx->raw = a->body; /* freed by server/ with the context */
		ctx->raw_len = a->body_len;
		a->body = NULL;
	}
	snprintf(ctx->etag, sizeof ctx->etag, "%s", a->etag ? a->etag : "");
	snprintf(ctx->location, sizeof ctx->location, "%s", a->location ? a->location : "");
	idem->kept_headers = json_loads(a->headers_json, 0, NULL);
	size_t n = 0, i;
	json_t *pair;
	json_array_foreach(idem->kept_headers, i, pair) {
		const char *name = json_string_value(json_array_get(pair, 0));
		const char *value = json_string_value(json_array_get(pair, 1));
		if (name && value && n + 1 < IDEM_MAX_HEADERS)
			idem->headers[n++] = (struct h_header){name, value};
	}
	idem->headers[n++] = (struct h_header){"Idempotent-Replayed", "true"};
	ctx->headers = idem->headers;
	ctx->nheaders = n;
}

bool idem_begin(struct request *r)
{
	struct h_ctx *ctx = &r->ctx;
	if (!r->on_lane || !is_write(r->method) || ctx->token_id == NULL || !ctx->token_id[0])
		return true;
	const char *key = header(r->conn, IDEM_HEADER);
	if (key == NULL)
		return true;
	const char *refused = NULL;
	if (!key_valid(key))
		refused = "must be 1 to 128 visible ASCII characters";
	else if (r->lane == H_LANE_ELASTIC)
		refused = "must be absent on a request that waits on a provider";
	else if (ctx->route->secret_answer)
		refused = "must be absent on a request whose answer holds a secret";
	if (refused) {
		json_t *errors = json_array();
		core_fields_error(errors, IDEM_HEADER, refused);
		h_problem(ctx, PROBLEM_VALIDATION_FAILED, NULL, errors);
		return false;
	}
	fingerprint(r);
	struct db_conn *c = ctx->held;
	ctx->held = NULL;
	enum rg_status st = c ? RG_OK : db_acquire(ctx->pool, &c, &ctx->dberr);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return false;
	}
	struct db_idem_key k = {ctx->tenant_id, ctx->token_id, key, r->idem.fingerprint};
	enum db_idem_state state = DB_IDEM_NEW;
	struct db_idem_answer kept;
	st = db_idem_open(c, &k, &state, &kept, &ctx->dberr);
	if (st == RG_OK && state == DB_IDEM_NEW) {
		r->idem.key = key;
		r->idem.tx = ctx->tx = c; /* the handler's statements run in it */
		db_conn_track_commits(c); /* the answer's commit LSN, in the commit's round trip */
		return true;
	}
	db_release(ctx->pool, c);
	if (st != RG_OK)
		h_db_failed(ctx, st);
	else if (state == DB_IDEM_REPLAY)
		replay(r, &kept);
	else if (state == DB_IDEM_CONFLICT)
		h_problem(ctx, PROBLEM_OPERATION_CONFLICT,
			  "This Idempotency-Key was used for another request.", NULL);
	else {
		r->retry_after_s = 1;
		h_problem(ctx, PROBLEM_OPERATION_CONFLICT,
			  "A request with this Idempotency-Key is in flight; retry.", NULL);
	}
	db_idem_answer_free(&kept);
	return false;
}

/* The handler's 2xx answer as it will be sent, for keeping: false when it cannot be kept. */
static bool answer_of(const struct h_ctx *ctx, struct db_idem_answer *a, char **owned,
		      json_t **headers)
{
	*owned = NULL;
	*headers = json_array();
	memset(a, 0, sizeof *a);
	a->status = ctx->status;
	if (ctx->content_type) {
		/* a body with a NUL cannot be a text parameter (JSON never has one) */
		if (ctx->raw_len && memchr(ctx->raw, '\0', ctx->raw_len))
			return false;
		*owned = strndup(ctx->raw ? ctx->raw : "", ctx->raw_len);
		a->content_type = (char *)ctx->content_type;
	} else if (ctx->reply != NULL) {
		*owned = json_dumps(ctx->reply, JSON_COMPACT);
		a->content_type = "application/json; charset=utf-8";
	} else { /* 204, or another 2xx without a body: none again */
		*owned = strdup("");
	}
	a->body = *owned;
	a->etag = ctx->etag[0] ? (char *)ctx->etag : NULL;
	a->location = ctx->location[0] ? (char *)ctx->location : NULL;
	for (size_t i = 0; *headers && i < ctx->nheaders; i++)
		json_array_append_new(*headers, json_pack("[s, s]", ctx->headers[i].name,
							  ctx->headers[i].value));
	a->headers_json = *headers ? json_dumps(*headers, JSON_COMPACT) : NULL;
	return a->body && a->headers_json;
}

void idem_end(struct request *r)
{
	struct h_ctx *ctx = &r->ctx;
	struct db_conn *c = r->idem.tx;
	if (c == NULL)
		return;
	r->idem.tx = ctx->tx = NULL;
	bool ok = ctx->problem_code == PROBLEM_NONE && ctx->stream == NULL && ctx->status >= 200 &&
		  ctx->status <= 299;
	if (!ok) {
		db_tx_rollback(c); /* a refused write wrote nothing; its key is not kept */
		db_release(ctx->pool, c);
		return;
	}
	struct db_idem_answer a;
	char *owned = NULL;
	json_t *headers = NULL;
	enum rg_status st = RG_NOMEM;
	struct db_idem_key k = {ctx->tenant_id, ctx->token_id, r->idem.key, r->idem.fingerprint};
	if (answer_of(ctx, &a, &owned, &headers))
		st = db_idem_keep(c, &k, &a, &ctx->dberr);
	else
		db_tx_rollback(c);
	free(owned);
	free(a.headers_json);
	json_decref(headers);
	if (st == RG_OK)
		h_note_commit_lsn(ctx, c);
	db_release(ctx->pool, c);
	if (st != RG_OK) {
		/* Rolled back: the write did not happen, so the answer may not say it did. */
		log_warn(r->request_id, "idempotency: the keyed write was rolled back (%s%s%s)",
			 st == RG_NOMEM ? "no memory" : ctx->dberr.message,
			 ctx->dberr.sqlstate[0] ? " SQLSTATE " : "", ctx->dberr.sqlstate);
		json_decref(ctx->reply);
		ctx->reply = NULL;
		ctx->etag[0] = ctx->location[0] = '\0';
		ctx->nheaders = 0;
		h_db_failed(ctx, st == RG_NOMEM ? RG_ERROR : st);
	}
}

void idem_free(struct request *r)
{
	json_decref(r->idem.kept_headers);
	r->idem.kept_headers = NULL;
	free(r->idem.content_type);
	r->idem.content_type = NULL;
}
