#include "db/providers.h"
#include "db/pg.h"

#include <stdio.h>

#include <libpq-fe.h>

static const struct db_col provider_cols[] = {
	DB_TEXT(struct db_provider, extension_id),
	DB_TEXT(struct db_provider, protocol),
	DB_TEXT(struct db_provider, endpoint_url),
	DB_TEXT(struct db_provider, doctor_url),
	DB_INT(struct db_provider, timeout_seconds),
	DB_TEXT(struct db_provider, permissions_json),
	DB_BOOL(struct db_provider, enabled),
	DB_INT(struct db_provider, revision),
	DB_INT_OR_NULL(struct db_provider, verified_revision, unverified),
	DB_INT(struct db_provider, created_ms),
	DB_INT(struct db_provider, updated_ms),
	DB_INT(struct db_provider, seq),
};
static const struct db_row_spec provider_row = DB_ROW_SPEC(struct db_provider, provider_cols);

static const struct db_col cand_cols[] = {
	DB_TEXT(struct db_provider_cand, extension_id),
	DB_TEXT(struct db_provider_cand, protocol),
	DB_BOOL(struct db_provider_cand, enabled),
	DB_BOOL(struct db_provider_cand, ready),
	DB_TEXT(struct db_provider_cand, endpoint_url),
	DB_INT(struct db_provider_cand, timeout_seconds),
	/* not "revision": db_sp_recall_read's row also holds the config's */
	DB_COL_AT("provider_revision", DB_KIND_INT, struct db_provider_cand, revision),
};
static const struct db_row_spec cand_row = DB_ROW_SPEC(struct db_provider_cand, cand_cols);

static const struct db_col receipt_cols[] = {DB_TEXT(struct db_dc_receipt, receipt_json)};
static const struct db_row_spec receipt_row = DB_ROW_SPEC(struct db_dc_receipt, receipt_cols);

static const struct db_col sp_config_cols[] = {
	DB_INT_OR_NULL(struct db_sp_config, revision, never),
	DB_TEXT(struct db_sp_config, config_json),
};
static const struct db_row_spec sp_config_row = DB_ROW_SPEC(struct db_sp_config, sp_config_cols);

/* What the delete and the doctor record answer. */
struct prov_written {
	int64_t revision;
};
static const struct db_col prov_written_cols[] = {DB_INT(struct prov_written, revision)};
static const struct db_row_spec prov_written_row =
	DB_ROW_SPEC(struct prov_written, prov_written_cols);

struct sp_written {
	int64_t revision;
};
static const struct db_col sp_written_cols[] = {DB_INT(struct sp_written, revision)};
static const struct db_row_spec sp_written_row = DB_ROW_SPEC(struct sp_written, sp_written_cols);

#define PROV_COLS                                                                          \
	"extension_id, protocol, endpoint_url, doctor_url, timeout_seconds,"                  \
	" permissions::text AS permissions_json, enabled, revision,"                          \
	" doctor_verified_revision AS verified_revision, epoch_ms(created_at) AS created_ms,"  \
	" epoch_ms(updated_at) AS updated_ms, seq"

#define AUDIT_INSERT                                                                        \
	" aud AS (INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type,"  \
	"  resource_id, revision_before, revision_after, request_id, details)"

static const struct db_stmt create_stmt = {
	"provider_create",
	"WITH p AS (INSERT INTO providers (tenant_id, extension_id, protocol, endpoint_url,"
	"  doctor_url, timeout_seconds, permissions, enabled, revision, created_at, updated_at)"
	"  VALUES ($1, $4, $5, $6, $7, $8::int, $9::jsonb, $10::boolean, 1,"
	"   date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))"
	"  ON CONFLICT (tenant_id, extension_id) DO NOTHING RETURNING *),"
	AUDIT_INSERT
	"  SELECT $1, $2, 'provider.registered', 'provider', p.extension_id, NULL, 1, $3,"
	"   jsonb_build_object('protocol', p.protocol, 'enabled', p.enabled,"
	"    'endpoint_sha256', encode(sha256(convert_to(p.endpoint_url, 'UTF8')), 'hex'))"
	"  FROM p)"
	" SELECT " PROV_COLS " FROM p",
	10, false, &provider_row};

static const struct db_stmt get_stmt = {
	"provider_get",
	"SELECT " PROV_COLS " FROM providers WHERE tenant_id = $1 AND extension_id = $2",
	2, false, &provider_row};

