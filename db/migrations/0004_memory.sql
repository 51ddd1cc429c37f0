-- Memory governance (API.md §4): records (sources and derivatives), lineage to root
-- sources, assents, load receipts. Eligibility is stored and recomputed by the statement or
-- function that changes an input; assent expiry is judged in each query.

CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE assents (
  tenant_id       text NOT NULL REFERENCES tenants,
  assent_id       text NOT NULL,
  owner           text NOT NULL,
  source_identity text NOT NULL,
  expires_at      timestamptz NOT NULL,
  revision        bigint NOT NULL,
  revoked_at      timestamptz,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, assent_id)
);

CREATE TABLE memory_records (
  tenant_id          text NOT NULL REFERENCES tenants,
  record_id          text NOT NULL,
  seq                bigint GENERATED ALWAYS AS IDENTITY,
  record_kind        text NOT NULL CHECK (record_kind IN ('source', 'derivative')),
  revision           bigint NOT NULL,
  source_kind        text,
  derivative_kind    text,
  thread_id          text,
  labels             jsonb,
  content            text,
  pointer_uri        text,
  content_hash       text NOT NULL,
  source_identity    text,
  classification     text CHECK (classification IN ('active', 'cold')),
  foreign_owner      text,
  assent_id          text,
  revoked_at         timestamptz,
  revoke_reason      text,
  -- stored eligibility (everything but time): reasons in explain order
  eligible           boolean NOT NULL,
  ineligible_reasons text[] NOT NULL DEFAULT '{}',
  -- the earliest expiry of an assent this record depends on (itself or a root source)
  assent_expires_at  timestamptz,
  tsv                tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(content, ''))) STORED,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, record_id)
);
CREATE INDEX memory_records_by_seq ON memory_records (tenant_id, record_kind, seq);
CREATE INDEX memory_records_by_assent ON memory_records (tenant_id, assent_id) WHERE assent_id IS NOT NULL;
-- Explain matches every record; search only eligible ones (the partial index filters before
-- ranking).
CREATE INDEX memory_records_fts ON memory_records USING gin (tenant_id, tsv);
CREATE INDEX memory_records_fts_eligible ON memory_records USING gin (tenant_id, tsv) WHERE eligible;

-- A derivative's direct upstreams (provenance) and its root sources (lineage, transitive).
CREATE TABLE memory_provenance (
  tenant_id     text NOT NULL,
  derivative_id text NOT NULL,
  position      int NOT NULL,
  upstream_id   text NOT NULL,
  upstream_revision bigint NOT NULL,
  PRIMARY KEY (tenant_id, derivative_id, position)
);
CREATE TABLE memory_lineage (
  tenant_id     text NOT NULL,
  root_id       text NOT NULL,
  descendant_id text NOT NULL,
  PRIMARY KEY (tenant_id, root_id, descendant_id)
);
CREATE INDEX memory_lineage_by_descendant ON memory_lineage (tenant_id, descendant_id);

CREATE TABLE load_receipts (
  tenant_id  text NOT NULL REFERENCES tenants,
  receipt_id text NOT NULL,
  body       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, receipt_id)
);

-- A source's stored reasons, in explain order.
CREATE FUNCTION memory_source_reasons(revoked boolean, assent_revoked boolean, cold boolean)
  RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_remove(ARRAY[
    CASE WHEN revoked THEN 'revoked' END,
    CASE WHEN assent_revoked THEN 'assent_revoked' END,
    CASE WHEN cold THEN 'classification_cold' END], NULL)
$$;

