/* Context envelopes and relevance (openapi/openapi.yaml "Context envelopes"): workspace
 * snapshots, envelope verdicts, re-verification, relevance checks. The checks are
 * core/envelope.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/envelope.h"
#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "core/problem.h"
#include "db/envelopes.h"
#include "db/memory.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

static const char sha_reason[] = "must be sha256: followed by 64 lowercase hex digits";

/* ---- bodies ---------------------------------------------------------------------- */

static const struct field_spec snapshot_file_fields[] = {
	{.name = "path", .type = F_STRING, .required = true, .min = 1, .max = 1024,
	 .desc = "The file's path in the workspace, matched byte for byte against a source ref's "
		 "path."},
	{.name = "content_hash", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = sha_reason,
	 .desc = "The hash of the file's current content, which a source ref with this path must "
		 "carry."},
	{.name = NULL},
};
static const struct field_spec snapshot_file = {
	.type = F_OBJECT, .sub = snapshot_file_fields,
	.desc = "One file of the workspace and its current content hash."};

const struct field_spec h_snapshot_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .nullable = true, .min = 1,
	 .max = INT64_MAX,
	 .desc = "The workspace's current revision, from its last snapshot, or null for a "
		 "workspace never written; any other is stale_revision."},
	{.name = "root_hash", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = sha_reason,
	 .desc = "The workspace's root hash, which an envelope must carry for a source ref whose "
		 "path files does not list."},
	{.name = "git_head", .type = F_STRING, .required = true, .min = 1, .max = 256,
	 .desc = "The workspace's git head: a commit id, a branch or any label; recorded, not "
		 "compared."},
	{.name = "files", .type = F_ARRAY, .required = true, .min = 0,
	 .max = RG_ENV_SNAPSHOT_FILES_MAX, .item = &snapshot_file,
	 .desc = "Every file an envelope's source refs may be checked against, each path once, "
		 "with its current hash."},
	{.name = NULL},
};

