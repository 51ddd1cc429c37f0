-- memory_lock_key: the advisory lock key of a tenant's memory, the one home of its text.
-- `recallgate migrate` applies every file of db/functions/ after the migrations, each time
-- it runs. Writers hold it exclusively (memory_write_lock), a context delivery shares it
-- (memory_deliver): a delivery and a revocation never overlap.

CREATE OR REPLACE FUNCTION public.memory_lock_key(p_tenant text)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT hashtextextended('memory/' || p_tenant, 7411003) $function$;