-- Recomputes every derivative that descends from one of roots: eligible iff all its root
-- sources are; the earliest assent expiry of its roots. Runs as its own statement after the
-- roots changed, so it sees derivatives committed while it waited for their row locks.
CREATE FUNCTION memory_refresh_descendants(p_tenant text, roots text[]) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  UPDATE memory_records d
     SET eligible = x.ok,
         ineligible_reasons = CASE WHEN x.ok THEN '{}'::text[] ELSE '{upstream_ineligible}'::text[] END,
         assent_expires_at = x.expires
    FROM (SELECT l.descendant_id, bool_and(s.eligible) AS ok, min(s.assent_expires_at) AS expires
            FROM memory_lineage l
            JOIN memory_records s ON s.tenant_id = l.tenant_id AND s.record_id = l.root_id
           WHERE l.tenant_id = p_tenant
             AND l.descendant_id IN (SELECT descendant_id FROM memory_lineage
                                      WHERE tenant_id = p_tenant AND root_id = ANY(roots))
           GROUP BY l.descendant_id) x
   WHERE d.tenant_id = p_tenant AND d.record_id = x.descendant_id
     AND (d.eligible IS DISTINCT FROM x.ok OR d.assent_expires_at IS DISTINCT FROM x.expires);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

-- Classification compare-and-swap, recomputation and audit in one transaction.
-- outcome: 'ok' | 'not_found' | 'stale' (current_revision set)
CREATE FUNCTION memory_classify(p_tenant text, p_actor text, p_request text, p_source text,
                                p_expected bigint, p_classification text,
                                OUT outcome text, OUT previous text, OUT new_revision bigint,
                                OUT effective_ms bigint, OUT current_revision bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  r memory_records;
BEGIN
  SELECT * INTO r FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = p_source AND record_kind = 'source' FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF r.revision <> p_expected THEN
    outcome := 'stale'; current_revision := r.revision; RETURN;
  END IF;
  previous := r.classification;
  UPDATE memory_records
     SET classification = p_classification, revision = revision + 1,
         updated_at = date_trunc('milliseconds', now()),
         ineligible_reasons = memory_source_reasons(r.revoked_at IS NOT NULL,
             'assent_revoked' = ANY(r.ineligible_reasons), p_classification = 'cold'),
         eligible = cardinality(memory_source_reasons(r.revoked_at IS NOT NULL,
             'assent_revoked' = ANY(r.ineligible_reasons), p_classification = 'cold')) = 0
   WHERE tenant_id = p_tenant AND record_id = p_source
   RETURNING revision, epoch_ms(updated_at) INTO new_revision, effective_ms;
  PERFORM memory_refresh_descendants(p_tenant, ARRAY[p_source]);
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.classification.updated', 'source', p_source,
          p_expected, new_revision, p_request, jsonb_build_object('classification', p_classification));
  outcome := 'ok';
END $$;

-- Revocation: final for retrieval; bytes stay.
-- outcome: 'ok' | 'not_found' | 'stale' | 'already_revoked'
CREATE FUNCTION memory_revoke(p_tenant text, p_actor text, p_request text, p_source text,
                              p_expected bigint, p_reason text,
                              OUT outcome text, OUT new_revision bigint, OUT revoked_ms bigint,
                              OUT current_revision bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  r memory_records;
BEGIN
  SELECT * INTO r FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = p_source AND record_kind = 'source' FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF r.revision <> p_expected THEN
    outcome := 'stale'; current_revision := r.revision; RETURN;
  END IF;
  IF r.revoked_at IS NOT NULL THEN outcome := 'already_revoked'; RETURN; END IF;
  UPDATE memory_records
     SET revoked_at = date_trunc('milliseconds', now()), revoke_reason = p_reason,
         revision = revision + 1, updated_at = date_trunc('milliseconds', now()),
         eligible = false,
         ineligible_reasons = memory_source_reasons(true,
             'assent_revoked' = ANY(r.ineligible_reasons), r.classification = 'cold')
   WHERE tenant_id = p_tenant AND record_id = p_source
   RETURNING revision, epoch_ms(revoked_at) INTO new_revision, revoked_ms;
  PERFORM memory_refresh_descendants(p_tenant, ARRAY[p_source]);
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.revoked', 'source', p_source, p_expected, new_revision,
          p_request, jsonb_build_object('reason_code', p_reason));
  outcome := 'ok';
