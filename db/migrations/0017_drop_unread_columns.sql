-- Two columns were written and never read: audit_log.xid (the BEFORE INSERT trigger stored
-- the writer's transaction id there; what the events horizon needs is that the id is
-- assigned before seq is drawn, not that it is kept) and memory_records.revoke_reason (the
-- reason code is in the source.revoked audit record's details, where readers find it). The
-- two functions that wrote them change in the same transaction, so that no write of a
-- running instance meets a missing column; db/functions holds their texts from now on.
CREATE OR REPLACE FUNCTION public.audit_log_order()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- Assigns the transaction's id if it had none, before the seq is drawn (the events
  -- horizon relies on it, docs/events.md); nothing stores it.
  PERFORM pg_current_xact_id();
  NEW.seq := nextval('audit_log_seq');
  RETURN NEW;
END $function$;

CREATE OR REPLACE FUNCTION public.memory_revoke(p_tenant text, p_actor text, p_request text, p_source text, p_expected bigint, p_reason text, OUT outcome text, OUT new_revision bigint, OUT revoked_ms bigint, OUT current_revision bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  r memory_records;
BEGIN
  PERFORM memory_write_lock(p_tenant);
  SELECT * INTO r FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = p_source AND record_kind = 'source' FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF r.revision <> p_expected THEN
    outcome := 'stale'; current_revision := r.revision; RETURN;
  END IF;
  IF r.revoked_at IS NOT NULL THEN outcome := 'already_revoked'; RETURN; END IF;
  UPDATE memory_records
     SET revoked_at = date_trunc('milliseconds', now()),
         revision = revision + 1, updated_at = date_trunc('milliseconds', now()),
         eligible = false,
         ineligible_reasons = memory_source_reasons(true,
             'assent_revoked' = ANY(r.ineligible_reasons), r.classification = 'cold')
   WHERE tenant_id = p_tenant AND record_id = p_source
   RETURNING revision, epoch_ms(revoked_at) INTO new_revision, revoked_ms;
  PERFORM memory_refresh_descendants(p_tenant, ARRAY[p_source]);
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.revoked', 'source', p_source, p_expected, new_revision,
          p_request, jsonb_build_object('reason_code', p_reason));
  outcome := 'ok';
END $function$;

ALTER TABLE audit_log DROP COLUMN xid;
ALTER TABLE memory_records DROP COLUMN revoke_reason;
