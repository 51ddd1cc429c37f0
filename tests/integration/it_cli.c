/*
 * it_cli — the command line (DESIGN.md operating contract, foundation-contract CLI and
 * Environment): exit codes 0 / 2 with one line on stderr for usage and configuration errors,
 * `version`, `token create` printing the token alone, `migrate` idempotent, every
 * configuration bound (the edge passes, one beyond fails).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"

static char addr_env[64]; /* RECALLGATE_ADDR=127.0.0.1:<free port>, in case serve starts */

static void show(const char *what, const struct it_proc *p)
{
	fprintf(stderr, "%s: exit %d\n  stdout: %s\n  stderr: %s\n", what, p->status, p->out,
		p->err);
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	if (len > 0 && s[len - 1] != '\n')
		n++;
	return n;
}

/* runs the binary and requires exit 2 and exactly one line on stderr, without a tab or any
 * other control character, that holds `says` (when not NULL) and not `hides` (when not NULL) */
static void expect_usage_error_saying(const char *what, const char *const *args,
				      const char *const *env, const char *says, const char *hides)
{
	struct it_proc p;
	IT_CHECK(it_run(args, env, 15, &p) == 0, "could not run recallgate");
	if (p.status != 2 || count_lines(p.err, p.err_len) != 1)
		show(what, &p);
	IT_CHECK(p.status == 2, "%s: exit status %d, expected 2", what, p.status);
	IT_CHECK(count_lines(p.err, p.err_len) == 1, "%s: %zu lines on stderr, expected one", what,
		 count_lines(p.err, p.err_len));
	for (size_t i = 0; i + 1 < p.err_len; i++)
		IT_CHECK((unsigned char)p.err[i] >= 0x20, "%s: control character %#x on stderr: %s",
			 what, (unsigned)(unsigned char)p.err[i], p.err);
	IT_CHECK(!says || strstr(p.err, says), "%s: stderr does not say %s: %s", what, says, p.err);
	IT_CHECK(!hides || !strstr(p.err, hides), "%s: stderr shows %s: %s", what, hides, p.err);
	it_proc_free(&p);
}

static void expect_usage_error(const char *what, const char *const *args, const char *const *env)
{
	expect_usage_error_saying(what, args, env, NULL, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	int port = it_free_port();
	if (port <= 0)
		return -1;
	snprintf(addr_env, sizeof addr_env, "RECALLGATE_ADDR=127.0.0.1:%d", port);
	return 0;
}

static void test_version(void **state)
{
	(void)state;
	char first[64] = "";
	static const char *const spellings[] = {"version", "--version"};
	for (size_t i = 0; i < 2; i++) {
		const char *args[] = {spellings[i], NULL};
		const char *unset[] = {"DATABASE_URL", NULL}; /* needs no database */
		struct it_proc p;
		IT_CHECK(it_run(args, unset, 15, &p) == 0, "could not run recallgate");
		if (p.status != 0)
			show(spellings[i], &p);
		IT_CHECK(p.status == 0, "`recallgate %s` exit %d", spellings[i], p.status);
		IT_CHECK(p.out_len > 1 && p.out_len < sizeof first &&
			     count_lines(p.out, p.out_len) == 1 && strpbrk(p.out, "0123456789"),
			 "`recallgate %s` printed %s", spellings[i], p.out);
		if (i == 0)
			memcpy(first, p.out, p.out_len + 1);
		IT_CHECK(strcmp(first, p.out) == 0, "`recallgate %s` printed %s, version printed %s",
			 spellings[i], p.out, first);
		it_proc_free(&p);
	}
}

/* help lists the commands and every environment variable with its default, on stdout, exit 0,
 * without a database */
static void test_help(void **state)
{
	(void)state;
	static const char *const spellings[] = {"--help", "-h", "help"};
	static const char *const shown[] = {
	    "serve", "migrate", "token create --tenant T --scopes a,b [--name N]", "health",
	    "version",
	    "DATABASE_URL (no default)", "RECALLGATE_ADDR=127.0.0.1:8080",
	    "RECALLGATE_CONNECTION_TIMEOUT=30", "RECALLGATE_CORS_ORIGINS=\n",
	    "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=2000", "RECALLGATE_DB_POOL=8",
	    "RECALLGATE_LOG_LEVEL=info", "RECALLGATE_MAX_BODY=1048576",
	    "RECALLGATE_MAX_CONNECTIONS=10000", "RECALLGATE_TRUST_PROXY=0", "[::1]:8080",
	    "RECALLGATE_CONNECTION_MEMORY=8192", "RECALLGATE_DRAIN_TIMEOUT=10",
	    "RECALLGATE_RATE_LIMIT=0", "RECALLGATE_RATE_BURST=0",
	    "RECALLGATE_MAX_STREAMS_PER_TENANT=0", "RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=512",
	    "RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=512",
	    "decision_context.read", "events:read", "exit codes"};
	for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++) {
		const char *args[] = {spellings[i], NULL};
		const char *unset[] = {"DATABASE_URL", NULL};
		struct it_proc p;
		IT_CHECK(it_run(args, unset, 15, &p) == 0, "could not run recallgate");
		if (p.status != 0)
			show(spellings[i], &p);
		IT_CHECK(p.status == 0 && p.err_len == 0, "`recallgate %s` exit %d, stderr %s",
			 spellings[i], p.status, p.err);
		for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
			IT_CHECK(strstr(p.out, shown[k]), "`recallgate %s` does not show %s:\n%s",
				 spellings[i], shown[k], p.out);
		it_proc_free(&p);
	}
	/* help takes no arguments */
	const char *extra[] = {"--help", "serve", NULL};
	expect_usage_error("--help with an argument", extra, NULL);
}

