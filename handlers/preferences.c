/* Explicit agent preferences (openapi/openapi.yaml "Preferences"): read the whole journal,
 * remember/correct, retire, preview, replay, history. The rules are core/prefs.c; this file is
 * the story of each endpoint. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/prefs.h"
#include "core/problem.h"
#include "core/timefmt.h"
#include "db/preferences.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

#define PREF_HISTORY_DEFAULT 20
#define PREF_WRITE_ATTEMPTS 3

/* Macros, not const objects: C11 does not make an object a constant expression (gcc
 * accepts it as an extension, clang refuses it). What remember and retire both take: */
#define SOURCE_FIELDS                                                                              \
	{.name = "source_ref", .type = F_STRING, .required = true, .min = 1,                       \
	 .max = RG_PREF_SOURCE_REF_MAX,                                                            \
	 .desc = "A reference to the user message the operation is based on, such as its id."},    \
	{.name = "source_quote", .type = F_STRING, .required = true, .min = 1,                     \
	 .max = RG_PREF_SOURCE_QUOTE_MAX,                                                          \
	 .desc = "The user's exact words in that message that back the operation; private."}
#define EXPECTED_REVISION_FIELD                                                                    \
	{.name = "expected_revision", .type = F_INT, .required = true, .nullable = true,           \
	 .min = 1, .max = INT64_MAX,                                                               \
	 .desc = "The journal's current revision from a read, or null for a "  \
		 "journal never written; else stale_revision."}
#define OPERATION_FIELD                                                                            \
	{.name = "operation_id", .type = F_STRING, .required = true, .min = 1,                     \
	 .max = RG_PREF_OPERATION_ID_MAX,                                                          \
	 .desc = "Your id for this operation, unique per journal: the same "      \
		 "arguments replay it, others are operation_conflict."}
#define EXECUTE_FIELD                                                                              \
	{.name = "execute", .type = F_BOOL, .required = true,                                      \
	 .desc = "false previews and changes nothing; true commits (no default)."}

const struct field_spec h_pref_remember_body[] = {
	{.name = "statement", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_PREF_STATEMENT_MAX,
	 .desc = "The preference as the user stated it, shown to the agent as written; private."},
	SOURCE_FIELDS,
	EXPECTED_REVISION_FIELD,
	OPERATION_FIELD,
	{.name = "expires_at", .type = F_TIMESTAMP, .nullable = true,
	 .desc = "When the preference stops applying, a future UTC instant; absent, never."},
	EXECUTE_FIELD,
	{.name = NULL},
};

const struct field_spec h_pref_retire_body[] = {
	SOURCE_FIELDS,
	EXPECTED_REVISION_FIELD,
	OPERATION_FIELD,
	EXECUTE_FIELD,
	{.name = NULL},
};

static struct db_pref_scope scope_of(const struct h_ctx *ctx)
{
	struct db_pref_scope s = {ctx->tenant_id, h_param(ctx, "goal_id"), h_param(ctx, "agent_id")};
	return s;
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int64_t num(const json_t *o, const char *k)
{
	return (int64_t)json_integer_value(json_object_get(o, k));
}

/* Fills j from a loaded journal (borrowing its texts: keep it until j is done). */
static void journal_from(const struct db_pref_journal *loaded, struct pref_journal *j)
{
	j->revision = loaded->revision;
	j->n = 0;
	for (size_t i = 0; i < loaded->n && j->n < RG_PREF_MAX_KEYS; i++) {
		const struct db_pref_entry *e = db_pref_entry_at(loaded, i);
		j->entries[j->n++] = (struct pref_entry){
			.key = e->key,
			.retired = strcmp(e->state, "retired") == 0,
			.statement = e->statement,
			.source_ref = e->source_ref,
			.source_quote = e->source_quote,
			.expires_ms = e->expires_null ? RG_TIME_NONE : e->expires_ms,
			.entry_revision = e->entry_revision,
			.operation_id = e->operation_id,
			.updated_ms = e->updated_ms,
		};
	}
}

/* Reads the request into r; false after answering 422. */
static bool read_request(struct h_ctx *ctx, enum pref_action action, struct pref_request *r)
{
	const json_t *b = ctx->body;
	memset(r, 0, sizeof *r);
	r->action = action;
	r->key = h_param(ctx, "key");
	if (!core_pref_key_valid(r->key)) {
		h_invalid(ctx, "key", "must match ^[a-z0-9][a-z0-9_.-]{0,127}$");
		return false;
	}
	r->statement = action == PREF_REMEMBER ? str(b, "statement") : NULL;
	r->source_ref = str(b, "source_ref");
	r->source_quote = str(b, "source_quote");
	r->operation_id = str(b, "operation_id");
	r->expected_revision = num(b, "expected_revision"); /* null reads 0 */
	r->expires_at = str(b, "expires_at");
	r->expires_ms = RG_TIME_NONE;
	if (r->expires_at) {
		size_t n = strlen(r->expires_at);
		/* The calendar date was checked with the body; UTC is required here. Whether it is
		 * still in the future is decided after the replay check, so that an uncertain
		 * write can be retried after its expiry passed. */
		if (!core_time_parse(r->expires_at, &r->expires_ms) ||
		    (r->expires_at[n - 1] != 'Z' && r->expires_at[n - 1] != 'z')) {
			h_invalid(ctx, "expires_at", FIELDS_REASON_UTC);
			return false;
		}
	}
	return true;
}

/* The receipt of an operation, stored (a replay) or just committed; new. */
static json_t *receipt_json(const struct db_pref_receipt *r)
{
	const char *pred = r->predecessor_operation_id;
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:I, s:o}", "operation_id",
			 r->operation_id, "action", r->action, "key", r->key, "state",
			 strcmp(r->action, "remember") == 0 ? "active" : "retired", "intent_hash",
			 r->intent_hash, "supersedes_operation_id",
			 pred ? json_string(pred) : json_null(), "revision_before",
			 r->revision_before_null ? json_null() : json_integer(r->revision_before),
			 "revision_after", (json_int_t)r->revision_after, "at", h_time(r->at_ms));
}

