-- audit_log_order: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0011.)

CREATE OR REPLACE FUNCTION public.audit_log_order()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  NEW.xid := pg_current_xact_id(); -- assigns the transaction's id if it had none
  NEW.seq := nextval('audit_log_seq');
  RETURN NEW;
END $function$;
