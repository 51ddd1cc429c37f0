/* core/memory: the memory governance rules of API.md §4 (identities, eligibility reasons and
 * their explain order, context assembly under a token budget), without a database. */
#include "unit.h"

#include <jansson.h>
#include <openssl/evp.h>

#include "core/memory.h"

/* "sha256:" + lowercase hex of SHA-256(data), computed here with OpenSSL, not core/hash. */
static void ref_sha256(const void *data, size_t len, char out[RG_SHA256_TAGGED_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL), 1);
	assert_int_equal(mdlen, 32);
	memcpy(out, "sha256:", 7);
	for (unsigned int i = 0; i < mdlen; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[7 + 2 * i + 1] = hex[md[i] & 0x0f];
	}
	out[7 + 64] = '\0';
}

static void ref_sha256_str(const char *s, char out[RG_SHA256_TAGGED_SIZE])
{
	ref_sha256(s, strlen(s), out);
}

/* ---- core_sha256_ref_valid ---------------------------------------------------------- */

static void test_sha256_ref(void **state)
{
	(void)state;
	char ok[80], short63[80], long65[128], upper[80], noprefix[80], buf[128];
	snprintf(ok, sizeof ok, "sha256:%s",
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(strlen(ok), 71);
	assert_true(core_sha256_ref_valid(ok));

	char real[RG_SHA256_TAGGED_SIZE];
	ref_sha256_str("hello", real);
	assert_true(core_sha256_ref_valid(real));

	memcpy(short63, ok, 70);
	short63[70] = '\0';
	assert_false(core_sha256_ref_valid(short63));
	snprintf(long65, sizeof long65, "%s0", ok);
	assert_false(core_sha256_ref_valid(long65));
	snprintf(long65, sizeof long65, "%sa", ok);
	assert_false(core_sha256_ref_valid(long65));

	/* one upper-case hex digit anywhere */
	strcpy(upper, ok);
	upper[7 + 10] = 'A';
	assert_false(core_sha256_ref_valid(upper));
	strcpy(upper, ok);
	upper[70] = 'F';
	assert_false(core_sha256_ref_valid(upper));
	/* a non-hex letter */
	strcpy(buf, ok);
	buf[20] = 'g';
	assert_false(core_sha256_ref_valid(buf));

	/* the prefix: missing, upper-case, other algorithm, wrong separator */
	strcpy(noprefix, ok + 7);
	assert_int_equal(strlen(noprefix), 64);
	assert_false(core_sha256_ref_valid(noprefix));
	snprintf(buf, sizeof buf, "SHA256:%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "sha512:%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "sha256-%s", ok + 7);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, " %s", ok);
	assert_false(core_sha256_ref_valid(buf));
	snprintf(buf, sizeof buf, "%s ", ok);
	assert_false(core_sha256_ref_valid(buf));

	assert_false(core_sha256_ref_valid("sha256:"));
	assert_false(core_sha256_ref_valid(""));
	assert_false(core_sha256_ref_valid(NULL));
}

/* ---- core_uri_valid ----------------------------------------------------------------- */

static void test_uri_valid(void **state)
{
	(void)state;
	static const char *const good[] = {
		"https://x", "urn:a:b", "mailto:a@b", "a:b", "s3://bucket/key",
		"git+ssh://host/repo", "x-y.z+1:rest", "https://example.org/p?q=1#f",
		"file:///tmp/x", "https://h/\xc3\xa9", /* non-ASCII UTF-8 in the rest */
	};
	static const char *const bad[] = {
		"",                  /* empty */
		"//x",               /* no scheme */
		"example.org/x",     /* no colon at all */
		":x",                /* empty scheme */
		"HTTPS://x",         /* upper-case scheme */
		"Https://x",
		"hTTps://x",
		"1http://x",         /* scheme starts with a digit */
		"+a:b", "-a:b", ".a:b",
		"ht_tp://x",         /* '_' is not a scheme character */
		"ht tp://x",         /* space in the scheme */
		" https://x",        /* leading space */
		"https:",            /* empty rest */
		"urn:",
		"https: //x",        /* spaces */
		"https://x y",
		"https://x ",
		"https://x\t",       /* control characters */
		"https://x\ny",
		"https://x\ry",
		"https://x\x01",
		"https://x\x1f",
		"https://x\x7f",     /* DEL */
		"\thttps://x",
		"ht\ttps://x",
	};
	for (size_t i = 0; i < N_ELEMS(good); i++) {
		if (!core_uri_valid(good[i]))
			print_error("want valid: \"%s\"\n", good[i]);
		assert_true(core_uri_valid(good[i]));
	}
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		if (core_uri_valid(bad[i]))
			print_error("want invalid: case %zu \"%s\"\n", i, bad[i]);
		assert_false(core_uri_valid(bad[i]));
	}
	assert_false(core_uri_valid(NULL));
}

/* ---- core_label_key_valid ----------------------------------------------------------- */

