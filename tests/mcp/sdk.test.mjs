// ctest mcp_sdk: recallgate's /mcp driven by the official TypeScript SDK client (pinned in
// package.json) over Streamable HTTP: it connects and negotiates, the tool list follows the
// token's scopes, every tool answers what its /v1 route answers for the same input, refusals
// are isError results with the problem's code, mutations are audited as through /v1, and two
// instances answer one client alternately. node --test; nothing skips.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { connect, mask, rest, startProxy, startServer, token, unique } from './lib.mjs';

const ALL_TOOLS = ['memory_search', 'memory_explain', 'memory_context', 'source_create',
  'source_classify', 'preference_view', 'preference_remember', 'preference_retire',
  'decision_context_retrieve', 'envelope_verify', 'audit_verify', 'source_list', 'source_get',
  'source_content', 'source_revoke', 'source_readback', 'derivative_create', 'memory_mode_get',
  'memory_mode_set', 'receipt_get', 'disclosures_list'].sort();

let srv, admin, url, mcp;
const tenant = unique('mcp-sdk');
const word = unique('zebra').replace(/[^a-z]/g, '');

before(async () => {
  srv = await startServer();
  url = srv.url;
  admin = token(tenant, 'admin');
  mcp = await connect(`${url}/mcp`, admin);
});
after(async () => {
  await mcp?.client.close();
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 on SIGTERM');
});

