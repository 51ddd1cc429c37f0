-- memory_admit: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0004.)

CREATE OR REPLACE FUNCTION public.memory_admit(p_tenant text, p_actor text, p_request text, p_id text, p_source_kind text, p_thread text, p_labels jsonb, p_content text, p_uri text, p_hash text, p_identity text, p_classification text, p_owner text, p_assent text, OUT outcome text, OUT created_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  a assents;
BEGIN
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
                              updated_at)
  VALUES (p_tenant, p_id, 'source', 1, p_source_kind, p_thread, p_labels, p_content, p_uri,
          p_hash, p_identity, p_classification, p_owner, p_assent,
          p_classification = 'active', memory_source_reasons(false, false, p_classification = 'cold'),
          a.expires_at, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING epoch_ms(created_at) INTO created_ms;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.created', 'source', p_id, NULL, 1, p_request,
          jsonb_build_object('source_kind', p_source_kind, 'content_hash', p_hash,
                             'source_identity', p_identity, 'classification', p_classification,
                             'foreign', p_owner IS NOT NULL));
  outcome := 'ok';
END $function$;
