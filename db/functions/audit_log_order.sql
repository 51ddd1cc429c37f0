-- audit_log_order: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0011, 0017.)

CREATE OR REPLACE FUNCTION public.audit_log_order()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- Assigns the transaction's id if it had none, before the seq is drawn (the events
  -- horizon relies on it, docs/events.md); nothing stores it.
  PERFORM pg_current_xact_id();
  NEW.seq := nextval('audit_log_seq');
  RETURN NEW;
END $function$;
