#include "core/prefs.h"

#include <stdlib.h>
#include <string.h>

#include "core/timefmt.h"

bool core_pref_key_valid(const char *key)
{
	size_t n = 0;
	if (key == NULL)
		return false;
	for (; key[n]; n++) {
		char c = key[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  (n > 0 && (c == '_' || c == '.' || c == '-'));
		if (!ok || n >= RG_PREF_KEY_MAX)
			return false;
	}
	return n > 0;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

bool core_pref_intent_hash(const struct pref_request *r, char out[RG_SHA256_TAGGED_SIZE])
{
	json_t *o = json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:o}", "action",
			      r->action == PREF_REMEMBER ? "remember" : "retire", "expected_revision",
			      r->expected_revision ? json_integer(r->expected_revision) : json_null(),
			      "expires_at", str_or_null(r->expires_at), "key", r->key, "operation_id",
			      r->operation_id, "source_quote", r->source_quote, "source_ref",
			      r->source_ref, "statement", str_or_null(r->statement));
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (text == NULL)
		return false;
	core_sha256_tagged(text, strlen(text), out);
	free(text);
	return true;
}

static const struct pref_entry *find(const struct pref_journal *j, const char *key)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->entries[i].key, key) == 0)
			return &j->entries[i];
	return NULL;
}

static size_t entry_bytes(const char *statement, const char *quote)
{
	return (statement ? strlen(statement) : 0) + (quote ? strlen(quote) : 0);
}

enum pref_check core_pref_check(const struct pref_journal *j, const struct pref_request *r)
{
	if (r->expected_revision != j->revision)
		return PREF_STALE;
	const struct pref_entry *e = find(j, r->key);
	if (r->action == PREF_RETIRE && e == NULL)
		return PREF_UNKNOWN_KEY;
	if (r->action == PREF_REMEMBER && e && e->retired && strcmp(e->source_ref, r->source_ref) == 0)
		return PREF_SOURCE_REUSED;

	size_t keys = j->n + (e == NULL), bytes = 0;
	for (size_t i = 0; i < j->n; i++)
		if (&j->entries[i] != e)
			bytes += entry_bytes(j->entries[i].statement, j->entries[i].source_quote);
	bytes += entry_bytes(r->statement, r->source_quote);
	if (keys > RG_PREF_MAX_KEYS || bytes > RG_PREF_MAX_BYTES)
		return PREF_CAPACITY;
	return PREF_OK;
}

void core_pref_apply(struct pref_journal *j, const struct pref_request *r, int64_t now_ms,
		     const char **predecessor)
{
	size_t i = 0;
	while (i < j->n && strcmp(j->entries[i].key, r->key) < 0)
		i++;
	*predecessor = NULL;
	if (i < j->n && strcmp(j->entries[i].key, r->key) == 0) {
		*predecessor = j->entries[i].operation_id;
	} else {
		if (j->n == RG_PREF_MAX_KEYS + 1)
			return; /* core_pref_check refused this already */
		memmove(&j->entries[i + 1], &j->entries[i], (j->n - i) * sizeof j->entries[0]);
		j->n++;
	}
	j->revision++;
	struct pref_entry *e = &j->entries[i];
	e->key = r->key;
	e->retired = r->action == PREF_RETIRE;
	e->statement = e->retired ? NULL : r->statement;
	e->source_ref = r->source_ref;
	e->source_quote = r->source_quote;
	e->expires_ms = e->retired ? RG_TIME_NONE : r->expires_ms;
	e->entry_revision = j->revision;
	e->operation_id = r->operation_id;
	e->updated_ms = now_ms;
}

void core_pref_view(struct jsonw *w, const struct pref_journal *j, int64_t now_ms)
{
	jsonw_raw(w, "{\"revision\":");
	if (j->revision)
		jsonw_int(w, j->revision);
	else
		jsonw_raw(w, "null");
	jsonw_raw(w, ",\"authority\":\"advisory_only\",\"entries\":[");
	for (size_t i = 0; i < j->n; i++) {
		const struct pref_entry *e = &j->entries[i];
		bool expired = !e->retired && e->expires_ms != RG_TIME_NONE && e->expires_ms <= now_ms;
		jsonw_raw(w, i ? ",{\"key\":" : "{\"key\":");
		jsonw_str(w, e->key);
		jsonw_raw(w, e->retired  ? ",\"state\":\"retired\",\"statement\":null"
			     : expired ? ",\"state\":\"expired\",\"statement\":null"
				       : ",\"state\":\"active\",\"statement\":");
		if (!e->retired && !expired)
			jsonw_str(w, e->statement);
		jsonw_raw(w, ",\"source_ref\":");
		jsonw_str(w, e->source_ref);
		jsonw_raw(w, ",\"expires_at\":");
		jsonw_time(w, e->expires_ms);
		jsonw_raw(w, ",\"entry_revision\":");
		jsonw_int(w, e->entry_revision);
		jsonw_raw(w, ",\"operation_id\":");
		jsonw_str(w, e->operation_id);
		jsonw_raw(w, ",\"updated_at\":");
		jsonw_time(w, e->updated_ms);
		jsonw_raw(w, "}");
	}
	jsonw_raw(w, "]}");
}
