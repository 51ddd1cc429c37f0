// ctest mcp_lifecycle: an agent's whole memory lifecycle through the official TypeScript SDK client
// (docs/mcp.md): store with a retry-safe operation_id, summarise, list and read by
// id, load into context and read the receipt, see who received it, then "forget X" (revoke)
// and show it is gone (readback clean, 0 after revocation, nothing retrieved), and turn a
// thread's memory off and on. Every answer is compared with its /v1 twin where one exists, and
// the audit records carry the same actions as /v1's. node --test; nothing skips.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connect, rest, startServer, token, unique } from './lib.mjs';

let srv, url, admin, agent, mcp;
const tenant = unique('mcp-life');
const word = unique('okapi').replace(/[^a-z]/g, '');
const thread = unique('thread');

before(async () => {
  srv = await startServer();
  url = srv.url;
  admin = token(tenant, 'admin');
  // what an agent that may remember and forget holds: no admin
  agent = token(tenant, 'memory:read,memory:write,memory:admin,audit:read', 'agent');
  mcp = await connect(`${url}/mcp`, agent);
});
after(async () => {
  await mcp?.client.close();
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 on SIGTERM');
});

async function call(name, args) {
  const r = await mcp.client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content?.[0]?.text}`);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, 'text is the same JSON');
  return r.structuredContent;
}

async function refused(name, args) {
  const r = await mcp.client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, JSON.stringify(r));
  return JSON.parse(r.content[0].text);
}

describe('remember, find, read, forget, prove', () => {
  let src, drv, receipt;

  test('source_create with an operation_id: a retry is the same source', async () => {
    const args = { source_kind: 'note', content: `the ${word} lives in the rainforest`,
      thread_id: thread, labels: { topic: 'animals' }, operation_id: `op-${word}` };
    src = await call('source_create', args);
    assert.match(src.source_id, /^src_/);
    const again = await call('source_create', { ...args });
    assert.equal(again.source_id, src.source_id, 'a retried create makes no second source');
    const other = await refused('source_create', { ...args, content: 'something else' });
    assert.equal(other.code, 'operation_conflict');
    const audit = await rest(url, admin, 'GET', `/v1/audit?resource_type=source&resource_id=${src.source_id}`);
    assert.equal(audit.body.items.length, 1, 'one audit record');
    assert.equal(audit.body.items[0].action, 'source.created');
  });

  test('derivative_create: a summary of it, also retry-safe', async () => {
    const args = { kind: 'summary', derived_from: [{ source_id: src.source_id, revision: 1 }],
      content: `${word} summary: rainforest`, operation_id: `sum-${word}` };
    drv = await call('derivative_create', args);
    assert.equal((await call('derivative_create', args)).derivative_id, drv.derivative_id);
  });

  test('source_list finds it by label and thread, newest first, as /v1 lists it', async () => {
    const args = { label: ['topic:animals'], thread_id: thread, include: 'labels' };
    const got = await call('source_list', args);
    const r = await rest(url, agent, 'GET',
      `/v1/memory/sources?label=topic:animals&thread_id=${thread}&include=labels`);
    assert.deepEqual(got, r.body);
    assert.deepEqual(got.items.map((i) => i.source_id), [src.source_id]);
    assert.deepEqual(got.items[0].labels, { topic: 'animals' });
    const bad = await refused('source_list', { label: 'topic' });
    assert.equal(bad.code, 'validation_failed');
    assert.equal(bad.errors[0].field, 'label');
    // an item that is not a string is refused, never skipped (it would drop the filter)
    for (const label of [[42], [null], ['topic:animals', { k: 'v' }]]) {
      const p = await refused('source_list', { label });
      assert.equal(p.code, 'validation_failed', JSON.stringify(label));
      assert.equal(p.errors[0].field, 'label');
    }
  });

  test('source_get and source_content read it by id', async () => {
    const meta = await call('source_get', { source_id: src.source_id });
    assert.deepEqual(meta, (await rest(url, agent, 'GET', `/v1/memory/sources/${src.source_id}`)).body);
    assert.equal(meta.effective_retrieval_state, 'eligible');
    const content = await call('source_content', { source_id: src.source_id });
    assert.equal(content.content, `the ${word} lives in the rainforest`);
  });

  test('memory_context loads it with a receipt; receipt_get reads the receipt', async () => {
    const ctx = await call('memory_context', { query: word, thread_id: thread });
    assert.ok(ctx.items.some((i) => i.record_id === src.source_id));
    receipt = ctx.load_receipt.receipt_id;
    const got = await call('receipt_get', { receipt_id: receipt });
    assert.deepEqual(got, (await rest(url, agent, 'GET', `/v1/context/load-receipts/${receipt}`)).body);
    assert.equal(got.receipt_id, receipt);
  });

  test('disclosures_list shows who received it, through MCP', async () => {
    const got = await call('disclosures_list', { record_id: src.source_id });
    const surfaces = got.items.map((d) => `${d.surface}/${d.via}`).sort();
    assert.deepEqual(surfaces, ['content/mcp', 'context/mcp']);
    assert.ok(got.items.some((d) => d.receipt_id === receipt));
  });

  test('forget it: source_revoke, then readback proves it and its summary are gone', async () => {
    const r = await call('source_revoke', { source_id: src.source_id, expected_revision: 1,
      reason_code: 'user-request' });
    assert.equal(r.readback.revoked, true);
    const rb = await call('source_readback', { source_id: src.source_id });
    assert.equal(rb.clean, true);
    assert.equal(rb.residual_eligible, 0);
    assert.deepEqual(rb.derivatives.map((d) => [d.derivative_id, d.effective_retrieval_state]),
      [[drv.derivative_id, 'ineligible']]);
    assert.equal(rb.disclosures.after_revocation, 0);
    assert.ok(rb.disclosures.count >= 2);
    for (const tool of ['memory_search', 'memory_context']) {
      const got = await call(tool, { query: word, thread_id: thread });
      assert.deepEqual(got.items, [], `${tool} returns nothing of it`);
    }
    const again = await refused('source_revoke', { source_id: src.source_id, expected_revision: 2,
      reason_code: 'user-request' });
    assert.equal(again.code, 'already_revoked');
    const audit = await rest(url, admin, 'GET', `/v1/audit?resource_type=source&resource_id=${src.source_id}`);
    assert.deepEqual(audit.body.items.map((a) => a.action), ['source.created', 'source.revoked']);
  });
});

describe('a thread memory mode', () => {
  test('memory_mode_set disables a thread, memory_mode_get reads it, retrieval gives nothing', async () => {
    const t = unique('quiet');
    await call('source_create', { source_kind: 'note', content: `${word} quiet note` });
    const before = await call('memory_mode_get', { thread_id: t });
    assert.deepEqual(before, { thread_id: t, mode: 'enabled', revision: 0, effective_at: null });
    const set = await call('memory_mode_set', { thread_id: t, expected_revision: 0, mode: 'disabled' });
    assert.equal(set.mode, 'disabled');
    assert.equal(set.revision, 1);
    assert.equal((await call('memory_mode_get', { thread_id: t })).mode, 'disabled');
    assert.deepEqual((await call('memory_search', { query: word, thread_id: t })).items, []);
    const stale = await refused('memory_mode_set', { thread_id: t, expected_revision: 0, mode: 'enabled' });
    assert.equal(stale.code, 'stale_revision');
    assert.equal(stale.current_revision, 1);
  });
});
