/* server/config: defaults, bounds at their edges, and error lines that name the variable
 * without echoing its value. The environment is a table handed in as getenv. */
#include "unit.h"

#include "server/config.h"

/* The fake environment: up to 8 name=value pairs for one cfg_load call. */
static struct {
	const char *name, *value;
} env[8];

static const char *fake_getenv(const char *name)
{
	for (size_t i = 0; i < N_ELEMS(env); i++)
		if (env[i].name && strcmp(env[i].name, name) == 0)
			return env[i].value;
	return NULL;
}

static void env_clear(void)
{
	memset(env, 0, sizeof env);
}

static void env_set(const char *name, const char *value)
{
	for (size_t i = 0; i < N_ELEMS(env); i++)
		if (env[i].name == NULL || strcmp(env[i].name, name) == 0) {
			env[i].name = name;
			env[i].value = value;
			return;
		}
	print_error("fake environment full\n");
	fail();
}

static struct rg_config cfg;
static char err[256];

static bool load(bool need_database)
{
	memset(err, 0, sizeof err);
	return cfg_load(&cfg, fake_getenv, need_database, err, sizeof err);
}

static int setup(void **state)
{
	(void)state;
	env_clear();
	return 0;
}

/* The error line names the variable, is one line, and does not contain the value. */
static void assert_error_names(const char *var, const char *value)
{
	if (strstr(err, var) == NULL)
		print_error("error \"%s\" does not name %s\n", err, var);
	assert_non_null(strstr(err, var));
	assert_null(strchr(err, '\n'));
	if (value && strlen(value) >= 3 && strstr(err, value) != NULL) {
		print_error("error \"%s\" echoes the value \"%s\"\n", err, value);
		fail();
	}
}

static void test_defaults(void **state)
{
	(void)state;
	assert_true(load(false));
	assert_string_equal(cfg.database_url, "");
	assert_string_equal(cfg.host, "127.0.0.1");
	assert_int_equal(cfg.port, 8080);
	assert_int_equal(cfg.max_connections, 10000);
	assert_int_equal(cfg.db_pool, 8);
	assert_int_equal(cfg.connection_timeout, 30);
	assert_int_equal(cfg.max_body, 1048576);
	assert_int_equal(cfg.db_acquire_timeout_ms, 2000);
	assert_int_equal(cfg.connection_memory, 8192);
	assert_int_equal(cfg.drain_timeout, 10);
	assert_int_equal(cfg.rate_limit, 0); /* off */
	assert_int_equal(cfg.rate_burst, 0); /* the same as the limit */
	assert_int_equal(cfg.log_level, LOG_INFO);
	assert_false(cfg.trust_proxy);
	assert_int_equal(cfg.n_origins, 0);
}

static void test_database_url(void **state)
{
	(void)state;
	/* required only when the command needs the database */
	assert_false(load(true));
	assert_error_names("DATABASE_URL", NULL);
	assert_true(load(false));

	env_set("DATABASE_URL", "");
	assert_false(load(true));
	assert_error_names("DATABASE_URL", NULL);

	env_set("DATABASE_URL", "postgres://rg:pw@localhost:5432/rg?sslmode=disable");
	assert_true(load(true));
	assert_string_equal(cfg.database_url, "postgres://rg:pw@localhost:5432/rg?sslmode=disable");
	assert_true(load(false));
	assert_string_equal(cfg.database_url, "postgres://rg:pw@localhost:5432/rg?sslmode=disable");

	env_set("DATABASE_URL", "host=/run/postgresql dbname=rg");
	assert_true(load(true));
	assert_string_equal(cfg.database_url, "host=/run/postgresql dbname=rg");
}

/* libpq parses the value at start; its reason is kept, the value's quoted parts are not */
static void test_database_url_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *url, *says;
	} cases[] = {
	    {"host=db dbname", "missing \"=\" after \"dbname\""},
	    {"postgres://rg:SECRETPW@[::1/rg", "matching \"]\""},
	    {"postgres://rg:SECRETPW@db/rg?SECRETPW=1", "invalid URI query parameter: \"\xe2\x80\xa6\""},
	    {"password='SECRETPW", "unterminated quoted string"},
	    {"mysql://SECRETPW@db", "\xe2\x80\xa6"},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		env_set("DATABASE_URL", cases[i].url);
		assert_false(load(false));
		assert_error_names("DATABASE_URL", "SECRETPW");
		if (strstr(err, cases[i].says) == NULL)
			print_error("\"%s\": error \"%s\" does not say %s\n", cases[i].url, err,
				    cases[i].says);
		assert_non_null(strstr(err, cases[i].says));
	}
}

