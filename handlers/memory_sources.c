/* Memory sources (openapi/openapi.yaml "Memory sources"): create (with foreign admission),
 * list, get, content, classification, revocation and its readback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/memory.h"
#include "core/timefmt.h"
#include "db/disclosures.h"
#include "handlers/handlers.h"
#include "handlers/memory_internal.h"

const char *const h_source_kinds[] = {"note", "thread_summary", "document", "fact", NULL};
const char *const h_source_classifications[] = {"active", "cold", NULL};

static const struct field_spec label_value = {
	.type = F_STRING, .min = 1, .max = RG_MEM_LABEL_VALUE_MAX,
	.desc = "The value of the label its key names, matched exactly by the list's "
		"label=key:value."};
static const struct field_spec pointer_fields[] = {
	{.name = "uri", .type = F_STRING, .required = true, .min = 1, .max = RG_MEM_URI_MAX,
	 .check = core_uri_valid, .check_reason = "must be a URI (scheme:rest)",
	 .desc = "Where the bytes live, as a URI; private: only the source's content read "
		 "returns it."},
	{.name = "content_hash", .type = F_STRING, .required = true, .min = 1, .max = 71,
	 .check = core_sha256_ref_valid, .check_reason = h_mem_sha_reason,
	 .desc = "The SHA-256 of the bytes at uri, kept as sent (never fetched to check)."},
	{.name = NULL},
};
static const struct field_spec foreign_fields[] = {
	{.name = "owner", .type = F_STRING, .required = true, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "Whose data the source holds: the owner whose assent admits it."},
	{.name = "assent_id", .type = F_STRING, .min = 1, .max = 64,
	 .desc = "The asn_ id of the owner's live assent to this "
		 "source_identity; absent: assent_missing."},
	{.name = NULL},
};

const struct field_spec h_source_create_body[] = {
	{.name = "source_kind", .type = F_ENUM, .required = true, .values = h_source_kinds,
	 .desc = "What the memory is: a note, a thread_summary, a document or a fact."},
	{.name = "thread_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "The thread the memory came from (a source list "
		 "filter; retrieval ignores it)."},
	{.name = "labels", .type = F_MAP, .max = RG_MEM_LABELS_MAX, .check = core_label_key_valid,
	 .key_pattern = "^[a-z][a-z0-9_.-]{0,63}$", .item = &label_value,
	 .desc = "Private tags to filter the source list by; never searched."},
	{.name = "content", .type = F_STRING, .min = 1, .max = RG_MEM_CONTENT_MAX,
	 .desc = "The text to remember, kept as sent and searchable; either it or pointer."},
	{.name = "pointer", .type = F_OBJECT, .sub = pointer_fields,
	 .desc = "Bytes kept elsewhere, instead of content (required for a "
		 "foreign source); never matched by search."},
	{.name = "classification", .type = F_ENUM, .values = h_source_classifications,
	 .desc = "active (the default) makes the source retrievable; cold keeps it stored but "
		 "never retrieved.",
	 .dflt = "\"active\""},
	{.name = "foreign", .type = F_OBJECT, .sub = foreign_fields,
	 .desc = "Marks someone else's data: it must be a pointer, "
		 "with its owner's live assent."},
	{.name = "operation_id", .type = F_STRING, .min = 1, .max = RG_MAX_ID_BYTES,
	 .check = core_id_valid, .check_reason = h_id_reason, .desc = h_mem_operation_desc},
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

/* A revisioned source's write: the revision its writer read. */
#define SOURCE_EXPECTED_REVISION                                                                   \
	{.name = "expected_revision", .type = F_INT, .required = true, .min = 1, .max = INT64_MAX, \
	 .desc = "The source's current revision, from a read; any "    \
		 "other is refused with stale_revision."}

const struct field_spec h_classification_body[] = {
	SOURCE_EXPECTED_REVISION,
	{.name = "classification", .type = F_ENUM, .required = true,
	 .values = h_source_classifications,
	 .desc = "cold holds the source and its derivatives back from "
		 "retrieval at once; active releases it."},
	{.name = NULL},
};

