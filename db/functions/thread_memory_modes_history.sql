-- thread_memory_modes_history: its current definition, the one home of its text. `recallgate
-- migrate` applies every file of db/functions/ after the migrations, each time it runs.
-- (Defined by migration 0019, which needs it for its trigger on thread_memory_modes.)
--
-- The trigger forwards each mode a thread is set to to thread_history_write.

CREATE OR REPLACE FUNCTION public.thread_memory_modes_history()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM thread_history_write(NEW);
  RETURN NULL;
END $function$;