/* the listen address in RECALLGATE_ADDR's own form, brackets for IPv6 */
static void test_addr_format(void **state)
{
	(void)state;
	char buf[sizeof cfg.host + 8];
	static const char *const forms[] = {"127.0.0.1:8080", "[::1]:8443", "[::]:1",
					    "localhost:65535"};
	for (size_t i = 0; i < N_ELEMS(forms); i++) {
		env_set("RECALLGATE_ADDR", forms[i]);
		assert_true(load(false));
		assert_string_equal(cfg_addr_format(&cfg, buf, sizeof buf), forms[i]);
	}
}

static void test_database_url_too_long_is_not_echoed(void **state)
{
	(void)state;
	static char url[4096];
	strcpy(url, "postgres://rg:SECRETPASSWORD@localhost/rg?application_name=");
	size_t n = strlen(url);
	memset(url + n, 'x', sizeof url - n - 1);
	url[sizeof url - 1] = '\0';
	env_set("DATABASE_URL", url);
	assert_false(load(true));
	assert_error_names("DATABASE_URL", "SECRETPASSWORD");

	/* 2047 bytes fit the buffer */
	url[2047] = '\0';
	assert_true(load(true));
	assert_int_equal(strlen(cfg.database_url), 2047);
	url[2047] = 'x';
	url[2048] = '\0';
	assert_false(load(true));
}

/* One numeric variable, one value, and what should come of it. */
struct ucase {
	const char *var;
	const char *value;
	bool ok;
	unsigned long want;
};

static unsigned long field_of(const char *var)
{
	if (strcmp(var, "RECALLGATE_DB_POOL") == 0)
		return cfg.db_pool;
	if (strcmp(var, "RECALLGATE_MAX_BODY") == 0)
		return cfg.max_body;
	if (strcmp(var, "RECALLGATE_MAX_CONNECTIONS") == 0)
		return cfg.max_connections;
	if (strcmp(var, "RECALLGATE_CONNECTION_TIMEOUT") == 0)
		return cfg.connection_timeout;
	if (strcmp(var, "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS") == 0)
		return cfg.db_acquire_timeout_ms;
	if (strcmp(var, "RECALLGATE_CONNECTION_MEMORY") == 0)
		return cfg.connection_memory;
	if (strcmp(var, "RECALLGATE_DRAIN_TIMEOUT") == 0)
		return cfg.drain_timeout;
	if (strcmp(var, "RECALLGATE_RATE_LIMIT") == 0)
		return cfg.rate_limit;
	if (strcmp(var, "RECALLGATE_RATE_BURST") == 0)
		return cfg.rate_burst;
	print_error("unknown variable %s\n", var);
	fail();
	return 0;
}

static void run_uint_cases(const struct ucase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		env_clear();
		env_set(cases[i].var, cases[i].value);
		bool got = load(false);
		if (got != cases[i].ok)
			print_error("%s=\"%s\": want %s, got %s (%s)\n", cases[i].var, cases[i].value,
				    cases[i].ok ? "ok" : "error", got ? "ok" : "error", err);
		assert_true(got == cases[i].ok);
		if (got)
			assert_int_equal(field_of(cases[i].var), cases[i].want);
		else
			assert_error_names(cases[i].var, cases[i].value);
	}
}