const struct field_spec h_revoke_body[] = {
	SOURCE_EXPECTED_REVISION,
	{.name = "reason_code", .type = F_STRING, .required = true, .min = 1,
	 .max = RG_MAX_ID_BYTES, .check = core_id_valid, .check_reason = h_id_reason,
	 .desc = "Why it is revoked, a short code such as "
		 "owner_request, kept in the audit record."},
	{.name = NULL},
};

static json_t *source_meta(const struct db_mem_record *r, bool labels)
{
	json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:s, s:o, s:o}", "source_id", r->record_id,
			      "revision", (json_int_t)r->revision, "source_kind",
			      opt_str(r->source_kind), "classification", opt_str(r->classification),
			      "content_hash", r->content_hash, "created_at", h_time(r->created_ms),
			      "updated_at", h_time(r->updated_ms));
	h_mem_add_state(o, r);
	if (labels)
		json_object_set_new(o, "labels", h_mem_parsed_or_null(r->labels_json));
	return o;
}

/* ---- sources ---------------------------------------------------------------------- */

/* A create's answer (SourceCreated), for the replay of an operation_id: the source as it is
 * now. */
static json_t *source_created(const struct db_mem_record *r)
{
	json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:s, s:o, s:o}", "source_id", r->record_id,
			      "revision", (json_int_t)r->revision, "source_kind",
			      opt_str(r->source_kind), "classification", opt_str(r->classification),
			      "content_hash", r->content_hash, "source_identity",
			      opt_str(r->source_identity), "created_at", h_time(r->created_ms));
	h_mem_add_state(o, r);
	return o;
}

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
	char op_hash[RG_SHA256_TAGGED_SIZE];
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
	if (h_mem_operation_hash(ctx, op_hash)) {
		s.operation_id = str(b, "operation_id");
		s.operation_hash = op_hash;
	}
	struct db_actor actor = h_actor(ctx);
	if (!h_acquire(ctx, &c))
		goto out;
	enum rg_status st = db_mem_admit(c, &actor, &s, &out, &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		goto out;
	}
	if (h_mem_replayed(ctx, &out, source_created))
		goto out;
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
	/* the source as stored: the one renderer of a create's answer, replays' too */
	const struct db_mem_record created = {
		.record_id = id, .record_kind = "source", .revision = 1,
		.source_kind = s.source_kind, .classification = s.classification,
		.reasons_csv = strcmp(s.classification, "cold") == 0 ? "classification_cold" : "",
		.content_hash = hash, .source_identity = identity, .created_ms = out.at_ms};
	snprintf(ctx->location, sizeof ctx->location, "/v1/memory/sources/%s", id);
	h_etag(ctx, 1);
	h_reply(ctx, 201, source_created(&created));
out:
	free(labels);
}

static json_t *source_row(const void *row, const void *arg, int64_t *cursor)
{
	const struct db_mem_record *r = row;
	const struct h_mem_list_args *a = arg;
	*cursor = r->seq;
	return source_meta(r, a->labels);
}

/* ?label=k:v (repeatable, all must match) as one JSON object for db/ (new: free()), NULL when
 * absent; false after answering 422. The 422 names `label`, never a key or a value. */