static void test_label_key(void **state)
{
	(void)state;
	char k64[65], k65[66], d64[65];
	memset(k64, 'a', 64);
	k64[64] = '\0';
	memset(k65, 'a', 65);
	k65[65] = '\0';
	/* 64 characters of every allowed class */
	memset(d64, '_', 64);
	d64[0] = 'z';
	d64[1] = '9';
	d64[2] = '.';
	d64[3] = '-';
	d64[64] = '\0';
	assert_true(core_label_key_valid(k64));
	assert_true(core_label_key_valid(d64));
	assert_false(core_label_key_valid(k65));
	assert_true(core_label_key_valid("a"));
	assert_true(core_label_key_valid("team"));
	assert_true(core_label_key_valid("app.kubernetes.io-name_2"));
	assert_true(core_label_key_valid("a0"));

	assert_false(core_label_key_valid("0team")); /* leading digit */
	assert_false(core_label_key_valid("9"));
	assert_false(core_label_key_valid("_a"));
	assert_false(core_label_key_valid(".a"));
	assert_false(core_label_key_valid("-a"));
	assert_false(core_label_key_valid("Team"));
	assert_false(core_label_key_valid("teAm"));
	assert_false(core_label_key_valid("a b"));
	assert_false(core_label_key_valid("a:b"));
	assert_false(core_label_key_valid("a/b"));
	assert_false(core_label_key_valid("caf\xc3\xa9"));
	assert_false(core_label_key_valid(""));
	assert_false(core_label_key_valid(NULL));
}

/* ---- core_memory_identity ----------------------------------------------------------- */

static void check_identity(const char *owner, const char *uri, const char *hash)
{
	size_t n = strlen(owner) + strlen(uri) + strlen(hash) + 3;
	char *pre = malloc(n);
	assert_non_null(pre);
	snprintf(pre, n, "%s\n%s\n%s", owner, uri, hash);
	char want[RG_SHA256_TAGGED_SIZE], got[RG_SHA256_TAGGED_SIZE];
	ref_sha256(pre, strlen(pre), want);
	free(pre);
	memset(got, 'X', sizeof got);
	core_memory_identity(owner, uri, hash, got);
	assert_string_equal(got, want);
	assert_true(core_sha256_ref_valid(got));
}

static void test_identity(void **state)
{
	(void)state;
	char h1[RG_SHA256_TAGGED_SIZE], h2[RG_SHA256_TAGGED_SIZE];
	ref_sha256_str("the remote bytes", h1);
	ref_sha256_str("other bytes", h2);

	check_identity("alice", "https://example.org/doc/1", h1); /* foreign pointer */
	check_identity("", "https://example.org/doc/1", h1);      /* non-foreign pointer */
	check_identity("bob.agent:7", "urn:a:b", h2);

	/* the longest inputs the API admits: owner 128 bytes, uri 2048 bytes */
	char owner[129], *uri = malloc(RG_MEM_URI_MAX + 1);
	assert_non_null(uri);
	memset(owner, 'o', 128);
	owner[128] = '\0';
	memcpy(uri, "https://", 8);
	memset(uri + 8, 'u', RG_MEM_URI_MAX - 8);
	uri[RG_MEM_URI_MAX] = '\0';
	check_identity(owner, uri, h1);
	free(uri);

	/* every part counts, and the separators keep parts apart */
	char a[RG_SHA256_TAGGED_SIZE], b[RG_SHA256_TAGGED_SIZE];
	core_memory_identity("", "https://x", h1, a);
	core_memory_identity("alice", "https://x", h1, b);
	assert_string_not_equal(a, b);
	core_memory_identity("", "https://y", h1, b);
	assert_string_not_equal(a, b);
	core_memory_identity("", "https://x", h2, b);
	assert_string_not_equal(a, b);
	core_memory_identity("ab", "c:d", h1, a);
	core_memory_identity("a", "bc:d", h1, b);
	assert_string_not_equal(a, b);
	/* the identity of a pointer is not its content hash */
	core_memory_identity("", "https://x", h1, a);
	assert_string_not_equal(a, h1);
	/* stable */
	core_memory_identity("", "https://x", h1, b);
	assert_string_equal(a, b);
}

/* ---- core_memory_reasons ------------------------------------------------------------ */

static const char *const ORDER[] = {
	"revoked",      "assent_revoked",      "assent_expired",      "assent_stale",
	"assent_missing", "classification_cold", "upstream_ineligible",
};
#define N_REASONS 7

/* reasons must be exactly want[0..n) in that order. */
static void expect_reasons(json_t *reasons, const char *const *want, size_t n, const char *label)
{
	bool ok = json_is_array(reasons) && json_array_size(reasons) == n;
	for (size_t i = 0; ok && i < n; i++) {
		const char *s = json_string_value(json_array_get(reasons, i));
		ok = s != NULL && strcmp(s, want[i]) == 0;
	}
	if (!ok) {
		char *dump = reasons ? json_dumps(reasons, JSON_COMPACT) : NULL;
		print_error("%s: got %s; want", label, dump ? dump : "(null)");
		for (size_t i = 0; i < n; i++)
			print_error(" %s", want[i]);
		print_error("\n");
		free(dump);
	}
	assert_true(ok);
}

