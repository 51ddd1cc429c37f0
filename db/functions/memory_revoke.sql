-- memory_revoke: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0004, 0008, 0017.)

CREATE OR REPLACE FUNCTION public.memory_revoke(p_tenant text, p_actor text, p_request text, p_source text, p_expected bigint, p_reason text, OUT outcome text, OUT new_revision bigint, OUT revoked_ms bigint, OUT current_revision bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  r memory_records;
  t timestamptz;
BEGIN
  PERFORM memory_write_lock(p_tenant);
  -- The instant of the revocation is taken once the lock is held, rounded up to the
  -- millisecond: every context delivery that committed before it (memory_deliver holds the
  -- same lock, shared) has a disclosure `at` strictly earlier, every later one finds the
  -- source (and its derivatives) no longer retrievable.
  t := clock_timestamp();
  t := date_trunc('milliseconds', t) +
       CASE WHEN t = date_trunc('milliseconds', t) THEN interval '0' ELSE interval '1 millisecond' END;
  -- ... and it is the instant the eligibility history records for the source and every
  -- derivative recomputed with it (memory_history_instant).
  PERFORM set_config('recallgate.history_at', t::text, true);
  SELECT * INTO r FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = p_source AND record_kind = 'source' FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF r.revision <> p_expected THEN
    outcome := 'stale'; current_revision := r.revision; RETURN;
  END IF;
  IF r.revoked_at IS NOT NULL THEN outcome := 'already_revoked'; RETURN; END IF;
  UPDATE memory_records
     SET revoked_at = t,
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
  -- The lock is held until the clock has passed the instant (at most a millisecond more): a
  -- delivery that commits after the revocation has its `at` at or after it, so the readback's
  -- after_revocation would count it (memory_deliver's check is what leaves none).
  PERFORM pg_sleep(extract(epoch FROM t - clock_timestamp()))
    WHERE clock_timestamp() < t;
  outcome := 'ok';
END $function$;
