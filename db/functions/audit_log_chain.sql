-- audit_log_chain: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0001, 0003.)

CREATE OR REPLACE FUNCTION public.audit_log_chain()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;
