-- memory_history_write: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs.
--
-- Called by the trigger on memory_records (migration 0019) for every inserted or updated
-- row: a new record is in force from its created_at; a change of what retrieval depends on
-- (revision, classification, eligibility, reasons, assent expiry) adds a row in force from
-- memory_history_instant(). Nothing else is stored: no content, no label.

CREATE OR REPLACE FUNCTION public.memory_history_write(p_insert boolean, o memory_records,
                                                       n memory_records)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT p_insert AND n.revision = o.revision
     AND n.classification IS NOT DISTINCT FROM o.classification
     AND n.eligible = o.eligible AND n.ineligible_reasons = o.ineligible_reasons
     AND n.assent_expires_at IS NOT DISTINCT FROM o.assent_expires_at THEN
    RETURN;
  END IF;
  INSERT INTO memory_record_history (tenant_id, record_id, valid_from, revision, classification,
                                     eligible, ineligible_reasons, assent_expires_at)
  VALUES (n.tenant_id, n.record_id,
          CASE WHEN p_insert THEN n.created_at ELSE memory_history_instant() END,
          n.revision, n.classification, n.eligible, n.ineligible_reasons, n.assent_expires_at);
END $function$;
