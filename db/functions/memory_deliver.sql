-- memory_deliver: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs.
--
-- Records context loads (POST /v1/memory/context, the memory_context tool) of concurrent
-- requests, of any tenants, in one statement that commits before any of their answers is sent
-- (server/ledger.c): each load's receipt and, in the same row, what it delivered — the ids,
-- kinds, revisions and delivered hashes (the disclosures, migration 0021).
--
-- The per-load arrays (tenant .. receipt) have one element per load; the items' arrays one per
-- delivered record, p_load naming its load (1-based), in delivery order and each load's items
-- together (db_mem_deliver appends them load by load): a load's arrays are slices of them.
-- Unnesting the per-load arrays side by side and slicing the items cost 0.66 ms for a batch
-- of three loads of eight items, against 0.79 ms with a subscript per load and column and
-- the items regrouped with array_agg (pg_stat_statements, 8,000 batches each).
--
-- Each tenant's memory lock is held shared (memory_lock_key, taken in tenant order), so no
-- revocation, cold classification or assent revocation runs meanwhile; each item is then
-- checked again with a fresh snapshot (plpgsql takes one per statement): still retrievable, at
-- the revision that was matched. A load with an item that is not is not recorded: its failed
-- items are returned (load, record_id), and its caller matches again. The other loads are
-- recorded; an empty answer means all were.
--
-- plan_cache_mode: the arrays made PostgreSQL's plan cache prefer a custom plan (it knows
-- their length, so it costs a few rows less than the generic plan's guess of ten) and plan it
-- again on every call: 0.16 ms of planning for 0.06 ms of execution, measured with
-- pg_stat_statements (track = all, track_planning). Its one good plan looks every record up by
-- the primary key whatever the values, so the generic plan is kept.

DROP FUNCTION IF EXISTS public.memory_deliver(text, text, text, text, text, text, text, text[],
                                              bigint[], text[]);
DROP FUNCTION IF EXISTS public.memory_deliver(text, text, text, text, text, text, text, text[],
                                              text[], bigint[], text[]);
CREATE OR REPLACE FUNCTION public.memory_deliver(p_tenant text[], p_token text[],
                                                 p_request text[], p_thread text[],
                                                 p_via text[], p_receipt_id text[],
                                                 p_receipt text[], p_load int[], p_ids text[],
                                                 p_kinds text[], p_revisions bigint[],
                                                 p_hashes text[])
 RETURNS TABLE(load int, record_id text)
 LANGUAGE plpgsql
 SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
  stale_load int[];
  stale_id text[];
BEGIN
  PERFORM pg_advisory_xact_lock_shared(memory_lock_key(t.tenant))
     FROM (SELECT DISTINCT u AS tenant FROM unnest(p_tenant) AS u ORDER BY 1) AS t;
  SELECT array_agg(i.l), array_agg(i.id) INTO stale_load, stale_id
    FROM unnest(p_load, p_ids, p_revisions) AS i(l, id, rev)
   WHERE NOT EXISTS (
     SELECT 1 FROM memory_records r
      WHERE r.tenant_id = p_tenant[i.l] AND r.record_id = i.id AND r.revision = i.rev
        AND memory_retrievable(r.eligible, r.assent_expires_at));
  INSERT INTO load_receipts (tenant_id, receipt_id, body, thread_id, token_id, via, request_id,
                             record_ids, record_kinds, revisions, delivered_hashes)
  SELECT l.tenant, l.rid, l.body, l.thread, l.token, l.via, l.req, coalesce(g.ids, '{}'),
         coalesce(g.kinds, '{}'), coalesce(g.revs, '{}'), coalesce(g.hashes, '{}')
    FROM unnest(p_tenant, p_receipt_id, p_receipt, p_thread, p_token, p_via, p_request)
           WITH ORDINALITY AS l(tenant, rid, body, thread, token, via, req, n)
    LEFT JOIN (SELECT u.l, min(u.k)::int AS f, max(u.k)::int AS t
                 FROM unnest(p_load) WITH ORDINALITY AS u(l, k) GROUP BY u.l) AS r ON r.l = l.n
    LEFT JOIN LATERAL (SELECT p_ids[r.f:r.t] AS ids, p_kinds[r.f:r.t] AS kinds,
                              p_revisions[r.f:r.t] AS revs, p_hashes[r.f:r.t] AS hashes) AS g
           ON true
   WHERE stale_load IS NULL OR l.n <> ALL (stale_load)
   ORDER BY l.n;
  RETURN QUERY SELECT * FROM unnest(stale_load, stale_id);
END $function$;
