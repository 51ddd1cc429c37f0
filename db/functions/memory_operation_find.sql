-- memory_operation_find: the record an idempotent create's operation_id already made, and
-- whether this request repeats it ('replayed': the same body hash) or not
-- ('operation_conflict'); no row when the operation is new. The one home of that rule for
-- memory_admit and memory_derive (migration 0022).

CREATE OR REPLACE FUNCTION public.memory_operation_find(p_tenant text, p_kind text, p_operation text, p_hash text, OUT outcome text, OUT record_id text)
 RETURNS SETOF record
 LANGUAGE sql
 STABLE
AS $function$
  SELECT CASE WHEN m.operation_hash = p_hash THEN 'replayed' ELSE 'operation_conflict' END,
         m.record_id
    FROM memory_records m
   WHERE m.tenant_id = p_tenant AND m.record_kind = p_kind AND m.operation_id = p_operation
$function$;