static void csv_of(const size_t *idx, size_t n, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strncat(out, ",", size - strlen(out) - 1);
		strncat(out, ORDER[idx[i]], size - strlen(out) - 1);
	}
}

static void test_reasons_basic(void **state)
{
	(void)state;
	json_t *r;

	r = core_memory_reasons("", true, false);
	expect_reasons(r, NULL, 0, "eligible source");
	json_decref(r);
	r = core_memory_reasons("", false, false);
	expect_reasons(r, NULL, 0, "eligible derivative");
	json_decref(r);

	/* the time-based reason: assent_expired for a source, upstream_ineligible for a derivative */
	static const char *const expired[] = {"assent_expired"};
	static const char *const upstream[] = {"upstream_ineligible"};
	r = core_memory_reasons("", true, true);
	expect_reasons(r, expired, 1, "expired source");
	json_decref(r);
	r = core_memory_reasons("", false, true);
	expect_reasons(r, upstream, 1, "expired upstream of a derivative");
	json_decref(r);

	/* no duplicates when the stored csv already holds the time-based reason */
	r = core_memory_reasons("upstream_ineligible", false, true);
	expect_reasons(r, upstream, 1, "derivative: stored upstream_ineligible + expiry");
	json_decref(r);
	r = core_memory_reasons("assent_expired", true, true);
	expect_reasons(r, expired, 1, "source: stored assent_expired + expiry");
	json_decref(r);

	/* a derivative never gets assent_expired from expiry, a source never upstream_ineligible */
	static const char *const rev_up[] = {"revoked", "upstream_ineligible"};
	r = core_memory_reasons("revoked", false, true);
	expect_reasons(r, rev_up, 2, "derivative: revoked + expiry");
	json_decref(r);
	static const char *const cold_exp[] = {"assent_expired", "classification_cold"};
	r = core_memory_reasons("classification_cold", true, true);
	expect_reasons(r, cold_exp, 2, "source: cold + expiry");
	json_decref(r);
	static const char *const up_cold[] = {"classification_cold", "upstream_ineligible"};
	r = core_memory_reasons("upstream_ineligible,classification_cold", false, true);
	expect_reasons(r, up_cold, 2, "derivative: stored both + expiry");
	json_decref(r);

	/* stored reasons alone (no expiry) */
	static const char *const rev_cold[] = {"revoked", "assent_revoked", "classification_cold"};
	r = core_memory_reasons("classification_cold,assent_revoked,revoked", true, false);
	expect_reasons(r, rev_cold, 3, "source: stored, reverse order");
	json_decref(r);
}

/* Every subset of the seven reasons, stored in reverse and in rotated order, for each kind of
 * record and with and without expiry: the result is the subset (plus the time-based reason)
 * in explain order, each reason once. */
static void test_reasons_order_every_subset(void **state)
{
	(void)state;
	char csv[256], label[320];
	for (unsigned mask = 0; mask < (1u << N_REASONS); mask++) {
		size_t idx[N_REASONS], n = 0;
		for (size_t i = 0; i < N_REASONS; i++)
			if (mask & (1u << i))
				idx[n++] = i;
		for (int arrangement = 0; arrangement < 2; arrangement++) {
			size_t perm[N_REASONS];
			for (size_t i = 0; i < n; i++)
				perm[i] = arrangement == 0 ? idx[n - 1 - i] : idx[(i + 1) % n];
			csv_of(perm, n, csv, sizeof csv);
			for (int is_source = 0; is_source < 2; is_source++)
				for (int expired = 0; expired < 2; expired++) {
					const char *want[N_REASONS];
					size_t m = 0;
					const char *timed = is_source ? "assent_expired"
								      : "upstream_ineligible";
					for (size_t i = 0; i < N_REASONS; i++)
						if ((mask & (1u << i)) ||
						    (expired && strcmp(ORDER[i], timed) == 0))
							want[m++] = ORDER[i];
					json_t *r = core_memory_reasons(csv, is_source, expired);
					snprintf(label, sizeof label, "csv \"%s\" source=%d expired=%d",
						 csv, is_source, expired);
					expect_reasons(r, want, m, label);
					json_decref(r);
				}
		}
	}
}

static bool next_permutation(size_t *a, size_t n)
{
	size_t i = n - 1;
	while (i > 0 && a[i - 1] >= a[i])
		i--;
	if (i == 0)
		return false;
	size_t j = n - 1;
	while (a[j] <= a[i - 1])
		j--;
	size_t t = a[i - 1];
	a[i - 1] = a[j];
	a[j] = t;
	for (size_t l = i, r = n - 1; l < r; l++, r--) {
		t = a[l];
		a[l] = a[r];
		a[r] = t;
	}
	return true;
}