/* Unique paths; O(n log n) on a sorted copy. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

enum rg_problem h_snapshot_check(const json_t *body, json_t *errors)
{
	const json_t *files = json_object_get(body, "files");
	size_t n = json_array_size(files);
	const char **paths = calloc(n ? n : 1, sizeof *paths);
	enum rg_problem code = PROBLEM_NONE;
	if (paths == NULL)
		return PROBLEM_INTERNAL;
	for (size_t i = 0; i < n; i++)
		paths[i] = json_string_value(json_object_get(json_array_get(files, i), "path"));
	qsort(paths, n, sizeof *paths, cmp_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(paths[i - 1], paths[i]) == 0) {
			core_fields_error(errors, "files", "must not list a path twice");
			code = PROBLEM_VALIDATION_FAILED;
			break;
		}
	free(paths);
	return code;
}

static const struct field_spec any_string = {.type = F_STRING, .max = RG_MAX_ID_BYTES};
static const struct field_spec workspace_fields[] = {
	{.name = "root_hash", .type = F_STRING, .max = 80,
	 .desc = "The workspace's root hash when the envelope was made; the freshness check "
		 "needs it."},
	{.name = "git_head", .type = F_STRING, .max = 256,
	 .desc = "The workspace's git head when the envelope was made; the freshness check needs "
		 "it."},
	{.name = "dirty", .type = F_BOOL,
	 .desc = "Whether the workspace had uncommitted changes when the envelope was made."},
	{.name = NULL},
};
static const struct field_spec budget_fields[] = {
	{.name = "max_input_tokens", .type = F_INT, .min = 0,
	 .desc = "The most tokens the model may be given in all; the budget check needs it."},
	{.name = "target_packet_tokens", .type = F_INT, .min = 0,
	 .desc = "The packet's token target: within max_input_tokens less "
		 "reserved_response_tokens, and at least what the claims need."},
	{.name = "reserved_response_tokens", .type = F_INT, .min = 0,
	 .desc = "Tokens kept back for the model's answer; 0 when absent."},
	{.name = NULL},
};
static const struct field_spec compression_fields[] = {
	{.name = "strategy", .type = F_STRING, .max = 128,
	 .desc = "The name of the compression strategy used; the claims check needs it."},
	{.name = "ratio_target", .type = F_NUMBER, .min = 0,
	 .desc = "The compression ratio aimed for; the claims check needs it."},
	{.name = "lossless_by_ref", .type = F_BOOL,
	 .desc = "Must be true: every claim can be expanded back to its sources through its refs."},
	{.name = "hidden_payloads_used", .type = F_BOOL,
	 .desc = "Whether the packet relies on payloads the model cannot see."},
	{.name = NULL},
};
static const struct field_spec ref_fields[] = {
	{.name = "id", .type = F_STRING, .max = 128,
	 .desc = "The ref's id, which claims cite in source_ref_ids."},
	{.name = "path", .type = F_STRING, .max = 1024,
	 .desc = "The source's path in the workspace, compared with the snapshot's files."},
	{.name = "range", .type = F_STRING, .max = 64,
	 .desc = "The part of the source the ref covers, such as a line range."},
	{.name = "content_hash", .type = F_STRING, .max = 80,
	 .desc = "The source's content hash (sha256: and 64 lowercase hex digits), compared with "
		 "the workspace snapshot's."},
	{.name = "expansion_command", .type = F_STRING, .max = 1024,
	 .desc = "How to expand the ref back to its source; every cited ref needs one."},
	{.name = NULL},
};
static const struct field_spec ref_item = {
	.type = F_OBJECT, .open = true, .sub = ref_fields,
	.desc = "One source: where it is, its hash, and how to expand it."};
static const struct field_spec claim_fields[] = {
	{.name = "text", .type = F_STRING, .max = RG_ENV_CLAIM_TEXT_MAX,
	 .desc = "The claim's text; never echoed in a verdict, an error or an audit record."},
	{.name = "source_ref_ids", .type = F_ARRAY, .max = RG_ENV_CLAIM_REFS_MAX, .item = &any_string,
	 .desc = "The ids of the source refs the claim rests on, at least one."},
	{.name = NULL},
};
static const struct field_spec claim_item = {
	.type = F_OBJECT, .open = true, .sub = claim_fields,
	.desc = "One claim of the summary and the refs it rests on."};
static const struct field_spec summary_fields[] = {
	{.name = "claims", .type = F_ARRAY, .max = RG_ENV_CLAIMS_MAX, .item = &claim_item,
	 .desc = "The summary's claims, each resting on source refs."},
	{.name = NULL},
};
static const struct field_spec receipt_fields[] = {
	{.name = "tool", .type = F_STRING, .max = 128,
	 .desc = "The tool that acted."},
	{.name = "action", .type = F_STRING, .max = 128,
	 .desc = "What the tool did."},
	{.name = "receipt_hash", .type = F_STRING, .max = 80,
	 .desc = "The receipt's hash (sha256: and 64 lowercase hex digits), unique in the chain."},
	{.name = NULL},
};
static const struct field_spec receipt_item = {
	.type = F_OBJECT, .open = true, .sub = receipt_fields,
	.desc = "One tool action's receipt."};
static const struct field_spec gate_value = {
	.type = F_STRING, .max = 32,
	.desc = "A gate's result: MATCH, DRIFT or UNVERIFIABLE."};
static const struct field_spec envelope_fields[] = {
	{.name = "envelope_id", .type = F_STRING, .required = true, .min = 1, .max = 128,
	 .desc = "The producer's id for the envelope, not unique and not the env_ resource id."},
	{.name = "workspace", .type = F_OBJECT, .open = true, .sub = workspace_fields,
	 .desc = "The workspace the envelope was made from."},
	{.name = "context_budget", .type = F_OBJECT, .open = true, .sub = budget_fields,
	 .desc = "The token budget the packet was made for."},
	{.name = "compression", .type = F_OBJECT, .open = true, .sub = compression_fields,
	 .desc = "How the summary was compressed from its sources."},
	{.name = "source_refs", .type = F_ARRAY, .max = RG_ENV_REFS_MAX, .item = &ref_item,
	 .desc = "The hash-addressed sources that the summary's claims cite."},
	{.name = "summary", .type = F_OBJECT, .open = true, .sub = summary_fields,
	 .desc = "The compressed summary the model sees."},
	{.name = "receipt_chain", .type = F_ARRAY, .max = RG_ENV_RECEIPTS_MAX, .item = &receipt_item,
	 .desc = "The receipts of the tool actions that made the packet."},
	{.name = "quality_gates", .type = F_MAP, .max = 32, .item = &gate_value,
	 .desc = "Gate results by gate name; the checks read readability and test_evidence."},
	{.name = "failure_code", .type = F_STRING, .nullable = true, .max = 64,
	 .desc = "A failure the producer declares itself: a known code is listed in the verdict, "
		 "null or another string is ignored."},
	{.name = NULL},
};

const struct field_spec h_envelope_body[] = {
	{.name = "workspace_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The workspace whose snapshot the freshness check compares with; absent, "
		 "freshness is skipped."},
	{.name = "envelope", .type = F_OBJECT, .required = true, .open = true, .sub = envelope_fields,
	 .desc = "A project-telos.context-envelope/v1 document, open to other members, stored as "
		 "sent and never returned."},
	{.name = NULL},
};

static const struct field_spec input_fields[] = {
	{.name = "input_id", .type = F_STRING, .max = 128,
	 .desc = "The input's id, half of the key that joins a relevance label to a loaded input."},
	{.name = "delivered_hash", .type = F_STRING, .max = 80,
	 .desc = "The hash of the delivered bytes, the other half of the join key."},
	{.name = "source_hash", .type = F_STRING, .max = 80,
	 .desc = "The content hash of the record the input came from."},
	{.name = "relevance", .type = F_STRING, .max = 32,
	 .desc = "A relevance label's verdict on the input: decisive, supporting, unused or "
		 "unknown."},
	{.name = "rank", .type = F_INT, .min = 0,
	 .desc = "The input's rank among the candidates, 1-based."},
	{.name = NULL},
};
static const struct field_spec input_item = {
	.type = F_OBJECT, .open = true, .sub = input_fields,
	.desc = "A loaded input or a relevance label; raw content in it is a raw_context_leak "
		"finding."};
static const struct field_spec relevance_fields[] = {
	{.name = "decisive_count", .type = F_INT, .min = 0,
	 .desc = "How many inputs the event labels decisive."},
	{.name = "supporting_count", .type = F_INT, .min = 0,
	 .desc = "How many inputs the event labels supporting."},
	{.name = "unused_count", .type = F_INT, .min = 0,
	 .desc = "How many inputs the event labels unused."},
	{.name = "unknown_count", .type = F_INT, .min = 0,
	 .desc = "How many inputs the event labels unknown."},
	{.name = "input_refs", .type = F_ARRAY, .max = RG_REL_INPUTS_MAX, .item = &input_item,
	 .desc = "The event's labels, one per loaded input it judges."},
	{.name = NULL},
};
static const struct field_spec selection_fields[] = {
	{.name = "candidate_count", .type = F_INT, .min = 0,
	 .desc = "How many candidates the load considered."},
	{.name = "selected_count", .type = F_INT, .min = 0,
	 .desc = "How many candidates the load selected."},
	{.name = "delivered_count", .type = F_INT, .min = 0,
	 .desc = "How many selected inputs the load delivered."},
	{.name = "suppressed_count", .type = F_INT, .min = 0,
	 .desc = "How many selected inputs the load suppressed."},
	{.name = NULL},
};
static const struct field_spec context_relevance_fields[] = {
	{.name = "selection", .type = F_OBJECT, .open = true, .sub = selection_fields,
	 .desc = "The load's counts, read before the same counts at the top level."},
	{.name = "selected_count", .type = F_INT, .min = 0,
	 .desc = "How many candidates the load selected, read when selection is absent."},
	{.name = "delivered_count", .type = F_INT, .min = 0,
	 .desc = "How many selected inputs the load delivered, read when selection is absent."},
	{.name = "claims_usefulness", .type = F_BOOL,
	 .desc = "Whether the load claims its inputs were useful, which needs a relevance event."},
	{.name = "loaded_inputs", .type = F_ARRAY, .max = RG_REL_INPUTS_MAX, .item = &input_item,
	 .desc = "The inputs the load delivered, which the relevance labels join to."},
	{.name = "loaded_input_ids", .type = F_ARRAY, .max = RG_REL_INPUTS_MAX, .item = &any_string,
	 .desc = "The loaded inputs' ids, read when loaded_inputs is absent."},
	{.name = "relevance", .type = F_OBJECT, .open = true, .nullable = true, .sub = relevance_fields,
	 .desc = "The relevance event that labels the loaded inputs; null or absent, there is "
		 "none."},
	{.name = "relevance_event", .type = F_OBJECT, .open = true, .nullable = true,
	 .sub = relevance_fields,
	 .desc = "The relevance event, read when relevance is absent; null, there is none."},
	{.name = NULL},
};

const struct field_spec h_relevance_body[] = {
	{.name = "context_relevance", .type = F_OBJECT, .open = true,
	 .sub = context_relevance_fields,
	 .desc = "The seed's context_relevance object, open to other members; send it alone, or "
		 "instead load_receipt_id with relevance."},
	{.name = "load_receipt_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The lrc_ id of a load receipt of memory context, whose delivered inputs the "
		 "relevance event labels."},
	{.name = "relevance", .type = F_OBJECT, .open = true, .nullable = true, .sub = relevance_fields,
	 .desc = "The relevance event for that load receipt; null, there is none and the checks "
		 "that need one are skipped."},
	{.name = NULL},
};

enum rg_problem h_relevance_body_check(const json_t *body, json_t *errors)
{
	bool ctx = json_object_get(body, "context_relevance") != NULL;
	bool receipt = json_object_get(body, "load_receipt_id") != NULL;
	bool rel = json_object_get(body, "relevance") != NULL;
	if (ctx == receipt || (ctx && rel) || (receipt && !rel)) {
		core_fields_error(errors, "context_relevance",
				  "must be sent alone, or instead load_receipt_id with relevance");
		return PROBLEM_VALIDATION_FAILED;
	}
	return PROBLEM_NONE;
}

const struct field_spec h_empty_body[] = {{.name = NULL}};

/* ---- workspaces ------------------------------------------------------------------ */

