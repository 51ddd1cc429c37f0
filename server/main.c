/* The composition root: CLI, start-up order, signals, shutdown. */
#include <curl/curl.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/hash.h"
#include "core/ids.h"
#include "db/migrate.h"
#include "db/standby.h"
#include "db/tokens.h"
#include "handlers/api.h"
#include "server/auth.h"
#include "server/clients.h"
#include "server/config.h"
#include "server/events.h"
#include "server/http.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/oauth.h"
#include "server/outbound.h"
#include "server/ratelimit.h"

#define EXIT_USAGE 2

static const char usage[] =
	"usage: recallgate serve | migrate | token create --tenant T --scopes a,b [--name N] | "
	"health | version | help\n";

static const char commands[] =
	"commands:\n"
	"  serve          serve the HTTP API until SIGTERM or SIGINT, then drain and exit 0\n"
	"  migrate        apply the pending database migrations (serve never migrates)\n"
	"  token create --tenant T --scopes a,b [--name N]\n"
	"                 create a bearer token of tenant T (name default: cli);\n"
	"                 prints the token alone on stdout, once\n"
	"  health         exit 0 when the server at RECALLGATE_ADDR answers GET /readyz with 200,\n"
	"                 else 1 (the container's HEALTHCHECK; a wildcard host is probed on\n"
	"                 127.0.0.1)\n"
	"  version        print the version (also --version)\n"
	"  help           print this help (also --help, -h)\n";

static int cmd_help(void)
{
	printf("recallgate %s: a governed memory and context service for AI agents\n\n%s%s\n",
	       RG_VERSION, usage, commands);
	fputs("scopes:", stdout);
	for (unsigned i = 0; i < RG_SCOPE_COUNT; i++)
		printf("%s %s", i ? "," : "", core_scope_name(i));
	puts("\n\nenvironment:");
	cfg_print_help(stdout);
	puts("\nexit codes: 0 ok, 2 usage or configuration error (one line on stderr), 1 anything "
	     "else");
	return 0;
}

static const char *env(const char *name)
{
	return getenv(name);
}