END $$;

-- Assent revocation: every source admitted under it, and its derivatives, become
-- ineligible in the same transaction.
-- outcome: 'ok' | 'not_found' | 'forbidden' | 'stale' | 'already_revoked'
CREATE FUNCTION assent_revoke(p_tenant text, p_actor text, p_request text, p_assent text,
                              p_expected bigint, p_owner text,
                              OUT outcome text, OUT new_revision bigint, OUT revoked_ms bigint,
                              OUT current_revision bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  a assents;
  roots text[];
BEGIN
  SELECT * INTO a FROM assents WHERE tenant_id = p_tenant AND assent_id = p_assent FOR UPDATE;
  IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;
  IF p_owner IS NOT NULL AND a.owner <> p_owner THEN outcome := 'forbidden'; RETURN; END IF;
  IF a.revision <> p_expected THEN
    outcome := 'stale'; current_revision := a.revision; RETURN;
  END IF;
  IF a.revoked_at IS NOT NULL THEN outcome := 'already_revoked'; RETURN; END IF;
  UPDATE assents SET revoked_at = date_trunc('milliseconds', now()), revision = revision + 1
   WHERE tenant_id = p_tenant AND assent_id = p_assent
   RETURNING revision, epoch_ms(revoked_at) INTO new_revision, revoked_ms;
  WITH s AS (
    UPDATE memory_records
       SET ineligible_reasons = memory_source_reasons(revoked_at IS NOT NULL, true,
                                                      classification = 'cold'),
           eligible = false
     WHERE tenant_id = p_tenant AND assent_id = p_assent AND record_kind = 'source'
     RETURNING record_id)
  SELECT array_agg(record_id) INTO roots FROM s;
  IF roots IS NOT NULL THEN
    PERFORM memory_refresh_descendants(p_tenant, roots);
  END IF;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'assent.revoked', 'assent', p_assent, p_expected, new_revision,
          p_request, '{}'::jsonb);
  outcome := 'ok';
END $$;

-- Derivative creation: upstreams locked (FOR SHARE) so that none can change eligibility
-- or revision until this commits; lineage = the union of the upstreams' root sources.
-- outcome: 'ok' | 'not_found' | 'stale' (current_revision, stale_id) | 'upstream_ineligible'
CREATE FUNCTION memory_derive(p_tenant text, p_actor text, p_request text, p_id text,
                              p_kind text, p_upstreams text[], p_revisions bigint[],
                              p_content text, p_content_hash text,
                              OUT outcome text, OUT created_ms bigint,
                              OUT current_revision bigint, OUT eligible boolean)
  LANGUAGE plpgsql AS $$
DECLARE
  up record;
  i integer;
  n_found integer;
  expires timestamptz;
