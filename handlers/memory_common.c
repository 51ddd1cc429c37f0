/* What the memory handler families (handlers/memory_*.c) share: record lookup, list
 * paging over db_mem_list, the refusal of a mutation and the eligibility fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "handlers/memory_internal.h"

const char *const h_mem_states[] = {"eligible", "ineligible", NULL};

const char h_mem_sha_reason[] = "must be sha256: followed by 64 lowercase hex digits";

const char h_mem_operation_desc[] =
	"Makes a retry safe: the same id and body return the record "
	"first created; another body is operation_conflict.";

json_t *h_mem_parsed_or_null(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	return v ? v : json_null();
}

bool h_mem_refused(struct h_ctx *ctx, const struct db_mem_outcome *out, bool if_match_first,
		   const char *noun)
{
	char detail[96];
	const char *o = out->outcome;
	if (strcmp(o, "ok") == 0)
		return false;
	if (strcmp(o, "not_found") == 0) {
		snprintf(detail, sizeof detail, "No such %s.", noun);
		h_problem(ctx, PROBLEM_NOT_FOUND, detail, NULL);
	} else if (strcmp(o, "stale") == 0) {
		h_stale(ctx, out->current_revision, if_match_first);
	} else if (strcmp(o, "already_revoked") == 0) {
		snprintf(detail, sizeof detail, "The %s is already revoked.", noun);
		h_problem(ctx, PROBLEM_ALREADY_REVOKED, detail, NULL);
	} else if (strcmp(o, "forbidden") == 0) {
		snprintf(detail, sizeof detail, "This token may only act on its own %ss.", noun);
		h_problem(ctx, PROBLEM_FORBIDDEN, detail, NULL);
	} else if (strcmp(o, "upstream_ineligible") == 0) {
		h_problem(ctx, PROBLEM_UPSTREAM_INELIGIBLE,
			  "An upstream record is not eligible for retrieval.", NULL);
	} else {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
	}
	return true;
}

bool h_mem_operation_hash(struct h_ctx *ctx, char out[RG_SHA256_TAGGED_SIZE])
{
	if (str(ctx->body, "operation_id") == NULL)
		return false;
	/* Canonical: keys sorted, no spaces, so a retry's body with its members in another
	 * order (or sent as MCP tool arguments) is the same request. */
	char *text = json_dumps(ctx->body, JSON_COMPACT | JSON_SORT_KEYS);
	core_sha256_tagged(text ? text : "", text ? strlen(text) : 0, out);
	free(text);
	return text != NULL;
}

bool h_mem_replayed(struct h_ctx *ctx, const struct db_mem_outcome *out,
		    json_t *(*render)(const struct db_mem_record *r))
{
	bool replay = strcmp(out->outcome, "replayed") == 0;
	if (!replay && strcmp(out->outcome, "operation_conflict") != 0)
		return false;
	if (!replay) {
		h_problem(ctx, PROBLEM_OPERATION_CONFLICT,
			  "operation_id was already used with a different body.", NULL);
		return true;
	}
	struct db_rows rows;
	const struct db_mem_record *r =
		h_fetch_row(ctx, db_mem_get, out->record_id, "No such record.", &rows);
	if (r) {
		h_etag(ctx, r->revision);
		h_reply(ctx, 200, render(r));
	}
	db_rows_free(&rows);
	return true;
}

json_t *h_mem_provenance(const char *text)
{
	if (text == NULL)
		return json_null();
	json_t *list = json_array();
	const char *p = text;
	while (*p) {
		size_t id_len = strcspn(p, " ");
		if (p[id_len] != ' ')
			break;
		char *end;
		long long revision = strtoll(p + id_len + 1, &end, 10);
		json_array_append_new(list, json_pack("{s:s%, s:I}", "source_id", p, id_len,
						      "revision", (json_int_t)revision));
		if (*end != ',')
			break;
		p = end + 1;
	}
	return list;
}

void h_mem_add_state(json_t *o, const struct db_mem_record *r)
{
	bool is_source = strcmp(r->record_kind, "source") == 0;
	json_t *reasons = core_memory_reasons(r->reasons_csv ? r->reasons_csv : "", is_source,
					      r->assent_expired);
	json_object_set_new(o, "effective_retrieval_state",
			    json_string(json_array_size(reasons) ? "ineligible" : "eligible"));
	json_object_set_new(o, "ineligible_reasons", reasons);
}

enum rg_status h_mem_fetch_records(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				   int64_t after, int limit, struct db_rows *rows)
{
	const struct h_mem_list_args *a = arg;
	return db_mem_list(c, ctx->tenant_id, &a->filter, after, limit, rows, &ctx->dberr);
}

const struct db_mem_record *h_mem_load_record(struct h_ctx *ctx, const char *param,
					      const char *want_kind, struct db_rows *rows)
{
	const struct db_mem_record *r =
		h_fetch_row(ctx, db_mem_get, h_param(ctx, param), "No such record.", rows);
	if (r && want_kind && strcmp(r->record_kind, want_kind) != 0) {
		db_rows_free(rows);
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such record.", NULL);
		return NULL;
	}
	return r;
}
