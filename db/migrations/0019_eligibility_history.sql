-- The eligibility history, for answers "as of" a past instant (openapi/openapi.yaml: `as_of`
-- on explain and on GET /v1/memory/sources/{id}; docs/memory-contract.md): every state a
-- record has been in — revision, classification, eligibility and its reasons, assent expiry —
-- and every memory mode of a thread, each row in force from `valid_from` until the next row
-- of the same record (or thread). Rows are only ever added, by triggers, so every write path
-- records them; the state at T is the newest row with valid_from <= T (one index probe).
CREATE TABLE memory_record_history (
  tenant_id          text NOT NULL,
  seq                bigint GENERATED ALWAYS AS IDENTITY,
  record_id          text NOT NULL,
  valid_from         timestamptz NOT NULL,
  revision           bigint NOT NULL,
  classification     text,
  eligible           boolean NOT NULL,
  ineligible_reasons text[] NOT NULL,
  assent_expires_at  timestamptz,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX memory_record_history_at ON memory_record_history (tenant_id, record_id, valid_from);

CREATE TABLE thread_mode_history (
  tenant_id  text NOT NULL,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  thread_id  text NOT NULL,
  valid_from timestamptz NOT NULL,
  mode       text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX thread_mode_history_at ON thread_mode_history (tenant_id, thread_id, valid_from);

-- What exists now is known from its creation on: earlier states were not kept before this
-- migration (docs/memory-contract.md says so).
INSERT INTO memory_record_history (tenant_id, record_id, valid_from, revision, classification,
                                   eligible, ineligible_reasons, assent_expires_at)
SELECT tenant_id, record_id, created_at, revision, classification, eligible,
       ineligible_reasons, assent_expires_at
  FROM memory_records;
INSERT INTO thread_mode_history (tenant_id, thread_id, valid_from, mode)
SELECT tenant_id, thread_id, effective_at, mode FROM thread_memory_modes;

-- The triggers only forward to db/functions (memory_history_write, thread_history_write),
-- where the rule has its one text.
CREATE FUNCTION memory_records_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM memory_history_write(TG_OP = 'INSERT', OLD, NEW);
  RETURN NULL;
END $$;
CREATE TRIGGER memory_records_history AFTER INSERT OR UPDATE ON memory_records
  FOR EACH ROW EXECUTE FUNCTION memory_records_history();

CREATE FUNCTION thread_memory_modes_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM thread_history_write(NEW);
  RETURN NULL;
END $$;
CREATE TRIGGER thread_memory_modes_history AFTER INSERT OR UPDATE ON thread_memory_modes
  FOR EACH ROW EXECUTE FUNCTION thread_memory_modes_history();