static void test_uint_bounds(void **state)
{
	(void)state;
	static const struct ucase cases[] = {
		{"RECALLGATE_DB_POOL", "1", true, 1},
		{"RECALLGATE_DB_POOL", "256", true, 256},
		{"RECALLGATE_DB_POOL", "0", false, 0},
		{"RECALLGATE_DB_POOL", "257", false, 0},
		{"RECALLGATE_MAX_BODY", "1024", true, 1024},
		{"RECALLGATE_MAX_BODY", "1023", false, 0},
		{"RECALLGATE_MAX_BODY", "67108864", true, 67108864},
		{"RECALLGATE_MAX_BODY", "67108865", false, 0},
		{"RECALLGATE_MAX_CONNECTIONS", "1", true, 1},
		{"RECALLGATE_MAX_CONNECTIONS", "65535", true, 65535},
		{"RECALLGATE_MAX_CONNECTIONS", "0", false, 0},
		{"RECALLGATE_MAX_CONNECTIONS", "65536", false, 0},
		{"RECALLGATE_CONNECTION_TIMEOUT", "1", true, 1},
		{"RECALLGATE_CONNECTION_TIMEOUT", "3600", true, 3600},
		{"RECALLGATE_CONNECTION_TIMEOUT", "0", false, 0},
		{"RECALLGATE_CONNECTION_TIMEOUT", "3601", false, 0},
		{"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS", "1", true, 1},
		{"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS", "60000", true, 60000},
		{"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS", "0", false, 0},
		{"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS", "60001", false, 0},
		{"RECALLGATE_CONNECTION_MEMORY", "4096", true, 4096},
		{"RECALLGATE_CONNECTION_MEMORY", "1048576", true, 1048576},
		{"RECALLGATE_CONNECTION_MEMORY", "4095", false, 0},
		{"RECALLGATE_CONNECTION_MEMORY", "1048577", false, 0},
		{"RECALLGATE_DRAIN_TIMEOUT", "1", true, 1},
		{"RECALLGATE_DRAIN_TIMEOUT", "3600", true, 3600},
		{"RECALLGATE_DRAIN_TIMEOUT", "0", false, 0},
		{"RECALLGATE_DRAIN_TIMEOUT", "3601", false, 0},
		{"RECALLGATE_RATE_LIMIT", "0", true, 0},
		{"RECALLGATE_RATE_LIMIT", "100000", true, 100000},
		{"RECALLGATE_RATE_LIMIT", "100001", false, 0},
		{"RECALLGATE_RATE_LIMIT", "-1", false, 0},
		{"RECALLGATE_RATE_BURST", "0", true, 0},
		{"RECALLGATE_RATE_BURST", "1000000", true, 1000000},
		{"RECALLGATE_RATE_BURST", "1000001", false, 0},
		{"RECALLGATE_RATE_BURST", "-1", false, 0},
	};
	run_uint_cases(cases, N_ELEMS(cases));
}

static void test_uint_syntax(void **state)
{
	(void)state;
	static const struct ucase cases[] = {
		{"RECALLGATE_DB_POOL", "abc", false, 0},
		{"RECALLGATE_DB_POOL", "8x", false, 0},
		{"RECALLGATE_DB_POOL", " 8", false, 0},
		{"RECALLGATE_DB_POOL", "8 ", false, 0},
		{"RECALLGATE_DB_POOL", "+8", false, 0},
		{"RECALLGATE_DB_POOL", "-1", false, 0},
		{"RECALLGATE_DB_POOL", "0x10", false, 0},
		{"RECALLGATE_DB_POOL", "1e2", false, 0},
		{"RECALLGATE_DB_POOL", "8.0", false, 0},
		{"RECALLGATE_MAX_BODY", "99999999999999999999999999", false, 0},
		{"RECALLGATE_MAX_BODY", "18446744073709552640", false, 0},
		{"RECALLGATE_MAX_CONNECTIONS", "4294967297", false, 0}, /* 2^32 + 1 */
		{"RECALLGATE_DB_POOL", "008", true, 8},
		/* an empty value is the same as an unset one */
		{"RECALLGATE_DB_POOL", "", true, 8},
	};
	run_uint_cases(cases, N_ELEMS(cases));
}

