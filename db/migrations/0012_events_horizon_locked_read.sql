-- events_horizon() read h with a plain SELECT from audit_log_seq. A scan of the sequence takes
-- its buffer lock only to find the tuple and reads the values after letting go. nextval(), when
-- it WAL-logs (every 32 draws, and at the first draw after a checkpoint), stores the value it
-- logs ahead (the value it hands out + 32) in the tuple under its exclusive buffer lock, then
-- the value it hands out. A read in between returned an h that had not been drawn: the seqs up
-- to it were drawn later, by transactions whose xid came after x, and the hub released them
-- while they were still in flight; a stream sent the records committed by then and skipped the
-- others for good (tests/events/test_order.py: "consumer 0: 17 missing"; seen on 2 shared
-- cores under load, the sampled h 32 ahead of the sequence and the next sample 13 below it).
-- pg_sequence_last_value() reads the tuple under the buffer lock: only a value already drawn.
-- It is NULL until the first draw after 0011's setval(..., false); every record in the table
-- is then older than the sequence, and max(seq) is a value already drawn.
CREATE OR REPLACE FUNCTION events_horizon(p_notify_after bigint, p_sample_after bigint,
                                          OUT h bigint, OUT x xid8, OUT m xid8)
  LANGUAGE plpgsql AS $$
BEGIN
  h := pg_sequence_last_value('audit_log_seq');
  IF h IS NULL THEN
    SELECT coalesce(max(a.seq), 0) INTO h FROM audit_log a;
  END IF;
  IF h > p_notify_after THEN
    PERFORM pg_notify('recallgate_audit', '');
  END IF;
  IF h > p_sample_after THEN
    x := pg_current_xact_id();
  END IF;
  m := pg_snapshot_xmin(pg_current_snapshot());
END $$;
