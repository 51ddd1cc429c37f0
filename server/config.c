#include "server/config.h"

#include "db/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cfg_kind { CFG_UINT, CFG_ADDR, CFG_LEVEL, CFG_BOOL, CFG_ORIGINS, CFG_URL, CFG_ISSUER,
		CFG_RESOURCE, CFG_CLAIM };

static const struct cfg_entry {
	const char *env;
	enum cfg_kind kind;
	unsigned long min, max;
	const char *def;
	size_t offset;
	const char *help; /* one line for `recallgate --help` (a number's range is added) */
} entries[] = {
	/* sorted by name */
	{"DATABASE_URL", CFG_URL, 0, 0, NULL, offsetof(struct rg_config, database_url),
	 "PostgreSQL to use: a libpq URI or conninfo string (required by serve, migrate, token)"},
	{"RECALLGATE_ADDR", CFG_ADDR, 0, 0, "127.0.0.1:8080", 0,
	 "host:port to listen on; an IPv6 host in brackets, e.g. [::1]:8080 or [::]:8080"},
	{"RECALLGATE_CONNECTION_MEMORY", CFG_UINT, 4096, 1048576, "8192",
	 offsetof(struct rg_config, connection_memory),
	 "bytes of memory per client connection for its request line, headers and buffers"},
	{"RECALLGATE_CONNECTION_TIMEOUT", CFG_UINT, 1, 3600, "30",
	 offsetof(struct rg_config, connection_timeout),
	 "seconds an idle client connection is kept open"},
	{"RECALLGATE_CORS_ORIGINS", CFG_ORIGINS, 0, 0, "", 0,
	 "comma-separated browser origins allowed by CORS and by POST /mcp's Origin check "
	 "(empty: none)"},
	{"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS", CFG_UINT, 1, 60000, "2000",
	 offsetof(struct rg_config, db_acquire_timeout_ms),
	 "milliseconds a request waits for a database connection before 503"},
	{"RECALLGATE_DB_POOL", CFG_UINT, 1, 256, "8", offsetof(struct rg_config, db_pool),
	 "database connections per instance"},
	{"RECALLGATE_DRAIN_TIMEOUT", CFG_UINT, 1, 3600, "10",
	 offsetof(struct rg_config, drain_timeout),
	 "seconds a stopping server (SIGTERM) finishes received work before it answers 503"},
	{"RECALLGATE_HEADER_TIMEOUT", CFG_UINT, 1, 3600, "10",
	 offsetof(struct rg_config, header_timeout),
	 "seconds a request's head may take, from the accept or from a later request's line; "
	 "at most RECALLGATE_CONNECTION_TIMEOUT + this after the previous answer"},
	{"RECALLGATE_LOG_LEVEL", CFG_LEVEL, 0, 0, "info", 0,
	 "error, warn, info or debug (JSON lines on stderr)"},
	{"RECALLGATE_MAX_BODY", CFG_UINT, 1024, 67108864, "1048576",
	 offsetof(struct rg_config, max_body), "largest request body in bytes"},
	{"RECALLGATE_MAX_CLIENT_CONNECTIONS", CFG_UINT, 0, 65535, "256",
	 offsetof(struct rg_config, max_client_connections),
	 "connections open at once from one client address; with RECALLGATE_TRUST_PROXY=1, "
	 "requests in flight of one X-Forwarded-For client (429); 0: no limit"},
	{"RECALLGATE_MAX_CONNECTIONS", CFG_UINT, 1, 65535, "10000",
	 offsetof(struct rg_config, max_connections),
	 "client connections open at once, idle keep-alive ones included; an idle one costs "
	 "about RECALLGATE_CONNECTION_MEMORY + 1 KiB and no thread"},
	{"RECALLGATE_MAX_LEDGER_WAITS_PER_TENANT", CFG_UINT, 1, 1024, "512",
	 offsetof(struct rg_config, max_ledger_waits_per_tenant),
	 "requests of one tenant waiting on the ledger at once (content reads and context loads "
	 "that record their disclosures), over it 429 rate_limited; the instance serves 1024 "
	 "beside the provider calls"},
	{"RECALLGATE_MAX_PROVIDER_CALLS_PER_TENANT", CFG_UINT, 1, 1024, "512",
	 offsetof(struct rg_config, max_provider_calls_per_tenant),
	 "requests of one tenant waiting on providers at once (decision-context retrieve, "
	 "semantic recall, doctor, their MCP tools), over it 429 rate_limited; the instance "
	 "serves 1024"},
	{"RECALLGATE_MAX_STREAMS", CFG_UINT, 0, 65535, "1024",
	 offsetof(struct rg_config, max_streams),
	 "event streams (GET /v1/events) open at once, over it 503 too_many_streams; an idle one "
	 "holds no thread and no database connection"},
	{"RECALLGATE_MAX_STREAMS_PER_TENANT", CFG_UINT, 0, 65535, "0",
	 offsetof(struct rg_config, max_streams_per_tenant),
	 "event streams one tenant may hold open at once on this instance, over it 503 "
	 "too_many_streams; 0: a quarter of RECALLGATE_MAX_STREAMS, at least 1"},
	{"RECALLGATE_OAUTH_ISSUER", CFG_ISSUER, 0, 0, "", offsetof(struct rg_config, oauth_issuer),
	 "OAuth authorization server whose JWT access tokens are accepted beside recallgate's own "
	 "(an https URL; http only on a loopback host); empty: OAuth off"},
	{"RECALLGATE_OAUTH_JWKS_REFETCH", CFG_UINT, 1, 3600, "60",
	 offsetof(struct rg_config, oauth_jwks_refetch),
	 "seconds at least between two fetches of the issuer's signing keys (a token with an "
	 "unknown key id triggers one)"},
	{"RECALLGATE_OAUTH_RESOURCE", CFG_RESOURCE, 0, 0, "",
	 offsetof(struct rg_config, oauth_resource),
	 "the public URL of /mcp, the audience tokens must name (required with "
	 "RECALLGATE_OAUTH_ISSUER)"},
	{"RECALLGATE_OAUTH_TENANT_CLAIM", CFG_CLAIM, 0, 0, "tenant",
	 offsetof(struct rg_config, oauth_tenant_claim),
	 "the access token claim that names the caller's tenant"},
	{"RECALLGATE_RATE_BURST", CFG_UINT, 0, 1000000, "0", offsetof(struct rg_config, rate_burst),
	 "the most requests a token may make at once (its bucket); 0: the same as "
	 "RECALLGATE_RATE_LIMIT, one second's worth"},
	{"RECALLGATE_RATE_LIMIT", CFG_UINT, 0, 100000, "0", offsetof(struct rg_config, rate_limit),
	 "requests per second per bearer token, over it 429 rate_limited; 0: off"},
	{"RECALLGATE_READ_DATABASE_URL", CFG_URL, 0, 0, "",
	 offsetof(struct rg_config, read_database_url),
	 "hot standbys for reads (GETs, search, explain): a libpq URI or conninfo string, each "
	 "host of a multi-host one a standby; empty: every read goes to DATABASE_URL"},
	{"RECALLGATE_READ_DB_POOL", CFG_UINT, 1, 256, "8",
	 offsetof(struct rg_config, read_db_pool), "database connections per instance to each standby"},
	{"RECALLGATE_READ_MAX_LAG_MS", CFG_UINT, 1, 50000, "1000",
	 offsetof(struct rg_config, read_max_lag_ms),
	 "milliseconds a standby may trail the primary before its reads go to the primary"},
	{"RECALLGATE_TRUST_PROXY", CFG_BOOL, 0, 0, "0", 0,
	 "1: behind a gateway: the client is the last X-Forwarded-For entry (for the "
	 "per-client limit; it is never logged)"},
};

