-- memory_refresh_descendants: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0004, 0008.)

CREATE OR REPLACE FUNCTION public.memory_refresh_descendants(p_tenant text, roots text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  n integer;
BEGIN
  WITH x AS MATERIALIZED (
    SELECT l.descendant_id, bool_and(s.eligible) AS ok, min(s.assent_expires_at) AS expires
      FROM memory_lineage l
      JOIN memory_records s ON s.tenant_id = l.tenant_id AND s.record_id = l.root_id
     WHERE l.tenant_id = p_tenant
       AND l.descendant_id IN (SELECT descendant_id FROM memory_lineage
                                WHERE tenant_id = p_tenant AND root_id = ANY(roots))
     GROUP BY l.descendant_id)
  UPDATE memory_records d
     SET eligible = x.ok,
         ineligible_reasons = CASE WHEN x.ok THEN '{}'::text[] ELSE '{upstream_ineligible}'::text[] END,
         assent_expires_at = x.expires
    FROM x
   WHERE d.tenant_id = p_tenant AND d.record_id = x.descendant_id
     AND (d.eligible IS DISTINCT FROM x.ok OR d.assent_expires_at IS DISTINCT FROM x.expires);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $function$;
