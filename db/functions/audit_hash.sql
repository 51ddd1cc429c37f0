-- audit_hash: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.)

CREATE OR REPLACE FUNCTION public.audit_hash(prev text, r audit_log)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT 'sha256:' || encode(sha256(convert_to(coalesce(prev, '') ||
                                               canonical_json(audit_record_json(r)), 'UTF8')), 'hex')
$function$;
