-- memory_source_reasons: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0004.)

CREATE OR REPLACE FUNCTION public.memory_source_reasons(revoked boolean, assent_revoked boolean, cold boolean)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT array_remove(ARRAY[
    CASE WHEN revoked THEN 'revoked' END,
    CASE WHEN assent_revoked THEN 'assent_revoked' END,
    CASE WHEN cold THEN 'classification_cold' END], NULL)
$function$;
