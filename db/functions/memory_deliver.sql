-- memory_deliver: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs.
--
-- Records a context load (POST /v1/memory/context, the memory_context tool): its receipt and,
-- in the same row, what it delivered — the ids, kinds, revisions and delivered hashes (the
-- disclosures, migration 0021) — in one statement that commits before the answer is sent.
-- The tenant's memory lock is held shared (memory_lock_key), so no revocation, cold
-- classification or assent revocation runs meanwhile; each record is then checked again with
-- a fresh snapshot (plpgsql takes one per statement): still retrievable, at the revision that
-- was matched. When one is not, nothing is recorded and the ids that failed are returned:
-- the caller matches again. An empty answer means recorded.
--
-- plan_cache_mode: the re-check's arrays made PostgreSQL's plan cache prefer a custom plan
-- (it knows their length, so it costs a few rows less than the generic plan's guess of ten)
-- and plan it again on every load: 0.16 ms of planning for 0.06 ms of execution, measured
-- with pg_stat_statements (track = all, track_planning). Its one good plan looks every
-- record up by the primary key whatever the values, so the generic plan is kept.

DROP FUNCTION IF EXISTS public.memory_deliver(text, text, text, text, text, text, text, text[],
                                              bigint[], text[]);
CREATE OR REPLACE FUNCTION public.memory_deliver(p_tenant text, p_token text, p_request text,
                                                 p_thread text, p_via text, p_receipt_id text,
                                                 p_receipt text, p_ids text[], p_kinds text[],
                                                 p_revisions bigint[], p_hashes text[])
 RETURNS TABLE(record_id text)
 LANGUAGE plpgsql
 SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(memory_lock_key(p_tenant));
  RETURN QUERY
    SELECT i.id FROM unnest(p_ids, p_revisions) AS i(id, rev)
     WHERE NOT EXISTS (
       SELECT 1 FROM memory_records r
        WHERE r.tenant_id = p_tenant AND r.record_id = i.id AND r.revision = i.rev
          AND memory_retrievable(r.eligible, r.assent_expires_at));
  IF FOUND THEN
    RETURN;
  END IF;
  INSERT INTO load_receipts (tenant_id, receipt_id, body, thread_id, token_id, via, request_id,
                             record_ids, record_kinds, revisions, delivered_hashes)
  VALUES (p_tenant, p_receipt_id, p_receipt, p_thread, p_token, p_via, p_request, p_ids,
          p_kinds, p_revisions, p_hashes);
END $function$;
