/* Memory governance (API.md §3–4): sources, classification, assent, foreign admission,
 * derivatives, revocation readback, search, explain and context assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "core/timefmt.h"
#include "db/memory.h"
#include "handlers/common.h"
#include "handlers/handlers.h"

static const char *const source_kinds[] = {"note", "thread_summary", "document", "fact", NULL};
static const char *const classifications[] = {"active", "cold", NULL};
static const char *const derivative_kinds[] = {"index", "summary", "cache", "transclusion",
					       "prompt", NULL};
static const char *const record_kinds[] = {"source", "derivative", NULL};
static const char *const states[] = {"eligible", "ineligible", NULL};

static const char *str(const json_t *o, const char *k);
static int64_t now_ms(void);

static const char sha_reason[] = "must be sha256: followed by 64 lowercase hex digits";

static const struct field_spec label_value = {.type = F_STRING, .min = 1,
					      .max = RG_MEM_LABEL_VALUE_MAX};
static const struct field_spec pointer_fields[] = {
	{.name = "uri", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_URI_MAX,
	 .check = core_uri_valid, .check_reason = "must be a URI (scheme:rest)"},
	{.name = "content_hash", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = sha_reason},
	{.name = NULL},
};
static const struct field_spec foreign_fields[] = {
	{.name = "owner", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "assent_id", .type = F_STRING, .min = 1, .max = 64},
	{.name = NULL},
};

const struct field_spec h_source_create_body[] = {
	{.name = "source_kind", .type = F_ENUM, .required = true, .values = source_kinds},
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "labels", .type = F_MAP, .max = RG_MEM_LABELS_MAX, .check = core_label_key_valid,
	 .key_pattern = "^[a-z][a-z0-9_.-]{0,63}$", .item = &label_value},
	{.name = "content", .type = F_STRING, .min = 1, .max = RG_MEM_CONTENT_MAX},
	{.name = "pointer", .type = F_OBJECT, .sub = pointer_fields},
	{.name = "classification", .type = F_ENUM, .values = classifications},
	{.name = "foreign", .type = F_OBJECT, .sub = foreign_fields},
	{.name = NULL},
};

enum rg_problem h_source_create_check(const json_t *body, json_t *errors)
{
	bool content = json_object_get(body, "content") != NULL;
	bool pointer = json_object_get(body, "pointer") != NULL;
	if (content == pointer) {
		core_fields_error(errors, "content", "must be present exactly when pointer is absent");
		return PROBLEM_VALIDATION_FAILED;
	}
	if (content && json_object_get(body, "foreign")) {
		core_fields_error(errors, "content", "must be absent for a foreign source (send a pointer)");
		return PROBLEM_THIN_POINTER_REQUIRED;
	}
	return PROBLEM_NONE;
}

const struct field_spec h_classification_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX},
	{.name = "classification", .type = F_ENUM, .required = true, .values = classifications},
	{.name = NULL},
};

const struct field_spec h_revoke_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX},
	{.name = "reason_code", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_MAX_ID_BYTES, .check = core_id_valid, .check_reason = h_id_reason},
	{.name = NULL},
};

static const struct field_spec upstream_fields[] = {
	{.name = "source_id", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX},
	{.name = NULL},
};
static const struct field_spec upstream_item = {.type = F_OBJECT, .sub = upstream_fields};

enum rg_problem h_derivative_check(const json_t *body, json_t *errors)
{
	const json_t *from = json_object_get(body, "derived_from");
	for (size_t i = 0; i < json_array_size(from); i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(str(json_array_get(from, i), "source_id"),
				   str(json_array_get(from, j), "source_id")) == 0) {
				char field[64];
				snprintf(field, sizeof field, "derived_from[%zu].source_id", i);
				core_fields_error(errors, field, "must not repeat an upstream");
				return PROBLEM_VALIDATION_FAILED;
			}
	return PROBLEM_NONE;
}

const struct field_spec h_derivative_body[] = {
	{.name = "kind", .type = F_ENUM, .required = true, .values = derivative_kinds},
	{.name = "derived_from", .type = F_ARRAY, .required = true, .min = 1,
	 .max = RG_MEM_DERIVED_FROM_MAX, .item = &upstream_item},
	{.name = "content", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_CONTENT_MAX},
	{.name = NULL},
};

static const struct field_spec kind_item = {.type = F_ENUM, .values = record_kinds};

const struct field_spec h_search_body[] = {
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_QUERY_MAX},
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "limit", .type = F_INT, .min = 1, .max = RG_MEM_SEARCH_LIMIT_MAX},
	{.name = "kinds", .type = F_ARRAY, .min = 1, .max = 2, .item = &kind_item, .unique = true},
	{.name = NULL},
};

const struct field_spec h_context_body[] = {
	{.name = "query", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_QUERY_MAX},
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "max_items", .type = F_INT, .min = 1, .max = RG_MEM_CONTEXT_ITEMS_MAX},
	{.name = "budget_tokens", .type = F_INT, .min = 1, .max = RG_MEM_BUDGET_MAX},
	{.name = NULL},
};

const struct field_spec h_assent_body[] = {
	{.name = "owner", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason},
	{.name = "source_identity", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = sha_reason},
	{.name = "expires_at", .type = F_TIMESTAMP, .required = true},
	{.name = NULL},
};

enum rg_problem h_assent_check(const json_t *body, json_t *errors)
{
	const char *expires = str(body, "expires_at");
	int64_t ms = 0;
	size_t n = strlen(expires);
	const char *reason = NULL;
	if (!core_time_parse(expires, &ms) || (expires[n - 1] != 'Z' && expires[n - 1] != 'z'))
		reason = FIELDS_REASON_UTC;
	else if (ms <= now_ms())
		reason = FIELDS_REASON_FUTURE;
	if (reason == NULL)
		return PROBLEM_NONE;
	core_fields_error(errors, "expires_at", reason);
	return PROBLEM_VALIDATION_FAILED;
}

const struct field_spec h_assent_revoke_body[] = {
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX},
	{.name = NULL},
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_t *opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *parsed_or_null(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	return v ? v : json_null();
}

/* Answers a mutation function's refusal (its outcome is anything but "ok"); false for "ok".
 * noun names the resource in the detail ("source", "assent", "upstream record"). */