static void test_addr(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		bool ok;
		const char *host;
		unsigned port;
	} cases[] = {
		{"0.0.0.0:9000", true, "0.0.0.0", 9000},
		{"127.0.0.1:1", true, "127.0.0.1", 1},
		{"127.0.0.1:65535", true, "127.0.0.1", 65535},
		{"localhost:8080", true, "localhost", 8080},
		/* IPv6 in brackets; the host is kept without them (getaddrinfo's form) */
		{"[::1]:8443", true, "::1", 8443},
		{"[::]:8080", true, "::", 8080},
		{"[fe80::1%lo]:80", true, "fe80::1%lo", 80},
		{"::1:8080", false, NULL, 0},  /* an IPv6 host needs its brackets */
		{"[::1]8080", false, NULL, 0},
		{"[]:80", false, NULL, 0},
		{"[::1:80", false, NULL, 0},
		{"::1]:80", false, NULL, 0},
		{"[::1]]:80", false, NULL, 0},
		{"[[::1]:80", false, NULL, 0},
		{"127.0.0.1:0", false, NULL, 0},
		{"127.0.0.1:65536", false, NULL, 0},
		{"127.0.0.1:99999999999999999999", false, NULL, 0},
		{"127.0.0.1", false, NULL, 0},       /* missing colon */
		{"8080", false, NULL, 0},
		{"127.0.0.1:", false, NULL, 0},
		{":8080", false, NULL, 0},
		{"127.0.0.1:80x", false, NULL, 0},
		{"127.0.0.1:-80", false, NULL, 0},
		{"127.0.0.1:+80", false, NULL, 0},
		{"127.0.0.1: 80", false, NULL, 0},
		/* the host buffer holds 63 bytes */
		{"h123456789012345678901234567890123456789012345678901234567890123:80", false, NULL,
		 0},
		{"h12345678901234567890123456789012345678901234567890123456789012:80", true,
		 "h12345678901234567890123456789012345678901234567890123456789012", 80},
	};
	for (size_t i = 0; i < N_ELEMS(cases); i++) {
		env_set("RECALLGATE_ADDR", cases[i].value);
		bool got = load(false);
		if (got != cases[i].ok)
			print_error("RECALLGATE_ADDR=\"%s\": want %s (%s)\n", cases[i].value,
				    cases[i].ok ? "ok" : "error", err);
		assert_true(got == cases[i].ok);
		if (got) {
			assert_string_equal(cfg.host, cases[i].host);
			assert_int_equal(cfg.port, cases[i].port);
		} else {
			assert_error_names("RECALLGATE_ADDR", cases[i].value);
		}
	}
}

static void test_log_level(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		enum log_level level;
	} good[] = {
		{"error", LOG_ERROR}, {"warn", LOG_WARN}, {"info", LOG_INFO}, {"debug", LOG_DEBUG},
	};
	for (size_t i = 0; i < N_ELEMS(good); i++) {
		env_set("RECALLGATE_LOG_LEVEL", good[i].value);
		assert_true(load(false));
		assert_int_equal(cfg.log_level, good[i].level);
	}
	static const char *const bad[] = {"INFO", "trace", "warning", "fatal", "3", "info ",
					  "SECRETLEVEL"};
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		env_set("RECALLGATE_LOG_LEVEL", bad[i]);
		assert_false(load(false));
		assert_error_names("RECALLGATE_LOG_LEVEL", bad[i]);
	}
}

static void test_trust_proxy(void **state)
{
	(void)state;
	env_set("RECALLGATE_TRUST_PROXY", "1");
	assert_true(load(false));
	assert_true(cfg.trust_proxy);
	env_set("RECALLGATE_TRUST_PROXY", "0");
	assert_true(load(false));
	assert_false(cfg.trust_proxy);
	static const char *const bad[] = {"true", "false", "yes", "on", "2", "01", "10", " 1",
					  "1 ", "-1"};
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		env_set("RECALLGATE_TRUST_PROXY", bad[i]);
		if (load(false))
			print_error("RECALLGATE_TRUST_PROXY=\"%s\" should be refused\n", bad[i]);
		assert_false(load(false));
		assert_error_names("RECALLGATE_TRUST_PROXY", bad[i]);
	}
}

