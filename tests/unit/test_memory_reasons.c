/* core/memory: the eligibility reasons of openapi/openapi.yaml "Memory governance" — every
 * stored set and order of them comes back in the one explain order, each once, with the
 * time-based reason of a source or a derivative, and explain picks the reason a record shows.
 * */
#include "unit.h"

#include <jansson.h>

#include "core/memory.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reasons_basic),
		cmocka_unit_test(test_reasons_order_every_subset),
		cmocka_unit_test(test_reasons_order_every_permutation),
		cmocka_unit_test(test_explain_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
