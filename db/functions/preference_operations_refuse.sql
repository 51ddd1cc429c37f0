-- preference_operations_refuse: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0002.)

CREATE OR REPLACE FUNCTION public.preference_operations_refuse()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'preference history is append-only' USING ERRCODE = 'insufficient_privilege';
END $function$;
