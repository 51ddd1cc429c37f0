-- Appends position $3 of the audit chains of $2 threads of tenant $1 ("thr-1" … "thr-$2"),
-- with valid hashes, in one statement: run it for positions 1, 2, … K to give the tenant
-- $2 × K records whose chains interleave (every thread's record k has a seq after every
-- thread's record k-1, so chains cross every verify page boundary).
-- Used by tests/integration/it_audit_verify.c and scripts/bench-audit-verify. The session
-- must run with session_replication_role = replica (superuser): the chain trigger, which
-- takes an advisory lock and looks up the previous record one row at a time, is bypassed
-- and the same chain is computed here set-wise.
-- The subquery draws each record's seq once (OFFSET 0 keeps it from being inlined into the
-- hash expression, which would draw it again).
INSERT INTO audit_log (tenant_id, seq, at, actor_token_id, action, resource_type, resource_id,
                       revision_before, revision_after, request_id, details, prev_hash, hash,
                       chain_pos)
SELECT s.tenant_id, s.seq, s.at, NULL, 'thread.memory_mode.updated', 'thread', s.resource_id,
       s.pos - 1, s.pos, NULL, s.details, s.prev_hash,
       audit_hash(s.prev_hash, ROW(s.tenant_id, s.seq, s.at, NULL, 'thread.memory_mode.updated',
                                   'thread', s.resource_id, s.pos - 1, s.pos, NULL, s.details,
                                   s.prev_hash, NULL, s.pos)::audit_log),
       s.pos
  FROM (SELECT $1::text AS tenant_id, nextval(pg_get_serial_sequence('audit_log', 'seq')) AS seq,
               date_trunc('milliseconds', now()) AS at, 'thr-' || g AS resource_id,
               $3::bigint AS pos,
               jsonb_build_object('mode', CASE WHEN $3::bigint % 2 = 0 THEN 'enabled'
                                               ELSE 'disabled' END) AS details,
               p.hash AS prev_hash
          FROM generate_series(1, $2::int) g
          LEFT JOIN audit_log p
            ON p.tenant_id = $1::text AND p.resource_type = 'thread'
           AND p.resource_id = 'thr-' || g AND p.chain_pos = $3::bigint - 1
         ORDER BY g
        OFFSET 0) s
