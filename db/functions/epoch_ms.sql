-- epoch_ms: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0001, 0013.)

CREATE OR REPLACE FUNCTION public.epoch_ms(t timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE STRICT
AS $function$ SELECT (extract(epoch FROM t) * 1000)::bigint $function$;
