-- audit_log_refuse: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.) The audit log and the disclosure ledger
-- (migration 0018) both refuse changes through it.

CREATE OR REPLACE FUNCTION public.audit_log_refuse()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $function$;