static json_t *snapshot_json(const char *id, const struct db_workspace *w)
{
	json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:I}", "workspace_id", id, "revision",
			      (json_int_t)w->revision, "root_hash", w->root_hash, "git_head",
			      w->git_head, "file_count", (json_int_t)w->file_count);
	json_t *map = json_loads(w->files_json, 0, NULL), *files = json_array();
	const char *path;
	json_t *hash;
	json_object_foreach(map, path, hash)
		json_array_append_new(files,
				      json_pack("{s:s, s:O}", "path", path, "content_hash", hash));
	json_decref(map);
	json_object_set_new(o, "files", files);
	return o;
}

void h_snapshot_put(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "workspace_id");
	int64_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	const json_t *files = json_object_get(ctx->body, "files");
	json_t *map = json_object();
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
		json_object_set(map, json_string_value(json_object_get(f, "path")),
				json_object_get(f, "content_hash"));
	char *files_json = json_dumps(map, JSON_COMPACT);
	json_decref(map);
	struct db_actor actor = h_actor(ctx);
	struct db_conn *c = NULL;
	struct db_rows rows = {0};
	int64_t revision = 0;
	bool if_match_first;
	enum rg_status st = files_json ? h_db_acquire(ctx, &c) : RG_NOMEM;
	if (st != RG_OK)
		goto out;
	if (h_guard_write(ctx, expected, &if_match_first))
		st = db_workspace_put(c, &actor, id, expected, json_string_value(json_object_get(ctx->body, "root_hash")),
				      json_string_value(json_object_get(ctx->body, "git_head")),
				      files_json, (int)json_array_size(files), &revision, &ctx->dberr);
	else
		st = RG_STALE;
	if (st == RG_STALE) {
		st = db_workspace_get(c, ctx->tenant_id, id, &rows, &ctx->dberr);
		const struct db_workspace *w = rows.n ? db_rows_at(&rows, 0) : NULL;
		if (st == RG_OK)
			h_stale_of(ctx, w ? &w->revision : NULL, if_match_first);
	}