static bool refused(struct h_ctx *ctx, const struct db_mem_outcome *out, bool if_match_first,
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

/* Adds {effective_retrieval_state, ineligible_reasons} of a metadata row to o. */
static void add_state(json_t *o, const PGresult *res, int i)
{
	bool is_source = strcmp(PQgetvalue(res, i, 1), "source") == 0;
	json_t *reasons = core_memory_reasons(PQgetvalue(res, i, 6), is_source,
					      PQgetvalue(res, i, 7)[0] == 't');
	json_object_set_new(o, "effective_retrieval_state",
			    json_string(json_array_size(reasons) ? "ineligible" : "eligible"));
	json_object_set_new(o, "ineligible_reasons", reasons);
}

static json_t *source_meta(const PGresult *res, int i, bool labels)
{
	json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:s, s:o, s:o}", "source_id",
			      PQgetvalue(res, i, 0), "revision", (json_int_t)db_int(res, i, 2),
			      "source_kind", opt_str(db_text(res, i, 3)), "classification",
			      opt_str(db_text(res, i, 5)), "content_hash", PQgetvalue(res, i, 8),
			      "created_at", h_time(db_int(res, i, 10)), "updated_at",
			      h_time(db_int(res, i, 11)));
	add_state(o, res, i);
	if (labels)
		json_object_set_new(o, "labels", parsed_or_null(db_text(res, i, 12)));
	return o;
}

static json_t *derivative_meta(const PGresult *res, int i)
{
	json_t *o = json_pack("{s:s, s:o, s:I, s:o, s:s, s:o}", "derivative_id",
			      PQgetvalue(res, i, 0), "kind", opt_str(db_text(res, i, 4)), "revision",
			      (json_int_t)db_int(res, i, 2), "provenance",
			      parsed_or_null(db_text(res, i, 14)), "content_hash",
			      PQgetvalue(res, i, 8), "created_at", h_time(db_int(res, i, 10)));
	add_state(o, res, i);
	return o;
}

/* ---- sources ---------------------------------------------------------------------- */

static void forbid_assent(struct h_ctx *ctx, enum rg_problem code, const char *identity)
{
	h_problem(ctx, code, NULL, NULL);
	ctx->problem_extra = json_pack("{s:s}", "source_identity", identity);
}

