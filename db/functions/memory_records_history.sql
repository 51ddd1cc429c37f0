-- memory_records_history: its current definition, the one home of its text. `recallgate
-- migrate` applies every file of db/functions/ after the migrations, each time it runs.
-- (Defined by migration 0019, which needs it for its trigger on memory_records.)
--
-- The trigger forwards each inserted or updated record to memory_history_write, where the
-- rule of what the eligibility history keeps has its text.

CREATE OR REPLACE FUNCTION public.memory_records_history()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM memory_history_write(TG_OP = 'INSERT', OLD, NEW);
  RETURN NULL;
END $function$;