static bool read_labels(struct h_ctx *ctx, char **out)
{
	const char *pairs[RG_MEM_LABELS_MAX + 1];
	size_t n = ctx->query_all ? ctx->query_all(ctx, "label", pairs, RG_MEM_LABELS_MAX + 1) : 0;
	*out = NULL;
	if (n == 0)
		return true;
	json_t *o = json_object();
	bool ok = n <= RG_MEM_LABELS_MAX;
	for (size_t i = 0; ok && i < n; i++) {
		const char *colon = strchr(pairs[i], ':');
		char key[65];
		size_t klen = colon ? (size_t)(colon - pairs[i]) : 0;
		ok = colon && klen > 0 && klen < sizeof key && strlen(colon + 1) <= RG_MEM_LABEL_VALUE_MAX;
		if (ok) {
			memcpy(key, pairs[i], klen);
			key[klen] = '\0';
			json_t *v = core_label_key_valid(key) ? json_string(colon + 1) : NULL;
			ok = v && json_object_set_new(o, key, v) == 0; /* v NULL: not UTF-8 */
		}
	}
	if (ok)
		*out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!ok || *out == NULL) {
		h_invalid(ctx, "label",
			  "must be key:value, a label key and a value of at most 256 bytes, at most 32");
		return false;
	}
	return true;
}

const char *const h_source_list_includes[] = {"labels", NULL};
const char *const h_source_list_orders[] = {"newest", "oldest", NULL};

void h_source_list(struct h_ctx *ctx)
{
	struct h_mem_list_args a = {.filter = {.record_kind = "source"}};
	const char *include, *order;
	char *labels = NULL;
	if (!h_query_enum(ctx, "classification", h_source_classifications,
			  &a.filter.classification) ||
	    !h_query_enum(ctx, "state", h_mem_states, &a.filter.state) ||
	    !h_query_enum(ctx, "source_kind", h_source_kinds, &a.filter.source_kind) ||
	    !h_query_enum(ctx, "include", h_source_list_includes, &include) ||
	    !h_query_enum(ctx, "order", h_source_list_orders, &order) || !read_labels(ctx, &labels))
		return;
	a.filter.newest = order == NULL || strcmp(order, "newest") == 0;
	a.filter.labels_json = labels;
	if (!h_query_id(ctx, "thread_id", &a.filter.thread_id)) {
		free(labels);
		return;
	}
	a.labels = include != NULL;
	const struct h_list_query q = {.default_limit = H_PAGE_DEFAULT, .arg = &a,
				       .fetch = h_mem_fetch_records, .render = source_row};
	h_list(ctx, &q);
	free(labels);
}

/* ?as_of=: the record as it was then (the eligibility history); 404 when it did not exist. */
static const struct db_mem_record *load_as_of(struct h_ctx *ctx, int64_t as_of,
					      struct db_rows *rows)
{
	struct db_conn *c = NULL;
	*rows = (struct db_rows){0};
	enum rg_status st = h_db_acquire(ctx, &c);
	if (st == RG_OK)
		st = db_mem_get_as_of(c, ctx->tenant_id, h_param(ctx, "source_id"), as_of, rows,
				      &ctx->dberr);
	h_db_release(ctx, c);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return NULL;
	}
	if (rows->n == 0) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such record at that instant.", NULL);
		return NULL;
	}
	return db_rows_at(rows, 0);
}

void h_source_get(struct h_ctx *ctx)
{
	struct db_rows rows;
	int64_t as_of;
	if (!h_as_of(ctx, ctx->query(ctx, "as_of"), &as_of))
		return;
	const struct db_mem_record *r = as_of == RG_TIME_NONE
						? h_mem_load_record(ctx, "source_id", NULL, &rows)
						: load_as_of(ctx, as_of, &rows);
	if (r == NULL)
		return;
	bool is_source = strcmp(r->record_kind, "source") == 0;
	json_t *o = source_meta(r, false);
	json_object_set_new(o, "record_kind", json_string(r->record_kind));
	json_object_set_new(o, "source_identity", opt_str(r->source_identity));
	json_object_set_new(o, "provenance",
			    is_source ? json_null() : h_mem_provenance(r->provenance));
	if (!is_source)
		json_object_set_new(o, "kind", opt_str(r->derivative_kind));
	if (as_of != RG_TIME_NONE) /* a past state: no ETag to write against */
		json_object_set_new(o, "as_of", h_time(as_of));
	else
		h_etag(ctx, r->revision);
	db_rows_free(&rows);
	h_reply(ctx, 200, o);
}