static const struct db_stmt list_stmt = {
	"provider_list",
	"SELECT " PROV_COLS " FROM providers WHERE tenant_id = $1 AND seq > $2::bigint"
	" ORDER BY seq LIMIT $3::int",
	3, false, &provider_row};

/* In SET and in the CASE the columns are the old row's values; the self-join `o` hands them
 * to the audit record too (a row that moved meanwhile fails the revision guard on recheck,
 * so o and p are always the same version before and after). */
static const struct db_stmt patch_stmt = {
	"provider_patch",
	"WITH p AS (UPDATE providers t SET"
	"  enabled = coalesce($6::boolean, t.enabled),"
	"  endpoint_url = coalesce($7, t.endpoint_url),"
	"  doctor_url = CASE WHEN $8::boolean THEN $9 ELSE t.doctor_url END,"
	"  timeout_seconds = coalesce($10::int, t.timeout_seconds),"
	"  doctor_verified_revision = CASE"
	"   WHEN ($7 IS NOT NULL AND $7 <> t.endpoint_url)"
	"     OR ($8::boolean AND $9 IS DISTINCT FROM t.doctor_url) THEN NULL"
	"   WHEN t.doctor_verified_revision = t.revision THEN t.revision + 1 ELSE NULL END,"
	"  revision = t.revision + 1,"
	"  updated_at = date_trunc('milliseconds', now())"
	"  FROM providers o"
	"  WHERE t.tenant_id = $1 AND t.extension_id = $4 AND t.revision = $5::bigint"
	"   AND o.tenant_id = t.tenant_id AND o.extension_id = t.extension_id"
	"  RETURNING t.*, o.endpoint_url AS old_endpoint_url, o.doctor_url AS old_doctor_url),"
	AUDIT_INSERT
	"  SELECT $1, $2, 'provider.updated', 'provider', p.extension_id, p.revision - 1,"
	"   p.revision, $3, jsonb_build_object('enabled', p.enabled,"
	"    'doctor_ready', p.doctor_verified_revision IS NOT DISTINCT FROM p.revision,"
	"    'endpoint_changed', p.endpoint_url <> p.old_endpoint_url,"
	"    'doctor_url_changed', p.doctor_url IS DISTINCT FROM p.old_doctor_url,"
	"    'endpoint_sha256', encode(sha256(convert_to(p.endpoint_url, 'UTF8')), 'hex'))"
	"  FROM p)"
	" SELECT " PROV_COLS " FROM p",
	10, false, &provider_row};

static const struct db_stmt delete_stmt = {
	"provider_delete",
	"WITH p AS (DELETE FROM providers WHERE tenant_id = $1 AND extension_id = $4"
	"  AND ($5::bigint = 0 OR revision = $5::bigint) RETURNING extension_id, revision),"
	AUDIT_INSERT
	"  SELECT $1, $2, 'provider.deleted', 'provider', p.extension_id, p.revision, NULL, $3,"
	"   '{}'::jsonb FROM p)"
	" SELECT revision FROM p",
	5, false, &prov_written_row};

static const struct db_stmt doctor_stmt = {
	"provider_doctor_record",
	"WITH p AS (UPDATE providers SET doctor_verified_revision ="
	"  CASE WHEN $6::boolean THEN revision ELSE NULL END"
	"  WHERE tenant_id = $1 AND extension_id = $4 AND revision = $5::bigint"
	"  RETURNING extension_id, revision),"
	AUDIT_INSERT
	"  SELECT $1, $2, 'provider.doctor_checked', 'provider', p.extension_id, p.revision,"
	"   p.revision, $3, jsonb_build_object('doctor_ready', $6::boolean, 'reason_code', $7::text)"
	"  FROM p)"
	" SELECT revision FROM p",
	7, false, &prov_written_row};

#define CAND_COLS                                                                          \
	"p.extension_id, p.protocol, p.enabled,"                                              \
	" p.doctor_verified_revision IS NOT DISTINCT FROM p.revision AS ready, p.endpoint_url," \
	" p.timeout_seconds, p.revision AS provider_revision"

/* Two statements, so that the common one has no OR: with `OR p.extension_id = $3` PostgreSQL
 * found a plan for the parameters (NULL drops the branch) cheaper than its generic plan and
 * planned the statement again on every retrieve (56 us of a 16 us execution; migration 0024
 * is the other half). */
