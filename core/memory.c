#include "core/memory.h"

#include <stdio.h>
#include <string.h>

bool core_sha256_ref_valid(const char *s)
{
	if (s == NULL || strncmp(s, "sha256:", 7) != 0)
		return false;
	size_t n = 0;
	for (const char *p = s + 7; *p; p++, n++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return n == 64;
}

bool core_uri_valid(const char *s)
{
	if (s == NULL || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	const char *p = s + 1;
	while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '+' || *p == '.' ||
	       *p == '-')
		p++;
	if (*p != ':' || p[1] == '\0')
		return false;
	for (p++; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}

bool core_label_key_valid(const char *s)
{
	size_t n = 0;
	if (s == NULL || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (; s[n]; n++) {
		char c = s[n];
		if (n >= 64 || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
				 c == '.' || c == '-'))
			return false;
	}
	return true;
}

void core_memory_identity(const char *owner, const char *uri, const char *content_hash,
			  char out[RG_SHA256_TAGGED_SIZE])
{
	char buf[4096 + RG_MEM_URI_MAX];
	int n = snprintf(buf, sizeof buf, "%s\n%s\n%s", owner ? owner : "", uri, content_hash);
	core_sha256_tagged(buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, out);
}

/* Every reason, in explain order (thread_memory_disabled, beyond_limit and selected are
 * not eligibility reasons). */
static const char *const reason_order[] = {
	"revoked", "assent_revoked", "assent_expired", "assent_stale", "assent_missing",
	"classification_cold", "upstream_ineligible", NULL,
};

static bool csv_has(const char *csv, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = csv; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

size_t core_memory_reason_list(const char *stored_csv, bool is_source, bool assent_expired,
			       const char *out[RG_MEM_REASONS_MAX])
{
	const char *timed = is_source ? "assent_expired" : "upstream_ineligible";
	size_t n = 0;
	for (const char *const *r = reason_order; *r; r++)
		if (csv_has(stored_csv, *r) || (assent_expired && strcmp(*r, timed) == 0))
			out[n++] = *r;
	return n;
}

json_t *core_memory_reasons(const char *stored_csv, bool is_source, bool assent_expired)
{
	const char *list[RG_MEM_REASONS_MAX];
	size_t n = core_memory_reason_list(stored_csv, is_source, assent_expired, list);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, json_string(list[i]));
	return out;
}

const char *core_memory_pick_reason(bool thread_disabled, const char *first_reason,
				    bool within_limit)
{
	if (thread_disabled)
		return "thread_memory_disabled";
	if (first_reason)
		return first_reason;
	return within_limit ? "selected" : "beyond_limit";
}

json_t *core_memory_assemble(const struct mem_candidate *c, size_t n, int max_items,
			     int budget_tokens, const char *receipt_id, json_t **items)
{
	json_t *loaded = json_array(), *suppressed = json_array();
	size_t selected = 0;
	long long left = budget_tokens;
	*items = json_array();
	for (size_t i = 0; i < n; i++) {
		char input_id[32], delivered[RG_SHA256_TAGGED_SIZE];
		size_t bytes = strlen(c[i].content);
		long long tokens = (long long)((bytes + 3) / 4);
		json_int_t rank = (json_int_t)(i + 1);
		snprintf(input_id, sizeof input_id, "inp_%zu", i + 1);
		const char *why = NULL;
		if ((int)i >= max_items) {
			why = "beyond_limit";
		} else {
			selected++;
			if (tokens > left)
				why = "budget_exceeded";
		}
		if (why) {
			json_array_append_new(suppressed,
					      json_pack("{s:s, s:s, s:s, s:I, s:s}", "input_id", input_id,
							"record_id", c[i].record_id, "source_hash",
							c[i].content_hash, "rank", rank,
							"suppression_reason", why));
			continue;
		}
		left -= tokens;
		core_sha256_tagged(c[i].content, bytes, delivered);
		json_array_append_new(loaded, json_pack("{s:s, s:s, s:s, s:s, s:I}", "input_id",
							input_id, "record_id", c[i].record_id,
							"source_hash", c[i].content_hash,
							"delivered_hash", delivered, "rank", rank));
		json_array_append_new(*items, json_pack("{s:s, s:s, s:I, s:s, s:s}", "input_id",
							input_id, "record_id", c[i].record_id,
							"revision", (json_int_t)c[i].revision,
							"content", c[i].content, "trust",
							"untrusted_advisory"));
	}
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:b}", "receipt_id", receipt_id,
			 "event_type", "context.load", "candidate_count", (json_int_t)n,
			 "selected_count", (json_int_t)selected, "delivered_count",
			 (json_int_t)json_array_size(loaded), "suppressed_count",
			 (json_int_t)json_array_size(suppressed), "loaded_inputs", loaded,
			 "suppressed_inputs", suppressed, "claims_usefulness", 0);
}
