-- Idempotent creates (docs/memory-contract.md, "Idempotent create"): a source or derivative
-- create may carry an operation_id; the record keeps it with the SHA-256 of the request body
-- that created it, so a retry with the same body finds the record (no second record, no
-- second audit record) and one with another body is refused. Unique per tenant and record
-- kind; the partial index holds only the records created with an operation_id.
ALTER TABLE memory_records
  ADD COLUMN operation_id text,
  ADD COLUMN operation_hash text;
CREATE UNIQUE INDEX memory_records_by_operation
  ON memory_records (tenant_id, record_kind, operation_id) WHERE operation_id IS NOT NULL;
-- Both creates take the operation and answer the record a retry names: db/functions/
-- defines them with two more arguments, beside the old ones. Those stay for the instances of
-- the previous release that run during a rolling upgrade (they create without an operation
-- id, as before); a later migration drops them once no such instance can be running.
