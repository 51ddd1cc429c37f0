-- memory_derive: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0004, 0008.)

CREATE OR REPLACE FUNCTION public.memory_derive(p_tenant text, p_actor text, p_request text, p_id text, p_kind text, p_upstreams text[], p_revisions bigint[], p_content text, p_content_hash text, p_operation text, p_operation_hash text, OUT outcome text, OUT created_ms bigint, OUT current_revision bigint, OUT eligible boolean, OUT replayed_id text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  up record;
  i integer;
  n_found integer;
  expires timestamptz;
BEGIN
  PERFORM memory_write_lock(p_tenant);
  -- A retried create answers the derivative it made (the lock orders concurrent retries),
  -- before the upstream checks: an upstream changed since does not refuse it.
  IF p_operation IS NOT NULL THEN
    SELECT f.outcome, f.record_id INTO outcome, replayed_id
      FROM memory_operation_find(p_tenant, 'derivative', p_operation, p_operation_hash) f;
    IF outcome IS NOT NULL THEN RETURN; END IF;
  END IF;
  SELECT count(*) INTO n_found FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams);
  IF n_found <> cardinality(p_upstreams) THEN outcome := 'not_found'; RETURN; END IF;
  FOR i IN 1 .. cardinality(p_upstreams) LOOP
    SELECT revision INTO up FROM memory_records
     WHERE tenant_id = p_tenant AND record_id = p_upstreams[i];
    IF up.revision <> p_revisions[i] THEN
      outcome := 'stale'; current_revision := up.revision; RETURN;
    END IF;
  END LOOP;
  IF EXISTS (SELECT 1 FROM memory_records
              WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams)
                AND NOT memory_retrievable(memory_records.eligible, assent_expires_at)) THEN
    outcome := 'upstream_ineligible'; RETURN;
  END IF;
  SELECT min(assent_expires_at) INTO expires FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams);
  INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, derivative_kind,
                              content, content_hash, eligible, assent_expires_at, created_at,
                              updated_at, operation_id, operation_hash)
  VALUES (p_tenant, p_id, 'derivative', 1, p_kind, p_content, p_content_hash, true, expires,
          date_trunc('milliseconds', now()), date_trunc('milliseconds', now()), p_operation,
          p_operation_hash)
  RETURNING epoch_ms(created_at) INTO created_ms;
  INSERT INTO memory_provenance (tenant_id, derivative_id, position, upstream_id, upstream_revision)
  SELECT p_tenant, p_id, u.pos, u.id, u.rev
    FROM unnest(p_upstreams, p_revisions) WITH ORDINALITY AS u(id, rev, pos);
  INSERT INTO memory_lineage (tenant_id, root_id, descendant_id)
  SELECT DISTINCT p_tenant, r.root, p_id FROM (
    SELECT m.record_id AS root FROM memory_records m
     WHERE m.tenant_id = p_tenant AND m.record_id = ANY(p_upstreams) AND m.record_kind = 'source'
    UNION
    SELECT l.root_id FROM memory_lineage l
     WHERE l.tenant_id = p_tenant AND l.descendant_id = ANY(p_upstreams)) r;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'derivative.created', 'derivative', p_id, NULL, 1, p_request,
          jsonb_build_object('kind', p_kind, 'content_hash', p_content_hash,
            'provenance', (SELECT jsonb_agg(jsonb_build_object('source_id', u.id, 'revision', u.rev)
                                            ORDER BY u.pos)
                             FROM unnest(p_upstreams, p_revisions) WITH ORDINALITY AS u(id, rev, pos))));
  outcome := 'ok';
  eligible := true;
END $function$;