static void test_usage_errors(void **state)
{
	(void)state;
	const char *none[] = {NULL};
	expect_usage_error("no arguments", none, NULL);
	const char *unknown[] = {"frobnicate", NULL};
	expect_usage_error("unknown command", unknown, NULL);
	const char *token_only[] = {"token", NULL};
	expect_usage_error("token without subcommand", token_only, NULL);
	const char *no_tenant[] = {"token", "create", "--scopes", "admin", NULL};
	expect_usage_error("token create without --tenant", no_tenant, NULL);
	char *tenant = it_unique("cli");
	const char *no_scopes[] = {"token", "create", "--tenant", tenant, NULL};
	expect_usage_error("token create without --scopes", no_scopes, NULL);
	const char *bad_scope[] = {
	    "token", "create", "--tenant", tenant, "--scopes", "memory:read,telepathy", NULL};
	expect_usage_error_saying("token create with an unknown scope", bad_scope, NULL,
				  "unknown scope \"telepathy\"", NULL);
	const char *twice[] = {
	    "token", "create", "--tenant", tenant, "--scopes", "admin,memory:read,admin", NULL};
	expect_usage_error_saying("token create with a repeated scope", twice, NULL,
				  "repeated scope \"admin\"", NULL);
	const char *spaced[] = {
	    "token", "create", "--tenant", tenant, "--scopes", "memory:read, admin", NULL};
	expect_usage_error_saying("token create with a space in --scopes", spaced, NULL,
				  "unknown scope \" admin\"", NULL);
	const char *hole[] = {
	    "token", "create", "--tenant", tenant, "--scopes", "memory:read,,admin", NULL};
	expect_usage_error_saying("token create with an empty scope", hole, NULL,
				  "empty item at character 13", NULL);
	const char *empty[] = {"token", "create", "--tenant", tenant, "--scopes", "", NULL};
	expect_usage_error("token create with empty --scopes", empty, NULL);
	const char *bad_name[] = {"token", "create", "--tenant",  tenant, "--scopes",
				  "admin", "--name", "bad name!", NULL};
	expect_usage_error("token create with an invalid --name", bad_name, NULL);
	const char *extra[] = {"token", "create",  "--tenant", tenant, "--scopes",
			       "admin", "--bogus", "x",	       NULL};
	expect_usage_error("token create with an unknown option", extra, NULL);
	free(tenant);
}

