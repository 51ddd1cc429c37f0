-- memory_retrievable: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs. Whether a
-- record may be retrieved now: eligible, and its assent (if any) not expired. Kept a single
-- SELECT of its arguments so that PostgreSQL inlines it into every statement that uses it.

CREATE OR REPLACE FUNCTION public.memory_retrievable(eligible boolean, assent_expires_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT eligible AND (assent_expires_at IS NULL OR assent_expires_at > now()) $function$;
