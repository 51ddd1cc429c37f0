-- Registered providers (API.md §6), stored decision-context receipts (§7) and the
-- per-tenant semantic-preference hook config (§8). Decisions: docs/providers-contract.md.

CREATE TABLE providers (
  tenant_id                text NOT NULL REFERENCES tenants,
  extension_id             text NOT NULL,
  seq                      bigserial NOT NULL,
  protocol                 text NOT NULL CHECK (protocol IN ('decision_context_advisory_provider_v0',
                                                             'semantic_preference_provider_v0')),
  endpoint_url             text NOT NULL,
  doctor_url               text,            -- NULL: endpoint_url + '/doctor'
  timeout_seconds          integer NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 120),
  permissions              jsonb NOT NULL,
  enabled                  boolean NOT NULL,
  revision                 bigint NOT NULL CHECK (revision >= 1),
  -- the revision the last passing doctor bound to; doctor_ready = (this = revision)
  doctor_verified_revision bigint,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, extension_id)
);
CREATE INDEX providers_by_seq ON providers (tenant_id, seq);
CREATE INDEX providers_by_protocol ON providers (tenant_id, protocol);

-- context_provider_retrieval_v0 receipts: public fields only (no query, scope or content).
-- json, not jsonb: kept byte for byte as answered (jsonb would print a score of 1e20 as a
-- 21-digit integer that no longer reads back as a number of the same kind).
CREATE TABLE decision_context_receipts (
  tenant_id  text NOT NULL REFERENCES tenants,
  receipt_id text NOT NULL,
  receipt    json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, receipt_id)
);

CREATE TABLE semantic_preference_configs (
  tenant_id  text PRIMARY KEY REFERENCES tenants,
  revision   bigint NOT NULL CHECK (revision >= 1),
  config     jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);