/* All 5040 stored orders of all seven reasons give the one explain order. */
static void test_reasons_order_every_permutation(void **state)
{
	(void)state;
	size_t perm[N_REASONS] = {0, 1, 2, 3, 4, 5, 6};
	char csv[256];
	size_t count = 0;
	do {
		csv_of(perm, N_REASONS, csv, sizeof csv);
		for (int is_source = 0; is_source < 2; is_source++) {
			json_t *r = core_memory_reasons(csv, is_source, true);
			expect_reasons(r, ORDER, N_REASONS, csv);
			json_decref(r);
		}
		count++;
	} while (next_permutation(perm, N_REASONS));
	assert_int_equal(count, 5040);
}

/* ---- core_memory_pick_reason ---------------------------------------------------------- */

/* The reason explain gives for a record with these reasons (a core_memory_reasons array). */
static const char *explain_reason(bool thread_disabled, const json_t *reasons, bool within)
{
	return core_memory_pick_reason(thread_disabled,
				       json_string_value(json_array_get(reasons, 0)), within);
}

static void test_explain_reason(void **state)
{
	(void)state;
	json_t *none = json_array();
	json_t *all = core_memory_reasons("upstream_ineligible,classification_cold,assent_missing,"
					  "assent_stale,assent_revoked,revoked",
					  true, true);
	assert_int_equal(json_array_size(all), N_REASONS);

	/* thread_memory_disabled wins over everything */
	for (int within = 0; within < 2; within++) {
		assert_string_equal(explain_reason(true, none, within),
				    "thread_memory_disabled");
		assert_string_equal(explain_reason(true, all, within),
				    "thread_memory_disabled");
	}
	/* no ineligible reason: selected within the limit, else beyond_limit */
	assert_string_equal(explain_reason(false, none, true), "selected");
	assert_string_equal(explain_reason(false, none, false), "beyond_limit");
	/* else the first reason, whatever the limit */
	assert_string_equal(explain_reason(false, all, true), "revoked");
	assert_string_equal(explain_reason(false, all, false), "revoked");

	/* for each reason: alone, and with every later reason, the reason is that one */
	for (size_t i = 0; i < N_REASONS; i++) {
		size_t idx[N_REASONS], n = 0;
		char csv[256];
		for (size_t j = N_REASONS; j-- > i;)
			idx[n++] = j; /* i and every later reason, stored in reverse */
		csv_of(idx, n, csv, sizeof csv);
		json_t *r = core_memory_reasons(csv, true, false);
		for (int within = 0; within < 2; within++) {
			assert_string_equal(explain_reason(false, r, within), ORDER[i]);
			assert_string_equal(explain_reason(true, r, within),
					    "thread_memory_disabled");
		}
		json_decref(r);
		csv_of(&i, 1, csv, sizeof csv);
		r = core_memory_reasons(csv, false, false);
		assert_string_equal(explain_reason(false, r, true), ORDER[i]);
		json_decref(r);
	}
	/* an expired source explains assent_expired, the derivative upstream_ineligible */
	json_t *r = core_memory_reasons("classification_cold", true, true);
	assert_string_equal(explain_reason(false, r, true), "assent_expired");
	json_decref(r);
	r = core_memory_reasons("", false, true);
	assert_string_equal(explain_reason(false, r, true), "upstream_ineligible");
	json_decref(r);

	json_decref(all);
	json_decref(none);
}

/* ---- core_memory_assemble ----------------------------------------------------------- */

static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	if (s == NULL)
		print_error("missing string member \"%s\"\n", k);
	assert_non_null(s);
	return s;
}

static json_int_t iget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		print_error("missing integer member \"%s\"\n", k);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* o has exactly these members (no more, no fewer). */
static void expect_keys(const json_t *o, const char *const *keys, size_t n, const char *what)
{
	assert_true(json_is_object(o));
	for (size_t i = 0; i < n; i++) {
		if (json_object_get(o, keys[i]) == NULL)
			print_error("%s: missing member \"%s\"\n", what, keys[i]);
		assert_non_null(json_object_get(o, keys[i]));
	}
	if (json_object_size(o) != n) {
		char *dump = json_dumps(o, JSON_COMPACT);
		print_error("%s: want %zu members, got %s\n", what, n, dump ? dump : "?");
		free(dump);
	}
	assert_int_equal(json_object_size(o), n);
}

/* What one candidate should become: delivered, or suppressed for this reason. */
struct want_item {
	const char *suppression; /* NULL: delivered */
};

struct assembly {
	json_t *receipt, *items;
};

/* Runs core_memory_assemble and checks every general rule of the receipt against the
 * candidates and the expected outcome per candidate; returns both (caller decrefs). */
