-- memory_content_reads: its current definition, the one home of its text. `recallgate migrate`
-- applies every file of db/functions/ after the migrations, each time it runs.
--
-- Content reads (GET /v1/memory/sources/{source_id}/content, the source_content tool) of
-- concurrent requests, of any tenants, read together and recorded in the same statement:
-- each read that finds content is a row of `disclosures`, committed with the statement
-- before any of the answers is sent (server/ledger.c). One row per read, in their order;
-- content_hash (never NULL in a record) is NULL where there is no such record, and a pointer
-- delivers nothing. The delivered hash is the hash of the bytes sent.
--
-- plan_cache_mode: as a prepared statement its arrays made PostgreSQL's plan cache plan it
-- again for every batch (it knows their length, so a custom plan costs less than the generic
-- plan's guess of ten rows): 0.17 ms of planning for 0.16 ms of execution. Its one good plan
-- looks every record up by the primary key whatever the values.

CREATE OR REPLACE FUNCTION public.memory_content_reads(p_tenants text[], p_records text[],
                                                       p_tokens text[], p_vias text[],
                                                       p_requests text[])
 RETURNS TABLE(content text, pointer_uri text, content_hash text, record_kind text,
               revision bigint)
 LANGUAGE plpgsql
 SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
  RETURN QUERY
    WITH i AS (SELECT * FROM unnest(p_tenants, p_records, p_tokens, p_vias, p_requests)
                 WITH ORDINALITY AS i(t, r, tok, via, req, n)),
    m AS MATERIALIZED (SELECT i.*, m.content, m.pointer_uri, m.content_hash, m.record_kind,
                              m.revision
                         FROM i LEFT JOIN memory_records m
                           ON m.tenant_id = i.t AND m.record_id = i.r),
    d AS (INSERT INTO disclosures (tenant_id, record_id, record_kind, revision, delivered_hash,
                                   token_id, surface, via, request_id)
          SELECT m.t, m.r, m.record_kind, m.revision,
                 'sha256:' || encode(sha256(convert_to(m.content, 'UTF8')), 'hex'),
                 m.tok, 'content', m.via, m.req
            FROM m WHERE m.content IS NOT NULL)
    SELECT m.content, m.pointer_uri, m.content_hash, m.record_kind, m.revision
      FROM m ORDER BY m.n;
END $function$;
