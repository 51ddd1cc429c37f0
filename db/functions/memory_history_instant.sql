-- memory_history_instant: its current definition, the one home of its text. `recallgate
-- migrate` applies every file of db/functions/ after the migrations, each time it runs.
--
-- The instant from which the states a transaction writes to the eligibility history are in
-- force: one instant for the whole transaction (a source and the derivatives recomputed with
-- it change together), taken at its first history write, which every memory write makes after
-- it holds the tenant's memory lock (memory_revoke sets it to its revoked_at). A context load
-- that recorded its disclosures before therefore has an earlier `at`.

CREATE OR REPLACE FUNCTION public.memory_history_instant()
 RETURNS timestamptz
 LANGUAGE plpgsql
AS $function$
DECLARE
  v text := current_setting('recallgate.history_at', true);
BEGIN
  IF v IS NULL OR v = '' THEN
    v := clock_timestamp()::text;
    PERFORM set_config('recallgate.history_at', v, true);
  END IF;
  RETURN v::timestamptz;
END $function$;