static struct assembly assemble_and_check(const struct mem_candidate *c, size_t n, int max_items,
					  int budget, const struct want_item *want)
{
	static const char *const receipt_keys[] = {
		"receipt_id",      "event_type",        "candidate_count",  "selected_count",
		"delivered_count", "suppressed_count",  "loaded_inputs",    "suppressed_inputs",
		"claims_usefulness",
	};
	static const char *const loaded_keys[] = {"input_id", "record_id", "source_hash",
						  "delivered_hash", "rank"};
	static const char *const suppressed_keys[] = {"input_id", "record_id", "source_hash", "rank",
						      "suppression_reason"};
	static const char *const item_keys[] = {"input_id", "record_id", "revision", "content",
						"trust"};
	struct assembly a = {NULL, NULL};
	a.receipt = core_memory_assemble(c, n, max_items, budget, "lrc_0123456789abcdef0123456789abcdef",
					 &a.items);
	assert_non_null(a.receipt);
	assert_true(json_is_array(a.items));
	expect_keys(a.receipt, receipt_keys, N_ELEMS(receipt_keys), "receipt");

	assert_string_equal(sget(a.receipt, "receipt_id"), "lrc_0123456789abcdef0123456789abcdef");
	assert_string_equal(sget(a.receipt, "event_type"), "context.load");
	assert_true(json_is_false(json_object_get(a.receipt, "claims_usefulness")));

	size_t want_delivered = 0, want_suppressed = 0;
	for (size_t i = 0; i < n; i++)
		if (want[i].suppression)
			want_suppressed++;
		else
			want_delivered++;
	size_t want_selected = n < (size_t)max_items ? n : (size_t)max_items;

	const json_t *loaded = json_object_get(a.receipt, "loaded_inputs");
	const json_t *suppressed = json_object_get(a.receipt, "suppressed_inputs");
	assert_true(json_is_array(loaded));
	assert_true(json_is_array(suppressed));
	assert_int_equal(iget(a.receipt, "candidate_count"), n);
	assert_int_equal(iget(a.receipt, "selected_count"), want_selected);
	assert_int_equal(iget(a.receipt, "delivered_count"), want_delivered);
	assert_int_equal(iget(a.receipt, "suppressed_count"), want_suppressed);
	assert_int_equal(iget(a.receipt, "candidate_count"),
			 iget(a.receipt, "delivered_count") + iget(a.receipt, "suppressed_count"));
	assert_int_equal(json_array_size(loaded), want_delivered);
	assert_int_equal(json_array_size(suppressed), want_suppressed);
	assert_int_equal(json_array_size(a.items), want_delivered);

	/* each candidate, in rank order, lands where it should with input id inp_<rank> */
	size_t li = 0, si = 0;
	for (size_t i = 0; i < n; i++) {
		char input_id[32];
		snprintf(input_id, sizeof input_id, "inp_%zu", i + 1);
		if (want[i].suppression == NULL) {
			const json_t *l = json_array_get(loaded, li);
			const json_t *it = json_array_get(a.items, li);
			li++;
			expect_keys(l, loaded_keys, N_ELEMS(loaded_keys), "loaded_inputs[]");
			expect_keys(it, item_keys, N_ELEMS(item_keys), "items[]");
			if (strcmp(sget(l, "input_id"), input_id) != 0)
				print_error("candidate %zu: want delivered as %s, got %s\n", i,
					    input_id, sget(l, "input_id"));
			assert_string_equal(sget(l, "input_id"), input_id);
			assert_string_equal(sget(l, "record_id"), c[i].record_id);
			assert_int_equal(iget(l, "rank"), i + 1);
			assert_string_equal(sget(l, "source_hash"), c[i].content_hash);
			char delivered[RG_SHA256_TAGGED_SIZE];
			ref_sha256(c[i].content, strlen(c[i].content), delivered);
			assert_string_equal(sget(l, "delivered_hash"), delivered);
			/* the item: whole content, never truncated */
			assert_string_equal(sget(it, "input_id"), input_id);
			assert_string_equal(sget(it, "record_id"), c[i].record_id);
			assert_int_equal(iget(it, "revision"), c[i].revision);
			assert_int_equal(json_string_length(json_object_get(it, "content")),
					 strlen(c[i].content));
			assert_string_equal(sget(it, "content"), c[i].content);
			assert_string_equal(sget(it, "trust"), "untrusted_advisory");
		} else {
			const json_t *s = json_array_get(suppressed, si++);
			expect_keys(s, suppressed_keys, N_ELEMS(suppressed_keys),
				    "suppressed_inputs[]");
			if (strcmp(sget(s, "input_id"), input_id) != 0 ||
			    strcmp(sget(s, "suppression_reason"), want[i].suppression) != 0)
				print_error("candidate %zu: want suppressed %s (%s), got %s (%s)\n", i,
					    input_id, want[i].suppression, sget(s, "input_id"),
					    sget(s, "suppression_reason"));
			assert_string_equal(sget(s, "input_id"), input_id);
			assert_string_equal(sget(s, "record_id"), c[i].record_id);
			assert_int_equal(iget(s, "rank"), i + 1);
			assert_string_equal(sget(s, "source_hash"), c[i].content_hash);
			assert_string_equal(sget(s, "suppression_reason"), want[i].suppression);
		}
	}

	/* the receipt carries no content: serialized, none of the candidates' bytes appear */
	char *text = json_dumps(a.receipt, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		if (strstr(text, c[i].content) != NULL)
			print_error("receipt leaks content of candidate %zu: %s\n", i, text);
		assert_null(strstr(text, c[i].content));
	}
	assert_null(strstr(text, "\"content\""));
	free(text);
	return a;
}

