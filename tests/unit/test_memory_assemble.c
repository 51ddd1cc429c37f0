/* core/memory: context assembly (openapi/openapi.yaml "Retrieval") — candidates in rank order
 * under a token budget and an item limit, the load receipt that accounts for each of them
 * (delivered or suppressed, with hashes and never content), and the items delivered whole. */
#include "unit.h"

#include <jansson.h>

#include "core/memory.h"
#include "memory_helpers.h"

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
