-- canonical_json: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.)
--
-- A scalar is its own text (the ELSE below): a value that is one is written in place, not by
-- a call of its own, so a flat object costs one call.

CREATE OR REPLACE FUNCTION public.canonical_json(j jsonb)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
DECLARE
  out text;
BEGIN
  CASE jsonb_typeof(j)
  WHEN 'object' THEN
    SELECT '{' || coalesce(string_agg(to_json(key)::text || ':' ||
                                        CASE WHEN jsonb_typeof(value) IN ('object', 'array')
                                             THEN canonical_json(value) ELSE value::text END,
                                      ',' ORDER BY key COLLATE "C"), '') || '}'
      INTO out FROM jsonb_each(j);
  WHEN 'array' THEN
    SELECT '[' || coalesce(string_agg(CASE WHEN jsonb_typeof(value) IN ('object', 'array')
                                           THEN canonical_json(value) ELSE value::text END,
                                      ',' ORDER BY n), '') || ']'
      INTO out FROM jsonb_array_elements(j) WITH ORDINALITY AS e(value, n);
  ELSE
    out := j::text;
  END CASE;
  RETURN out;
END $function$;