/* {status, receipt, view}: the view is written directly (it can hold 64 entries). */
static void answer(struct h_ctx *ctx, int status, const char *what, json_t *receipt,
		   const struct pref_journal *j, int64_t stored_revision)
{
	struct jsonw w;
	jsonw_init(&w);
	jsonw_raw(&w, "{\"status\":");
	jsonw_str(&w, what);
	jsonw_raw(&w, ",\"receipt\":");
	if (receipt)
		jsonw_json(&w, receipt);
	else
		jsonw_raw(&w, "null");
	jsonw_raw(&w, ",\"view\":");
	core_pref_view(&w, j, h_now_ms());
	jsonw_raw(&w, "}");
	json_decref(receipt);
	/* The ETag names what is stored: a preview's would-be revision does not exist. */
	if (stored_revision)
		h_etag(ctx, stored_revision);
	h_reply_jsonw(ctx, status, &w);
}

/* One decision on a fresh read. Returns RG_STALE/RG_CONFLICT when the write lost a race
 * and should be decided again; anything else is final (answered, or a db failure). */
static enum rg_status decide(struct h_ctx *ctx, struct db_conn *c, const struct pref_request *r,
			     const char *intent, bool execute)
{
	struct db_pref_scope scope = scope_of(ctx);
	struct pref_journal j;
	struct db_pref_journal loaded;
	enum rg_status st = db_pref_load(c, &scope, r->operation_id, &loaded, &ctx->dberr);
	if (st != RG_OK)
		return st;
	journal_from(&loaded, &j);

	if (loaded.receipt) {
		if (strcmp(loaded.receipt->intent_hash, intent) == 0)
			answer(ctx, 200, "replayed", receipt_json(loaded.receipt), &j, j.revision);
		else
			h_problem(ctx, PROBLEM_OPERATION_CONFLICT,
				  "operation_id was already used with different arguments.", NULL);
		goto out;
	}
	if (r->expires_ms != RG_TIME_NONE && r->expires_ms <= h_now_ms()) {
		h_invalid(ctx, "expires_at", FIELDS_REASON_FUTURE);
		goto out;
	}
	if (!h_if_match(ctx, j.revision ? j.revision : -1))
		goto out;
	switch (core_pref_check(&j, r)) {
	case PREF_STALE:
		h_problem(ctx, PROBLEM_STALE_REVISION,
			  "expected_revision is not the journal's current revision.", NULL);
		ctx->current_revision = j.revision ? j.revision : PROBLEM_NULL_REVISION;
		goto out;
	case PREF_UNKNOWN_KEY:
		h_problem(ctx, PROBLEM_NOT_FOUND, "No preference with this key was remembered.", NULL);
		goto out;
	case PREF_SOURCE_REUSED:
		h_invalid(ctx, "source_ref", "must differ from the source_ref of the key's retirement");
		goto out;
	case PREF_CAPACITY:
		h_problem(ctx, PROBLEM_CAPACITY_EXCEEDED,
			  "The journal holds at most 64 keys and 32 KiB; nothing is evicted.", NULL);
		goto out;
	case PREF_OK:
		break;
	}

	const char *predecessor = NULL;
	if (!execute) {
		int64_t stored = j.revision;
		core_pref_apply(&j, r, h_now_ms(), &predecessor);
		answer(ctx, 200, "preview", NULL, &j, stored);
		goto out;
	}
	struct db_actor actor = h_actor(ctx);
	const struct pref_entry *prev = NULL;
	for (size_t i = 0; i < j.n; i++)
		if (strcmp(j.entries[i].key, r->key) == 0)
			prev = &j.entries[i];
	struct db_pref_write w = {
		.operation_id = r->operation_id,
		.action = r->action == PREF_REMEMBER ? "remember" : "retire",
		.key = r->key,
		.statement = r->statement,
		.source_ref = r->source_ref,
		.source_quote = r->source_quote,
		.expires_ms = r->expires_ms,
		.intent_hash = intent,
		.predecessor_operation_id = prev ? prev->operation_id : NULL,
		.expected_revision = r->expected_revision,
	};
	int64_t revision_after = 0, at_ms = 0;
	int64_t revision_before = j.revision;
	st = db_pref_commit(c, &actor, &scope, &w, &revision_after, &at_ms, &ctx->dberr);
	if (st != RG_OK)
		goto out;
	core_pref_apply(&j, r, at_ms, &predecessor);
	const struct db_pref_receipt applied = {
		.operation_id = r->operation_id,
		.action = w.action,
		.key = r->key,
		.intent_hash = intent,
		.predecessor_operation_id = predecessor,
		.revision_before = revision_before,
		.revision_before_null = revision_before == 0,
		.revision_after = revision_after,
		.at_ms = at_ms,
	};
	answer(ctx, 201, "applied", receipt_json(&applied), &j, j.revision);
out:
	db_pref_journal_free(&loaded);
	return st;
}