static void release(struct assembly *a)
{
	json_decref(a->receipt);
	json_decref(a->items);
}

/* Candidate i: id rec_<i>, revision 100 + i, content as given, content_hash its SHA-256. */
struct cands {
	struct mem_candidate c[RG_MEM_CANDIDATES_MAX];
	char ids[RG_MEM_CANDIDATES_MAX][16];
	char hashes[RG_MEM_CANDIDATES_MAX][RG_SHA256_TAGGED_SIZE];
};

static void fill(struct cands *k, const char *const *contents, size_t n)
{
	assert_true(n <= RG_MEM_CANDIDATES_MAX);
	for (size_t i = 0; i < n; i++) {
		snprintf(k->ids[i], sizeof k->ids[i], i % 2 ? "drv_%02zu" : "src_%02zu", i + 1);
		ref_sha256_str(contents[i], k->hashes[i]);
		k->c[i].record_id = k->ids[i];
		k->c[i].revision = (int64_t)(100 + i);
		k->c[i].content = contents[i];
		k->c[i].content_hash = k->hashes[i];
	}
}

#define DELIVERED {NULL}
#define BUDGET {"budget_exceeded"}
#define BEYOND {"beyond_limit"}

/* ceil(bytes / 4) at the edges: 4 bytes = 1 token, 5 bytes = 2 tokens. */
static void test_assemble_token_edges(void **state)
{
	(void)state;
	struct cands k;
	static const char *const four[] = {"ABCD"};
	static const char *const five[] = {"ABCDE"};
	static const char *const one[] = {"Q"};
	static const char *const eight[] = {"ABCDEFGH"};
	static const char *const nine[] = {"ABCDEFGHI"};
	static const struct want_item ok[] = {DELIVERED}, over[] = {BUDGET};
	struct assembly a;

	fill(&k, four, 1);
	a = assemble_and_check(k.c, 1, 8, 1, ok); /* 4 bytes fit 1 token */
	release(&a);
	fill(&k, five, 1);
	a = assemble_and_check(k.c, 1, 8, 1, over); /* 5 bytes need 2 */
	release(&a);
	a = assemble_and_check(k.c, 1, 8, 2, ok);
	release(&a);
	fill(&k, one, 1);
	a = assemble_and_check(k.c, 1, 8, 1, ok); /* 1 byte = 1 token */
	release(&a);
	fill(&k, eight, 1);
	a = assemble_and_check(k.c, 1, 8, 2, ok);
	release(&a);
	fill(&k, nine, 1);
	a = assemble_and_check(k.c, 1, 8, 2, over);
	release(&a);
	a = assemble_and_check(k.c, 1, 8, 3, ok);
	release(&a);

	/* two 4-byte items in a 2-token budget both fit; a third does not */
	static const char *const three[] = {"AAAA", "BBBB", "CCCC"};
	static const struct want_item w3[] = {DELIVERED, DELIVERED, BUDGET};
	fill(&k, three, 3);
	a = assemble_and_check(k.c, 3, 8, 2, w3);
	release(&a);
}

/* An item that exactly fits the budget left is delivered; one byte more is suppressed, and a
 * later smaller item that fits is still delivered (items are never truncated). */
