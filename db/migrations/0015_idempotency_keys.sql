-- Idempotency-Key (API.md §0): the answer to a write that carried a key, kept 24 h per token,
-- written in the write's own transaction, so that a client or gateway that retries a write
-- whose answer it lost gets that answer again, even after a crash between the commit and the
-- answer. Only writes that committed (2xx) keep a key: a refused request wrote nothing and
-- is simply run again.
CREATE TABLE idempotency_keys (
  tenant_id    text        NOT NULL,
  token_id     text        NOT NULL,
  idem_key     text        NOT NULL CHECK (octet_length(idem_key) BETWEEN 1 AND 128),
  -- SHA-256 (hex) of the method, the path and the body: the same key with another request is
  -- 409 operation_conflict
  fingerprint  text        NOT NULL,
  status       integer     NOT NULL CHECK (status BETWEEN 200 AND 299),
  content_type text,
  etag         text,
  location     text,
  headers      jsonb       NOT NULL DEFAULT '[]',  -- [[name, value], ...] of the answer
  body         text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, token_id, idem_key)
);
-- The purge (expired keys, a few at each insert) walks by age.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