static void test_cors_origins(void **state)
{
	(void)state;
	env_set("RECALLGATE_CORS_ORIGINS", "");
	assert_true(load(false));
	assert_int_equal(cfg.n_origins, 0);

	env_set("RECALLGATE_CORS_ORIGINS", "https://app.example");
	assert_true(load(false));
	assert_int_equal(cfg.n_origins, 1);
	assert_string_equal(cfg.origins[0], "https://app.example");

	env_set("RECALLGATE_CORS_ORIGINS", "https://app.example,http://localhost:3000");
	assert_true(load(false));
	assert_int_equal(cfg.n_origins, 2);
	assert_string_equal(cfg.origins[0], "https://app.example");
	assert_string_equal(cfg.origins[1], "http://localhost:3000");

	/* spaces around items are trimmed */
	env_set("RECALLGATE_CORS_ORIGINS", " https://a.example , https://b.example ");
	assert_true(load(false));
	assert_int_equal(cfg.n_origins, 2);
	assert_string_equal(cfg.origins[0], "https://a.example");
	assert_string_equal(cfg.origins[1], "https://b.example");

	static const char *const bad[] = {
		"ftp://files.example",
		"app.example",
		"*",
		"https://a.example,,https://b.example",
		",https://a.example",
		"https://a.example, ,https://b.example",
		"https://a.example,SECRETORIGIN",
		",",
	};
	for (size_t i = 0; i < N_ELEMS(bad); i++) {
		env_set("RECALLGATE_CORS_ORIGINS", bad[i]);
		if (load(false))
			print_error("RECALLGATE_CORS_ORIGINS=\"%s\" should be refused\n", bad[i]);
		assert_false(load(false));
		assert_error_names("RECALLGATE_CORS_ORIGINS", bad[i]);
		assert_null(strstr(err, "SECRETORIGIN"));
	}
}

/* An empty item is refused in the middle and at the start (above); the last place is no
 * different. */
static void test_cors_origins_trailing_empty_item(void **state)
{
	(void)state;
	env_set("RECALLGATE_CORS_ORIGINS", "https://a.example,");
	bool got = load(false);
	if (got)
		print_error("RECALLGATE_CORS_ORIGINS=\"https://a.example,\" was accepted with %zu "
			    "origin(s); an empty item should be refused as \",https://a.example\" is\n",
			    cfg.n_origins);
	assert_false(got);
	assert_error_names("RECALLGATE_CORS_ORIGINS", NULL);
}

static void test_cors_origin_limits(void **state)
{
	(void)state;
	/* CFG_MAX_ORIGINS pass, one more fails */
	static char list[CFG_MAX_ORIGINS * 40 + 64];
	list[0] = '\0';
	for (int i = 0; i < CFG_MAX_ORIGINS; i++) {
		char one[40];
		snprintf(one, sizeof one, "%shttps://o%d.example", i ? "," : "", i);
		strcat(list, one);
	}
	env_set("RECALLGATE_CORS_ORIGINS", list);
	assert_true(load(false));
	assert_int_equal(cfg.n_origins, CFG_MAX_ORIGINS);
	assert_string_equal(cfg.origins[CFG_MAX_ORIGINS - 1], "https://o15.example");
	strcat(list, ",https://one-more.example");
	assert_false(load(false));
	assert_error_names("RECALLGATE_CORS_ORIGINS", NULL);

	/* an origin of 255 bytes fits, 256 does not */
	static char longest[300];
	strcpy(longest, "https://");
	memset(longest + 8, 'a', 255 - 8);
	longest[255] = '\0';
	env_set("RECALLGATE_CORS_ORIGINS", longest);
	assert_true(load(false));
	assert_int_equal(strlen(cfg.origins[0]), 255);
	longest[255] = 'a';
	longest[256] = '\0';
	assert_false(load(false));
}

static void test_error_line_is_bounded(void **state)
{
	(void)state;
	char small[16];
	memset(small, 'Z', sizeof small);
	env_set("RECALLGATE_DB_POOL", "0");
	assert_false(cfg_load(&cfg, fake_getenv, false, small, sizeof small));
	assert_int_equal(strlen(small), sizeof small - 1);
}

static void test_everything_set(void **state)
{
	(void)state;
	env_set("DATABASE_URL", "postgres://localhost/rg");
	env_set("RECALLGATE_ADDR", "0.0.0.0:18080");
	env_set("RECALLGATE_DB_POOL", "16");
	env_set("RECALLGATE_MAX_BODY", "2048");
	env_set("RECALLGATE_LOG_LEVEL", "debug");
	env_set("RECALLGATE_TRUST_PROXY", "1");
	env_set("RECALLGATE_CORS_ORIGINS", "https://app.example");
	env_set("RECALLGATE_CONNECTION_TIMEOUT", "5");
	assert_true(load(true));
	assert_string_equal(cfg.database_url, "postgres://localhost/rg");
	assert_string_equal(cfg.host, "0.0.0.0");
	assert_int_equal(cfg.port, 18080);
	assert_int_equal(cfg.db_pool, 16);
	assert_int_equal(cfg.max_body, 2048);
	assert_int_equal(cfg.log_level, LOG_DEBUG);
	assert_true(cfg.trust_proxy);
	assert_int_equal(cfg.n_origins, 1);
	assert_int_equal(cfg.connection_timeout, 5);
	/* the ones not set keep their defaults */
	assert_int_equal(cfg.max_connections, 10000);
	assert_int_equal(cfg.db_acquire_timeout_ms, 2000);
}