// A tool call's structuredContent, failing the test on an isError result.
async function call(name, args, client = mcp.client) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.structuredContent)}`);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, 'text is the same JSON');
  return r.structuredContent;
}

async function source(content, classification = 'active') {
  const r = await rest(url, admin, 'POST', '/v1/memory/sources',
    { source_kind: 'note', content, classification });
  assert.equal(r.status, 201);
  return r.body;
}

describe('connect', () => {
  test('the SDK client negotiates the latest revision it speaks', () => {
    assert.equal(mcp.transport.protocolVersion, '2025-11-25');
    assert.equal(mcp.client.getServerVersion().name, 'recallgate');
    assert.ok(mcp.client.getServerCapabilities().tools, 'tools capability');
    assert.equal(mcp.transport.sessionId, undefined, 'stateless: no Mcp-Session-Id');
    assert.match(mcp.client.getInstructions(), /preference_remember/);
  });

  test('ping', async () => {
    assert.deepEqual(await mcp.client.ping(), {});
  });

  test('a client without a token is refused (401, WWW-Authenticate: Bearer)', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  });
});

describe('tool list by scope', () => {
  test('admin sees every tool, each with input and output schemas', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ALL_TOOLS);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.inputSchema.additionalProperties, false, t.name);
      assert.equal(t.outputSchema.type, 'object', t.name);
      assert.ok(t.description.length > 80 && t.title, t.name);
    }
  });

  for (const [scopes, want] of [
    ['memory:read', ['memory_context', 'memory_explain', 'memory_mode_get', 'memory_search',
      'receipt_get', 'source_content', 'source_get', 'source_list', 'source_readback']],
    ['memory:admin', ['memory_mode_set', 'source_classify', 'source_revoke']],
    ['preferences:read', ['preference_view']],
    ['preferences:write,audit:read', ['audit_verify', 'disclosures_list', 'preference_remember',
      'preference_retire']],
    ['events:read', []],
  ]) {
    test(`a ${scopes} token sees ${want.join(', ') || 'no tool'}`, async () => {
      const c = await connect(`${url}/mcp`, token(tenant, scopes));
      const { tools } = await c.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), want);
      await c.client.close();
    });
  }

  test('the schemas are generated from the /v1 field descriptions', async () => {
    const { tools } = await mcp.client.listTools();
    const remember = tools.find((t) => t.name === 'preference_remember').inputSchema;
    // expected_revision may be null in /v1: an optional argument here, absent meaning null
    assert.deepEqual(remember.required.sort(), ['agent_id', 'execute', 'goal_id',
      'key', 'operation_id', 'source_quote', 'source_ref', 'statement']);
    assert.equal(remember.properties.expected_revision.type, 'integer');
    assert.equal(remember.properties.statement.maxLength, 1200);
    const search = tools.find((t) => t.name === 'memory_search').inputSchema;
    assert.equal(search.properties.limit.maximum, 50);
  });
});

describe('every tool answers what its /v1 route answers', () => {
  let active, cold;
  before(async () => {
    active = await source(`the ${word} crossed the road`);
    cold = await source(`a cold ${word} note`, 'cold');
  });

  test('memory_search', async () => {
    const args = { query: word, limit: 5 };
    const r = await rest(url, admin, 'POST', '/v1/memory/search', args);
    assert.deepEqual(await call('memory_search', args), r.body);
    assert.deepEqual(r.body.items.map((i) => i.record_id), [active.source_id]);
  });

  test('memory_explain (the cold source is explained, without content)', async () => {
    const args = { query: word };
    const r = await rest(url, admin, 'POST', '/v1/memory/retrieval/explain', args);
    const got = await call('memory_explain', args);
    assert.deepEqual(got, r.body);
    const item = got.items.find((i) => i.record_id === cold.source_id);
    assert.equal(item.reason, 'classification_cold');
    assert.equal(item.included, false);
  });

  test('memory_context (with its load receipt, stored like /v1)', async () => {
    const args = { query: word, max_items: 2 };
    const r = await rest(url, admin, 'POST', '/v1/memory/context', args);
    const got = await call('memory_context', args);
    assert.deepEqual(mask(got, ['receipt_id', 'input_id']), mask(r.body, ['receipt_id', 'input_id']));
    assert.match(got.load_receipt.receipt_id, /^lrc_/);
    const stored = await rest(url, admin, 'GET', `/v1/context/load-receipts/${got.load_receipt.receipt_id}`);
    assert.deepEqual(stored.body, got.load_receipt);
  });

  test('source_create and source_classify (and their audit records)', async () => {
    const args = { source_kind: 'fact', content: `created by both ${word}`, labels: { team: 'a' } };
    const r = await rest(url, admin, 'POST', '/v1/memory/sources', args);
    const got = await call('source_create', args);
    assert.deepEqual(mask(got, ['source_id', 'created_at']), mask(r.body, ['source_id', 'created_at']));
    const classify = { expected_revision: 1, classification: 'cold' };
    const rc = await rest(url, admin, 'PUT', `/v1/memory/sources/${r.body.source_id}/classification`, classify);
    const gc = await call('source_classify', { ...classify, source_id: got.source_id });
    assert.deepEqual(mask(gc, ['source_id', 'effective_at']), mask(rc.body, ['source_id', 'effective_at']));
    const trail = async (id) => (await rest(url, admin, 'GET',
      `/v1/audit?resource_type=source&resource_id=${id}`)).body.items;
    const volatile = ['seq', 'at', 'resource_id', 'request_id', 'prev_hash', 'hash'];
    const viaRest = await trail(r.body.source_id), viaMcp = await trail(got.source_id);
    assert.deepEqual(viaMcp.map((x) => x.action), ['source.created', 'source.classification.updated']);
    assert.deepEqual(mask(viaMcp, volatile), mask(viaRest, volatile));
  });

  test('preference_view, preference_remember (preview, then execute), preference_retire', async () => {
    const path = '/v1/goals/g1/agents/a1/preferences';
    const ids = { goal_id: 'g1', agent_id: 'a1' };
    const view = await rest(url, admin, 'GET', path);
    assert.deepEqual(await call('preference_view', ids), view.body);
    const remember = { statement: 'Answer in French.', source_ref: 'chat:1', source_quote: 'Please answer in French.',
      expected_revision: null, operation_id: 'op-1', execute: false };
    const pr = await rest(url, admin, 'PUT', `${path}/lang`, remember);
    const pm = await call('preference_remember', { ...remember, ...ids, key: 'lang' });
    assert.deepEqual(mask(pm, ['updated_at']), mask(pr.body, ['updated_at']));
    assert.equal(pm.status, 'preview');
    const applied = await call('preference_remember', { ...remember, ...ids, key: 'lang', execute: true });
    assert.equal(applied.status, 'applied');
    const replay = await rest(url, admin, 'PUT', `${path}/lang`, { ...remember, execute: true });
    assert.equal(replay.body.status, 'replayed');
    assert.deepEqual(replay.body.receipt, applied.receipt);
    const retire = { source_ref: 'chat:2', source_quote: 'Forget the French.', expected_revision: 1,
      operation_id: 'op-2', execute: false };
    const rr = await rest(url, admin, 'POST', `${path}/lang/retire`, retire);
    const rm = await call('preference_retire', { ...retire, ...ids, key: 'lang' });
    assert.deepEqual(mask(rm, ['updated_at']), mask(rr.body, ['updated_at']));
  });

  test('decision_context_retrieve (fails open without a provider, on the elastic lane)', async () => {
    const args = { namespace: 'ns', scope_ref: 'codex://threads/t1', query: 'what did we decide',
      query_summary: 'decision lookup', max_results: 3, timeout_seconds: 2,
      observed_at: '2026-11-29T21:07:22.123Z' };
    const r = await rest(url, admin, 'POST', '/v1/decision-context/retrieve', args);
    const got = await call('decision_context_retrieve', args);
    assert.deepEqual(mask(got, ['receipt_id', 'latency_ms']), mask(r.body, ['receipt_id', 'latency_ms']));
    assert.equal(got.receipt.reason_code, 'provider_missing');
  });

  test('envelope_verify', async () => {
    const seed = JSON.parse(readFileSync(new URL('../fixtures/envelopes/context-envelope-v1.json', import.meta.url)));
    const created = await rest(url, admin, 'POST', '/v1/envelopes', { envelope: seed.conformance_fixture.happy_path });
    assert.equal(created.status, 201);
    const id = created.body.envelope_id;
    const r = await rest(url, admin, 'POST', `/v1/envelopes/${id}/verify`, {});
    const got = await call('envelope_verify', { envelope_id: id });
    assert.deepEqual(mask(got, ['revision', 'updated_at']), mask(r.body, ['revision', 'updated_at']));
    assert.equal(got.revision, r.body.revision + 1);
  });

  test('audit_verify (query parameters as arguments)', async () => {
    const r = await rest(url, admin, 'GET', '/v1/audit/verify?resource_type=source&limit=3');
    assert.deepEqual(await call('audit_verify', { resource_type: 'source', limit: 3 }), r.body);
    const next = await call('audit_verify', { resource_type: 'source', limit: 3, after: r.body.next_cursor });
    const rn = await rest(url, admin, 'GET', `/v1/audit/verify?resource_type=source&limit=3&after=${r.body.next_cursor}`);
    assert.deepEqual(next, rn.body);
  });

  test('concurrent calls on one client', async () => {
    const all = await Promise.all([1, 2, 3, 4].map(() => call('memory_search', { query: word })));
    for (const a of all) assert.deepEqual(a, all[0]);
  });
});

describe('refusals are isError results with the problem', () => {
  async function refused(name, args, client = mcp.client) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, JSON.stringify(r));
    // the problem once, as text: no structuredContent (the output schema is the answer's)
    assert.equal(r.structuredContent, undefined);
    return JSON.parse(r.content[0].text);
  }

  test('a stale revision (with current_revision), and nothing changes', async () => {
    const s = await source(`stale ${word}`);
    const p = await refused('source_classify', { source_id: s.source_id, expected_revision: 7, classification: 'cold' });
    assert.equal(p.code, 'stale_revision');
    assert.equal(p.status, 409);
    assert.equal(p.current_revision, 1);
    const now = await rest(url, admin, 'GET', `/v1/memory/sources/${s.source_id}`);
    assert.equal(now.body.classification, 'active');
  });

  test('a missing scope: forbidden (also for a tool tools/list hid)', async () => {
    const reader = await connect(`${url}/mcp`, token(tenant, 'memory:read'));
    const p = await refused('source_create', { source_kind: 'note', content: 'x' }, reader.client);
    assert.equal(p.code, 'forbidden');
    assert.match(p.detail, /memory:write/);
    await reader.client.close();
  });

  test('arguments are validated like the /v1 body', async () => {
    const bad = { query: '', limit: 51 };
    const r = await rest(url, admin, 'POST', '/v1/memory/search', bad);
    const p = await refused('memory_search', bad);
    assert.deepEqual(mask(p, ['request_id']), mask(r.body, ['request_id']));
    assert.deepEqual(p.errors.map((e) => e.field).sort(), ['limit', 'query']);
    assert.equal((await refused('memory_search', { query: 'a', colour: 'red' })).code, 'unknown_field');
    assert.equal((await refused('audit_verify', { colour: 'red' })).code, 'unknown_field');
    assert.equal((await refused('preference_view', { goal_id: 'g1' })).errors[0].field, 'agent_id');
    assert.equal((await refused('preference_view', { goal_id: 'g 1', agent_id: 'a' })).errors[0].field, 'goal_id');
    assert.equal((await refused('source_create', { source_kind: 'note', content: 'x',
      foreign: { owner: 'bob' } })).code, 'thin_pointer_required');
  });

  test('an unknown tool is a JSON-RPC error (-32602)', async () => {
    await assert.rejects(mcp.client.callTool({ name: 'no_such_tool', arguments: {} }), /-32602/);
  });
});

describe('stateless: two instances answer one client alternately', () => {
  test('initialize on one instance, every later message on either', async () => {
    const other = await startServer();
    const proxy = await startProxy([url, other.url]);
    try {
      const c = await connect(`${proxy.url}/mcp`, admin);
      const { tools } = await c.client.listTools();
      assert.equal(tools.length, ALL_TOOLS.length);
      for (let i = 0; i < 4; i++) await call('memory_search', { query: word }, c.client);
      await c.client.close();
      assert.ok(proxy.counts[0] >= 3 && proxy.counts[1] >= 3, `both served: ${proxy.counts}`);
    } finally {
      await proxy.close();
      await other.stop();
    }
  });
});