out:
	h_db_release(ctx, c);
	db_rows_free(&rows);
	free(files_json);
	if (h_answered(ctx, st))
		return;
	h_etag(ctx, revision);
	h_reply(ctx, 200,
		json_pack("{s:s, s:I, s:O, s:O, s:I}", "workspace_id", id, "revision",
			  (json_int_t)revision, "root_hash", json_object_get(ctx->body, "root_hash"),
			  "git_head", json_object_get(ctx->body, "git_head"), "file_count",
			  (json_int_t)json_array_size(files)));
}

void h_snapshot_get(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "workspace_id");
	struct db_rows rows;
	const struct db_workspace *w =
		h_fetch_row(ctx, db_workspace_get, id, "No such workspace.", &rows);
	if (w == NULL)
		return;
	h_etag(ctx, w->revision);
	h_reply(ctx, 200, snapshot_json(id, w));
	db_rows_free(&rows);
}

/* ---- envelopes ------------------------------------------------------------------- */

/* Verifies env against the workspace (NULL id: none). false after answering 404/503.
 * On success *v holds the verdict and *ws_revision the snapshot's revision (0: none). */
static bool verify(struct h_ctx *ctx, struct db_conn *c, const json_t *env, const char *ws_id,
		   struct env_verdict *v, int64_t *ws_revision)
{
	struct db_rows rows = {0};
	json_t *files = NULL;
	struct env_snapshot snap = {0};
	*ws_revision = 0;
	if (ws_id) {
		enum rg_status st = db_workspace_get(c, ctx->tenant_id, ws_id, &rows, &ctx->dberr);
		if (st != RG_OK) {
			h_db_failed(ctx, st);
			return false;
		}
		if (rows.n == 0) {
			h_problem(ctx, PROBLEM_NOT_FOUND, "No such workspace.", NULL);
			return false;
		}
		const struct db_workspace *w = db_rows_at(&rows, 0);
		files = json_loads(w->files_json, 0, NULL);
		snap.root_hash = w->root_hash;
		snap.files = files ? files : json_object();
		*ws_revision = w->revision;
	}
	core_envelope_verify(env, ws_id ? &snap : NULL, v);
	if (ws_id && files == NULL)
		json_decref((json_t *)snap.files);
	json_decref(files);
	db_rows_free(&rows);
	return true;
}

