-- The one home of "this record may be retrieved now": eligible (its stored inputs allow it)
-- and its assent not expired (time, checked when read). Search, context, explain, the
-- sources list filter and readback used to write the predicate out each, and memory_derive
-- its negation. A plain SQL function of its two columns is inlined into each statement, so
-- the plans are the same as with the text written out (the partial FTS indexes still match
-- `eligible`). db/functions/memory_retrievable.sql holds its current text.
CREATE FUNCTION memory_retrievable(eligible boolean, assent_expires_at timestamptz)
  RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT eligible AND (assent_expires_at IS NULL OR assent_expires_at > now()) $$;