void h_source_create(struct h_ctx *ctx)
{
	const json_t *b = ctx->body, *pointer = json_object_get(b, "pointer");
	const json_t *foreign = json_object_get(b, "foreign");
	char id[RG_ID_SIZE], hash[RG_SHA256_TAGGED_SIZE], identity[RG_SHA256_TAGGED_SIZE];
	struct db_mem_source s = {0};
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	char *labels = NULL;

	s.content = str(b, "content");
	s.classification = str(b, "classification") ? str(b, "classification") : "active";
	if (s.content) {
		core_sha256_tagged(s.content, strlen(s.content), hash);
		memcpy(identity, hash, sizeof hash);
	} else {
		s.pointer_uri = str(pointer, "uri");
		snprintf(hash, sizeof hash, "%s", str(pointer, "content_hash"));
		core_memory_identity(foreign ? str(foreign, "owner") : "", s.pointer_uri, hash,
				     identity);
	}
	if (foreign) {
		s.foreign_owner = str(foreign, "owner");
		s.assent_id = str(foreign, "assent_id");
		if (s.assent_id == NULL) {
			forbid_assent(ctx, PROBLEM_ASSENT_MISSING, identity);
			return;
		}
	}
	if (!core_new_id("src_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	if (json_object_get(b, "labels"))
		labels = json_dumps(json_object_get(b, "labels"), JSON_COMPACT);
	s.record_id = id;
	s.source_kind = str(b, "source_kind");
	s.thread_id = str(b, "thread_id");
	s.labels_json = labels;
	s.content_hash = hash;
	s.source_identity = identity;
	struct db_actor actor = h_actor(ctx);
	if (!h_acquire(ctx, &c))
		goto out;
	enum rg_status st = db_mem_admit(c, &actor, &s, &out, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		goto out;
	}
	if (strcmp(out.outcome, "ok") != 0) {
		/* db/ answers one of the assent_* codes; anything else is a refusal we
		 * cannot name, which must not pass for an assent problem */
		enum rg_problem code = core_problem_from_code(out.outcome);
		if (code < PROBLEM_ASSENT_MISSING || code > PROBLEM_ASSENT_STALE)
			h_problem(ctx, PROBLEM_INTERNAL, NULL, NULL);
		else
			forbid_assent(ctx, code, identity);
		goto out;
	}
	bool cold = strcmp(s.classification, "cold") == 0;
	snprintf(ctx->location, sizeof ctx->location, "/v1/memory/sources/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201,
		json_pack("{s:s, s:i, s:s, s:s, s:s, s:o, s:s, s:s, s:o}", "source_id", id,
			  "revision", 1, "source_kind", s.source_kind, "classification",
			  s.classification, "effective_retrieval_state",
			  cold ? "ineligible" : "eligible", "ineligible_reasons",
			  cold ? json_pack("[s]", "classification_cold") : json_array(),
			  "content_hash", hash, "source_identity", identity, "created_at",
			  h_time(out.at_ms)));
out:
	free(labels);
}

struct list_args {
	struct db_mem_filter filter;
	bool labels;
};

static enum rg_status fetch_records(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				    int64_t after, int limit, PGresult **res)
{
	const struct list_args *a = arg;
	return db_mem_list(c, ctx->tenant_id, &a->filter, after, limit, res, &ctx->dberr);
}

static json_t *source_row(const PGresult *res, int i, const void *arg, int64_t *cursor)
{
	const struct list_args *a = arg;
	*cursor = db_int(res, i, 13);
	return source_meta(res, i, a->labels);
}

static json_t *derivative_row(const PGresult *res, int i, const void *arg, int64_t *cursor)
{
	(void)arg;
	*cursor = db_int(res, i, 13);
	return derivative_meta(res, i);
}

/* ?name= restricted to values (NULL-terminated); false after answering 422. */
static bool query_enum(struct h_ctx *ctx, const char *name, const char *const *values,
		       const char **out)
{
	*out = ctx->query(ctx, name);
	if (*out == NULL)
		return true;
	for (const char *const *v = values; *v; v++)
		if (strcmp(*v, *out) == 0)
			return true;
	h_invalid(ctx, name, "must be one of the allowed values");
	return false;
}

void h_source_list(struct h_ctx *ctx)
{
	static const char *const includes[] = {"labels", NULL};
	struct list_args a = {.filter = {.record_kind = "source"}};
	const char *include;
	if (!query_enum(ctx, "classification", classifications, &a.filter.classification) ||
	    !query_enum(ctx, "state", states, &a.filter.state) ||
	    !query_enum(ctx, "source_kind", source_kinds, &a.filter.source_kind) ||
	    !query_enum(ctx, "include", includes, &include))
		return;
	a.filter.thread_id = ctx->query(ctx, "thread_id");
	if (a.filter.thread_id && !core_id_valid(a.filter.thread_id)) {
		h_invalid(ctx, "thread_id", h_id_reason);
		return;
	}
	a.labels = include != NULL;
	const struct h_list_query q = {H_PAGE_DEFAULT, &a, fetch_records, source_row};
	h_list(ctx, &q);
}

void h_derivative_list(struct h_ctx *ctx)
{
	struct list_args a = {.filter = {.record_kind = "derivative"}};
	if (!query_enum(ctx, "state", states, &a.filter.state))
		return;
	const struct h_list_query q = {H_PAGE_DEFAULT, &a, fetch_records, derivative_row};
	h_list(ctx, &q);
}

/* One record by path id; NULL after answering (404 or 503). *res is new. */
static PGresult *load_record(struct h_ctx *ctx, const char *param, const char *want_kind)
{
	PGresult *res = h_fetch_by_id(ctx, db_mem_get, h_param(ctx, param), "No such record.");
	if (res && want_kind && strcmp(PQgetvalue(res, 0, 1), want_kind) != 0) {
		PQclear(res);
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such record.", NULL);
		return NULL;
	}
	return res;
}

void h_source_get(struct h_ctx *ctx)
{
	PGresult *res = load_record(ctx, "source_id", NULL);
	if (res == NULL)
		return;
	bool is_source = strcmp(PQgetvalue(res, 0, 1), "source") == 0;
	json_t *o = source_meta(res, 0, false);
	json_object_set_new(o, "record_kind", json_string(PQgetvalue(res, 0, 1)));
	json_object_set_new(o, "source_identity", opt_str(db_text(res, 0, 9)));
	json_object_set_new(o, "provenance", is_source ? json_null()
						       : parsed_or_null(db_text(res, 0, 14)));
	if (!is_source)
		json_object_set_new(o, "kind", opt_str(db_text(res, 0, 4)));
	h_etag(ctx, db_int(res, 0, 2));
	PQclear(res);
	h_reply(ctx, 200, o);
}

void h_derivative_get(struct h_ctx *ctx)
{
	PGresult *res = load_record(ctx, "derivative_id", "derivative");
	if (res == NULL)
		return;
	h_etag(ctx, db_int(res, 0, 2));
	h_reply(ctx, 200, derivative_meta(res, 0));
	PQclear(res);
}

void h_source_content(struct h_ctx *ctx)
{
	PGresult *res = h_fetch_by_id(ctx, db_mem_content, h_param(ctx, "source_id"),
				      "No such record.");
	if (res == NULL)
		return;
	if (!db_null(res, 0, 0))
		h_reply(ctx, 200, json_pack("{s:s}", "content", PQgetvalue(res, 0, 0)));
	else
		h_reply(ctx, 200, json_pack("{s:{s:s, s:s}}", "pointer", "uri", PQgetvalue(res, 0, 1),
					    "content_hash", PQgetvalue(res, 0, 2)));
	PQclear(res);
}

/* When a guarded write must not run, answers 412/409 from the record's current revision. */
static void refuse_record(struct h_ctx *ctx, bool if_match_first)
{
	PGresult *res = load_record(ctx, "source_id", "source");
	if (res == NULL)
		return;
	h_stale(ctx, db_int(res, 0, 2), if_match_first);
	PQclear(res);
}

void h_source_classify(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "source_id");
	int64_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	const char *classification = str(ctx->body, "classification");
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	bool if_match_first;
	if (!h_guard_write(ctx, expected, &if_match_first)) {
		refuse_record(ctx, if_match_first);
		return;
	}
	struct db_actor actor = h_actor(ctx);
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_classify(c, &actor, id, expected, classification, &out,
					    &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
	} else if (!refused(ctx, &out, if_match_first, "source")) {
		h_etag(ctx, out.revision);
		h_reply(ctx, 200,
			json_pack("{s:s, s:s, s:s, s:I, s:o}", "source_id", id,
				  "previous_classification", out.previous, "classification",
				  classification, "revision", (json_int_t)out.revision,
				  "effective_at", h_time(out.at_ms)));
	}
}

/* {source_id, revoked, derivatives, residual_eligible, clean}; NULL when there is no such
 * source (st RG_OK) or the query failed. */
static json_t *readback(struct h_ctx *ctx, struct db_conn *c, const char *id,
			enum rg_status *st)
{
	PGresult *res = NULL;
	*st = db_mem_readback(c, ctx->tenant_id, id, &res, &ctx->dberr);
	if (*st != RG_OK || PQntuples(res) == 0) {
		PQclear(res);
		return NULL;
	}
	json_t *derivatives = json_array();
	json_int_t residual = 0;
	for (int i = 0; i < PQntuples(res); i++) {
		if (db_null(res, i, 1))
			continue;
		bool eligible = PQgetvalue(res, i, 3)[0] == 't';
		residual += eligible;
		json_array_append_new(derivatives,
				      json_pack("{s:s, s:s, s:s}", "derivative_id", PQgetvalue(res, i, 1),
						"kind", PQgetvalue(res, i, 2), "effective_retrieval_state",
						eligible ? "eligible" : "ineligible"));
	}
	json_t *o = json_pack("{s:s, s:b, s:o, s:I, s:b}", "source_id", id, "revoked",
			      PQgetvalue(res, 0, 0)[0] == 't', "derivatives", derivatives,
			      "residual_eligible", residual, "clean", residual == 0);
	PQclear(res);
	return o;
}

void h_source_readback(struct h_ctx *ctx)
{
	struct db_conn *c = NULL;
	enum rg_status st;
	if (!h_acquire(ctx, &c))
		return;
	json_t *o = readback(ctx, c, h_param(ctx, "source_id"), &st);
	h_db_release(ctx, c);
	if (st != RG_OK)
		h_db_failed(ctx, st);
	else if (o == NULL)
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such source.", NULL);
	else
		h_reply(ctx, 200, o);
}

void h_source_revoke(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "source_id");
	int64_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	bool if_match_first;
	json_t *rb = NULL;
	if (!h_guard_write(ctx, expected, &if_match_first)) {
		refuse_record(ctx, if_match_first);
		return;
	}
	struct db_actor actor = h_actor(ctx);
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_revoke(c, &actor, id, expected, str(ctx->body, "reason_code"),
					  &out, &ctx->dberr);
	if (st == RG_OK && strcmp(out.outcome, "ok") == 0) {
		/* The revocation is committed: a failed readback must not turn it into an error
		 * (a retry would then meet already_revoked). readback is null then; GET …/readback
		 * answers it later. */
		enum rg_status rb_st;
		rb = readback(ctx, c, id, &rb_st);
	}
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
	} else if (!refused(ctx, &out, if_match_first, "source")) {
		h_etag(ctx, out.revision);
		h_reply(ctx, 200,
			json_pack("{s:s, s:I, s:o, s:o}", "source_id", id, "revision",
				  (json_int_t)out.revision, "revoked_at", h_time(out.at_ms),
				  "readback", rb ? rb : json_null()));
		return;
	}
	json_decref(rb);
}