static void test_assemble_budget(void **state)
{
	(void)state;
	struct cands k;
	struct assembly a;
	static char exact[41], plus1[42];
	memset(exact, 'E', 40); /* 10 tokens */
	exact[40] = '\0';
	memset(plus1, 'P', 41); /* 11 tokens */
	plus1[41] = '\0';

	const char *only_exact[] = {exact};
	static const struct want_item ok[] = {DELIVERED}, over[] = {BUDGET};
	fill(&k, only_exact, 1);
	a = assemble_and_check(k.c, 1, 8, 10, ok);
	release(&a);
	const char *only_plus1[] = {plus1};
	fill(&k, only_plus1, 1);
	a = assemble_and_check(k.c, 1, 8, 10, over);
	release(&a);

	/* budget 10: 6 tokens delivered (4 left); 5 tokens suppressed; 4 tokens fit exactly
	 * (0 left); then even 1 token is suppressed */
	const char *seq[] = {
		"FIRST-ITEM-24-BYTES-LONG",   /* 24 bytes, 6 tokens */
		"SECOND-17-BYTES-X",          /* 17 bytes, 5 tokens */
		"THIRD-16-BYTES-Y",           /* 16 bytes, 4 tokens */
		"Z",                          /* 1 byte, 1 token */
	};
	assert_int_equal(strlen(seq[0]), 24);
	assert_int_equal(strlen(seq[1]), 17);
	assert_int_equal(strlen(seq[2]), 16);
	static const struct want_item w[] = {DELIVERED, BUDGET, DELIVERED, BUDGET};
	fill(&k, seq, 4);
	a = assemble_and_check(k.c, 4, 8, 10, w);
	release(&a);

	/* the first (best) item too big for the whole budget; the rest still delivered */
	const char *big_first[] = {plus1, "SMALL-ONE", "SMALL-TWO"};
	static const struct want_item wb[] = {BUDGET, DELIVERED, DELIVERED};
	fill(&k, big_first, 3);
	a = assemble_and_check(k.c, 3, 8, 10, wb);
	release(&a);

	/* the largest content the API admits: 65536 bytes = 16384 tokens */
	char *huge = malloc(RG_MEM_CONTENT_MAX + 1);
	assert_non_null(huge);
	memset(huge, 'H', RG_MEM_CONTENT_MAX);
	huge[RG_MEM_CONTENT_MAX] = '\0';
	const char *hv[] = {huge};
	fill(&k, hv, 1);
	a = assemble_and_check(k.c, 1, 8, 16384, ok);
	release(&a);
	a = assemble_and_check(k.c, 1, 8, 16383, over);
	release(&a);
	free(huge);
}

/* Items past max_items are suppressed beyond_limit even when they would fit. */
static void test_assemble_max_items(void **state)
{
	(void)state;
	struct cands k;
	struct assembly a;
	const char *tiny[] = {"ALPHA", "BRAVO", "CHARLIE", "DELTA"};
	static const struct want_item w2[] = {DELIVERED, DELIVERED, BEYOND, BEYOND};
	fill(&k, tiny, 4);
	a = assemble_and_check(k.c, 4, 2, RG_MEM_BUDGET_MAX, w2);
	release(&a);
	static const struct want_item w1[] = {DELIVERED, BEYOND, BEYOND, BEYOND};
	a = assemble_and_check(k.c, 4, 1, RG_MEM_BUDGET_MAX, w1);
	release(&a);
	/* max_items equal to n and above n: all selected */
	static const struct want_item w4[] = {DELIVERED, DELIVERED, DELIVERED, DELIVERED};
	a = assemble_and_check(k.c, 4, 4, RG_MEM_BUDGET_MAX, w4);
	release(&a);
	a = assemble_and_check(k.c, 4, RG_MEM_CONTEXT_ITEMS_MAX, RG_MEM_BUDGET_MAX, w4);
	release(&a);

	/* both reasons at once: selected_count counts the budget-suppressed one too */
	const char *mixed[] = {
		"OVERSIZED-17-BYTE",  /* 17 bytes, 5 tokens > 4 */
		"ABCD",               /* 1 token, 3 left */
		"EFGHI",              /* 2 tokens, 1 left */
		"J",                  /* would fit, beyond the limit */
		"K",
	};
	assert_int_equal(strlen(mixed[0]), 17);
	static const struct want_item wm[] = {BUDGET, DELIVERED, DELIVERED, BEYOND, BEYOND};
	fill(&k, mixed, 5);
	a = assemble_and_check(k.c, 5, 3, 4, wm);
	assert_int_equal(iget(a.receipt, "selected_count"), 3);
	assert_int_equal(iget(a.receipt, "delivered_count"), 2);
	assert_int_equal(iget(a.receipt, "suppressed_count"), 3);
	release(&a);
}

/* The full candidate window: 50 candidates, 20 selected, ids inp_1 … inp_50 by rank. */
static void test_assemble_fifty(void **state)
{
	(void)state;
	static struct cands k;
	static char bodies[RG_MEM_CANDIDATES_MAX][32];
	const char *contents[RG_MEM_CANDIDATES_MAX];
	struct want_item want[RG_MEM_CANDIDATES_MAX];
	for (size_t i = 0; i < RG_MEM_CANDIDATES_MAX; i++) {
		snprintf(bodies[i], sizeof bodies[i], "MEMORY-BODY-%02zu-XYZ", i + 1); /* 19 bytes */
		contents[i] = bodies[i];
		want[i].suppression = i < RG_MEM_CONTEXT_ITEMS_MAX ? NULL : "beyond_limit";
	}
	fill(&k, contents, RG_MEM_CANDIDATES_MAX);
	struct assembly a = assemble_and_check(k.c, RG_MEM_CANDIDATES_MAX, RG_MEM_CONTEXT_ITEMS_MAX,
					       RG_MEM_BUDGET_MAX, want);
	assert_int_equal(iget(a.receipt, "selected_count"), 20);
	assert_string_equal(sget(json_array_get(json_object_get(a.receipt, "suppressed_inputs"), 29),
				 "input_id"),
			    "inp_50");
	release(&a);

	/* same window, budget for exactly 7 items of 5 tokens: 8th..20th budget_exceeded */
	for (size_t i = 0; i < RG_MEM_CANDIDATES_MAX; i++)
		want[i].suppression = i < 7 ? NULL
				      : i < RG_MEM_CONTEXT_ITEMS_MAX ? "budget_exceeded"
								     : "beyond_limit";
	a = assemble_and_check(k.c, RG_MEM_CANDIDATES_MAX, RG_MEM_CONTEXT_ITEMS_MAX, 35, want);
	release(&a);
}

