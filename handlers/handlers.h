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
/* GET /.well-known/oauth-protected-resource (RFC 9728); 404 while OAuth is off. */
void h_oauth_resource_metadata(struct h_ctx *ctx);
void h_ui_redirect(struct h_ctx *ctx);
void h_ui_index(struct h_ctx *ctx);
void h_ui_file(struct h_ctx *ctx);

/* MCP over Streamable HTTP (handlers/mcp.c) */
void h_mcp(struct h_ctx *ctx);
enum h_lane h_mcp_lane(const char *body, size_t len);

void h_token_create(struct h_ctx *ctx);
void h_token_list(struct h_ctx *ctx);
void h_token_delete(struct h_ctx *ctx);

extern const struct h_read h_memory_mode_read;
void h_memory_mode_put(struct h_ctx *ctx);

extern const struct h_read h_pref_view_read;
void h_pref_remember(struct h_ctx *ctx);
void h_pref_retire(struct h_ctx *ctx);
void h_pref_history(struct h_ctx *ctx);

extern const struct field_spec h_source_create_body[];
/* The values of the sources list's query (NULL-terminated), and of ?state= on the lists. */
extern const char *const h_source_kinds[];
extern const char *const h_source_classifications[];
extern const char *const h_source_list_orders[];
extern const char *const h_source_list_includes[];
extern const char *const h_mem_states[];
extern const struct field_spec h_classification_body[];
extern const struct field_spec h_revoke_body[];
extern const struct field_spec h_derivative_body[];
extern const struct field_spec h_search_body[];
extern const struct field_spec h_explain_body[];
extern const struct field_spec h_context_body[];
extern const struct field_spec h_assent_body[];
extern const struct field_spec h_assent_revoke_body[];
enum rg_problem h_source_create_check(const json_t *body, json_t *errors);
enum rg_problem h_derivative_check(const json_t *body, json_t *errors);
enum rg_problem h_assent_check(const json_t *body, json_t *errors);

void h_source_create(struct h_ctx *ctx);
void h_source_list(struct h_ctx *ctx);
void h_source_get(struct h_ctx *ctx);
void h_source_content(struct h_ctx *ctx);
void h_source_classify(struct h_ctx *ctx);
void h_source_revoke(struct h_ctx *ctx);
void h_source_readback(struct h_ctx *ctx);
void h_derivative_create(struct h_ctx *ctx);
void h_derivative_list(struct h_ctx *ctx);
void h_derivative_get(struct h_ctx *ctx);
void h_memory_search(struct h_ctx *ctx);
void h_memory_explain(struct h_ctx *ctx);
void h_memory_context(struct h_ctx *ctx);
void h_load_receipt_get(struct h_ctx *ctx);
void h_load_receipts_list(struct h_ctx *ctx);
void h_disclosures_list(struct h_ctx *ctx);
void h_source_disclosures(struct h_ctx *ctx);
void h_assent_grant(struct h_ctx *ctx);
void h_assent_revoke(struct h_ctx *ctx);
void h_assent_get(struct h_ctx *ctx);

extern const struct field_spec h_snapshot_body[];
extern const struct field_spec h_empty_body[];
extern const struct field_spec h_envelope_body[];
extern const struct field_spec h_relevance_body[];
enum rg_problem h_snapshot_check(const json_t *body, json_t *errors);
enum rg_problem h_relevance_body_check(const json_t *body, json_t *errors);
void h_snapshot_put(struct h_ctx *ctx);
void h_snapshot_get(struct h_ctx *ctx);
void h_envelope_create(struct h_ctx *ctx);
void h_envelope_get(struct h_ctx *ctx);
void h_envelope_verify(struct h_ctx *ctx);
void h_relevance_check(struct h_ctx *ctx);

void h_audit_list(struct h_ctx *ctx);
void h_events(struct h_ctx *ctx);
void h_audit_verify(struct h_ctx *ctx);

/* providers (handlers/providers.c, decision_context.c, semantic_prefs.c) */
extern const struct field_spec h_provider_create_body[];
extern const struct field_spec h_provider_patch_body[];
enum rg_problem h_provider_create_check(const json_t *body, json_t *errors);
void h_provider_create(struct h_ctx *ctx);
void h_provider_list(struct h_ctx *ctx);
void h_provider_get(struct h_ctx *ctx);
void h_provider_patch(struct h_ctx *ctx);
void h_provider_delete(struct h_ctx *ctx);
void h_provider_doctor(struct h_ctx *ctx);

extern const struct field_spec h_dc_retrieve_body[];
void h_dc_retrieve(struct h_ctx *ctx);
void h_dc_receipt_get(struct h_ctx *ctx);
void h_dc_sync(struct h_ctx *ctx);

extern const struct field_spec h_sp_config_body[];
extern const struct field_spec h_sp_recall_body[];
extern const struct field_spec h_sp_application_body[];
extern const struct field_spec h_sp_maintenance_body[];
void h_sp_config_get(struct h_ctx *ctx);
void h_sp_config_put(struct h_ctx *ctx);
void h_sp_recall(struct h_ctx *ctx);
void h_sp_application_receipt(struct h_ctx *ctx);
void h_sp_maintenance_receipt(struct h_ctx *ctx);

#endif
