-- The event stream (API.md §10) and instant revocation across instances (§11).
--
-- Order. A stream must never send seq M while a transaction that may still commit a smaller
-- seq is in flight. seq was drawn by the identity default before the writer had a
-- transaction id, so no snapshot could tell which transactions might still hold a seq. Now
-- the first BEFORE INSERT trigger (triggers fire in name order: audit_log_a_order before
-- audit_log_chain, which hashes seq) makes sure the writer has its xid8, then draws seq:
--   every seq ≤ H (H = the sequence's value read at time t) belongs to a transaction whose
--   xid was assigned before t;
--   a transaction id X assigned after t is larger than all of those;
--   so once pg_snapshot_xmin of a later snapshot passes X, every seq ≤ H is final
--   (committed and visible, or never to be).
-- events_horizon() takes (H, X) in that order; the server's event hub releases H once xmin
-- passes X and only then sends records up to H (server/events.c). The sequence has CACHE 1:
-- a cached block would let a session use a seq ≤ H after t.

ALTER TABLE audit_log ALTER COLUMN seq DROP IDENTITY IF EXISTS;
CREATE SEQUENCE audit_log_seq AS bigint CACHE 1 OWNED BY audit_log.seq;
SELECT setval('audit_log_seq', coalesce((SELECT max(seq) FROM audit_log), 0) + 1, false);
ALTER TABLE audit_log ADD COLUMN xid xid8;

CREATE FUNCTION audit_log_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.xid := pg_current_xact_id(); -- assigns the transaction's id if it had none
  NEW.seq := nextval('audit_log_seq');
  RETURN NEW;
END $$;
CREATE TRIGGER audit_log_a_order BEFORE INSERT ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_order();

-- One call of the event hub (a dedicated connection per instance, synchronous_commit off):
--   h: the newest seq drawn so far;
--   with h > p_notify_after: wakes the hubs of every instance (the payload is empty: a hub
--     reads the rows itself, so no tenant or record appears on the channel); a write that
--     drew no seq (a read-only POST) wakes nobody, and a seq that an earlier notification
--     already covered needs none: a hub woken by it sampled after that seq was drawn and
--     releases it only once its transaction has ended;
--   x: with h > p_sample_after, a fresh transaction id taken after h was read;
--   m: pg_snapshot_xmin now (releases the hub's earlier samples whose x is below it).
-- A NULL bound turns its part off.
CREATE FUNCTION events_horizon(p_notify_after bigint, p_sample_after bigint,
                               OUT h bigint, OUT x xid8, OUT m xid8)
  LANGUAGE plpgsql AS $$
BEGIN
  SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END INTO h
    FROM audit_log_seq s;
  IF h > p_notify_after THEN
    PERFORM pg_notify('recallgate_audit', '');
  END IF;
  IF h > p_sample_after THEN
    x := pg_current_xact_id();
  END IF;
  m := pg_snapshot_xmin(pg_current_snapshot());
END $$;

-- A deleted token is dropped by every instance's verification cache, and its event streams
-- end. The payload holds the token's digest (as stored), its tenant and its id; only database
-- sessions can LISTEN.
CREATE FUNCTION tokens_notify_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('recallgate_token',
                    encode(NEW.token_sha256, 'hex') || ' ' || NEW.tenant_id || ' ' || NEW.token_id);
  RETURN NULL;
END $$;
CREATE TRIGGER tokens_deleted AFTER UPDATE OF deleted_at ON tokens
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION tokens_notify_deleted();
