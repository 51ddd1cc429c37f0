-- memory_admit: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0004.)

CREATE OR REPLACE FUNCTION public.memory_admit(p_tenant text, p_actor text, p_request text, p_id text, p_source_kind text, p_thread text, p_labels jsonb, p_content text, p_uri text, p_hash text, p_identity text, p_classification text, p_owner text, p_assent text, p_operation text, p_operation_hash text, OUT outcome text, OUT created_ms bigint, OUT replayed_id text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  a assents;
BEGIN
  -- A retried create answers the record it made, before any other rule: an assent revoked
  -- since does not turn the retry of a committed create into a refusal.
  IF p_operation IS NOT NULL THEN
    SELECT f.outcome, f.record_id INTO outcome, replayed_id
      FROM memory_operation_find(p_tenant, 'source', p_operation, p_operation_hash) f;
    IF outcome IS NOT NULL THEN RETURN; END IF;
  END IF;
  IF p_owner IS NOT NULL THEN
    SELECT * INTO a FROM assents WHERE tenant_id = p_tenant AND assent_id = p_assent FOR SHARE;
    IF NOT FOUND OR a.owner <> p_owner THEN outcome := 'assent_invalid'; RETURN; END IF;
    IF a.revoked_at IS NOT NULL THEN outcome := 'assent_revoked'; RETURN; END IF;
    IF a.expires_at <= now() THEN outcome := 'assent_expired'; RETURN; END IF;
    IF a.source_identity <> p_identity THEN outcome := 'assent_stale'; RETURN; END IF;
  END IF;
  INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, source_kind,
                              thread_id, labels, content, pointer_uri, content_hash,
                              source_identity, classification, foreign_owner, assent_id,
                              eligible, ineligible_reasons, assent_expires_at, created_at,
                              updated_at, operation_id, operation_hash)
  VALUES (p_tenant, p_id, 'source', 1, p_source_kind, p_thread, p_labels, p_content, p_uri,
          p_hash, p_identity, p_classification, p_owner, p_assent,
          p_classification = 'active', memory_source_reasons(false, false, p_classification = 'cold'),
          a.expires_at, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()),
          p_operation, p_operation_hash)
  ON CONFLICT (tenant_id, record_kind, operation_id) WHERE operation_id IS NOT NULL DO NOTHING
  RETURNING epoch_ms(created_at) INTO created_ms;
  IF NOT FOUND THEN -- a concurrent create of this operation committed first
    SELECT f.outcome, f.record_id INTO outcome, replayed_id
      FROM memory_operation_find(p_tenant, 'source', p_operation, p_operation_hash) f;
    RETURN;
  END IF;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.created', 'source', p_id, NULL, 1, p_request,
          jsonb_build_object('source_kind', p_source_kind, 'content_hash', p_hash,
                             'source_identity', p_identity, 'classification', p_classification,
                             'foreign', p_owner IS NOT NULL));
  outcome := 'ok';
END $function$;