static json_t *envelope_json(const char *id, int64_t revision, const struct env_verdict *v,
			     const char *ws_id, int64_t ws_revision, int64_t created_ms,
			     int64_t updated_ms)
{
	return json_pack("{s:s, s:I, s:s, s:O, s:O, s:o, s:o, s:o, s:o}", "envelope_id", id,
			 "revision", (json_int_t)revision, "verdict", v->verdict, "failure_codes",
			 v->failure_codes, "checks", v->checks, "workspace_id",
			 ws_id ? json_string(ws_id) : json_null(), "workspace_revision",
			 ws_revision ? json_integer(ws_revision) : json_null(), "created_at",
			 h_time(created_ms), "updated_at", h_time(updated_ms));
}

/* The verdict as stored text (new strings: free()). */
static bool verdict_texts(const struct env_verdict *v, char **codes, char **checks)
{
	*codes = json_dumps(v->failure_codes, JSON_COMPACT);
	*checks = json_dumps(v->checks, JSON_COMPACT);
	return *codes && *checks;
}

void h_envelope_create(struct h_ctx *ctx)
{
	const json_t *env = json_object_get(ctx->body, "envelope");
	const char *ws_id = json_string_value(json_object_get(ctx->body, "workspace_id"));
	char id[RG_ID_SIZE];
	char *body = NULL, *codes = NULL, *checks = NULL;
	struct env_verdict v = {0};
	int64_t ws_revision = 0, created = 0;
	struct db_conn *c = NULL;
	struct db_actor actor = h_actor(ctx);
	if (!core_new_id("env_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	enum rg_status st;
	if (!h_acquire(ctx, &c))
		return;
	if (!verify(ctx, c, env, ws_id, &v, &ws_revision))
		goto out;
	body = json_dumps(env, JSON_COMPACT);
	if (body == NULL || !verdict_texts(&v, &codes, &checks)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		goto out;
	}
	struct db_envelope_verdict dv = {v.verdict, codes, checks, ws_id, ws_revision};
	st = db_envelope_create(c, &actor, id, body, &dv, &created, &ctx->dberr);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		goto out;
	}
	snprintf(ctx->location, sizeof ctx->location, "/v1/envelopes/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201, envelope_json(id, 1, &v, ws_id, ws_revision, created, created));
out:
	h_db_release(ctx, c);
	core_env_verdict_free(&v);
	free(body);
	free(codes);
	free(checks);
}

void h_envelope_get(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "envelope_id");
	struct db_rows rows;
	const struct db_envelope *e =
		h_fetch_row(ctx, db_envelope_get, id, "No such envelope.", &rows);
	if (e == NULL)
		return;
	struct env_verdict v = {e->verdict, json_loads(e->failure_codes_json, 0, NULL),
				json_loads(e->checks_json, 0, NULL)};
	if (v.failure_codes && v.checks) {
		h_etag(ctx, e->revision);
		h_reply(ctx, 200, envelope_json(id, e->revision, &v, e->workspace_id,
						 e->workspace_revision, e->created_ms,
						 e->updated_ms));
	} else {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
	}
	core_env_verdict_free(&v);
	db_rows_free(&rows);
}

void h_envelope_verify(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "envelope_id");
	struct env_verdict v = {0};
	char *codes = NULL, *checks = NULL;
	int64_t ws_revision = 0, revision = 0;
	json_t *env = NULL;
	struct db_conn *c = NULL;
	struct db_actor actor = h_actor(ctx);
	struct db_rows rows;
	const struct db_envelope *e =
		h_fetch_row(ctx, db_envelope_get, id, "No such envelope.", &rows);
	if (e == NULL)
		return;
	/* verify moves the envelope's revision: If-Match, when sent, must name it
	 * (openapi/openapi.yaml "Revisions and If-Match"). */
	if (!h_if_match(ctx, e->revision)) {
		db_rows_free(&rows);
		return;
	}
	env = json_loads(e->body_json, 0, NULL);
	char *ws_id = e->workspace_id ? strdup(e->workspace_id) : NULL;
	int64_t created = e->created_ms;
	db_rows_free(&rows);
	enum rg_status st = env ? h_db_acquire(ctx, &c) : RG_ERROR;
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		goto out;
	}
	if (!verify(ctx, c, env, ws_id, &v, &ws_revision))
		goto out;
	if (!verdict_texts(&v, &codes, &checks)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		goto out;
	}
	struct db_envelope_verdict dv = {v.verdict, codes, checks, ws_id, ws_revision};
	int64_t updated = 0;
	st = db_envelope_reverify(c, &actor, id, &dv, &revision, &updated, &ctx->dberr);
	if (st == RG_NOT_FOUND)
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such envelope.", NULL);
	else if (st != RG_OK)
		h_db_failed(ctx, st);
	else {
		h_etag(ctx, revision);
		h_reply(ctx, 200, envelope_json(id, revision, &v, ws_id, ws_revision, created,
						 updated));
	}