static bool parse_ulong(const char *s, unsigned long *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

/* host:port, or [ipv6]:port; the host is kept without brackets (getaddrinfo's form). */
static bool parse_addr(struct rg_config *cfg, const char *s)
{
	const char *colon = strrchr(s, ':'), *host = s, *host_end = colon;
	unsigned long port;
	if (colon == NULL || colon == s)
		return false;
	if (*s == '[') {
		host = s + 1;
		host_end = colon - 1;
		size_t inner = host_end > host ? (size_t)(host_end - host) : 0;
		if (inner == 0 || *host_end != ']' || memchr(host, ']', inner) || memchr(host, '[', inner))
			return false;
	} else if (memchr(s, ':', (size_t)(colon - s)) || memchr(s, '[', (size_t)(colon - s)) ||
		   memchr(s, ']', (size_t)(colon - s))) {
		return false; /* an IPv6 address needs its brackets */
	}
	size_t n = (size_t)(host_end - host);
	if (n >= sizeof cfg->host || !parse_ulong(colon + 1, &port) || port < 1 || port > 65535)
		return false;
	memcpy(cfg->host, host, n);
	cfg->host[n] = '\0';
	cfg->port = (unsigned)port;
	return true;
}

/* An origin is scheme://host[:port]: what a browser sends in Origin, no path. */
static bool origin_valid(const char *s, size_t n)
{
	size_t skip = strncmp(s, "https://", 8) == 0 ? 8 : strncmp(s, "http://", 7) == 0 ? 7 : 0;
	if (skip == 0 || n <= skip)
		return false;
	for (size_t i = skip; i < n; i++)
		if (s[i] == '/' || s[i] == ' ' || s[i] == '?' || s[i] == '#')
			return false;
	return true;
}

static bool parse_origins(struct rg_config *cfg, const char *s)
{
	cfg->n_origins = 0;
	if (*s == '\0')
		return true;
	for (;;) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		while (n > 0 && *s == ' ') {
			s++;
			n--;
		}
		while (n > 0 && s[n - 1] == ' ')
			n--;
		if (n == 0 || n >= sizeof cfg->origins[0] || cfg->n_origins == CFG_MAX_ORIGINS ||
		    !origin_valid(s, n))
			return false;
		memcpy(cfg->origins[cfg->n_origins], s, n);
		cfg->origins[cfg->n_origins++][n] = '\0';
		if (!end)
			return true;
		s = end + 1;
	}
}

