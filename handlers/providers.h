/* What the provider-dispatching handlers share: resolving the provider of a call from the
 * candidate rows db/ read, and calling it with the answer parsed. */
#ifndef RG_HANDLERS_PROVIDERS_H
#define RG_HANDLERS_PROVIDERS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "core/ids.h"
#include "core/provider.h"
#include "db/providers.h"
#include "handlers/api.h"

/* The provider a call goes to (copied out of the rows, so the connection can go back). */
struct h_dispatch {
	const char *reason;             /* NULL when resolved, else provider_missing, ... */
	bool named;                     /* extension_id below names a provider (resolved, or
					 * the explicit one that is disabled or not ready) */
	char extension_id[RG_MAX_ID_BYTES + 1];
	char endpoint_url[RG_PROVIDER_URL_MAX + 1];
	int timeout_seconds;
	int64_t revision;
};

/* Resolves among the db_provider_cand rows (rows whose extension_id is NULL are skipped). */
void h_dispatch_resolve(const struct db_rows *cands, const char *protocol,
			const char *explicit_id, struct h_dispatch *out);

/* Calls the provider; on H_CALL_OK *answer is the strictly parsed body (new) or NULL when
 * it is not JSON. res->body is freed here. */
void h_dispatch_call(struct h_ctx *ctx, const struct h_call *call, struct h_call_result *res,
		     json_t **answer);

/* The metrics label of each transport outcome ("ok", "timeout", ...), by enum. */
extern const char *const h_call_outcome_labels[];

#endif
