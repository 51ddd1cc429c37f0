-- Context envelopes (API.md §9): workspace snapshots (current file hashes, revisioned) and
-- submitted envelopes with their latest verdict.

CREATE TABLE workspaces (
  tenant_id    text NOT NULL REFERENCES tenants,
  workspace_id text NOT NULL,
  revision     bigint NOT NULL CHECK (revision >= 1),
  root_hash    text NOT NULL,
  git_head     text NOT NULL,
  files        jsonb NOT NULL, -- {path: content_hash}
  file_count   integer NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, workspace_id)
);

CREATE TABLE envelopes (
  tenant_id          text NOT NULL REFERENCES tenants,
  envelope_id        text NOT NULL,
  revision           bigint NOT NULL CHECK (revision >= 1),
  workspace_id       text,
  workspace_revision bigint,
  body               jsonb NOT NULL,
  verdict            text NOT NULL CHECK (verdict IN ('MATCH', 'DRIFT', 'UNVERIFIABLE')),
  failure_codes      jsonb NOT NULL,
  checks             jsonb NOT NULL,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, envelope_id)
);