static const struct db_stmt cand_stmt = {
	"provider_candidates",
	"SELECT " CAND_COLS " FROM providers p"
	" WHERE p.tenant_id = $1 AND p.protocol = $2 ORDER BY p.seq",
	2, DB_PIPEABLE, &cand_row};

static const struct db_stmt cand_named_stmt = {
	"provider_candidates_named",
	"SELECT " CAND_COLS " FROM providers p"
	" WHERE p.tenant_id = $1 AND (p.protocol = $2 OR p.extension_id = $3) ORDER BY p.seq",
	3, DB_PIPEABLE, &cand_row};

static const struct db_stmt receipt_put_stmt = {
	"dc_receipt_put",
	"INSERT INTO decision_context_receipts (tenant_id, receipt_id, receipt)"
	" VALUES ($1, $2, $3::json)",
	3, false, NULL};

static const struct db_stmt receipt_get_stmt = {
	"dc_receipt_get",
	"SELECT receipt::text AS receipt_json FROM decision_context_receipts"
	" WHERE tenant_id = $1 AND receipt_id = $2",
	2, false, &receipt_row};

static const struct db_stmt sp_get_stmt = {
	"sp_config_get",
	"SELECT revision, config::text AS config_json FROM semantic_preference_configs"
	" WHERE tenant_id = $1",
	1, false, &sp_config_row};

/* Expected 0 inserts (a concurrent first write loses on the key); later writes update
 * under the revision guard. */
static const struct db_stmt sp_put_stmt = {
	"sp_config_put",
	"WITH ins AS (INSERT INTO semantic_preference_configs (tenant_id, revision, config,"
	"  updated_at) SELECT $1, 1, $5::jsonb, now() WHERE $4::bigint = 0"
	"  ON CONFLICT (tenant_id) DO NOTHING RETURNING revision),"
	" upd AS (UPDATE semantic_preference_configs SET revision = revision + 1,"
	"  config = $5::jsonb, updated_at = now()"
	"  WHERE tenant_id = $1 AND revision = $4::bigint AND $4::bigint > 0 RETURNING revision),"
	" done AS (SELECT revision FROM ins UNION ALL SELECT revision FROM upd),"
	AUDIT_INSERT
	"  SELECT $1, $2, 'semantic_preference_config.updated', 'semantic_preference_config',"
	"   'config', nullif(done.revision - 1, 0), done.revision, $3,"
	"   jsonb_build_object('config_sha256', encode(sha256(convert_to($5::jsonb::text, 'UTF8')), 'hex'),"
	"    'surface_count', (SELECT count(*) FROM jsonb_object_keys($5::jsonb -> 'surfaces')))"
	"  FROM done)"
	" SELECT revision FROM done",
	5, false, &sp_written_row};

static const struct db_stmt sp_recall_stmt = {
	"sp_recall_read",
	"SELECT c.revision, c.config::text AS config_json, " CAND_COLS
	" FROM (SELECT 1) one"
	" LEFT JOIN semantic_preference_configs c ON c.tenant_id = $1"
	" LEFT JOIN providers p ON p.tenant_id = $1"
	"  AND (p.protocol = 'semantic_preference_provider_v0'"
	"   OR p.extension_id = c.config -> 'provider' ->> 'extension_id')"
	" ORDER BY p.seq",
	1, false, NULL /* read with two specs: db_sp_recall_read */};

enum rg_status db_provider_create(struct db_conn *c, const struct db_actor *a,
				  const struct db_provider_new *p, struct db_rows *row,
				  struct db_error *err)
{
	char timeout[DB_INT_SIZE];
	const char *params[] = {p->extension_id, p->protocol, p->endpoint_url, p->doctor_url,
				db_int_param(timeout, p->timeout_seconds), p->permissions_json,
				p->enabled ? "t" : "f"};
	enum rg_status st = db_query_audited(c, &create_stmt, a, params, row, err);
	return st == RG_STALE ? RG_CONFLICT : st;
}

enum rg_status db_provider_get(struct db_conn *c, const char *tenant, const char *id,
			       struct db_rows *rows, struct db_error *err)
{
	const char *params[] = {tenant, id};
	return db_query(c, &get_stmt, params, rows, err);
}

enum rg_status db_provider_list(struct db_conn *c, const char *tenant, int64_t after,
				int limit, struct db_rows *rows, struct db_error *err)
{
	char a[DB_INT_SIZE], l[DB_INT_SIZE];
	const char *params[] = {tenant, db_int_param(a, after), db_page_limit_param(l, limit)};
	return db_query(c, &list_stmt, params, rows, err);
}

