-- The disclosure ledger's two homes (disclosures, load_receipts) stop checking their tenant
-- against tenants. Every row's tenant is the authenticated token's, and tokens reference
-- tenants; no tenant is ever deleted and both tables refuse UPDATE and DELETE, so the check
-- guarded nothing a request can reach. It cost a row lock on the tenant (FOR KEY SHARE) per
-- row: a third of a batch of content-read disclosures' execution, and a MultiXact whenever
-- concurrent deliveries of one tenant commit together (docs/disclosures.md).
ALTER TABLE disclosures DROP CONSTRAINT disclosures_tenant_id_fkey;
ALTER TABLE load_receipts DROP CONSTRAINT load_receipts_tenant_id_fkey;
