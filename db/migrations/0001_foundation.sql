-- Foundation: tenants, tokens, thread memory mode and the append-only, hash-chained audit log.
-- Every table leads with tenant_id so the schema can be distributed by tenant.

CREATE FUNCTION epoch_ms(t timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (extract(epoch FROM t) * 1000)::bigint $$;

-- Compact JSON with keys sorted bytewise at every level: the canonical form the audit hash
-- is computed over, reproducible by a client from a listed record.
CREATE FUNCTION canonical_json(j jsonb) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  out text;
BEGIN
  CASE jsonb_typeof(j)
  WHEN 'object' THEN
    SELECT '{' || coalesce(string_agg(to_json(key)::text || ':' || canonical_json(value), ','
                                      ORDER BY key COLLATE "C"), '') || '}'
      INTO out FROM jsonb_each(j);
  WHEN 'array' THEN
    SELECT '[' || coalesce(string_agg(canonical_json(value), ',' ORDER BY n), '') || ']'
      INTO out FROM jsonb_array_elements(j) WITH ORDINALITY AS e(value, n);
  ELSE
    out := j::text;
  END CASE;
  RETURN out;
END $$;

CREATE TABLE tenants (
  tenant_id  text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tokens (
  tenant_id    text NOT NULL REFERENCES tenants,
  token_id     text NOT NULL,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  name         text NOT NULL,
  scopes       text[] NOT NULL,
  token_sha256 bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  deleted_at   timestamptz,
  PRIMARY KEY (tenant_id, token_id)
);
-- Verification looks a token up by the SHA-256 of its secret; the secret is never stored.
CREATE UNIQUE INDEX tokens_by_sha256 ON tokens (token_sha256);
CREATE INDEX tokens_by_seq ON tokens (tenant_id, seq) WHERE deleted_at IS NULL;

CREATE TABLE thread_memory_modes (
  tenant_id    text NOT NULL REFERENCES tenants,
  thread_id    text NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('enabled', 'disabled')),
  revision     bigint NOT NULL CHECK (revision >= 1),
  effective_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, thread_id)
);

CREATE TABLE audit_log (
  tenant_id       text NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  at              timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  actor_token_id  text,
  action          text NOT NULL,
  resource_type   text NOT NULL,
  resource_id     text NOT NULL,
  revision_before bigint,
  revision_after  bigint,
  request_id      text,
  details         jsonb NOT NULL DEFAULT '{}',
  prev_hash       text,
  hash            text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX audit_log_by_resource ON audit_log (tenant_id, resource_type, resource_id, seq);

-- The record as a client sees it, minus the chain fields.
CREATE FUNCTION audit_record_json(r audit_log) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'seq', r.seq,
    'at', to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'actor_token_id', r.actor_token_id,
    'action', r.action,
    'resource_type', r.resource_type,
    'resource_id', r.resource_id,
    'revision_before', r.revision_before,
    'revision_after', r.revision_after,
    'request_id', r.request_id,
    'details', r.details)
$$;

-- hash = "sha256:" + hex SHA-256 of (prev_hash or "") followed by the canonical JSON.
CREATE FUNCTION audit_hash(prev text, r audit_log) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT 'sha256:' || encode(sha256(convert_to(coalesce(prev, '') ||
                                               canonical_json(audit_record_json(r)), 'UTF8')), 'hex')
$$;

-- Links each record to the previous record of the same resource. The mutation that writes
-- the record already holds that resource's row lock, so no other writer can interleave.
CREATE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT a.hash INTO NEW.prev_hash FROM audit_log a
   WHERE a.tenant_id = NEW.tenant_id AND a.resource_type = NEW.resource_type
     AND a.resource_id = NEW.resource_id
   ORDER BY a.seq DESC LIMIT 1;
  NEW.hash := audit_hash(NEW.prev_hash, NEW);
  RETURN NEW;
END $$;
CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_chain();

CREATE FUNCTION audit_log_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_refuse();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse();