void h_source_content(struct h_ctx *ctx)
{
	/* The read and its disclosure are one: the content comes back once its disclosure is
	 * committed (docs/disclosures.md). */
	const struct db_content_read in = {.tenant_id = ctx->tenant_id,
					   .record_id = h_param(ctx, "source_id"),
					   .token_id = ctx->token_id,
					   .via = ctx->via,
					   .request_id = ctx->request_id};
	struct db_rows rows;
	enum rg_status st = ctx->content_read(ctx, &in, &rows);
	if (st != RG_OK) {
		h_db_failed(ctx, st);
		return;
	}
	if (rows.n == 0) {
		h_problem(ctx, PROBLEM_NOT_FOUND, "No such record.", NULL);
		return;
	}
	const struct db_mem_content *m = db_rows_at(&rows, 0);
	if (m->content)
		h_reply(ctx, 200, json_pack("{s:s}", "content", m->content));
	else
		h_reply(ctx, 200, json_pack("{s:{s:s, s:s}}", "pointer", "uri",
					    m->pointer_uri ? m->pointer_uri : "", "content_hash",
					    m->content_hash));
	db_rows_free(&rows);
}

/* When a guarded write must not run, answers 412/409 from the record's current revision. */
static void refuse_record(struct h_ctx *ctx, bool if_match_first)
{
	struct db_rows rows;
	const struct db_mem_record *r = h_mem_load_record(ctx, "source_id", "source", &rows);
	if (r == NULL)
		return;
	h_stale(ctx, r->revision, if_match_first);
	db_rows_free(&rows);
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
	} else if (!h_mem_refused(ctx, &out, if_match_first, "source")) {
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
	struct db_rows rows;
	*st = db_mem_readback(c, ctx->tenant_id, id, &rows, &ctx->dberr);
	if (*st != RG_OK || rows.n == 0) {
		db_rows_free(&rows);
		return NULL;
	}
	const struct db_mem_descendant *d = rows.row;
	json_t *derivatives = json_array();
	json_int_t residual = 0;
	for (size_t i = 0; i < rows.n; i++) {
		if (d[i].derivative_id == NULL)
			continue;
		residual += d[i].eligible;
		json_array_append_new(derivatives,
				      json_pack("{s:s, s:s, s:s}", "derivative_id", d[i].derivative_id,
						"kind", d[i].kind ? d[i].kind : "",
						"effective_retrieval_state",
						d[i].eligible ? "eligible" : "ineligible"));
	}
	bool revoked = d[0].revoked;
	db_rows_free(&rows);
	struct db_disclosure_summary sum;
	*st = db_disclosure_summary(c, ctx->tenant_id, id, &sum, &ctx->dberr);
	if (*st != RG_OK) {
		json_decref(derivatives);
		return NULL;
	}
	return json_pack("{s:s, s:b, s:o, s:I, s:b, s:{s:I, s:I, s:I, s:o, s:o, s:I}}",
			 "source_id", id, "revoked", revoked, "derivatives", derivatives,
			 "residual_eligible", residual, "clean", residual == 0, "disclosures",
			 "count", (json_int_t)sum.count, "threads", (json_int_t)sum.threads,
			 "tokens", (json_int_t)sum.tokens, "first_at",
			 h_time_or_null(sum.first_at_null ? RG_TIME_NONE : sum.first_at_ms),
			 "last_at", h_time_or_null(sum.last_at_null ? RG_TIME_NONE : sum.last_at_ms),
			 "after_revocation", (json_int_t)sum.after_revocation);
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
	} else if (!h_mem_refused(ctx, &out, if_match_first, "source")) {
		h_etag(ctx, out.revision);
		h_reply(ctx, 200,
			json_pack("{s:s, s:I, s:o, s:o}", "source_id", id, "revision",
				  (json_int_t)out.revision, "revoked_at", h_time(out.at_ms),
				  "readback", rb ? rb : json_null()));
		return;
	}
	json_decref(rb);
}