/* An absolute http(s) URL without fragment, query or spaces; https unless loopback_http and
 * the host is a loopback literal or localhost (a local authorization server). */
static bool url_valid(const char *v, bool loopback_http)
{
	size_t n = strlen(v), skip = strncmp(v, "https://", 8) == 0 ? 8 : 0;
	if (skip == 0 && strncmp(v, "http://", 7) == 0) {
		static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
		for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++) {
			size_t h = strlen(loopback[i]);
			if (strncmp(v + 7, loopback[i], h) == 0 && strchr(":/", v[7 + h]))
				skip = 7;
		}
		if (!loopback_http)
			skip = 7;
	}
	if (skip == 0 || n <= skip || n >= CFG_URL_MAX || v[skip] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] == '#' || v[i] == '?' || v[i] == 0x7f)
			return false;
	return true;
}

static bool apply_text(struct rg_config *cfg, const struct cfg_entry *e, const char *v)
{
	char *dst = (char *)cfg + e->offset;
	switch (e->kind) {
	case CFG_ISSUER:
		/* the issuer is compared with iss byte for byte: no trailing slash to guess */
		if (*v != '\0' && (!url_valid(v, true) || v[strlen(v) - 1] == '/'))
			return false;
		break;
	case CFG_RESOURCE:
		if (*v != '\0' && !url_valid(v, false))
			return false;
		break;
	default: /* CFG_CLAIM */
		if (*v == '\0' || strlen(v) >= sizeof cfg->oauth_tenant_claim)
			return false;
		for (const char *c = v; *c; c++)
			if (*c <= ' ' || *c == '"' || *c == 0x7f)
				return false;
		break;
	}
	snprintf(dst, e->kind == CFG_CLAIM ? sizeof cfg->oauth_tenant_claim : CFG_URL_MAX, "%s", v);
	return true;
}