BEGIN
  SELECT count(*) INTO n_found FROM (
    SELECT 1 FROM memory_records
     WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams)
     ORDER BY record_id FOR SHARE) locked;
  IF n_found <> cardinality(p_upstreams) THEN outcome := 'not_found'; RETURN; END IF;
  FOR i IN 1 .. cardinality(p_upstreams) LOOP
    SELECT revision INTO up FROM memory_records
     WHERE tenant_id = p_tenant AND record_id = p_upstreams[i];
    IF up.revision <> p_revisions[i] THEN
      outcome := 'stale'; current_revision := up.revision; RETURN;
    END IF;
  END LOOP;
  IF EXISTS (SELECT 1 FROM memory_records
              WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams)
                AND (NOT memory_records.eligible
                     OR (assent_expires_at IS NOT NULL AND assent_expires_at <= now()))) THEN
    outcome := 'upstream_ineligible'; RETURN;
  END IF;
  SELECT min(assent_expires_at) INTO expires FROM memory_records
   WHERE tenant_id = p_tenant AND record_id = ANY(p_upstreams);
  INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, derivative_kind,
                              content, content_hash, eligible, assent_expires_at, created_at,
                              updated_at)
  VALUES (p_tenant, p_id, 'derivative', 1, p_kind, p_content, p_content_hash, true, expires,
          date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING epoch_ms(created_at) INTO created_ms;
  INSERT INTO memory_provenance (tenant_id, derivative_id, position, upstream_id, upstream_revision)
  SELECT p_tenant, p_id, u.pos, u.id, u.rev
    FROM unnest(p_upstreams, p_revisions) WITH ORDINALITY AS u(id, rev, pos);
  INSERT INTO memory_lineage (tenant_id, root_id, descendant_id)
  SELECT DISTINCT p_tenant, r.root, p_id FROM (
    SELECT m.record_id AS root FROM memory_records m
     WHERE m.tenant_id = p_tenant AND m.record_id = ANY(p_upstreams) AND m.record_kind = 'source'
    UNION
    SELECT l.root_id FROM memory_lineage l
     WHERE l.tenant_id = p_tenant AND l.descendant_id = ANY(p_upstreams)) r;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'derivative.created', 'derivative', p_id, NULL, 1, p_request,
          jsonb_build_object('kind', p_kind, 'content_hash', p_content_hash,
            'provenance', (SELECT jsonb_agg(jsonb_build_object('source_id', u.id, 'revision', u.rev)
                                            ORDER BY u.pos)
                             FROM unnest(p_upstreams, p_revisions) WITH ORDINALITY AS u(id, rev, pos))));
  outcome := 'ok';
  eligible := true;
END $$;

-- Source admission. A foreign source's assent is locked (FOR SHARE) and must be live and
-- bound to this identity; an assent revocation waiting on that lock then sees the source.
-- outcome: 'ok' | 'assent_invalid' | 'assent_revoked' | 'assent_expired' | 'assent_stale'
CREATE FUNCTION memory_admit(p_tenant text, p_actor text, p_request text, p_id text,
                             p_source_kind text, p_thread text, p_labels jsonb, p_content text,
                             p_uri text, p_hash text, p_identity text, p_classification text,
                             p_owner text, p_assent text,
                             OUT outcome text, OUT created_ms bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  a assents;
BEGIN
  IF p_owner IS NOT NULL THEN
    SELECT * INTO a FROM assents WHERE tenant_id = p_tenant AND assent_id = p_assent FOR SHARE;
    IF NOT FOUND OR a.owner <> p_owner THEN outcome := 'assent_invalid'; RETURN; END IF;
    IF a.revoked_at IS NOT NULL THEN outcome := 'assent_revoked'; RETURN; END IF;
    IF a.expires_at <= now() THEN outcome := 'assent_expired'; RETURN; END IF;
    IF a.source_identity <> p_identity THEN outcome := 'assent_stale'; RETURN; END IF;
  END IF;
  INSERT INTO memory_records (tenant_id, record_id, record_kind, revision, source_kind,
                              thread_id, labels, content, pointer_uri, content_hash,
                              source_identity, classification, foreign_owner, assent_id,
                              eligible, ineligible_reasons, assent_expires_at, created_at,
                              updated_at)
  VALUES (p_tenant, p_id, 'source', 1, p_source_kind, p_thread, p_labels, p_content, p_uri,
          p_hash, p_identity, p_classification, p_owner, p_assent,
          p_classification = 'active', memory_source_reasons(false, false, p_classification = 'cold'),
          a.expires_at, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  RETURNING epoch_ms(created_at) INTO created_ms;
  INSERT INTO audit_log (tenant_id, actor_token_id, action, resource_type, resource_id,
                         revision_before, revision_after, request_id, details)
  VALUES (p_tenant, p_actor, 'source.created', 'source', p_id, NULL, 1, p_request,
          jsonb_build_object('source_kind', p_source_kind, 'content_hash', p_hash,
                             'source_identity', p_identity, 'classification', p_classification,
                             'foreign', p_owner IS NOT NULL));
  outcome := 'ok';
END $$;