static void test_oauth(void **state)
{
	(void)state;
	assert_true(load(false));
	assert_string_equal(cfg.oauth_issuer, ""); /* off */
	assert_string_equal(cfg.oauth_tenant_claim, "tenant");
	assert_int_equal(cfg.oauth_jwks_refetch, 60);

	env_set("RECALLGATE_OAUTH_ISSUER", "https://as.example/realms/a");
	assert_false(load(false)); /* the resource is required with it */
	assert_error_names("RECALLGATE_OAUTH_RESOURCE", NULL);
	env_set("RECALLGATE_OAUTH_RESOURCE", "https://rg.example/mcp");
	env_set("RECALLGATE_OAUTH_TENANT_CLAIM", "https://rg.example/tenant");
	assert_true(load(false));
	assert_string_equal(cfg.oauth_issuer, "https://as.example/realms/a");
	assert_string_equal(cfg.oauth_resource, "https://rg.example/mcp");
	assert_string_equal(cfg.oauth_tenant_claim, "https://rg.example/tenant");

	static const struct {
		const char *value;
		bool ok;
	} issuers[] = {
		{"http://127.0.0.1:9000", true}, {"http://localhost", true},
		{"http://[::1]:8/x", true},      {"http://as.example", false},
		{"http://localhost.evil", false}, {"https://as.example/", false},
		{"https://", false},             {"https://as.example/a?b", false},
		{"ftp://as.example", false},     {"https://as example", false},
	};
	for (size_t i = 0; i < N_ELEMS(issuers); i++) {
		env_set("RECALLGATE_OAUTH_ISSUER", issuers[i].value);
		if (load(false) != issuers[i].ok)
			print_error("issuer %s: want %s\n", issuers[i].value,
				    issuers[i].ok ? "ok" : "refused");
		assert_int_equal(load(false), issuers[i].ok);
		if (!issuers[i].ok)
			assert_error_names("RECALLGATE_OAUTH_ISSUER", issuers[i].value);
	}
	env_set("RECALLGATE_OAUTH_ISSUER", "https://as.example");
	env_set("RECALLGATE_OAUTH_RESOURCE", "http://rg.example/mcp#x");
	assert_false(load(false));
	assert_error_names("RECALLGATE_OAUTH_RESOURCE", NULL);
	env_set("RECALLGATE_OAUTH_RESOURCE", "http://rg.example/mcp");
	env_set("RECALLGATE_OAUTH_TENANT_CLAIM", "a b");
	assert_false(load(false));
	assert_error_names("RECALLGATE_OAUTH_TENANT_CLAIM", NULL);
	env_set("RECALLGATE_OAUTH_TENANT_CLAIM", "tenant");
	env_set("RECALLGATE_OAUTH_JWKS_REFETCH", "0");
	assert_false(load(false));
	assert_error_names("RECALLGATE_OAUTH_JWKS_REFETCH", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, setup),
		cmocka_unit_test_setup(test_database_url, setup),
		cmocka_unit_test_setup(test_database_url_too_long_is_not_echoed, setup),
		cmocka_unit_test_setup(test_database_url_malformed, setup),
		cmocka_unit_test_setup(test_addr_format, setup),
		cmocka_unit_test_setup(test_uint_bounds, setup),
		cmocka_unit_test_setup(test_uint_syntax, setup),
		cmocka_unit_test_setup(test_addr, setup),
		cmocka_unit_test_setup(test_log_level, setup),
		cmocka_unit_test_setup(test_trust_proxy, setup),
		cmocka_unit_test_setup(test_cors_origins, setup),
		cmocka_unit_test_setup(test_cors_origins_trailing_empty_item, setup),
		cmocka_unit_test_setup(test_cors_origin_limits, setup),
		cmocka_unit_test_setup(test_error_line_is_bounded, setup),
		cmocka_unit_test_setup(test_everything_set, setup),
		cmocka_unit_test_setup(test_oauth, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
