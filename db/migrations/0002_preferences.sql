-- Explicit agent preferences (API.md §5): a journal per tenant + goal + agent, its current
-- entries (one row per key) and its operations (the history, append-only).

CREATE TABLE preference_journals (
  tenant_id  text NOT NULL REFERENCES tenants,
  goal_id    text NOT NULL,
  agent_id   text NOT NULL,
  revision   bigint NOT NULL CHECK (revision >= 1),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, goal_id, agent_id)
);

-- One row per key: the latest operation's outcome. A retired key keeps the retirement's
-- source_ref and source_quote (they count against capacity and guard re-remembering).
CREATE TABLE preference_entries (
  tenant_id      text NOT NULL,
  goal_id        text NOT NULL,
  agent_id       text NOT NULL,
  key            text NOT NULL,
  state          text NOT NULL CHECK (state IN ('active', 'retired')),
  statement      text,
  source_ref     text NOT NULL,
  source_quote   text NOT NULL,
  expires_at     timestamptz,
  entry_revision bigint NOT NULL,
  operation_id   text NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, goal_id, agent_id, key),
  FOREIGN KEY (tenant_id, goal_id, agent_id) REFERENCES preference_journals
);

CREATE TABLE preference_operations (
  tenant_id                text NOT NULL,
  goal_id                  text NOT NULL,
  agent_id                 text NOT NULL,
  revision_after           bigint NOT NULL,
  operation_id             text NOT NULL,
  action                   text NOT NULL CHECK (action IN ('remember', 'retire')),
  key                      text NOT NULL,
  statement                text,
  source_ref               text NOT NULL,
  source_quote             text NOT NULL,
  expires_at               timestamptz,
  intent_hash              text NOT NULL,
  predecessor_operation_id text,
  revision_before          bigint,
  at                       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, goal_id, agent_id, revision_after),
  UNIQUE (tenant_id, goal_id, agent_id, operation_id),
  FOREIGN KEY (tenant_id, goal_id, agent_id) REFERENCES preference_journals
);

CREATE FUNCTION preference_operations_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'preference history is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER preference_operations_append_only BEFORE UPDATE OR DELETE ON preference_operations
  FOR EACH ROW EXECUTE FUNCTION preference_operations_refuse();
