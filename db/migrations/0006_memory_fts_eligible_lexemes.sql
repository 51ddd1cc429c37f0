-- Both full-text indexes key lexemes alone: with tenant_id as a GIN key column every query
-- also walked the tenant's whole posting tree (3.7 ms of a 9.2 ms search at 1 M records,
-- 8.4 ms of a 20 ms explain); the tenant is checked on the few heap rows the lexemes select
-- (the index scan then takes about 1 ms).
DROP INDEX memory_records_fts_eligible;
CREATE INDEX memory_records_fts_eligible ON memory_records USING gin (tsv)
  WITH (fastupdate = off) WHERE eligible;
DROP INDEX memory_records_fts;
CREATE INDEX memory_records_fts ON memory_records USING gin (tsv) WITH (fastupdate = off);
