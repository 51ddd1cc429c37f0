/* The per-client limit behind a gateway (RECALLGATE_TRUST_PROXY=1): there every connection is
 * the gateway's, so the limit counts the requests in flight per forwarded client (the
 * address the gateway appended to X-Forwarded-For) instead of connections per peer address.
 * Over it → 429 rate_limited with Retry-After: 1.
 *
 * Memory is fixed at init: CLIENTS_SETS sets of CLIENTS_WAYS counters, one mutex per set. A
 * client whose set has no free counter (more than CLIENTS_WAYS clients of one set with
 * requests in flight at once) is let through uncounted (clients_stats.untracked): the limit
 * fails open rather than refusing a client it cannot track. */
#ifndef RG_SERVER_CLIENTS_H
#define RG_SERVER_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define CLIENTS_SETS 256
#define CLIENTS_WAYS 16
#define CLIENTS_KEY_MAX 47 /* an IPv6 address with a zone fits */

/* What clients_leave needs to find the counter again. */
struct clients_ticket {
	bool counted;
	unsigned set, way;
};

struct clients_stats {
	unsigned long long refused;   /* requests answered 429 for it since init */
	unsigned long long untracked; /* requests let through without a free counter */
};

/* limit: requests in flight per client, 0 = off (clients_enter always admits). false when
 * the table cannot be allocated. */
bool clients_init(unsigned limit) RG_MUSTCHECK;
void clients_shutdown(void);

/* Counts one request of client (borrowed, cut at CLIENTS_KEY_MAX bytes). true: admitted,
 * *t says what to release. false: the client has `limit` requests in flight already;
 * nothing was counted. Thread-safe. */
bool clients_enter(const char *client, struct clients_ticket *t) RG_MUSTCHECK;
/* Releases what clients_enter counted (a zeroed ticket is fine). */
void clients_leave(const struct clients_ticket *t);

/* The forwarded client of an X-Forwarded-For value: its last entry (the address the trusted
 * gateway appended), trimmed, into out[size]; false when there is none. */
bool clients_forwarded(const char *xff, char *out, size_t size);

void clients_get_stats(struct clients_stats *out);

#endif
