-- canonical_json: its current definition, the one home of its text. `recallgate migrate` applies
-- every file of db/functions/ after the migrations, each time it runs. (Defined before
-- this folder existed by migration 0001.)

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
    SELECT '{' || coalesce(string_agg(to_json(key)::text || ':' || canonical_json(value), ','
                                      ORDER BY key COLLATE "C"), '') || '}'
      INTO out FROM jsonb_each(j);
  WHEN 'array' THEN
    SELECT '[' || coalesce(string_agg(canonical_json(value), ',' ORDER BY n), '') || ']'
      INTO out FROM jsonb_array_elements(j) WITH ORDINALITY AS e(value, n);
  ELSE
    out := j::text;
  END CASE;
  RETURN out;
END $function$;