static bool apply(struct rg_config *cfg, const struct cfg_entry *e, const char *v)
{
	unsigned long u;
	char *base = (char *)cfg;
	switch (e->kind) {
	case CFG_URL: /* empty only where it has a default (an optional database) */
		if ((*v == '\0' && e->def == NULL) || strlen(v) >= sizeof cfg->database_url)
			return false;
		strcpy(base + e->offset, v);
		return true; /* libpq's own check runs in cfg_load, to say why */
	case CFG_UINT:
		if (!parse_ulong(v, &u) || u < e->min || u > e->max)
			return false;
		if (e->offset == offsetof(struct rg_config, max_body))
			cfg->max_body = u;
		else
			*(unsigned *)(void *)(base + e->offset) = (unsigned)u;
		return true;
	case CFG_ADDR:
		return parse_addr(cfg, v);
	case CFG_LEVEL: {
		static const char *const names[] = {"error", "warn", "info", "debug"};
		for (int i = 0; i < 4; i++)
			if (strcmp(v, names[i]) == 0) {
				cfg->log_level = (enum log_level)i;
				return true;
			}
		return false;
	}
	case CFG_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return false;
		cfg->trust_proxy = v[0] == '1';
		return true;
	case CFG_ORIGINS:
		return parse_origins(cfg, v);
	case CFG_ISSUER:
	case CFG_RESOURCE:
	case CFG_CLAIM:
		return apply_text(cfg, e, v);
	}
	return false;
}

static const char *expectation(const struct cfg_entry *e, char *buf, size_t len)
{
	switch (e->kind) {
	case CFG_UINT:
		snprintf(buf, len, "an integer from %lu to %lu", e->min, e->max);
		break;
	case CFG_ADDR:
		snprintf(buf, len, "host:port or [ipv6]:port with a port from 1 to 65535");
		break;
	case CFG_LEVEL:
		snprintf(buf, len, "one of error, warn, info, debug");
		break;
	case CFG_BOOL:
		snprintf(buf, len, "0 or 1");
		break;
	case CFG_ORIGINS:
		snprintf(buf, len, "a comma-separated list of http(s) origins");
		break;
	case CFG_URL:
		snprintf(buf, len, "a libpq connection URI or conninfo string");
		break;
	case CFG_ISSUER:
		snprintf(buf, len, "an https URL without a trailing slash (http on a loopback host)");
		break;
	case CFG_RESOURCE:
		snprintf(buf, len, "the http(s) URL of /mcp, without query or fragment");
		break;
	case CFG_CLAIM:
		snprintf(buf, len, "a claim name of 1 to 63 visible characters");
		break;
	}
	return buf;
}

bool cfg_load(struct rg_config *cfg, const char *(*getenv_fn)(const char *), bool need_database,
	      char *err, size_t errlen)
{
	char want[96], why[160];
	memset(cfg, 0, sizeof *cfg);
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		const struct cfg_entry *e = &entries[i];
		const char *v = getenv_fn(e->env);
		if (v == NULL || (*v == '\0' && e->kind != CFG_ORIGINS)) {
			if (e->def == NULL) {
				if (need_database) {
					snprintf(err, errlen, "recallgate: %s is not set (%s)", e->env,
						 expectation(e, want, sizeof want));
					return false;
				}
				continue;
			}
			v = e->def;
		}
		if (!apply(cfg, e, v)) {
			snprintf(err, errlen, "recallgate: %s is invalid: expected %s", e->env,
				 expectation(e, want, sizeof want));
			return false;
		}
		if (e->kind == CFG_URL && *v != '\0' && !db_conninfo_check(v, why, sizeof why)) {
			snprintf(err, errlen, "recallgate: %s is invalid: %s (expected %s)", e->env, why,
				 expectation(e, want, sizeof want));
			return false;
		}
	}
	if (cfg->oauth_issuer[0] && !cfg->oauth_resource[0]) {
		snprintf(err, errlen,
			 "recallgate: RECALLGATE_OAUTH_RESOURCE is not set (the public URL of /mcp, "
			 "required with RECALLGATE_OAUTH_ISSUER)");
		return false;
	}
	return true;
}

void cfg_print_help(FILE *out)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		const struct cfg_entry *e = &entries[i];
		if (e->def == NULL)
			fprintf(out, "  %s (no default)\n      %s\n", e->env, e->help);
		else if (e->kind == CFG_UINT)
			fprintf(out, "  %s=%s\n      %s (%lu..%lu)\n", e->env, e->def, e->help, e->min,
				e->max);
		else
			fprintf(out, "  %s=%s\n      %s\n", e->env, e->def, e->help);
	}
}

const char *cfg_addr_format(const struct rg_config *cfg, char *buf, size_t len)
{
	bool v6 = strchr(cfg->host, ':') != NULL;
	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", cfg->host, v6 ? "]" : "", cfg->port);
	return buf;
}
