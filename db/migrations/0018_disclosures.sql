-- The disclosure ledger (openapi/openapi.yaml, "Disclosures"; docs/disclosures.md): one row
-- per record whose content left the service, written in the statement that also stores the
-- context load's receipt (db/functions/memory_deliver.sql), so both commit before the answer
-- is sent. Rows hold ids, a revision and a hash: never content, a query or a label. Like the
-- audit log the table refuses UPDATE, DELETE and TRUNCATE (audit_log_refuse names the table).
CREATE TABLE disclosures (
  tenant_id      text NOT NULL REFERENCES tenants,
  seq            bigint GENERATED ALWAYS AS IDENTITY,
  disclosure_id  text NOT NULL DEFAULT 'dsc_' || replace(gen_random_uuid()::text, '-', ''),
  at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  record_id      text NOT NULL,
  record_kind    text NOT NULL CHECK (record_kind IN ('source', 'derivative')),
  revision       bigint NOT NULL,
  delivered_hash text NOT NULL,
  token_id       text NOT NULL,
  thread_id      text,
  surface        text NOT NULL CHECK (surface IN ('context', 'content')),
  via            text NOT NULL CHECK (via IN ('rest', 'mcp')),
  receipt_id     text,
  request_id     text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
-- Newest first by seq, within each filter a list can take.
CREATE INDEX disclosures_by_record ON disclosures (tenant_id, record_id, seq);
CREATE INDEX disclosures_by_thread ON disclosures (tenant_id, thread_id, seq)
  WHERE thread_id IS NOT NULL;
CREATE INDEX disclosures_by_token ON disclosures (tenant_id, token_id, seq);
CREATE UNIQUE INDEX disclosures_by_id ON disclosures (tenant_id, disclosure_id);

CREATE TRIGGER disclosures_no_update BEFORE UPDATE OR DELETE ON disclosures
  FOR EACH ROW EXECUTE FUNCTION audit_log_refuse();
CREATE TRIGGER disclosures_no_truncate BEFORE TRUNCATE ON disclosures
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse();

-- Load receipts are listed newest first, by thread: they gain the thread they were loaded
-- for, the token that loaded them and a position. Receipts stored before this migration
-- have neither thread nor token.
ALTER TABLE load_receipts
  ADD COLUMN thread_id text,
  ADD COLUMN token_id text,
  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX load_receipts_by_seq ON load_receipts (tenant_id, seq);
CREATE INDEX load_receipts_by_thread ON load_receipts (tenant_id, thread_id, seq)
  WHERE thread_id IS NOT NULL;
