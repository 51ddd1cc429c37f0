-- Synthetic memory for scripts/bench: :n sources for tenant :tenant (80 % active, 20 % cold),
-- a summary derivative for every 10th source, and one "hub" source with 100 derivatives
-- (for the classification-change measurement). Words come from a fixed vocabulary so that
-- a two-word query matches about n / 2500 records.
-- usage: psql -v n=10000 -v tenant=bench -f memory_seed.sql
\set ON_ERROR_STOP on
BEGIN;
CREATE TEMP TABLE vocab AS
SELECT ARRAY['alpha','bravo','charlie','delta','echo','foxtrot','golf','hotel','india','juliet',
             'kilo','lima','mike','november','oscar','papa','quebec','romeo','sierra','tango',
             'uniform','victor','whiskey','xray','yankee','zulu','amber','basalt','cobalt',
             'dune','ember','fjord','glacier','harbor','island','jungle','kelp','lagoon',
             'meadow','nebula','orchard','prairie','quartz','reef','savanna','tundra','upland',
             'valley','willow','zephyr'] AS w;

INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, source_kind, content,
                            content_hash, source_identity, classification, eligible,
                            ineligible_reasons, created_at, updated_at)
SELECT :'tenant', 'src_' || lpad(to_hex(i), 32, '0'), 'source', 1, 'note', c,
       'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'),
       CASE WHEN i % 5 = 0 THEN 'cold' ELSE 'active' END, i % 5 <> 0,
       CASE WHEN i % 5 = 0 THEN '{classification_cold}'::text[] ELSE '{}'::text[] END,
       now(), now()
  FROM generate_series(1, :n) AS i, vocab,
       LATERAL (SELECT format('Memory note %s: the team agreed that %s %s should follow %s %s before release.',
                              i, w[1 + i % 50], w[1 + (i / 50) % 50], w[1 + (i * 7) % 50],
                              w[1 + (i * 13) % 50]) AS c) t;

INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, derivative_kind, content,
                            content_hash, eligible, ineligible_reasons, created_at, updated_at)
SELECT s.tenant_id, 'drv_' || substr(s.record_id, 5), 'derivative', 1, 'summary',
       'Summary: ' || s.content, 'sha256:' || encode(sha256(convert_to('Summary: ' || s.content, 'UTF8')), 'hex'),
       s.eligible, CASE WHEN s.eligible THEN '{}'::text[] ELSE '{upstream_ineligible}'::text[] END,
       now(), now()
  FROM memory_records s
 WHERE s.tenant_id = :'tenant' AND s.record_kind = 'source' AND s.seq % 10 = 0;
INSERT INTO memory_provenance (tenant_id, derivative_id, position, upstream_id, upstream_revision)
SELECT :'tenant', 'drv_' || substr(record_id, 5), 1, record_id, 1 FROM memory_records
 WHERE tenant_id = :'tenant' AND record_kind = 'source' AND seq % 10 = 0;
INSERT INTO memory_lineage (tenant_id, root_id, descendant_id)
SELECT :'tenant', record_id, 'drv_' || substr(record_id, 5) FROM memory_records
 WHERE tenant_id = :'tenant' AND record_kind = 'source' AND seq % 10 = 0;

-- The hub: one source, 100 derivatives.
INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, source_kind, content,
                            content_hash, source_identity, classification, eligible, created_at,
                            updated_at)
VALUES (:'tenant', 'src_hub', 'source', 1, 'document', 'Hub document for the bench.',
        'sha256:' || encode(sha256('Hub document for the bench.'), 'hex'),
        'sha256:' || encode(sha256('Hub document for the bench.'), 'hex'), 'active', true, now(), now());
INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, derivative_kind, content,
                            content_hash, eligible, created_at, updated_at)
SELECT :'tenant', 'drv_hub_' || k, 'derivative', 1, 'cache', 'Hub cache ' || k,
       'sha256:' || encode(sha256(convert_to('Hub cache ' || k, 'UTF8')), 'hex'), true, now(), now()
  FROM generate_series(1, 100) k;
INSERT INTO memory_provenance SELECT :'tenant', 'drv_hub_' || k, 1, 'src_hub', 1 FROM generate_series(1, 100) k;
INSERT INTO memory_lineage SELECT :'tenant', 'src_hub', 'drv_hub_' || k FROM generate_series(1, 100) k;
COMMIT;
VACUUM ANALYZE memory_records;
