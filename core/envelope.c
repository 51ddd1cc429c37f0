#include "core/envelope.h"

#include <stdio.h>
#include <string.h>

#include "core/memory.h"

static const struct {
	const char *code;
	const char *verdict;
} code_verdicts[] = {
	{"stale_context", "UNVERIFIABLE"},
	{"lossy_summary", "UNVERIFIABLE"},
	{"missing_source_ref", "UNVERIFIABLE"},
	{"unexpanded_required_ref", "UNVERIFIABLE"},
	{"unjoinable_receipt", "UNVERIFIABLE"},
	{"readability_regression", "DRIFT"},
	{"quality_gate_missing", "UNVERIFIABLE"},
	{"budget_exceeded", "DRIFT"},
	{"relevance_accounting_missing", "UNVERIFIABLE"},
	{"missing_relevance", "UNVERIFIABLE"},
	{"over_selection", "DRIFT"},
	{"unjoinable_relevance", "UNVERIFIABLE"},
	{"raw_context_leak", "UNVERIFIABLE"},
};

const char *core_env_code_verdict(const char *code)
{
	for (size_t i = 0; code && i < sizeof code_verdicts / sizeof code_verdicts[0]; i++)
		if (strcmp(code_verdicts[i].code, code) == 0)
			return code_verdicts[i].verdict;
	return NULL;
}

static int severity(const char *verdict)
{
	return strcmp(verdict, "UNVERIFIABLE") == 0 ? 2 : strcmp(verdict, "DRIFT") == 0 ? 1 : 0;
}

/* Records one check's outcome; a failure adds its code once and may raise the verdict. */
static void record(struct env_verdict *v, const char *check, const char *result,
		   const char *code, const char *detail)
{
	json_array_append_new(v->checks, json_pack("{s:s, s:s, s:s}", "check", check, "result",
						   result, "detail", detail));
	if (code == NULL || strcmp(result, "fail") != 0)
		return;
	size_t i;
	json_t *c;
	json_array_foreach(v->failure_codes, i, c)
		if (strcmp(json_string_value(c), code) == 0)
			return;
	json_array_append_new(v->failure_codes, json_string(code));
	if (severity(core_env_code_verdict(code)) > severity(v->verdict))
		v->verdict = core_env_code_verdict(code);
}

static void begin(struct env_verdict *v)
{
	v->verdict = "MATCH";
	v->failure_codes = json_array();
	v->checks = json_array();
}

void core_env_verdict_free(struct env_verdict *v)
{
	json_decref(v->failure_codes);
	json_decref(v->checks);
	v->failure_codes = v->checks = NULL;
}

