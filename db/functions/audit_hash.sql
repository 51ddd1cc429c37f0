-- audit_hash: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.)
--
-- The hash of an audit record chained to its predecessor's: sha256 of prev_hash and the
-- record's canonical JSON, written here directly in canonical_json's order (keys bytewise
-- sorted, no spaces), byte for byte as core_audit_hash (core/audit.c) writes it to verify the
-- chain. It replaced canonical_json(audit_record_json(r)): that function was declared
-- IMMUTABLE over to_char (STABLE), so PostgreSQL could not inline it and planned its body
-- again for every audit record written, and canonical_json walked the record's ten keys one
-- plpgsql call each. STABLE and one expression, this one is inlined into the trigger's plan.

DROP FUNCTION IF EXISTS public.audit_record_json(audit_log);
CREATE OR REPLACE FUNCTION public.audit_hash(prev text, r audit_log)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  SELECT 'sha256:' || encode(sha256(convert_to(
    coalesce(prev, '') ||
    '{"action":' || to_jsonb(r.action)::text ||
    ',"actor_token_id":' || coalesce(to_jsonb(r.actor_token_id)::text, 'null') ||
    ',"at":"' || to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' ||
    ',"details":' || canonical_json(r.details) ||
    ',"request_id":' || coalesce(to_jsonb(r.request_id)::text, 'null') ||
    ',"resource_id":' || to_jsonb(r.resource_id)::text ||
    ',"resource_type":' || to_jsonb(r.resource_type)::text ||
    ',"revision_after":' || coalesce(r.revision_after::text, 'null') ||
    ',"revision_before":' || coalesce(r.revision_before::text, 'null') ||
    ',"seq":' || r.seq::text || '}', 'UTF8')), 'hex')
$function$;
