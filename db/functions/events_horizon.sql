-- events_horizon: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migrations 0011, 0012, 0014.)

CREATE OR REPLACE FUNCTION public.events_horizon(p_notify_after bigint, p_sample_after bigint, OUT h bigint, OUT x xid8, OUT m xid8)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.events_horizon(p_notify_after bigint, p_sample_after bigint, p_waiting xid8, OUT h bigint, OUT x xid8, OUT m xid8)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
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
END $function$;