static const char *str_at(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool nonempty(const char *s)
{
	return s && *s;
}

/* The bytes of s's first at most max bytes that end on a UTF-8 sequence boundary: a quoted
 * id cut inside a sequence would make the detail invalid UTF-8, json_pack would refuse it
 * and the check would vanish from the verdict. */
static int utf8_prefix(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	if (n == max && s[n] != '\0')
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--; /* s[n] continues a sequence: cut before that sequence's lead byte */
	return (int)n;
}

/* The source ref with this id, or NULL. */
static const json_t *find_ref(const json_t *refs, const char *id)
{
	size_t i;
	json_t *r;
	if (!nonempty(id))
		return NULL;
	json_array_foreach(refs, i, r)
		if (nonempty(str_at(r, "id")) && strcmp(id, str_at(r, "id")) == 0)
			return r;
	return NULL;
}

static const json_t *claims_of(const json_t *env)
{
	return json_object_get(json_object_get(env, "summary"), "claims");
}

/* lossy_summary: the compressed prose must be anchored: every claim cites a ref, and the
 * compression contract says lossless by reference. */
static void check_claims_cite_refs(const json_t *env, struct env_verdict *v)
{
	const json_t *claims = claims_of(env), *comp = json_object_get(env, "compression");
	char detail[160] = "";
	size_t i;
	json_t *c;
	if (json_array_size(claims) == 0)
		snprintf(detail, sizeof detail, "the summary has no claims");
	json_array_foreach(claims, i, c) {
		if (!nonempty(str_at(c, "text")) || json_array_size(json_object_get(c, "source_ref_ids")) == 0) {
			snprintf(detail, sizeof detail, "claim %zu cites no source ref", i);
			break;
		}
	}
	if (!detail[0] && (!nonempty(str_at(comp, "strategy")) ||
			   !json_is_number(json_object_get(comp, "ratio_target")) ||
			   !json_is_true(json_object_get(comp, "lossless_by_ref"))))
		snprintf(detail, sizeof detail, "compression is not declared lossless by reference");
	record(v, "claims_cite_refs", detail[0] ? "fail" : "pass", "lossy_summary",
	       detail[0] ? detail : "every claim cites a source ref");
}

/* Calls fn for every ref cited by a claim; stops at the first false. */
static bool each_cited(const json_t *env, bool (*fn)(const json_t *ref, const char *id,
						     char *detail, size_t size),
		       char *detail, size_t size)
{
	const json_t *refs = json_object_get(env, "source_refs");
	size_t i, k;
	json_t *c, *id;
	json_array_foreach(claims_of(env), i, c)
		json_array_foreach(json_object_get(c, "source_ref_ids"), k, id)
			if (!fn(find_ref(refs, json_string_value(id)), json_string_value(id), detail, size))
				return false;
	return true;
}

static bool ref_complete(const json_t *ref, const char *id, char *detail, size_t size)
{
	if (ref && nonempty(str_at(ref, "path")) && nonempty(str_at(ref, "range")) &&
	    nonempty(str_at(ref, "content_hash")))
		return true;
	if (id == NULL)
		id = "(not a string)";
	snprintf(detail, size, "cited source ref %.*s %s", utf8_prefix(id, 64), id,
		 ref ? "lacks path, range or content_hash" : "does not exist");
	return false;
}

static bool ref_expandable(const json_t *ref, const char *id, char *detail, size_t size)
{
	if (ref == NULL || nonempty(str_at(ref, "expansion_command")))
		return true; /* a missing ref is missing_source_ref's finding */
	snprintf(detail, size, "cited source ref %.*s has no expansion command",
		 utf8_prefix(id, 64), id);
	return false;
}

static void check_refs_exist(const json_t *env, struct env_verdict *v)
{
	char detail[160];
	bool ok = each_cited(env, ref_complete, detail, sizeof detail);
	record(v, "refs_exist", ok ? "pass" : "fail", "missing_source_ref",
	       ok ? "every cited source ref exists" : detail);
}

static void check_refs_expandable(const json_t *env, struct env_verdict *v)
{
	char detail[160];
	bool ok = each_cited(env, ref_expandable, detail, sizeof detail);
	record(v, "refs_expandable", ok ? "pass" : "fail", "unexpanded_required_ref",
	       ok ? "every cited source ref has an expansion command" : detail);
}

static void check_hashes(const json_t *env, struct env_verdict *v)
{
	char detail[160] = "";
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(env, "source_refs"), i, r) {
		const char *h = str_at(r, "content_hash");
		if (h && !core_sha256_ref_valid(h)) {
			snprintf(detail, sizeof detail, "source ref %zu has a malformed content_hash", i);
			break;
		}
	}
	record(v, "hashes", detail[0] ? "fail" : "pass", "stale_context",
	       detail[0] ? detail : "every source ref hash is sha256:<64 hex>");
}

static void check_freshness(const json_t *env, const struct env_snapshot *snap,
			    struct env_verdict *v)
{
	const json_t *ws = json_object_get(env, "workspace");
	const char *root = str_at(ws, "root_hash");
	char detail[160] = "";
	size_t i;
	json_t *r;
	if (!nonempty(root) || !nonempty(str_at(ws, "git_head"))) {
		record(v, "freshness", "fail", "stale_context",
		       "the envelope names no workspace root_hash and git_head");
		return;
	}
	if (snap == NULL || snap->files == NULL) {
		record(v, "freshness", "skipped", NULL, "no workspace snapshot to compare with");
		return;
	}
	bool same_root = snap->root_hash && strcmp(snap->root_hash, root) == 0;
	json_array_foreach(json_object_get(env, "source_refs"), i, r) {
		const char *path = str_at(r, "path"), *hash = str_at(r, "content_hash");
		const char *now = path ? json_string_value(json_object_get(snap->files, path)) : NULL;
		if (now ? (hash == NULL || strcmp(now, hash) != 0) : !same_root) {
			snprintf(detail, sizeof detail,
				 "source ref %zu differs from the workspace snapshot", i);
			break;
		}
	}
	record(v, "freshness", detail[0] ? "fail" : "pass", "stale_context",
	       detail[0] ? detail : "every source ref matches the workspace snapshot");
}

static void check_receipt_chain(const json_t *env, struct env_verdict *v)
{
	const json_t *chain = json_object_get(env, "receipt_chain");
	char detail[160] = "";
	size_t i, j;
	json_t *r;
	if (json_array_size(chain) == 0)
		snprintf(detail, sizeof detail, "the receipt chain is empty");
	json_array_foreach(chain, i, r) {
		const char *h = str_at(r, "receipt_hash");
		if (!nonempty(str_at(r, "tool")) || !core_sha256_ref_valid(h)) {
			snprintf(detail, sizeof detail, "receipt %zu lacks a tool or a sha256 receipt_hash", i);
			break;
		}
		for (j = 0; j < i; j++)
			if (strcmp(h, str_at(json_array_get(chain, j), "receipt_hash")) == 0)
				break;
		if (j < i) {
			snprintf(detail, sizeof detail, "receipts %zu and %zu share one receipt_hash", j, i);
			break;
		}
	}
	record(v, "receipt_chain", detail[0] ? "fail" : "pass", "unjoinable_receipt",
	       detail[0] ? detail : "every receipt joins by tool and hash");
}