static int load_config(struct rg_config *cfg, bool need_database)
{
	char err[256];
	if (!cfg_load(cfg, env, need_database, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return EXIT_USAGE;
	}
	log_set_level(cfg->log_level);
	return 0;
}

/* A single connection for the CLI commands (no pool wait matters there). */
static int with_connection(const struct rg_config *cfg, struct db_pool **pool,
			   struct db_conn **conn)
{
	struct db_error err = {0};
	if (db_pool_open(cfg->database_url, 1, cfg->db_acquire_timeout_ms, pool) != RG_OK)
		return 1;
	if (db_acquire(*pool, conn, &err) != RG_OK) {
		fprintf(stderr, "recallgate: cannot connect to the database: %s\n", err.message);
		db_pool_close(*pool);
		return 1;
	}
	return 0;
}

static int cmd_migrate(void)
{
	struct rg_config cfg;
	struct db_pool *pool = NULL;
	struct db_conn *conn = NULL;
	struct db_error err = {0};
	unsigned applied = 0;
	int rc = load_config(&cfg, true);
	if (rc || (rc = with_connection(&cfg, &pool, &conn)))
		return rc;
	if (db_migrate(conn, &applied, &err) != RG_OK) {
		fprintf(stderr, "recallgate: migration failed: %s%s%s\n", err.message,
			err.sqlstate[0] ? " SQLSTATE " : "", err.sqlstate);
		rc = 1;
	} else {
		fprintf(stderr, "recallgate: %u migration(s) applied\n", applied);
	}
	db_release(pool, conn);
	db_pool_close(pool);
	return rc;
}

static int cmd_token_create(int argc, char **argv)
{
	const char *tenant = NULL, *scopes = NULL, *name = "cli";
	unsigned mask;
	for (int i = 0; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--tenant") == 0)
			tenant = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--scopes") == 0)
			scopes = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--name") == 0)
			name = argv[++i];
		else {
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (tenant == NULL || scopes == NULL) {
		fprintf(stderr, "recallgate: token create needs --tenant and --scopes\n");
		return EXIT_USAGE;
	}
	if (!core_id_valid(tenant) || !core_id_valid(name)) {
		fprintf(stderr, "recallgate: --tenant and --name must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$\n");
		return EXIT_USAGE;
	}
	struct core_scope_csv_error bad;
	if (!core_scopes_parse_csv(scopes, &mask, &bad)) {
		if (bad.len == 0)
			fprintf(stderr, "recallgate: --scopes has an empty item at character %zu "
					"(scopes are separated by single commas)\n", bad.offset + 1);
		else
			fprintf(stderr, "recallgate: --scopes: %s scope \"%.*s\" (see recallgate --help)\n",
				bad.repeated ? "repeated" : "unknown", (int)bad.len, scopes + bad.offset);
		return EXIT_USAGE;
	}

	struct rg_config cfg;
	struct db_pool *pool = NULL;
	struct db_conn *conn = NULL;
	struct db_error err = {0};
	char token[RG_TOKEN_SIZE], token_id[RG_ID_SIZE], digest[RG_SHA256_HEX_LEN + 1];
	int64_t created_ms;
	int rc = load_config(&cfg, true);
	if (rc || (rc = with_connection(&cfg, &pool, &conn)))
		return rc;
	struct db_actor actor = {tenant, NULL, NULL};
	if (!core_new_token(token) || !core_new_id("tok_", token_id)) {
		fprintf(stderr, "recallgate: the random generator failed\n");
		rc = 1;
	} else {
		core_sha256_hex(token, strlen(token), digest);
		if (db_token_create(conn, &actor, token_id, name, scopes, digest, &created_ms, &err) !=
		    RG_OK) {
			fprintf(stderr, "recallgate: cannot create the token: %s\n", err.message);
			rc = 1;
		} else {
			printf("%s\n", token);
		}
	}
	db_release(pool, conn);
	db_pool_close(pool);
	return rc;
}

/* Every client connection, pool connection and provider call takes a descriptor: raise the
 * soft limit towards the hard one so that RECALLGATE_MAX_CONNECTIONS can be reached. */
static void raise_fd_limit(const struct rg_config *cfg)
{
	struct rlimit lim;
	rlim_t want = (rlim_t)cfg->max_connections + cfg->db_pool + 1024;
	if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= want)
		return;
	lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > want ? want : lim.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur < want)
		log_warn(NULL, "open files are limited to %llu, fewer than %llu: "
			       "RECALLGATE_MAX_CONNECTIONS may not be reached",
			 (unsigned long long)lim.rlim_cur, (unsigned long long)want);
}

/* GET /readyz at the listen address, for a container's HEALTHCHECK or a Kubernetes exec probe
 * (the image then needs no curl), through the providers' outbound client. /readyz, not
 * /healthz: it is 503 while the database is down or unmigrated and while the server drains.
 * DATABASE_URL is not needed. */
static int cmd_health(void)
{
	struct rg_config cfg;
	if (load_config(&cfg, false) != 0)
		return 1; /* not 2: Docker reserves a HEALTHCHECK's exit 2 */
	const char *host = cfg.host;
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0 || host[0] == '\0')
		host = "127.0.0.1"; /* [::] serves IPv4 too */
	bool v6 = strchr(host, ':') != NULL;
	char url[sizeof cfg.host + 32];
	snprintf(url, sizeof url, "http://%s%s%s:%u/readyz", v6 ? "[" : "", host, v6 ? "]" : "",
		 cfg.port);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct h_call call = {.method = "GET", .url = url, .deadline_ms = 2000};
	struct h_call_result res;
	outbound_call(&call, NULL, &res);
	free(res.body);
	curl_global_cleanup();
	if (res.http_status == 200)
		return 0;
	if (res.http_status == 0)
		fprintf(stderr, "recallgate: %s: no answer\n", url);
	else
		fprintf(stderr, "recallgate: %s answered %ld\n", url, res.http_status);
	return 1;
}

