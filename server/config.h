/* Configuration from the environment: one table of {name, type, bounds, default}. */
#ifndef RG_SERVER_CONFIG_H
#define RG_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CFG_MAX_ORIGINS 16
#define CFG_URL_MAX 512

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct rg_config {
	char database_url[2048];
	char read_database_url[2048]; /* "" = no standbys */
	unsigned read_db_pool;        /* connections to each standby */
	unsigned read_max_lag_ms;
	char host[64];
	unsigned port;
	unsigned max_connections;
	unsigned db_pool;
	unsigned connection_timeout;
	unsigned connection_memory;
	unsigned drain_timeout;
	unsigned header_timeout;
	unsigned max_client_connections;
	unsigned max_streams;
	unsigned max_streams_per_tenant; /* 0 = a quarter of max_streams, at least 1 */
	unsigned max_provider_calls_per_tenant;
	unsigned max_ledger_waits_per_tenant;
	unsigned long max_body;
	unsigned db_acquire_timeout_ms;
	unsigned rate_limit; /* requests per second per token; 0 = off */
	unsigned rate_burst; /* 0 = rate_limit */
	enum log_level log_level;
	bool trust_proxy;
	size_t n_origins;
	char origins[CFG_MAX_ORIGINS][256];
	/* OAuth resource server (docs/mcp.md, "OAuth 2.1"): off while oauth_issuer is empty */
	char oauth_issuer[CFG_URL_MAX];
	char oauth_resource[CFG_URL_MAX]; /* the public URL of /mcp; required with the issuer */
	char oauth_tenant_claim[64];
	unsigned oauth_jwks_refetch; /* seconds between two fetches of the issuer's keys */
};

/* Reads the environment through getenv_fn (getenv in production, a table in tests).
 * need_database: DATABASE_URL is required (serve, migrate, token create).
 * false with one clear line in err when a value is missing or out of range. */
bool cfg_load(struct rg_config *cfg, const char *(*getenv_fn)(const char *), bool need_database,
	      char *err, size_t errlen);

/* RECALLGATE_ADDR's form of the listen address ("127.0.0.1:8080", "[::1]:8080") in buf, which
 * holds sizeof cfg->host + 8 bytes; returns buf. */
const char *cfg_addr_format(const struct rg_config *cfg, char *buf, size_t len);

/* Every variable of the table with its meaning and default, for `recallgate --help`. */
void cfg_print_help(FILE *out);

#endif
