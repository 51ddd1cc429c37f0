-- No request looks a disclosure up by its id (the lists filter by record, thread, token and
-- time), and each index entry is written for every delivered item: a context load of 8
-- items wrote 40 index entries. Without this one, pgbench of the load's recording went from
-- 780 to 907 statements/s (docs/disclosures.md).
DROP INDEX disclosures_by_id;
