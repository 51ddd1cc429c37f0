-- memory_write_lock: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0008.)

CREATE OR REPLACE FUNCTION public.memory_write_lock(p_tenant text)
 RETURNS void
 LANGUAGE sql
AS $function$
  SELECT pg_advisory_xact_lock(memory_lock_key(p_tenant))
$function$;