/* ---- derivatives ------------------------------------------------------------------ */

void h_derivative_create(struct h_ctx *ctx)
{
	const json_t *from = json_object_get(ctx->body, "derived_from");
	const char *content = str(ctx->body, "content"), *kind = str(ctx->body, "kind");
	const char *ids[RG_MEM_DERIVED_FROM_MAX];
	int64_t revisions[RG_MEM_DERIVED_FROM_MAX];
	char id[RG_ID_SIZE], hash[RG_SHA256_TAGGED_SIZE];
	size_t n = json_array_size(from);
	for (size_t i = 0; i < n; i++) {
		ids[i] = str(json_array_get(from, i), "source_id");
		revisions[i] = json_integer_value(json_object_get(json_array_get(from, i), "revision"));
	}
	if (!core_new_id("drv_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	core_sha256_tagged(content, strlen(content), hash);
	struct db_actor actor = h_actor(ctx);
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_derive(c, &actor, id, kind, ids, revisions, n, content, hash,
					  &out, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
	} else if (!refused(ctx, &out, false, "upstream record")) {
		snprintf(ctx->location, sizeof ctx->location, "/v1/memory/derivatives/%s", id);
		h_etag(ctx, 1);
		h_reply(ctx, 201,
			json_pack("{s:s, s:s, s:i, s:O, s:s, s:[], s:s, s:o}", "derivative_id", id,
				  "kind", kind, "revision", 1, "provenance", from,
				  "effective_retrieval_state", "eligible", "ineligible_reasons",
				  "content_hash", hash, "created_at", h_time(out.at_ms)));
	}
}

/* ---- retrieval -------------------------------------------------------------------- */

/* "{source,derivative}" from the body's kinds (both when absent). */
static void kinds_literal(const json_t *body, char *out, size_t size)
{
	const json_t *kinds = json_object_get(body, "kinds");
	size_t i;
	json_t *k;
	if (kinds == NULL) {
		snprintf(out, size, "{source,derivative}");
		return;
	}
	snprintf(out, size, "{");
	json_array_foreach(kinds, i, k) {
		strncat(out, i ? "," : "", size - strlen(out) - 1);
		strncat(out, json_string_value(k), size - strlen(out) - 1);
	}
	strncat(out, "}", size - strlen(out) - 1);
}

static int int_or(const json_t *body, const char *name, int def)
{
	const json_t *v = json_object_get(body, name);
	return v ? (int)json_integer_value(v) : def;
}

void h_memory_search(struct h_ctx *ctx)
{
	char kinds[40];
	PGresult *res = NULL;
	struct db_conn *c = NULL;
	kinds_literal(ctx->body, kinds, sizeof kinds);
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_search(c, ctx->tenant_id, str(ctx->body, "query"),
					  str(ctx->body, "thread_id"), kinds,
					  int_or(ctx->body, "limit", RG_MEM_SEARCH_LIMIT_DEFAULT), &res,
					  &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	json_t *items = json_array();
	for (int i = 0; i < PQntuples(res); i++)
		json_array_append_new(items,
				      json_pack("{s:s, s:s, s:I, s:f, s:s}", "record_id",
						PQgetvalue(res, i, 0), "record_kind", PQgetvalue(res, i, 1),
						"revision", (json_int_t)db_int(res, i, 2), "score",
						strtod(PQgetvalue(res, i, 3), NULL), "content_hash",
						PQgetvalue(res, i, 4)));
	PQclear(res);
	h_reply(ctx, 200, json_pack("{s:o}", "items", items));
}

void h_memory_explain(struct h_ctx *ctx)
{
	char kinds[40], qhash[RG_SHA256_TAGGED_SIZE];
	PGresult *res = NULL;
	struct db_conn *c = NULL;
	const char *query = str(ctx->body, "query");
	int limit = int_or(ctx->body, "limit", RG_MEM_SEARCH_LIMIT_DEFAULT);
	kinds_literal(ctx->body, kinds, sizeof kinds);
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_explain(c, ctx->tenant_id, query, str(ctx->body, "thread_id"),
					   kinds, RG_MEM_EXPLAIN_MAX + 1, &res, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	/* Rows come eligible first, best first: the first `limit` eligible ones are what search
	 * selects. Up to 500 items: written directly rather than built as a jansson tree. */
	struct jsonw w;
	int rows = PQntuples(res), eligible_seen = 0;
	core_sha256_tagged(query, strlen(query), qhash);
	jsonw_init(&w);
	jsonw_raw(&w, "{\"query_sha256\":");
	jsonw_str(&w, qhash);
	jsonw_raw(&w, ",\"items\":[");
	for (int i = 0; i < rows && i < RG_MEM_EXPLAIN_MAX; i++) {
		bool is_source = strcmp(PQgetvalue(res, i, 1), "source") == 0;
		bool disabled = PQgetvalue(res, i, 7)[0] == 't';
		const char *reasons[RG_MEM_REASONS_MAX];
		size_t nr = core_memory_reason_list(PQgetvalue(res, i, 4), is_source,
						    PQgetvalue(res, i, 5)[0] == 't', reasons);
		bool within = nr == 0 && eligible_seen++ < limit;
		const char *reason = core_memory_pick_reason(disabled, nr ? reasons[0] : NULL, within);
		jsonw_raw(&w, i ? ",{\"record_id\":" : "{\"record_id\":");
		jsonw_str(&w, PQgetvalue(res, i, 0));
		jsonw_raw(&w, ",\"record_kind\":");
		jsonw_str(&w, PQgetvalue(res, i, 1));
		jsonw_raw(&w, ",\"revision\":");
		jsonw_int(&w, db_int(res, i, 2));
		jsonw_raw(&w, ",\"classification\":");
		jsonw_str(&w, db_text(res, i, 3));
		jsonw_raw(&w, strcmp(reason, "selected") == 0 ? ",\"included\":true,\"reason\":"
							       : ",\"included\":false,\"reason\":");
		jsonw_str(&w, reason);
		jsonw_raw(&w, ",\"ineligible_reasons\":[");
		for (size_t k = 0; k < nr; k++) {
			jsonw_raw(&w, k ? ",\"" : "\"");
			jsonw_raw(&w, reasons[k]); /* fixed reason names: nothing to escape */
			jsonw_raw(&w, "\"");
		}
		jsonw_raw(&w, "]}");
	}
	jsonw_raw(&w, rows > RG_MEM_EXPLAIN_MAX ? "],\"truncated\":true}" : "],\"truncated\":false}");
	PQclear(res);
	h_reply_jsonw(ctx, 200, &w);
}

void h_memory_context(struct h_ctx *ctx)
{
	char receipt_id[RG_ID_SIZE];
	struct mem_candidate cand[RG_MEM_CANDIDATES_MAX];
	PGresult *res = NULL;
	struct db_conn *c = NULL;
	json_t *items = NULL, *receipt = NULL;
	char *stored = NULL;
	if (!core_new_id("lrc_", receipt_id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_mem_context(c, ctx->tenant_id, str(ctx->body, "query"),
					   str(ctx->body, "thread_id"), RG_MEM_CANDIDATES_MAX, &res,
					   &ctx->dberr);
	if (st == RG_OK) {
		size_t n = (size_t)PQntuples(res);
		for (size_t i = 0; i < n; i++) {
			cand[i].record_id = PQgetvalue(res, (int)i, 0);
			cand[i].revision = db_int(res, (int)i, 2);
			cand[i].content_hash = PQgetvalue(res, (int)i, 4);
			cand[i].content = PQgetvalue(res, (int)i, 5);
		}
		receipt = core_memory_assemble(cand, n,
					       int_or(ctx->body, "max_items", RG_MEM_CONTEXT_ITEMS_DEFAULT),
					       int_or(ctx->body, "budget_tokens", RG_MEM_BUDGET_DEFAULT),
					       receipt_id, &items);
		stored = json_dumps(receipt, JSON_COMPACT);
		st = stored ? db_receipt_put(c, ctx->tenant_id, receipt_id, stored, &ctx->dberr)
			    : RG_NOMEM;
	}
	h_db_release(ctx, c);
	PQclear(res);
	free(stored);
	if (st != RG_OK) {
		json_decref(items);
		json_decref(receipt);
		h_db_failed(ctx, st);
		return;
	}
	h_reply(ctx, 200, json_pack("{s:o, s:o}", "items", items, "load_receipt", receipt));
}

void h_load_receipt_get(struct h_ctx *ctx)
{
	PGresult *res = h_fetch_by_id(ctx, db_receipt_get, h_param(ctx, "receipt_id"),
				      "No such load receipt.");
	if (res == NULL)
		return;
	/* The stored bytes, unchanged. */
	struct jsonw w;
	jsonw_init(&w);
	jsonw_raw(&w, PQgetvalue(res, 0, 0));
	h_reply_jsonw(ctx, 200, &w);
	PQclear(res);
}

/* ---- assents ---------------------------------------------------------------------- */

static json_t *assent_json(const PGresult *res)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:I, s:o, s:o}", "assent_id", PQgetvalue(res, 0, 0),
			 "owner", PQgetvalue(res, 0, 1), "source_identity", PQgetvalue(res, 0, 2),
			 "expires_at", h_time(db_int(res, 0, 3)), "revision",
			 (json_int_t)db_int(res, 0, 4), "revoked_at",
			 db_null(res, 0, 5) ? json_null() : h_time(db_int(res, 0, 5)), "created_at",
			 h_time(db_int(res, 0, 6)));
}

/* The owner a token may speak for: any (NULL) with admin, else its own name. */
static const char *speaks_for(const struct h_ctx *ctx)
{
	return (ctx->scopes & RG_SCOPE_ADMIN) ? NULL : ctx->token_name;
}

/* A non-admin token sees only the assents of the owner it speaks for. */
static bool may_see(const struct h_ctx *ctx, const PGresult *assent)
{
	return speaks_for(ctx) == NULL || strcmp(speaks_for(ctx), PQgetvalue(assent, 0, 1)) == 0;
}

void h_assent_get(struct h_ctx *ctx)
{
	PGresult *res = h_fetch_by_id(ctx, db_assent_get, h_param(ctx, "assent_id"),
				      "No such assent.");
	if (res == NULL)
		return;
	if (!may_see(ctx, res)) {
		h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only read its own assents.", NULL);
	} else {
		h_etag(ctx, db_int(res, 0, 4));
		h_reply(ctx, 200, assent_json(res));
	}
	PQclear(res);
}

void h_assent_grant(struct h_ctx *ctx)
{
	const char *owner = str(ctx->body, "owner"), *expires = str(ctx->body, "expires_at");
	const char *identity = str(ctx->body, "source_identity");
	int64_t expires_ms = 0;
	char id[RG_ID_SIZE];
	if (!core_time_parse(expires, &expires_ms)) /* checked by h_assent_check */
		return;
	if (speaks_for(ctx) && strcmp(speaks_for(ctx), owner) != 0) {
		h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only grant assent for its own name.",
			  NULL);
		return;
	}
	if (!core_new_id("asn_", id)) {
		h_problem(ctx, PROBLEM_INTERNAL, "The request could not be completed.", NULL);
		return;
	}
	struct db_actor actor = h_actor(ctx);
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	if (!h_acquire(ctx, &c))
		return;
	enum rg_status st = db_assent_grant(c, &actor, id, owner, identity, expires_ms, &out,
					    &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	snprintf(ctx->location, sizeof ctx->location, "/v1/assents/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201,
		json_pack("{s:s, s:s, s:s, s:o, s:i, s:n, s:o}", "assent_id", id, "owner", owner,
			  "source_identity", identity, "expires_at", h_time(expires_ms), "revision", 1,
			  "revoked_at", "created_at", h_time(out.at_ms)));
}

void h_assent_revoke(struct h_ctx *ctx)
{
	const char *id = h_param(ctx, "assent_id");
	int64_t expected = json_integer_value(json_object_get(ctx->body, "expected_revision"));
	struct db_mem_outcome out;
	struct db_conn *c = NULL;
	PGresult *res = NULL;
	bool if_match_first;
	if (!h_acquire(ctx, &c))
		return;
	struct db_actor actor = h_actor(ctx);
	enum rg_status st;
	if (!h_guard_write(ctx, expected, &if_match_first)) {
		/* Answer from the current revision without writing. */
		st = db_assent_get(c, ctx->tenant_id, id, &res, &ctx->dberr);
		if (st == RG_OK && PQntuples(res) == 1 && !may_see(ctx, res))
			h_problem(ctx, PROBLEM_FORBIDDEN, "This token may only revoke its own assents.",
				  NULL);
		else if (st == RG_OK && PQntuples(res) == 1)
			h_stale(ctx, db_int(res, 0, 4), if_match_first);
		else if (st == RG_OK)
			h_problem(ctx, PROBLEM_NOT_FOUND, "No such assent.", NULL);
		goto out;
	}
	st = db_assent_revoke(c, &actor, id, expected, speaks_for(ctx), &out, &ctx->dberr);
	if (st != RG_OK)
		goto out;
	if (!refused(ctx, &out, if_match_first, "assent") &&
	    (st = db_assent_get(c, ctx->tenant_id, id, &res, &ctx->dberr)) == RG_OK) {
		h_etag(ctx, out.revision);
		h_reply(ctx, 200, assent_json(res));
	}
out:
	h_db_release(ctx, c);
	PQclear(res);
	if (st != RG_OK)
		h_db_failed(ctx, st);
}
