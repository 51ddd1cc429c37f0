-- tokens_notify_deleted: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0011.)

CREATE OR REPLACE FUNCTION public.tokens_notify_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('recallgate_token',
                    encode(NEW.token_sha256, 'hex') || ' ' || NEW.tenant_id || ' ' || NEW.token_id);
  RETURN NULL;
END $function$;
