-- A context load's disclosures move into its receipt's row (docs/disclosures.md, "What
-- recording costs"): one row per load with the delivered ids, kinds, revisions and hashes,
-- where migration 0018 wrote the receipt and one row per delivered item, each with its own
-- index entries (a load of 8 items: 9 rows and 45 index entries; pgbench of that recording
-- 0.8 k/s against 3.0 k/s for the one row). The disclosure lists read a load's items from its
-- row; content reads keep a row each in `disclosures`, as do the context rows written before.
--
-- Both tables draw their position from one sequence (the disclosures' identity), so the lists
-- have one order across them: `dseq` for a load, `seq` for a disclosure row.
ALTER TABLE load_receipts
  ADD COLUMN dseq bigint,
  ADD COLUMN at timestamptz,
  ADD COLUMN via text,
  ADD COLUMN request_id text,
  ADD COLUMN record_ids text[],
  ADD COLUMN record_kinds text[],
  ADD COLUMN revisions bigint[],
  ADD COLUMN delivered_hashes text[];
-- Receipts stored before keep their order, below every position drawn from now on.
SELECT setval('disclosures_seq_seq', greatest((SELECT coalesce(max(seq), 0) FROM disclosures),
                                              (SELECT coalesce(max(seq), 0) FROM load_receipts),
                                              1));
UPDATE load_receipts SET dseq = seq, at = created_at;
ALTER TABLE load_receipts
  ALTER COLUMN dseq SET DEFAULT nextval('disclosures_seq_seq'),
  ALTER COLUMN dseq SET NOT NULL,
  ALTER COLUMN at SET DEFAULT clock_timestamp(),
  ALTER COLUMN at SET NOT NULL,
  DROP COLUMN seq;
CREATE INDEX load_receipts_by_dseq ON load_receipts (tenant_id, dseq);
CREATE INDEX load_receipts_by_thread_dseq ON load_receipts (tenant_id, thread_id, dseq)
  WHERE thread_id IS NOT NULL;
CREATE INDEX load_receipts_by_token ON load_receipts (tenant_id, token_id, dseq)
  WHERE record_ids IS NOT NULL;
CREATE INDEX load_receipts_by_record ON load_receipts USING gin (record_ids);

-- A receipt is a disclosure record now: append-only like `disclosures` and the audit log.
CREATE TRIGGER load_receipts_no_update BEFORE UPDATE OR DELETE ON load_receipts
  FOR EACH ROW EXECUTE FUNCTION audit_log_refuse();
CREATE TRIGGER load_receipts_no_truncate BEFORE TRUNCATE ON load_receipts
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse();
