-- The event hub released a sample (h, x) only once pg_snapshot_xmin passed x: once every
-- transaction of the whole cluster whose id is below x had ended. Transaction ids are the
-- cluster's, so a transaction of any application in any database held every stream back
-- while it ran: a LOCK TABLE in another database (it takes an xid for the standby's lock log)
-- delayed events by its whole length (CI: tests/events, beside it_pipes's 5 s lock in its own
-- database; "event 0 took 1.150 s").
--
-- Only the writers of audit_log matter. A transaction that drew a seq ≤ h holds a lock on
-- audit_log (its INSERT took RowExclusiveLock before the BEFORE trigger drew the seq) and
-- keeps it until it has ended; it releases its locks after its commit is visible. So with the
-- in-progress ids of a snapshot (pg_snapshot_xip), the ones that can still hold a seq ≤ h are
-- those whose transaction (the same virtualtransaction in pg_locks as its transactionid lock)
-- holds any lock on this database's audit_log. m is the smallest of them, or the snapshot's
-- xmax when there is none; every sample with x < m is final, as before.
--
-- pg_locks takes every lock partition's lock; it is read only when p_waiting (the hub's
-- oldest sample, passed after it has waited a while) is held back by a transaction in
-- progress. Otherwise m is pg_snapshot_xmin, as in 0012.
--
-- The sample itself (h, the notification, x) is still events_horizon(bigint, bigint), which
-- the instances of the previous release call during a rolling upgrade.
CREATE FUNCTION events_horizon(p_notify_after bigint, p_sample_after bigint, p_waiting xid8,
                               OUT h bigint, OUT x xid8, OUT m xid8)
  LANGUAGE plpgsql AS $$
DECLARE
  snap pg_snapshot;
BEGIN
  SELECT e.h, e.x INTO h, x FROM events_horizon(p_notify_after, p_sample_after) e;
  snap := pg_current_snapshot();
  m := pg_snapshot_xmin(snap);
  IF m <= p_waiting AND m < pg_snapshot_xmax(snap) THEN
    WITH l AS MATERIALIZED (
      SELECT locktype, database, relation, transactionid, virtualtransaction FROM pg_locks
    )
    SELECT coalesce(min(r.x), pg_snapshot_xmax(snap)) INTO m
      FROM pg_snapshot_xip(snap) AS r(x)
     WHERE EXISTS (
       SELECT 1 FROM l t JOIN l a USING (virtualtransaction)
        WHERE t.locktype = 'transactionid' AND t.transactionid = r.x::xid
          AND a.locktype = 'relation' AND a.relation = 'audit_log'::regclass
          AND a.database = (SELECT d.oid FROM pg_database d
                             WHERE d.datname = current_database()));
  END IF;
END $$;