static void test_configuration_errors(void **state)
{
	(void)state;
	const char *serve[] = {"serve", NULL};
	static const char *const bad[] = {
	    "DATABASE_URL",  /* unset */
	    "DATABASE_URL=", /* empty */
	    "RECALLGATE_DB_POOL=0",
	    "RECALLGATE_DB_POOL=257",
	    "RECALLGATE_DB_POOL=abc",
	    "RECALLGATE_DB_POOL=8x",
	    "RECALLGATE_ADDR=127.0.0.1:0",
	    "RECALLGATE_ADDR=127.0.0.1:65536",
	    "RECALLGATE_ADDR=nonsense",
	    "RECALLGATE_MAX_CONNECTIONS=0",
	    "RECALLGATE_MAX_CONNECTIONS=65536",
	    "RECALLGATE_CONNECTION_TIMEOUT=0",
	    "RECALLGATE_CONNECTION_TIMEOUT=3601",
	    "RECALLGATE_MAX_BODY=1023",
	    "RECALLGATE_MAX_BODY=67108865",
	    "RECALLGATE_LOG_LEVEL=verbose",
	    "RECALLGATE_TRUST_PROXY=2",
	    "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=0",
	    "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=60001",
	    "RECALLGATE_CONNECTION_MEMORY=4095",
	    "RECALLGATE_CONNECTION_MEMORY=1048577",
	    "RECALLGATE_DRAIN_TIMEOUT=0",
	    "RECALLGATE_DRAIN_TIMEOUT=3601",
	    "RECALLGATE_RATE_LIMIT=100001",
	    "RECALLGATE_RATE_LIMIT=-1",
	    "RECALLGATE_RATE_BURST=1000001",
	    "RECALLGATE_MAX_STREAMS_PER_TENANT=65536",
	    "RECALLGATE_MAX_STREAMS_PER_TENANT=-1",
	    "RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=0",
	    "RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=1025",
	    "RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=0",
	    "RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=1025",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		/* the bad setting last, so it overrides; the address is a free port in case the
		 * server starts anyway (then it is killed after 15 s and the test fails) */
		const char *env[] = {addr_env, bad[i], NULL};
		char what[128];
		snprintf(what, sizeof what, "serve with %s%s", bad[i],
			 strchr(bad[i], '=') ? "" : " unset");
		expect_usage_error(what, serve, env);
	}
	/* DATABASE_URL is parsed at start: libpq's reason on one line, without the value's
	 * quoted parts (a password) */
	static const struct {
		const char *env, *says;
	} malformed[] = {
	    {"DATABASE_URL=host=db.example dbname", "missing \"=\" after \"dbname\""},
	    {"DATABASE_URL=postgres://rg:SECRETPW@[::1/rg", "matching \"]\""},
	    {"DATABASE_URL=postgres://rg:SECRETPW@db/rg?SECRETPW=1", "invalid URI query parameter"},
	    {"DATABASE_URL=password='SECRETPW", "unterminated quoted string"},
	};
	for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
		const char *env[] = {addr_env, malformed[i].env, NULL};
		expect_usage_error_saying(malformed[i].env, serve, env, malformed[i].says,
					  "SECRETPW");
		const char *mig[] = {"migrate", NULL};
		expect_usage_error_saying(malformed[i].env, mig, env, "DATABASE_URL is invalid",
					  "SECRETPW");
	}
	/* token create and migrate need DATABASE_URL too */
	char *tenant = it_unique("cli");
	const char *tok[] = {"token", "create", "--tenant", tenant, "--scopes", "admin", NULL};
	const char *unset[] = {"DATABASE_URL", NULL};
	expect_usage_error("token create with DATABASE_URL unset", tok, unset);
	const char *migrate[] = {"migrate", NULL};
	expect_usage_error("migrate with DATABASE_URL unset", migrate, unset);
	free(tenant);
}

