/* The semantic-preference contract (openapi/openapi.yaml "Semantic preferences"): surfaces and
 * context keys, the request, the validation of the response and its corpus inventory,
 * maintenance guidance and the digests of stateless receipts. */
#include "core/provider.h"

#include <stdint.h>
#include <string.h>

#include "core/hash.h"
#include "core/ids.h"
#include "core/provider_internal.h"

#define SP_REQUEST_SCHEMA "semantic_preference_provider_request_v0"
#define SP_RESPONSE_SCHEMA "semantic_preference_provider_response_v0"
#define SP_GUIDANCE_SCHEMA "semantic_preference_maintenance_guidance_v0"
#define SURFACE_MAX 128
#define CONTEXT_KEY_MAX 64

/* [a-z][a-z0-9_-]* over s[0..n) */
static bool sp_word(const char *s, size_t n)
{
	if (n == 0 || !pv_is_lower(s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(pv_is_lower(s[i]) || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

bool core_sp_surface_valid(const char *s)
{
	if (s == NULL || strlen(s) > SURFACE_MAX)
		return false;
	size_t words = 0;
	for (const char *p = s;; p++) {
		size_t n = strcspn(p, ".");
		if (!sp_word(p, n))
			return false;
		words++;
		p += n;
		if (*p == '\0')
			break;
	}
	return words >= 2;
}

bool core_sp_context_key_valid(const char *s)
{
	return s != NULL && strlen(s) <= CONTEXT_KEY_MAX && sp_word(s, strlen(s));
}

json_t *core_sp_request(const char *surface, const char *query, int limit,
			const json_t *context)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:o}", "schema_version", SP_REQUEST_SCHEMA,
			 "surface", surface, "query", query, "limit", limit, "context",
			 context ? json_deep_copy(context) : json_object());
}

const char *core_sp_failure_name(enum core_sp_failure f)
{
	switch (f) {
	case CORE_SP_OK:
		return NULL;
	case CORE_SP_INVALID_RESPONSE:
		return "invalid_response";
	case CORE_SP_ITEM_TOO_LARGE:
		return "item_too_large";
	case CORE_SP_INVALID_CORPUS_INVENTORY:
		return "invalid_corpus_inventory";
	}
	return NULL;
}

static const char *const read_roles[] = {"primary", "fallback", "reference", NULL};
static const char *const write_modes[] = {"read_only", "provider_managed", NULL};
static const char *const writeback_triggers[] = {"explicit_feedback", "source_truth_changed",
						 NULL};
static const char *const closure_policies[] = {"none", "write_wait_l2_read_scoped_recall", NULL};

static const char *inventory_entry_problem(const json_t *e)
{
	static const char *const members[] = {"corpus_id", "scope_ref", "read_role", "write_mode",
					      "source_of_truth", "writeback_triggers",
					      "closure_policy", "write_actor_ref", NULL};
	static const struct pv_shape_whys whys = {"an inventory entry is not an object",
						  "an inventory entry has an unknown member",
						  "an inventory entry lacks a member"};
	const char *why = pv_shape_problem(e, members, 7, &whys);
	const json_t *actor = json_object_get(e, "write_actor_ref");
	const json_t *triggers = json_object_get(e, "writeback_triggers");
	size_t i;
	json_t *t;
	if (why)
		return why;
	if (!core_id_valid(json_string_value(json_object_get(e, "corpus_id"))))
		return "corpus_id is not an id";
	if (!pv_str_bytes(json_object_get(e, "scope_ref"), 1, RG_SP_TEXT_MAX))
		return "scope_ref is not a string of 1..512 bytes";
	if (!pv_str_in(json_object_get(e, "read_role"), read_roles))
		return "read_role is not primary, fallback or reference";
	if (!pv_str_in(json_object_get(e, "write_mode"), write_modes))
		return "write_mode is not read_only or provider_managed";
	if (actor && !json_is_null(actor) && !pv_str_bytes(actor, 1, RG_SP_TEXT_MAX))
		return "write_actor_ref is not null or a string of 1..512 bytes";
	if (!pv_str_bytes(json_object_get(e, "source_of_truth"), 1, RG_SP_TEXT_MAX))
		return "source_of_truth is not a string of 1..512 bytes";
	if (!json_is_array(triggers))
		return "writeback_triggers is not an array";
	json_array_foreach(triggers, i, t) {
		if (!pv_str_in(t, writeback_triggers))
			return "a writeback trigger is not explicit_feedback or source_truth_changed";
		for (size_t j = 0; j < i; j++)
			if (json_equal(t, json_array_get(triggers, j)))
				return "writeback_triggers repeats a trigger";
	}
	if (!pv_str_in(json_object_get(e, "closure_policy"), closure_policies))
		return "closure_policy is not none or write_wait_l2_read_scoped_recall";
	return NULL;
}

static const char *inventory_problem(const json_t *inv)
{
	size_t i;
	json_t *e;
	const char *why;
	if (!json_is_array(inv))
		return "corpus_inventory is not an array";
	if (json_array_size(inv) > RG_SP_INVENTORY_MAX)
		return "corpus_inventory has more than 20 entries";
	json_array_foreach(inv, i, e)
		if ((why = inventory_entry_problem(e)) != NULL)
			return why;
	return NULL;
}

/* The response's verdict; the precedence is invalid_response, then item_too_large, then
 * invalid_corpus_inventory, wherever in the response each fault lies. */
static enum core_sp_failure sp_response_problem(const json_t *resp, const char **why)
{
	static const char *const members[] = {"schema_version", "items", "corpus_inventory", NULL};
	static const char *const item_members[] = {"preference_ref", "summary", NULL};
	static const struct pv_shape_whys whys = {"the response is not an object",
						  "the response has an unknown member",
						  "the response lacks a member"};
	static const struct pv_shape_whys item_whys = {"an item is not an object",
						       "an item has an unknown member",
						       "an item lacks a member"};
	const json_t *items = json_object_get(resp, "items");
	const json_t *inv = json_object_get(resp, "corpus_inventory");
	const char *too_large = NULL;
	size_t i;
	json_t *item;
	if ((*why = pv_shape_problem(resp, members, 2, &whys)) != NULL)
		return CORE_SP_INVALID_RESPONSE;
	if (!pv_str_is(json_object_get(resp, "schema_version"), SP_RESPONSE_SCHEMA))
		*why = "schema_version is not " SP_RESPONSE_SCHEMA;
	else if (!json_is_array(items))
		*why = "items is not an array";
	else if (json_array_size(items) > RG_SP_ITEMS_MAX)
		*why = "more than 100 items";
	if (*why)
		return CORE_SP_INVALID_RESPONSE;
	json_array_foreach(items, i, item) {
		const json_t *ref = json_object_get(item, "preference_ref");
		const json_t *summary = json_object_get(item, "summary");
		if ((*why = pv_shape_problem(item, item_members, 2, &item_whys)) != NULL)
			return CORE_SP_INVALID_RESPONSE;
		if (!pv_str_bytes(ref, 1, SIZE_MAX) || !pv_str_bytes(summary, 1, SIZE_MAX)) {
			*why = "an item's preference_ref or summary is not a non-empty string";
			return CORE_SP_INVALID_RESPONSE;
		}
		if (too_large == NULL && json_string_length(ref) > RG_SP_PREF_REF_MAX)
			too_large = "an item's preference_ref is over 512 bytes";
		if (too_large == NULL && json_string_length(summary) > RG_SP_SUMMARY_MAX)
			too_large = "an item's summary is over 2000 bytes";
	}
	if ((*why = too_large) != NULL)
		return CORE_SP_ITEM_TOO_LARGE;
	if (inv && (*why = inventory_problem(inv)) != NULL)
		return CORE_SP_INVALID_CORPUS_INVENTORY;
	return CORE_SP_OK;
}

enum core_sp_failure core_sp_validate_response(const json_t *resp, int limit,
					       json_t **items_out, bool *truncated,
					       const char **why)
{
	const char *problem = NULL;
	enum core_sp_failure f = sp_response_problem(resp, &problem);
	const json_t *items = json_object_get(resp, "items");
	size_t keep = limit < 0 ? 0 : (size_t)limit;
	if (items_out)
		*items_out = NULL;
	if (truncated)
		*truncated = f == CORE_SP_OK && json_array_size(items) > keep;
	if (why)
		*why = problem;
	if (f != CORE_SP_OK || items_out == NULL)
		return f;
	*items_out = json_array();
	for (size_t i = 0; i < json_array_size(items) && i < keep; i++)
		json_array_append_new(*items_out, json_deep_copy(json_array_get(items, i)));
	return f;
}

json_t *core_sp_guidance(const json_t *inventory)
{
	json_t *ids = json_array(), *triggers = json_array(), *policies = json_array();
	size_t i, k;
	json_t *e, *t;
	json_array_foreach(inventory, i, e) {
		const json_t *id = json_object_get(e, "corpus_id");
		const json_t *policy = json_object_get(e, "closure_policy");
		if (!pv_str_is(json_object_get(e, "write_mode"), "provider_managed"))
			continue;
		pv_insert_sorted_unique(ids, json_string_value(id), json_string_length(id));
		json_array_foreach(json_object_get(e, "writeback_triggers"), k, t)
			pv_insert_sorted_unique(triggers, json_string_value(t),
						json_string_length(t));
		pv_insert_sorted_unique(policies, json_string_value(policy),
					json_string_length(policy));
	}
	if (json_array_size(ids) == 0) {
		json_decref(ids);
		json_decref(triggers);
		json_decref(policies);
		return json_null();
	}
	return json_pack("{s:s, s:o, s:o, s:o, s:[ss]}", "schema_version", SP_GUIDANCE_SCHEMA,
			 "corpus_ids", ids, "writeback_triggers", triggers, "closure_policies",
			 policies, "closure_outcomes", "verified", "no_write_rationale");
}

void core_digest16(const char *ref, char out[RG_DIGEST16_SIZE])
{
	char hex[RG_SHA256_HEX_LEN + 1];
	core_sha256_hex(ref, strlen(ref), hex);
	memcpy(out, hex, RG_DIGEST16_SIZE - 1);
	out[RG_DIGEST16_SIZE - 1] = '\0';
}

json_t *core_sp_digests(const json_t *refs)
{
	json_t *out = json_array(), *r;
	size_t i;
	json_array_foreach(refs, i, r) {
		char d[RG_DIGEST16_SIZE];
		if (!json_is_string(r))
			continue;
		core_digest16(json_string_value(r), d);
		pv_insert_sorted_unique(out, d, RG_DIGEST16_SIZE - 1);
	}
	return out;
}

json_t *core_sorted_unique(const json_t *strings)
{
	json_t *out = json_array(), *s;
	size_t i;
	json_array_foreach(strings, i, s)
		if (json_is_string(s))
			pv_insert_sorted_unique(out, json_string_value(s), json_string_length(s));
	return out;
}
