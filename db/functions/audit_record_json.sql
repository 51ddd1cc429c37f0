-- audit_record_json: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.)

CREATE OR REPLACE FUNCTION public.audit_record_json(r audit_log)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
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
$function$;