static void write_operation(struct h_ctx *ctx, enum pref_action action)
{
	struct pref_request r;
	char intent[RG_SHA256_TAGGED_SIZE];
	struct db_conn *c = NULL;
	if (!read_request(ctx, action, &r))
		return;
	if (!core_pref_intent_hash(&r, intent)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	bool execute = json_is_true(json_object_get(ctx->body, "execute"));
	enum rg_status st = h_db_acquire(ctx, &c);
	/* A lost race (the journal moved, or the operation id was taken meanwhile) is decided
	 * again on a fresh read: it then answers stale, replayed or conflict. */
	for (int attempt = 0; st == RG_OK || st == RG_STALE || st == RG_CONFLICT; attempt++) {
		if (attempt == PREF_WRITE_ATTEMPTS || (st = decide(ctx, c, &r, intent, execute)) == RG_OK)
			break;
	}
	h_db_release(ctx, c);
	if (st != RG_OK && !ctx->problem_code && ctx->reply == NULL)
		h_db_failed(ctx, st);
}

void h_pref_remember(struct h_ctx *ctx)
{
	write_operation(ctx, PREF_REMEMBER);
}

void h_pref_retire(struct h_ctx *ctx)
{
	write_operation(ctx, PREF_RETIRE);
}

static void view_params(const struct h_ctx *ctx, const char **out)
{
	out[0] = ctx->tenant_id;
	out[1] = h_param(ctx, "goal_id");
	out[2] = h_param(ctx, "agent_id");
	out[3] = NULL; /* no receipt asked */
}

static void view_answer(struct h_ctx *ctx, enum rg_status st, const struct db_rows *rows)
{
	if (st != RG_OK) {
		/* An unreadable journal is unavailable, never empty. */
		h_db_failed(ctx, st);
		return;
	}
	struct db_pref_journal loaded;
	struct pref_journal j;
	db_pref_journal_of(rows, &loaded);
	journal_from(&loaded, &j);
	if (j.revision)
		h_etag(ctx, j.revision);
	struct jsonw w;
	jsonw_init(&w);
	core_pref_view(&w, &j, h_now_ms());
	h_reply_jsonw(ctx, 200, &w);
}

/* GET: one statement (db/preferences.c's, pipeable). */
const struct h_read h_pref_view_read = {&db_pref_load_stmt, view_params, view_answer};

static enum rg_status fetch_history(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				    int64_t after, int limit, struct db_rows *rows)
{
	(void)arg;
	struct db_pref_scope scope = scope_of(ctx);
	return db_pref_history(c, &scope, after, limit, rows, &ctx->dberr);
}

static json_t *history_row(const void *row, const void *arg, int64_t *cursor)
{
	(void)arg;
	const struct db_pref_operation *op = row;
	*cursor = op->revision_after;
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:I, s:o}", "operation_id",
			 op->operation_id, "action", op->action, "key", op->key, "statement",
			 op->statement ? json_string(op->statement) : json_null(), "source_ref",
			 op->source_ref, "source_quote", op->source_quote, "predecessor_operation_id",
			 op->predecessor_operation_id ? json_string(op->predecessor_operation_id)
						      : json_null(),
			 "revision_after", (json_int_t)op->revision_after, "at", h_time(op->at_ms));
}

void h_pref_history(struct h_ctx *ctx)
{
	const struct h_list_query q = {.default_limit = PREF_HISTORY_DEFAULT,
				       .fetch = fetch_history,
				       .render = history_row};
	h_list(ctx, &q);
}
