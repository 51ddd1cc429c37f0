/* Per-key quotas: at most `limit` units held at once by one key (a tenant), exactly, so that
 * one tenant cannot take every slot of a shared pool (the event streams, docs/events.md). The
 * keys with units held are kept in a list under one mutex: a pool whose slots are taken
 * rarely (a stream's admission) pays a short scan, and memory follows the keys in use. */
#ifndef RG_SERVER_QUOTA_H
#define RG_SERVER_QUOTA_H

#include <stdbool.h>

#include "core/status.h"

struct quota;

/* A quota of limit units per key. *out is new: quota_free frees it. false when out of
 * memory. */
bool quota_new(unsigned limit, struct quota **out) RG_MUSTCHECK;
/* Takes one unit for key (borrowed). false when key holds `limit` units already, or when
 * there is no memory to count it (never admitted uncounted). Thread-safe. */
bool quota_take(struct quota *q, const char *key) RG_MUSTCHECK;
/* Gives back one unit that quota_take gave key. */
void quota_give(struct quota *q, const char *key);
/* Units key holds now. */
unsigned quota_held(struct quota *q, const char *key);
/* NULL is fine. */
void quota_free(struct quota *q);

#endif
