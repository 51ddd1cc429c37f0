-- assent_revoke: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0004, 0008.)

CREATE OR REPLACE FUNCTION public.assent_revoke(p_tenant text, p_actor text, p_request text, p_assent text, p_expected bigint, p_owner text, OUT outcome text, OUT new_revision bigint, OUT revoked_ms bigint, OUT current_revision bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  a assents;
  roots text[];
BEGIN
  PERFORM memory_write_lock(p_tenant);
  SELECT * INTO a FROM assents WHERE tenant_id = p_tenant AND assent_id = p_assent FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF p_owner IS NOT NULL AND a.owner <> p_owner THEN outcome := 'forbidden'; RETURN; END IF;
  IF a.revision <> p_expected THEN
    outcome := 'stale'; current_revision := a.revision; RETURN;
  END IF;
  IF a.revoked_at IS NOT NULL THEN outcome := 'already_revoked'; RETURN; END IF;
  UPDATE assents SET revoked_at = date_trunc('milliseconds', now()), revision = revision + 1
   WHERE tenant_id = p_tenant AND assent_id = p_assent
   RETURNING revision, epoch_ms(revoked_at) INTO new_revision, revoked_ms;
  WITH s AS (
    UPDATE memory_records
       SET ineligible_reasons = memory_source_reasons(revoked_at IS NOT NULL, true,
                                                      classification = 'cold'),
           eligible = false
     WHERE tenant_id = p_tenant AND assent_id = p_assent AND record_kind = 'source'
     RETURNING record_id)
  SELECT array_agg(record_id) INTO roots FROM s;
  IF roots IS NOT NULL THEN
    PERFORM memory_refresh_descendants(p_tenant, roots);
  END IF;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'assent.revoked', 'assent', p_assent, p_expected, new_revision,
          p_request, '{}'::jsonb);
  outcome := 'ok';
END $function$;