static bool gate_value(const char *s)
{
	return s && (strcmp(s, "MATCH") == 0 || strcmp(s, "DRIFT") == 0 ||
		     strcmp(s, "UNVERIFIABLE") == 0);
}

static void check_quality_gates(const json_t *env, struct env_verdict *v)
{
	const json_t *gates = json_object_get(env, "quality_gates");
	const char *read = str_at(gates, "readability"), *test = str_at(gates, "test_evidence");
	const char *detail = NULL;
	if (!gate_value(read))
		detail = "the readability gate is absent";
	else if (!gate_value(test))
		detail = "the test_evidence gate is absent";
	else if (strcmp(test, "MATCH") != 0)
		detail = "the test_evidence gate did not pass";
	else if (strcmp(read, "UNVERIFIABLE") == 0)
		detail = "the readability gate could not be verified";
	record(v, "quality_gates", detail ? "fail" : "pass", "quality_gate_missing",
	       detail ? detail : "readability and test evidence gates are present");
	bool drift = read && strcmp(read, "DRIFT") == 0;
	record(v, "readability", drift ? "fail" : "pass", "readability_regression",
	       drift ? "the readability gate reports a regression" : "no readability regression");
}

static void check_budget(const json_t *env, struct env_verdict *v)
{
	const json_t *b = json_object_get(env, "context_budget");
	const json_t *max = json_object_get(b, "max_input_tokens");
	const json_t *target = json_object_get(b, "target_packet_tokens");
	json_int_t reserved = json_integer_value(json_object_get(b, "reserved_response_tokens"));
	json_int_t room = 0;
	/* Exact for any integers (the body's rules keep them ≥ 0, the verifier does not rely
	 * on it): room that overflows below the minimum fits no target, above the maximum all. */
	bool room_overflows = __builtin_sub_overflow(json_integer_value(max), reserved, &room);
	const char *detail = NULL;
	char buf[160];
	if (!json_is_integer(max) || !json_is_integer(target)) {
		detail = "the budget lacks max_input_tokens or target_packet_tokens";
	} else if (room_overflows ? reserved > 0 : json_integer_value(target) > room) {
		detail = "target_packet_tokens exceeds max_input_tokens minus reserved_response_tokens";
	} else {
		size_t bytes = 0, i;
		json_t *c;
		json_array_foreach(claims_of(env), i, c) {
			const char *t = str_at(c, "text");
			bytes += t ? strlen(t) : 0;
		}
		long long tokens = (long long)((bytes + 3) / 4);
		if (tokens > (long long)json_integer_value(target)) {
			snprintf(buf, sizeof buf, "the claims need %lld tokens, the packet target is %lld",
				 tokens, (long long)json_integer_value(target));
			detail = buf;
		}
	}
	record(v, "budget", detail ? "fail" : "pass", "budget_exceeded",
	       detail ? detail : "the packet fits its budget");
}

static void check_declared_failure(const json_t *env, struct env_verdict *v)
{
	const char *code = str_at(env, "failure_code");
	bool known = core_env_code_verdict(code) != NULL;
	record(v, "declared_failure", known ? "fail" : "pass", known ? code : NULL,
	       known ? "the envelope declares a failure code" : "the envelope declares no known failure");
}

void core_envelope_verify(const json_t *env, const struct env_snapshot *snap,
			  struct env_verdict *out)
{
	begin(out);
	check_claims_cite_refs(env, out);
	check_refs_exist(env, out);
	check_refs_expandable(env, out);
	check_hashes(env, out);
	check_freshness(env, snap, out);
	check_receipt_chain(env, out);
	check_quality_gates(env, out);
	check_budget(env, out);
	check_declared_failure(env, out);
}

/* ---- relevance ------------------------------------------------------------------- */

static const char *const raw_members[] = {"raw_context", "content", "raw_payload", "text", NULL};

static bool has_raw(const json_t *items)
{
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
		for (const char *const *m = raw_members; *m; m++)
			if (json_object_get(it, *m))
				return true;
	return false;
}