static void test_configuration_edges_accepted(void **state)
{
	(void)state;
	/* the inclusive bounds of every setting start a working server */
	const char *lower[] = {"RECALLGATE_DB_POOL=1",
			       "RECALLGATE_MAX_CONNECTIONS=1",
			       "RECALLGATE_CONNECTION_TIMEOUT=1",
			       "RECALLGATE_MAX_BODY=1024",
			       "RECALLGATE_LOG_LEVEL=error",
			       "RECALLGATE_TRUST_PROXY=0",
			       "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=1",
			       "RECALLGATE_CORS_ORIGINS=",
			       "RECALLGATE_CONNECTION_MEMORY=4096",
			       "RECALLGATE_DRAIN_TIMEOUT=1",
			       "RECALLGATE_RATE_LIMIT=0",
			       "RECALLGATE_RATE_BURST=0",
			       "RECALLGATE_MAX_STREAMS_PER_TENANT=0",
			       "RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=1",
			       "RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=1",
			       NULL};
	const char *upper[] = {"RECALLGATE_DB_POOL=16", /* 256 would need max_connections > 256 */
			       "RECALLGATE_MAX_CONNECTIONS=65535",
			       "RECALLGATE_CONNECTION_TIMEOUT=3600",
			       "RECALLGATE_MAX_BODY=67108864",
			       "RECALLGATE_LOG_LEVEL=debug",
			       "RECALLGATE_TRUST_PROXY=1",
			       "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=60000",
			       "RECALLGATE_CORS_ORIGINS=https://a.example,http://localhost:3000",
			       "RECALLGATE_CONNECTION_MEMORY=1048576",
			       "RECALLGATE_DRAIN_TIMEOUT=3600",
			       "RECALLGATE_RATE_LIMIT=100000",
			       "RECALLGATE_RATE_BURST=1000000",
			       "RECALLGATE_MAX_STREAMS_PER_TENANT=65535",
			       "RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT=1024",
			       "RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT=1024",
			       NULL};
	const char *const *sets[] = {lower, upper};
	for (size_t i = 0; i < 2; i++) {
		struct it_server s;
		IT_CHECK(it_server_start(&s, sets[i]) == 0,
			 "the server did not start with the %s "
			 "bounds of every setting",
			 i ? "upper" : "lower");
		long status = 0;
		for (int tries = 0; tries < 30 && status != 200; tries++) {
			/* RECALLGATE_MAX_CONNECTIONS=1: the previous connection may still be
			 * closing */
			struct it_resp r;
			it_request(&s, "GET", "/readyz", NULL, NULL, NULL, &r);
			status = r.status;
			it_resp_free(&r);
			if (status != 200) {
				struct timespec ts = {0, 100 * 1000000L};
				nanosleep(&ts, NULL);
			}
		}
		int st = it_server_stop(&s);
		IT_CHECK(status == 200, "/readyz answered %ld", status);
		IT_CHECK(st == 0, "exit status %d after SIGTERM", st);
	}
}

/* a well-formed DATABASE_URL that cannot be reached still serves: live, not ready */
/* `recallgate health` at port on host (the image's HEALTHCHECK), without DATABASE_URL: its
 * exit status, and its stderr is one line holding `says` when it fails */
static void expect_health(const char *host, int port, int want_status, const char *says)
{
	char addr[96];
	snprintf(addr, sizeof addr, "RECALLGATE_ADDR=%s:%d", host, port);
	const char *args[] = {"health", NULL};
	const char *env[] = {"DATABASE_URL", addr, NULL};
	struct it_proc p;
	IT_CHECK(it_run(args, env, 15, &p) == 0, "could not run recallgate");
	if (p.status != want_status)
		show(addr, &p);
	IT_CHECK(p.status == want_status, "health at %s: exit %d, expected %d", addr, p.status,
		 want_status);
	if (want_status == 0)
		IT_CHECK(p.err_len == 0 && p.out_len == 0, "health at %s printed %s%s", addr, p.out,
			 p.err);
	else
		IT_CHECK(count_lines(p.err, p.err_len) == 1 && strstr(p.err, says),
			 "health at %s: stderr does not say %s in one line: %s", addr, says, p.err);
	it_proc_free(&p);
}

/* health: exit 0 on /readyz 200 (a wildcard is probed on loopback), 1 when nothing listens
 * or /readyz is not 200 (test_unreachable_database_starts), 2 for a bad address */
static void test_health(void **state)
{
	(void)state;
	struct it_server s;
	IT_CHECK(it_server_start(&s, NULL) == 0, "serve did not start");
	expect_health("127.0.0.1", s.port, 0, NULL);
	expect_health("0.0.0.0", s.port, 0, NULL);
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit after SIGTERM");
	expect_health("127.0.0.1", s.port, 1, "/readyz");
	/* a bad address: 1, not 2 (Docker reserves a HEALTHCHECK's exit 2), with the reason */
	expect_health("", 0, 1, "RECALLGATE_ADDR");
	const char *extra[] = {"health", "now", NULL};
	expect_usage_error("health with an argument", extra, NULL);
}

