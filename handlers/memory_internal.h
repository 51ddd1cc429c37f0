/* Private to handlers/memory_*.c: what the memory handler families (sources, derivatives,
 * retrieval, assents, disclosures) share. Defined in handlers/memory_common.c. */
#ifndef RG_HANDLERS_MEMORY_INTERNAL_H
#define RG_HANDLERS_MEMORY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "core/hash.h"
#include "db/memory.h"
#include "handlers/common.h"
#include "handlers/handlers.h" /* h_mem_states, the sources' enums */

/* The 422 reason for a sha256: reference off its pattern. */
extern const char h_mem_sha_reason[];
/* The description of a create's operation_id (sources and derivatives). */
extern const char h_mem_operation_desc[];

/* A string member of o, borrowed; NULL when absent or not a string. */
static inline const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* New: the JSON that text holds, or JSON null when text is NULL or does not parse. */
json_t *h_mem_parsed_or_null(const char *text);

/* Answers a mutation function's refusal (its outcome is anything but "ok"); false for "ok".
 * noun names the resource in the detail ("source", "assent", "upstream record"). */
bool h_mem_refused(struct h_ctx *ctx, const struct db_mem_outcome *out, bool if_match_first,
		   const char *noun);

/* A create's operation_id (§4 idempotent create): out = the SHA-256 of the body as a retry
 * must repeat it; false when the body has no operation_id (or the hash could not be made). */
bool h_mem_operation_hash(struct h_ctx *ctx, char out[RG_SHA256_TAGGED_SIZE]);
/* After a create's function answered: true when it named a record its operation_id made
 * ("replayed": 200 with render(record) as it is now; "operation_conflict": 409). */
bool h_mem_replayed(struct h_ctx *ctx, const struct db_mem_outcome *out,
		    json_t *(*render)(const struct db_mem_record *r));

/* New: a derivative's provenance [{source_id, revision}] from db/'s text of it
 * (struct db_mem_record's provenance), or JSON null when there is none. */
json_t *h_mem_provenance(const char *text);

/* Adds {effective_retrieval_state, ineligible_reasons} of a record to o. */
void h_mem_add_state(json_t *o, const struct db_mem_record *r);

/* The argument of the source and derivative lists' h_list_query. */
struct h_mem_list_args {
	struct db_mem_filter filter;
	bool labels;
};

/* h_list_query's fetch over db_mem_list (struct db_mem_record rows); arg is a struct
 * h_mem_list_args. */
enum rg_status h_mem_fetch_records(struct h_ctx *ctx, struct db_conn *c, const void *arg,
				   int64_t after, int limit, struct db_rows *rows) RG_MUSTCHECK;

/* One record by path id (want_kind NULL: either kind), read into *rows (free with
 * db_rows_free); NULL (rows empty) after answering 404 or 503. */
const struct db_mem_record *h_mem_load_record(struct h_ctx *ctx, const char *param,
					      const char *want_kind, struct db_rows *rows);

#endif