void core_relevance_verify(const json_t *n, struct env_verdict *out)
{
	const json_t *rel = json_object_get(n, "relevance");
	const json_t *loaded = json_object_get(n, "loaded_inputs");
	const json_t *refs = json_object_get(rel, "input_refs");
	bool has_rel = json_is_object(rel);
	begin(out);

	bool raw = has_raw(loaded) || has_raw(refs);
	record(out, "raw_context", raw ? "fail" : "pass", "raw_context_leak",
	       raw ? "an input carries raw context" : "inputs carry identities and hashes only");

	bool claims = json_is_true(json_object_get(n, "claims_usefulness"));
	record(out, "usefulness", claims && !has_rel ? "fail" : "pass", "missing_relevance",
	       claims && !has_rel ? "usefulness is claimed without a relevance event"
				  : "no usefulness claim without relevance");
	if (!has_rel) {
		record(out, "accounting", "skipped", NULL, "no relevance event");
		record(out, "join", "skipped", NULL, "no relevance event");
		record(out, "selection", "skipped", NULL, "no relevance event");
		return;
	}

	static const char *const buckets[] = {"decisive_count", "supporting_count", "unused_count",
					      "unknown_count", NULL};
	static const char *const labels[] = {"decisive", "supporting", "unused", "unknown", NULL};
	json_int_t sum = 0;
	bool counted = true;
	for (const char *const *b = buckets; *b; b++) {
		const json_t *c = json_object_get(rel, *b);
		/* Counts are caller input: an overflowing sum accounts for nothing. */
		counted = counted && json_is_integer(c) &&
			  !__builtin_add_overflow(sum, json_integer_value(c), &sum);
	}
	size_t i;
	json_t *r;
	json_array_foreach(refs, i, r) {
		const char *l = str_at(r, "relevance");
		bool known = false;
		for (const char *const *k = labels; l && *k; k++)
			known = known || strcmp(l, *k) == 0;
		counted = counted && known;
	}
	counted = counted && sum == json_integer_value(json_object_get(n, "selected_count"));
	record(out, "accounting", counted ? "pass" : "fail", "relevance_accounting_missing",
	       counted ? "the relevance buckets account for every selected input"
		       : "the relevance buckets do not account for the selected inputs");

	bool joined = true;
	json_array_foreach(refs, i, r) {
		bool found = false;
		size_t k;
		json_t *in;
		json_array_foreach(loaded, k, in) {
			const char *a = str_at(in, "input_id"), *h = str_at(in, "delivered_hash");
			found = found || (a && h && str_at(r, "input_id") && str_at(r, "delivered_hash") &&
					  strcmp(a, str_at(r, "input_id")) == 0 &&
					  strcmp(h, str_at(r, "delivered_hash")) == 0);
		}
		joined = joined && found;
	}
	record(out, "join", joined ? "pass" : "fail", "unjoinable_relevance",
	       joined ? "every relevance label joins a delivered input"
		      : "a relevance label points to context that was never delivered");

	bool over = (json_int_t)json_array_size(refs) > json_integer_value(json_object_get(n, "delivered_count"));
	record(out, "selection", over ? "fail" : "pass", "over_selection",
	       over ? "more inputs are labelled than were delivered"
		    : "no more labels than delivered inputs");
}

json_t *core_relevance_from_context(const json_t *cr)
{
	const json_t *sel = json_object_get(cr, "selection");
	const json_t *selected = json_object_get(sel, "selected_count");
	const json_t *delivered = json_object_get(sel, "delivered_count");
	const json_t *loaded = json_object_get(cr, "loaded_inputs");
	const json_t *rel = json_object_get(cr, "relevance");
	const json_t *claims = json_object_get(cr, "claims_usefulness");
	if (!selected)
		selected = json_object_get(cr, "selected_count");
	if (!delivered)
		delivered = json_object_get(cr, "delivered_count");
	if (!rel)
		rel = json_object_get(cr, "relevance_event");
	if (!claims)
		claims = json_object_get(
			json_object_get(json_object_get(cr, "receipt_contract"), "load_receipt"),
			"claims_usefulness");
	json_t *inputs = json_array();
	if (json_is_array(loaded)) {
		json_array_extend(inputs, (json_t *)loaded);
	} else {
		size_t i;
		json_t *id;
		json_array_foreach(json_object_get(cr, "loaded_input_ids"), i, id)
			json_array_append_new(inputs, json_pack("{s:O}", "input_id", id));
	}
	return json_pack("{s:I, s:I, s:b, s:o, s:O}", "selected_count",
			 json_integer_value(selected), "delivered_count", json_integer_value(delivered),
			 "claims_usefulness", json_is_true(claims), "loaded_inputs", inputs, "relevance",
			 rel ? rel : json_null());
}

json_t *core_relevance_from_receipt(const json_t *receipt, const json_t *relevance)
{
	return json_pack("{s:I, s:I, s:b, s:O, s:O}", "selected_count",
			 json_integer_value(json_object_get(receipt, "selected_count")),
			 "delivered_count",
			 json_integer_value(json_object_get(receipt, "delivered_count")),
			 "claims_usefulness",
			 json_is_true(json_object_get(receipt, "claims_usefulness")), "loaded_inputs",
			 json_object_get(receipt, "loaded_inputs"), "relevance",
			 relevance ? relevance : json_null());
}
