-- memory_deliver: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs.
--
-- Records a context load (POST /v1/memory/context, the memory_context tool): its receipt and
-- one disclosure per delivered record, in one statement that commits before the answer is
-- sent. The tenant's memory lock is held shared (memory_lock_key), so no revocation, cold
-- classification or assent revocation runs meanwhile; each record is then checked again with
-- a fresh snapshot (plpgsql takes one per statement): still retrievable, at the revision that
-- was matched. When one is not, nothing is recorded and the ids that failed are returned:
-- the caller matches again. An empty answer means recorded.

CREATE OR REPLACE FUNCTION public.memory_deliver(p_tenant text, p_token text, p_request text,
                                                 p_thread text, p_via text, p_receipt_id text,
                                                 p_receipt text, p_ids text[],
                                                 p_revisions bigint[], p_hashes text[])
 RETURNS TABLE(record_id text)
 LANGUAGE plpgsql
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
  INSERT INTO load_receipts (tenant_id, receipt_id, body, thread_id, token_id)
  VALUES (p_tenant, p_receipt_id, p_receipt, p_thread, p_token);
  INSERT INTO disclosures (tenant_id, record_id, record_kind, revision, delivered_hash,
                           token_id, thread_id, surface, via, receipt_id, request_id)
  SELECT p_tenant, i.id, r.record_kind, i.rev, i.hash, p_token, p_thread, 'context', p_via,
         p_receipt_id, p_request
    FROM unnest(p_ids, p_revisions, p_hashes) WITH ORDINALITY AS i(id, rev, hash, n)
    JOIN memory_records r ON r.tenant_id = p_tenant AND r.record_id = i.id
   ORDER BY i.n;
END $function$;
