-- thread_history_write: its current definition, the one home of its text. `recallgate
-- migrate` applies every file of db/functions/ after the migrations, each time it runs.
--
-- Called by the trigger on thread_memory_modes (migration 0019): each mode a thread is set
-- to, in force from the write's instant (memory_history_instant). plpgsql, not sql: a sql
-- function whose body is an INSERT cannot be inlined, and PostgreSQL 15 plans its body again
-- on every call; plpgsql keeps the plan for the session.

CREATE OR REPLACE FUNCTION public.thread_history_write(n thread_memory_modes)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO thread_mode_history (tenant_id, thread_id, valid_from, mode)
  VALUES (n.tenant_id, n.thread_id, memory_history_instant(), n.mode);
END $function$;