static void test_unreachable_database_starts(void **state)
{
	(void)state;
	char url[64];
	snprintf(url, sizeof url, "DATABASE_URL=postgresql://127.0.0.1:%d/rg", it_free_port());
	const char *env[] = {url, "RECALLGATE_DB_ACQUIRE_TIMEOUT_MS=200", NULL};
	struct it_server s;
	IT_CHECK(it_server_start(&s, env) == 0, "serve did not start with an unreachable database");
	struct it_resp r;
	it_request(&s, "GET", "/readyz", NULL, NULL, NULL, &r);
	IT_CHECK(r.status == 503 && it_json_str_is(r.json, "reason", "database_unavailable"),
		 "/readyz with an unreachable database: %ld %s", r.status, r.body);
	it_resp_free(&r);
	expect_health("127.0.0.1", s.port, 1, "answered 503");
	IT_CHECK(it_server_stop(&s) == 0, "no clean exit after SIGTERM");
}

/* RECALLGATE_ADDR takes bracketed IPv6: [::1] is loopback only, [::] is every address, IPv4
 * included */
static void test_ipv6_addresses(void **state)
{
	(void)state;
	char *tenant = it_unique("cli6");
	char *token = it_token(tenant, "admin", "v6");
	IT_CHECK(token != NULL, "no token");
	static const char *const hosts[] = {"[::1]", "[::]"};
	for (size_t i = 0; i < 2; i++) {
		struct it_server s;
		IT_CHECK(it_server_start_on(&s, hosts[i], NULL) == 0, "serve on %s did not start",
			 hosts[i]);
		struct it_resp r;
		it_request(&s, "GET", "/v1/tokens", token, NULL, NULL, &r);
		IT_CHECK(r.status == 200, "GET /v1/tokens over %s: %ld %s", s.base_url, r.status,
			 r.body);
		it_resp_free(&r);
		IT_CHECK(it_log_contains(&s, hosts[i]), "the log does not say it listens on %s",
			 hosts[i]);
		/* the same port over IPv4 */
		struct it_server v4 = s;
		snprintf(v4.base_url, sizeof v4.base_url, "http://127.0.0.1:%d", s.port);
		it_request(&v4, "GET", "/healthz", NULL, NULL, NULL, &r);
		long want = i == 1 ? 200 : 0;
		IT_CHECK(r.status == want, "GET /healthz over IPv4 with %s: %ld, expected %ld",
			 hosts[i], r.status, want);
		it_resp_free(&r);
		IT_CHECK(it_server_stop(&s) == 0, "no clean exit after SIGTERM");
	}
	free(token);
	free(tenant);
}

static void test_token_create(void **state)
{
	(void)state;
	char *tenant = it_unique("cli");
	const char *args[] = {"token",	"create",   "--tenant",
			      tenant,	"--scopes", "memory:read,memory:admin",
			      "--name", "cli-test", NULL};
	struct it_proc p;
	IT_CHECK(it_run(args, NULL, 30, &p) == 0, "could not run recallgate");
	if (p.status != 0)
		show("token create", &p);
	IT_CHECK(p.status == 0, "token create exit %d", p.status);
	/* exactly "rg_" + 43 base64url characters + "\n" on stdout, nothing else */
	bool shape = p.out_len == 47 && strncmp(p.out, "rg_", 3) == 0 && p.out[46] == '\n';
	for (size_t i = 3; shape && i < 46; i++) {
		char c = p.out[i];
		shape = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '_';
	}
	IT_CHECK(shape, "stdout is not one line `rg_<43 base64url>`: \"%s\"", p.out);
	it_proc_free(&p);

	/* a second token for the same (now existing) tenant, default name; a different secret */
	const char *again[] = {"token", "create", "--tenant", tenant, "--scopes", "admin", NULL};
	char *first = it_token(tenant, "memory:read", NULL);
	IT_CHECK(first != NULL, "second token create for an existing tenant failed");
	IT_CHECK(it_run(again, NULL, 30, &p) == 0 && p.status == 0, "third token create failed");
	IT_CHECK(strncmp(p.out, first, strlen(first)) != 0, "two token creates printed one secret");
	it_proc_free(&p);
	free(first);
	free(tenant);
}

