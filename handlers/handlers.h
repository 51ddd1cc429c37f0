/* Every handler of the route table. */
#ifndef RG_HANDLERS_HANDLERS_H
#define RG_HANDLERS_HANDLERS_H

#include "handlers/api.h"

extern const struct field_spec h_memory_mode_body[];
extern const struct field_spec h_token_create_body[];
extern const struct field_spec h_pref_remember_body[];
extern const struct field_spec h_pref_retire_body[];

void h_healthz(struct h_ctx *ctx);
void h_readyz(struct h_ctx *ctx);
void h_metrics(struct h_ctx *ctx);
void h_openapi(struct h_ctx *ctx);

void h_token_create(struct h_ctx *ctx);
void h_token_list(struct h_ctx *ctx);
void h_token_delete(struct h_ctx *ctx);

void h_memory_mode_get(struct h_ctx *ctx);
void h_memory_mode_put(struct h_ctx *ctx);

void h_pref_view(struct h_ctx *ctx);
void h_pref_remember(struct h_ctx *ctx);
void h_pref_retire(struct h_ctx *ctx);
void h_pref_history(struct h_ctx *ctx);

void h_audit_list(struct h_ctx *ctx);
void h_audit_verify(struct h_ctx *ctx);

#endif
