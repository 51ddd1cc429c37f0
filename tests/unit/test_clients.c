/* server/clients: the per-forwarded-client limit at its edge (the limit passes, one over is
 * refused), release, independence of clients, failing open when a set is full, off, and the
 * X-Forwarded-For parsing. */
#include "unit.h"

#include "server/clients.h"

static int teardown(void **state)
{
	(void)state;
	clients_shutdown();
	return 0;
}

static void test_limit_edge_and_release(void **state)
{
	(void)state;
	assert_true(clients_init(3));
	struct clients_ticket t[4];
	for (int i = 0; i < 3; i++)
		assert_true(clients_enter("203.0.113.7", &t[i]));
	assert_false(clients_enter("203.0.113.7", &t[3])); /* one over */
	assert_false(t[3].counted);
	assert_true(clients_enter("203.0.113.8", &t[3])); /* another client */
	clients_leave(&t[3]);
	clients_leave(&t[0]);
	assert_true(clients_enter("203.0.113.7", &t[0])); /* a slot came back */
	for (int i = 0; i < 3; i++)
		clients_leave(&t[i]);
	struct clients_stats st;
	clients_get_stats(&st);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.untracked, 0);
}

static void test_off_admits_everything(void **state)
{
	(void)state;
	assert_true(clients_init(0));
	struct clients_ticket t;
	for (int i = 0; i < 1000; i++)
		assert_true(clients_enter("203.0.113.7", &t));
	clients_leave(&t);
	struct clients_ticket zero = {0};
	clients_leave(&zero);
}

/* a set holds CLIENTS_WAYS clients in flight; one more is let through uncounted */
static void test_full_set_fails_open(void **state)
{
	(void)state;
	assert_true(clients_init(1));
	struct clients_ticket t[CLIENTS_WAYS + 1];
	char keys[CLIENTS_WAYS + 1][32];
	size_t found = 0;
	/* the first key's set, and more keys of the same set (found by trying) */
	unsigned want_set = 0;
	for (unsigned i = 0; found < CLIENTS_WAYS + 1 && i < 1000000; i++) {
		char k[32];
		snprintf(k, sizeof k, "10.%u.%u.%u", i >> 16 & 255, i >> 8 & 255, i & 255);
		struct clients_ticket probe;
		assert_true(clients_enter(k, &probe));
		unsigned set = probe.set;
		bool counted = probe.counted;
		clients_leave(&probe);
		if (!counted)
			continue;
		if (found == 0)
			want_set = set;
		if (set == want_set)
			snprintf(keys[found++], sizeof keys[0], "%s", k);
	}
	assert_int_equal(found, CLIENTS_WAYS + 1);
	for (size_t i = 0; i < CLIENTS_WAYS; i++) {
		assert_true(clients_enter(keys[i], &t[i]));
		assert_true(t[i].counted);
	}
	assert_true(clients_enter(keys[CLIENTS_WAYS], &t[CLIENTS_WAYS]));
	assert_false(t[CLIENTS_WAYS].counted);
	struct clients_stats st;
	clients_get_stats(&st);
	assert_int_equal(st.untracked, 1);
	for (size_t i = 0; i <= CLIENTS_WAYS; i++)
		clients_leave(&t[i]);
}

static void test_forwarded(void **state)
{
	(void)state;
	char out[CLIENTS_KEY_MAX + 1];
	static const struct {
		const char *xff, *want;
	} cases[] = {
		{"203.0.113.7", "203.0.113.7"},
		{"198.51.100.1, 203.0.113.7", "203.0.113.7"}, /* the gateway appends the client */
		{"a,b ,  c  ", "c"},
		{"2001:db8::1", "2001:db8::1"},
		{" \t", NULL},
		{"", NULL},
		{"a,", NULL},
		{NULL, NULL},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		bool got = clients_forwarded(cases[i].xff, out, sizeof out);
		assert_true(got == (cases[i].want != NULL));
		if (got)
			assert_string_equal(out, cases[i].want);
	}
	/* a long value is cut, not overflowed */
	char long_xff[200];
	memset(long_xff, 'x', sizeof long_xff - 1);
	long_xff[sizeof long_xff - 1] = '\0';
	assert_true(clients_forwarded(long_xff, out, sizeof out));
	assert_int_equal(strlen(out), CLIENTS_KEY_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_limit_edge_and_release, teardown),
		cmocka_unit_test_teardown(test_off_admits_everything, teardown),
		cmocka_unit_test_teardown(test_full_set_fails_open, teardown),
		cmocka_unit_test_teardown(test_forwarded, teardown),
	};
	return cmocka_run_group_tests_name("unit_clients", tests, NULL, NULL);
}
