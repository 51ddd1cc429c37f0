/* Small helpers every handler uses to answer. */
#ifndef RG_HANDLERS_COMMON_H
#define RG_HANDLERS_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "core/jsonw.h"
#include "handlers/api.h"

#define H_PAGE_DEFAULT 50
#define H_PAGE_MAX 200

/* The 422 reason for a caller-chosen id off its pattern. */
extern const char h_id_reason[];
/* Whether a Content-Type value is application/json (any case), alone or with parameters. */
bool h_json_content_type(const char *ct);
/* Sets a JSON reply; steals body. */
void h_reply(struct h_ctx *ctx, int status, json_t *body);
/* Sets a reply rendered by a jsonw writer (finished here; a failed writer answers 500). */
void h_reply_jsonw(struct h_ctx *ctx, int status, struct jsonw *w);
/* A 422 validation_failed naming one field. */
void h_invalid(struct h_ctx *ctx, const char *field, const char *reason);
/* Borrows a pooled connection; false after answering 503. */
bool h_acquire(struct h_ctx *ctx, struct db_conn **c) RG_MUSTCHECK;
/* db_acquire / db_release for a handler: the first acquire takes the connection server/ holds
 * for the request (ctx->held), if any; inside a request's transaction (ctx->tx) every
 * acquire gets that connection and release leaves it to server/. Fills ctx->dberr on
 * failure. */
enum rg_status h_db_acquire(struct h_ctx *ctx, struct db_conn **c) RG_MUSTCHECK;
void h_db_release(struct h_ctx *ctx, struct db_conn *c);
/* After a write: answers a failed db/ call (h_db_failed); true when the request has its
 * answer already (that failure, or a problem such as a refused guard). */
bool h_answered(struct h_ctx *ctx, enum rg_status st);
/* The value of path parameter `name` (borrowed) or NULL. */
const char *h_param(const struct h_ctx *ctx, const char *name);
/* "0".."999999999999999999": 1 to 18 decimal digits (leading zeros fine), nothing else. */
bool h_parse_digits(const char *s, int64_t *out);
/* Reads ?limit= (1..max, default def) and ?after= (a cursor: decimal seq > 0). false after
 * answering 422. */
bool h_page(struct h_ctx *ctx, int def, int max, int *limit, int64_t *after) RG_MUSTCHECK;
/* The next_cursor for a page that fetched limit+1 rows; json null when there is no next. */
json_t *h_next_cursor(int rows, int limit, int64_t last_seq);
/* One page of a list endpoint: ?limit/?after are read, `fetch` runs db/'s list query
 * (typed rows: at most limit+1, cursor > after, in cursor order) and `render` renders one
 * row and gives its cursor value. Answers {items, next_cursor} or the failure. */
struct h_list_query {
	int default_limit;
	int max_limit; /* 0: H_PAGE_MAX */
	const void *arg; /* handed to fetch: the endpoint's filters */
	enum rg_status (*fetch)(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				int64_t after, int limit, struct db_rows *rows);
	json_t *(*render)(const void *row, const void *arg, int64_t *cursor);
};
void h_list(struct h_ctx *ctx, const struct h_list_query *q);
/* A typed db/ read of one resource by id (0 or 1 row). */
typedef enum rg_status (*h_row_by_id_fn)(struct db_conn *c, const char *tenant, const char *id,
					 struct db_rows *out, struct db_error *err);
/* Reads one resource of the caller's tenant into *rows (free with db_rows_free) and returns
 * its row, or NULL (rows empty) after answering 503 or 404 with `missing` as the detail. */
const void *h_fetch_row(struct h_ctx *ctx, h_row_by_id_fn fetch, const char *id,
			const char *missing, struct db_rows *rows);
/* Sets ETag: "<revision>". */
void h_etag(struct h_ctx *ctx, int64_t revision);
/* false (after answering 412) when If-Match is present and does not name `revision`.
 * revision < 0: the resource has no revision yet (no ETag): only `*` agrees. */
bool h_if_match(struct h_ctx *ctx, int64_t revision) RG_MUSTCHECK;
/* If-Match read as a revision: none (absent or `*`), a strong ETag "N" (*rev = N), or
 * anything else (which can never agree). */
enum h_if_match { H_IF_MATCH_NONE, H_IF_MATCH_REVISION, H_IF_MATCH_INVALID };
enum h_if_match h_if_match_revision(const struct h_ctx *ctx, int64_t *rev);
/* Before a write guarded by `expected`: when If-Match names another revision than expected,
 * one of them cannot agree whatever is stored, so nothing may be written (returns false: read
 * the current revision and call h_stale). *if_match_first tells h_stale whether If-Match
 * was sent (then a mismatch with it answers 412 before 409). */
bool h_guard_write(const struct h_ctx *ctx, int64_t expected, bool *if_match_first);
/* Answers a refused guarded write from the current revision: 412 when If-Match was sent and
 * does not name it, else 409 stale_revision; both carry current_revision. */
void h_stale(struct h_ctx *ctx, int64_t current, bool if_match_first);
/* h_stale from a typed read of the current revision (borrowed): NULL (no row, a
 * never-written resource) answers current_revision null. */
void h_stale_of(struct h_ctx *ctx, const int64_t *current, bool if_match_first);
/* The audit actor of this request. */
struct db_actor h_actor(const struct h_ctx *ctx);
/* An RFC 3339 string for epoch ms (new json string). */
json_t *h_time(int64_t epoch_ms);
/* A new JSON string of s, or JSON null for NULL. */
static inline json_t *opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}
/* ?name= restricted to values (NULL-terminated), NULL when absent; false after answering
 * 422 naming it. */
bool h_query_enum(struct h_ctx *ctx, const char *name, const char *const *values,
		  const char **out) RG_MUSTCHECK;
/* ?name= as a caller id (RG_ID_PATTERN), NULL when absent; false after answering 422. */
bool h_query_id(struct h_ctx *ctx, const char *name, const char **out) RG_MUSTCHECK;
/* The wall clock in epoch ms. */
int64_t h_now_ms(void);
/* An `as_of` instant (RFC 3339 text, NULL when absent: RG_TIME_NONE, "now"); false after
 * answering 422 naming `as_of` when it does not parse or is in the future. */
bool h_as_of(struct h_ctx *ctx, const char *text, int64_t *as_of) RG_MUSTCHECK;
/* h_time, or JSON null for RG_TIME_NONE. */
json_t *h_time_or_null(int64_t epoch_ms);

#endif
