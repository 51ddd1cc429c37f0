-- Audit chains no longer rely on the caller's row lock: the trigger serialises the records
-- of one resource with a transaction-scoped advisory lock and numbers them (chain_pos).
-- seq is drawn before the trigger runs, so two writers of one resource could otherwise link
-- their records in the opposite order of their seq; verification follows chain_pos.

ALTER TABLE audit_log ADD COLUMN chain_pos bigint;

ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update;
UPDATE audit_log a SET chain_pos = r.pos
  FROM (SELECT tenant_id, seq, row_number() OVER (
          PARTITION BY tenant_id, resource_type, resource_id ORDER BY seq) AS pos
        FROM audit_log) r
 WHERE a.tenant_id = r.tenant_id AND a.seq = r.seq;
ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update;

ALTER TABLE audit_log ALTER COLUMN chain_pos SET NOT NULL;
CREATE UNIQUE INDEX audit_log_by_chain ON audit_log (tenant_id, resource_type, resource_id, chain_pos);

CREATE OR REPLACE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev_pos bigint;
BEGIN
  -- Held to the end of the writer's transaction: the next writer of this resource reads
  -- this record (a fresh snapshot per statement in READ COMMITTED) once it has committed.
  PERFORM pg_advisory_xact_lock(hashtextextended(
    NEW.tenant_id || '/' || NEW.resource_type || '/' || NEW.resource_id, 7411002));
  SELECT a.hash, a.chain_pos INTO NEW.prev_hash, prev_pos FROM audit_log a
   WHERE a.tenant_id = NEW.tenant_id AND a.resource_type = NEW.resource_type
     AND a.resource_id = NEW.resource_id
   ORDER BY a.chain_pos DESC LIMIT 1;
  NEW.chain_pos := coalesce(prev_pos, 0) + 1;
  NEW.hash := audit_hash(NEW.prev_hash, NEW);
  RETURN NEW;
END $$;