enum rg_status db_provider_patch(struct db_conn *c, const struct db_actor *a,
				 const struct db_provider_patch *p, struct db_rows *row,
				 struct db_error *err)
{
	char expected[DB_INT_SIZE], timeout[DB_INT_SIZE];
	db_int_param(timeout, p->timeout_seconds);
	const char *params[] = {
		p->extension_id,
		db_int_param(expected, p->expected_revision),
		p->enabled < 0 ? NULL : p->enabled ? "t" : "f",
		p->endpoint_url,
		p->set_doctor_url ? "t" : "f",
		p->doctor_url,
		p->timeout_seconds > 0 ? timeout : NULL,
	};
	return db_query_audited(c, &patch_stmt, a, params, row, err);
}

enum rg_status db_provider_delete(struct db_conn *c, const struct db_actor *a, const char *id,
				  int64_t expected_revision, struct db_error *err)
{
	char expected[DB_INT_SIZE];
	const char *params[] = {id, db_int_param(expected, expected_revision)};
	return db_query_audited(c, &delete_stmt, a, params, NULL, err);
}

enum rg_status db_provider_doctor_record(struct db_conn *c, const struct db_actor *a,
					 const char *id, int64_t revision, bool ready,
					 const char *reason_code, struct db_error *err)
{
	char rev[DB_INT_SIZE];
	const char *params[] = {id, db_int_param(rev, revision), ready ? "t" : "f", reason_code};
	return db_query_audited(c, &doctor_stmt, a, params, NULL, err);
}

enum rg_status db_provider_candidates(struct db_conn *c, const char *tenant,
				      const char *protocol, const char *explicit_id,
				      struct db_rows *rows, struct db_error *err)
{
	const char *params[] = {tenant, protocol, explicit_id};
	return db_query(c, explicit_id ? &cand_named_stmt : &cand_stmt, params, rows, err);
}

enum rg_status db_dc_receipt_put(struct db_conn *c, const char *tenant, const char *receipt_id,
				 const char *receipt_json, struct db_error *err)
{
	const char *params[] = {tenant, receipt_id, receipt_json};
	PGresult *res = NULL;
	enum rg_status st = db_exec(c, &receipt_put_stmt, params, &res, err);
	PQclear(res);
	return st;
}

enum rg_status db_dc_receipt_get(struct db_conn *c, const char *tenant, const char *receipt_id,
				 struct db_rows *rows, struct db_error *err)
{
	const char *params[] = {tenant, receipt_id};
	return db_query(c, &receipt_get_stmt, params, rows, err);
}

enum rg_status db_sp_config_get(struct db_conn *c, const char *tenant, struct db_rows *rows,
				struct db_error *err)
{
	const char *params[] = {tenant};
	return db_query(c, &sp_get_stmt, params, rows, err);
}

enum rg_status db_sp_config_put(struct db_conn *c, const struct db_actor *a, int64_t expected,
				const char *config_json, int64_t *revision,
				struct db_error *err)
{
	char exp[DB_INT_SIZE];
	const char *params[] = {db_int_param(exp, expected), config_json};
	struct db_rows rows;
	enum rg_status st = db_query_audited(c, &sp_put_stmt, a, params, &rows, err);
	if (st == RG_OK)
		*revision = ((const struct sp_written *)db_rows_at(&rows, 0))->revision;
	db_rows_free(&rows);
	return st;
}

/* One result read twice: its first row's config columns and every row's candidate. */
enum rg_status db_sp_recall_read(struct db_conn *c, const char *tenant, struct db_rows *config,
				 struct db_rows *cands, struct db_error *err)
{
	const char *params[] = {tenant};
	PGresult *res = NULL;
	*config = (struct db_rows){0};
	*cands = (struct db_rows){0};
	enum rg_status st = db_exec(c, &sp_recall_stmt, params, &res, err);
	if (st == RG_OK)
		st = db_rows_fill(res, &cand_row, cands, err);
	if (st == RG_OK)
		st = db_rows_fill(res, &sp_config_row, config, err);
	if (st == RG_OK && config->n == 0) {
		db_error_set(err, RG_ERROR, NULL, "sp_recall_read answered no row");
		st = RG_ERROR;
	}
	if (st != RG_OK) {
		db_rows_free(config);
		db_rows_free(cands);
	}
	PQclear(res);
	return st;
}