/* The rows of a one-column query (new, '\n'-joined) on the test database. */
static char *column_of(PGconn *db, const char *sql)
{
	PGresult *r = PQexec(db, sql);
	IT_CHECK(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(db));
	size_t len = 1;
	for (int i = 0; i < PQntuples(r); i++)
		len += strlen(PQgetvalue(r, i, 0)) + 1;
	char *out = calloc(1, len);
	for (int i = 0; i < PQntuples(r); i++) {
		strcat(out, PQgetvalue(r, i, 0));
		strcat(out, "\n");
	}
	PQclear(r);
	return out;
}

/* Each SQL function has one home, db/functions/<name>.sql, which migrate applies after the
 * migrations every time: every function of the schema has its file and every file its
 * function, and a function changed behind migrate's back gets its file's text again.
 * (Functions named it_* are tests' own.) */
static void test_functions_have_one_home(void **state)
{
	(void)state;
	PGconn *db = PQconnectdb(getenv("DATABASE_URL"));
	IT_CHECK(PQstatus(db) == CONNECTION_OK, "connect: %s", PQerrorMessage(db));
	char *names = column_of(db, "SELECT DISTINCT p.proname FROM pg_proc p JOIN pg_namespace n"
				    " ON n.oid = p.pronamespace WHERE n.nspname = 'public'"
				    " AND p.proname NOT LIKE 'it\\_%' AND NOT EXISTS (SELECT 1 FROM"
				    " pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')"
				    " ORDER BY 1");
	size_t n = 0;
	for (char *line = names, *end; (end = strchr(line, '\n')) != NULL; line = end + 1, n++) {
		*end = '\0';
		char path[512];
		snprintf(path, sizeof path, "%s/db/functions/%s.sql", RG_SOURCE_DIR, line);
		FILE *f = fopen(path, "r");
		IT_CHECK(f != NULL, "the function %s has no file db/functions/%s.sql", line, line);
		fclose(f);
	}
	IT_CHECK(n >= 18, "only %zu functions in the database", n);
	free(names);

	PGresult *r = PQexec(db, "CREATE OR REPLACE FUNCTION public.epoch_ms(t timestamptz)"
				 " RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE STRICT"
				 " AS $f$ SELECT (extract(epoch FROM t) * 1000)::bigint + 0 $f$");
	IT_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK, "replace: %s", PQerrorMessage(db));
	PQclear(r);
	const char *args[] = {"migrate", NULL};
	struct it_proc p;
	IT_CHECK(it_run(args, NULL, 60, &p) == 0 && p.status == 0, "migrate failed");
	it_proc_free(&p);
	char *src = column_of(db, "SELECT prosrc FROM pg_proc WHERE proname = 'epoch_ms'");
	IT_CHECK(strstr(src, "+ 0") == NULL, "migrate left the changed epoch_ms: %s", src);
	free(src);
	PQfinish(db);
}

static void test_migrate_twice(void **state)
{
	(void)state;
	const char *args[] = {"migrate", NULL};
	for (int i = 0; i < 2; i++) {
		struct it_proc p;
		IT_CHECK(it_run(args, NULL, 60, &p) == 0, "could not run recallgate");
		if (p.status != 0)
			show("migrate", &p);
		IT_CHECK(p.status == 0, "migrate run %d: exit %d", i + 1, p.status);
		it_proc_free(&p);
	}
}

int main(void)
{
	if (!it_init())
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version),
	    cmocka_unit_test(test_help),
	    cmocka_unit_test(test_usage_errors),
	    cmocka_unit_test(test_configuration_errors),
	    cmocka_unit_test(test_configuration_edges_accepted),
	    cmocka_unit_test(test_health),
	    cmocka_unit_test(test_unreachable_database_starts),
	    cmocka_unit_test(test_ipv6_addresses),
	    cmocka_unit_test(test_token_create),
	    cmocka_unit_test(test_migrate_twice),
	    cmocka_unit_test(test_functions_have_one_home),
	};
	int rc = cmocka_run_group_tests_name("it_cli", tests, group_setup, NULL);
	it_cleanup();
	return rc;
}