static int cmd_serve(void)
{
	struct rg_config cfg;
	struct db_pool *pool = NULL;
	struct db_standbys *standbys = NULL;
	struct http_server *srv = NULL;
	const char **route_names = NULL;
	sigset_t stop;
	int sig = 0, rc = load_config(&cfg, true);
	if (rc)
		return rc;

	raise_fd_limit(&cfg);
	/* Freed memory stays with its malloc arena up to 64 MiB instead of 128 KiB: with the
	 * default, the worker and connection threads' arenas gave their top back to the kernel
	 * (madvise) and faulted it in again on almost every request that built a large answer
	 * (a 64-entry preference view: 5-7 k -> 8 k req/s, docs/bench.md). An arena still holds
	 * no more than its own peak. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	/* Start-up order: signals, libcurl, jansson's seed, pool, then the daemon. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL); /* every thread inherits the mask */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	json_object_seed(0);
	if (db_pool_open(cfg.database_url, cfg.db_pool, cfg.db_acquire_timeout_ms, &pool) != RG_OK) {
		rc = 1;
		goto out;
	}
	if (cfg.read_database_url[0] &&
	    db_standbys_open(cfg.read_database_url, cfg.database_url, cfg.read_db_pool,
			     cfg.db_acquire_timeout_ms, cfg.read_max_lag_ms, &standbys) != RG_OK) {
		log_error(NULL, "RECALLGATE_READ_DATABASE_URL names more than %d hosts, or the "
			  "standbys' pools could not be made", DB_STANDBYS_MAX);
		rc = 1;
		goto out;
	}
	route_names = calloc(h_routes_count, sizeof *route_names);
	if (route_names == NULL) {
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < h_routes_count; i++)
		route_names[i] = h_routes[i].path;
	metrics_init(route_names, h_routes_count, pool, standbys);
	auth_init();
	oauth_init(&cfg);
	if (!h_oauth_configure(cfg.oauth_issuer, cfg.oauth_resource)) {
		log_error(NULL, "out of memory for the OAuth metadata");
		rc = 1;
		goto out;
	}
	if (!ratelimit_init(cfg.rate_limit, cfg.rate_burst) ||
	    !clients_init(cfg.trust_proxy ? cfg.max_client_connections : 0)) {
		log_error(NULL, "out of memory for the rate limit tables");
		rc = 1;
		goto out;
	}
	unsigned per_tenant = cfg.max_streams_per_tenant;
	if (per_tenant == 0)
		per_tenant = cfg.max_streams / 4 > 0 ? cfg.max_streams / 4 : 1;
	if (!events_start(cfg.database_url, cfg.max_streams, per_tenant)) {
		log_error(NULL, "cannot start the event hub");
		rc = 1;
		goto out;
	}
	if (!http_start(&cfg, pool, standbys, h_routes, h_routes_count, &srv)) {
		rc = 1;
		goto out;
	}
	char addr[sizeof cfg.host + 8];
	log_info(NULL, "listening on %s", cfg_addr_format(&cfg, addr, sizeof addr));
	sigwait(&stop, &sig);
	log_info(NULL, "signal %d: draining", sig);
	http_stop(srv, cfg.drain_timeout * 1000u);
	log_info(NULL, "stopped");
out:
	events_stop();
	clients_shutdown();
	ratelimit_shutdown();
	oauth_shutdown();
	bool released = h_oauth_configure(NULL, NULL); /* frees the metadata; cannot fail */
	(void)released;
	auth_shutdown();
	metrics_shutdown();
	free(route_names);
	db_standbys_close(standbys);
	db_pool_close(pool);
	curl_global_cleanup();
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "serve") == 0 && argc == 2)
		return cmd_serve();
	if (strcmp(argv[1], "migrate") == 0 && argc == 2)
		return cmd_migrate();
	if (strcmp(argv[1], "health") == 0 && argc == 2)
		return cmd_health();
	if ((strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	     strcmp(argv[1], "-h") == 0) && argc == 2)
		return cmd_help();
	if ((strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) && argc == 2) {
		printf("recallgate %s\n", RG_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "token") == 0 && argc >= 3 && strcmp(argv[2], "create") == 0)
		return cmd_token_create(argc - 3, argv + 3);
	fputs(usage, stderr);
	return EXIT_USAGE;
}