/* source_hash is the record's content_hash as given (a derivative's, or whatever the store
 * holds), delivered_hash is computed over the delivered bytes. */
static void test_assemble_hashes(void **state)
{
	(void)state;
	static const char given[] =
		"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct mem_candidate c[2] = {
		{"src_one", 1, "Remember the MILK please", given},
		{"drv_two", INT64_C(9007199254740993), "Derived SUMMARY text", given},
	};
	static const struct want_item w[] = {DELIVERED, DELIVERED};
	struct assembly a = assemble_and_check(c, 2, 8, 100, w);
	const json_t *l0 = json_array_get(json_object_get(a.receipt, "loaded_inputs"), 0);
	assert_string_equal(sget(l0, "source_hash"), given);
	assert_string_not_equal(sget(l0, "delivered_hash"), given);
	char want0[RG_SHA256_TAGGED_SIZE];
	ref_sha256_str("Remember the MILK please", want0);
	assert_string_equal(sget(l0, "delivered_hash"), want0);
	assert_int_equal(iget(json_array_get(a.items, 1), "revision"), INT64_C(9007199254740993));
	release(&a);
}

/* Content that looks like JSON or carries quotes still stays out of the receipt. */
static void test_assemble_receipt_has_no_content(void **state)
{
	(void)state;
	struct cands k;
	const char *contents[] = {
		"TOP-SECRET customer note: call Dana at 555-0100",
		"{\"content\": \"nested\", \"note\": \"QUOTED-PAYLOAD\"}",
		"UNICODE-\xc3\xa9t\xc3\xa9-PAYLOAD",
		"OVERFLOWING-PAYLOAD-THAT-DOES-NOT-FIT-THE-BUDGET-AT-ALL-0123456789",
		"BEYOND-LIMIT-PAYLOAD",
	};
	static const struct want_item w[] = {DELIVERED, DELIVERED, DELIVERED, BUDGET, BEYOND};
	fill(&k, contents, 5);
	struct assembly a = assemble_and_check(k.c, 5, 4, 40, w);
	/* also read back the way it is stored: compact text, parsed again */
	char *text = json_dumps(a.receipt, JSON_COMPACT);
	assert_non_null(text);
	assert_null(strstr(text, "TOP-SECRET"));
	assert_null(strstr(text, "QUOTED-PAYLOAD"));
	assert_null(strstr(text, "UNICODE-"));
	assert_null(strstr(text, "OVERFLOWING-PAYLOAD"));
	assert_null(strstr(text, "BEYOND-LIMIT-PAYLOAD"));
	json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(back);
	assert_true(json_equal(back, a.receipt));
	json_decref(back);
	free(text);
	release(&a);
}

static void test_assemble_zero_candidates(void **state)
{
	(void)state;
	struct mem_candidate none[1] = {{NULL, 0, NULL, NULL}};
	struct assembly a = assemble_and_check(none, 0, 8, 4000, NULL);
	assert_int_equal(iget(a.receipt, "candidate_count"), 0);
	assert_int_equal(iget(a.receipt, "selected_count"), 0);
	assert_int_equal(iget(a.receipt, "delivered_count"), 0);
	assert_int_equal(iget(a.receipt, "suppressed_count"), 0);
	assert_int_equal(json_array_size(json_object_get(a.receipt, "loaded_inputs")), 0);
	assert_int_equal(json_array_size(json_object_get(a.receipt, "suppressed_inputs")), 0);
	assert_int_equal(json_array_size(a.items), 0);
	char *text = json_dumps(a.receipt, JSON_COMPACT);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"loaded_inputs\":[]"));
	assert_non_null(strstr(text, "\"suppressed_inputs\":[]"));
	assert_non_null(strstr(text, "\"claims_usefulness\":false"));
	free(text);
	release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_ref),
		cmocka_unit_test(test_uri_valid),
		cmocka_unit_test(test_label_key),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_reasons_basic),
		cmocka_unit_test(test_reasons_order_every_subset),
		cmocka_unit_test(test_reasons_order_every_permutation),
		cmocka_unit_test(test_explain_reason),
		cmocka_unit_test(test_assemble_token_edges),
		cmocka_unit_test(test_assemble_budget),
		cmocka_unit_test(test_assemble_max_items),
		cmocka_unit_test(test_assemble_fifty),
		cmocka_unit_test(test_assemble_hashes),
		cmocka_unit_test(test_assemble_receipt_has_no_content),
		cmocka_unit_test(test_assemble_zero_candidates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