out:
	h_db_release(ctx, c);
	core_env_verdict_free(&v);
	json_decref(env);
	free(ws_id);
	free(codes);
	free(checks);
}

/* ---- relevance ------------------------------------------------------------------- */

void h_relevance_check(struct h_ctx *ctx)
{
	const json_t *cr = json_object_get(ctx->body, "context_relevance");
	json_t *normalised = NULL;
	if (cr) {
		normalised = core_relevance_from_context(cr);
	} else {
		struct db_rows rows;
		const struct db_receipt *r = h_fetch_row(
			ctx, db_receipt_get,
			json_string_value(json_object_get(ctx->body, "load_receipt_id")),
			"No such load receipt.", &rows);
		if (r == NULL)
			return;
		json_t *receipt = json_loads(r->body, 0, NULL);
		db_rows_free(&rows);
		if (receipt)
			normalised = core_relevance_from_receipt(receipt,
								 json_object_get(ctx->body, "relevance"));
		json_decref(receipt);
	}
	if (normalised == NULL) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	struct env_verdict v;
	core_relevance_verify(normalised, &v);
	json_decref(normalised);
	h_reply(ctx, 200, json_pack("{s:s, s:O, s:O}", "verdict", v.verdict, "failure_codes",
				    v.failure_codes, "checks", v.checks));
	core_env_verdict_free(&v);
}
