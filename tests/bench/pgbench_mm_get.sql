-- The SQL of GET /v1/threads/{thread_id}/memory-mode (db/threads.c, thread_mode_get), replayed
-- by pgbench as the database's ceiling. Run with -M prepared -D tenant=<tenant>.
SELECT mode, revision, epoch_ms(effective_at) AS effective_ms FROM thread_memory_modes WHERE tenant_id = :tenant AND thread_id = 'bench-get';
