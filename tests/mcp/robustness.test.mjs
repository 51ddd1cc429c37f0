// ctest mcp_sdk (second file): seeded random JSON-RPC traffic at /mcp — broken envelopes, wrong
// types, random tool arguments, batches, cut bodies, stray version headers, 2026-07-28 _meta
// and Mcp-Method/Mcp-Name headers, whole or broken — must never get a 5xx, a dropped connection
// or a non-JSON answer, and the server must exit 0 (no sanitizer report) afterwards. The same
// seed gives the same 1500 requests on every run.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startServer, token, unique } from './lib.mjs';

let srv, tok;
before(async () => {
  srv = await startServer();
  tok = token(unique('mcp-fuzz'), 'admin');
});
after(async () => {
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 after the random traffic');
});

function prng(seed) { // mulberry32
  return () => {
    seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('random messages never get a 5xx', async () => {
  const rnd = prng(20261201);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const tools = ['memory_search', 'memory_explain', 'memory_context', 'source_create', 'source_classify',
    'preference_view', 'preference_remember', 'preference_retire', 'decision_context_retrieve',
    'envelope_verify', 'audit_verify', 'nope', ''];
  const keys = ['query', 'limit', 'kinds', 'thread_id', 'source_kind', 'content', 'pointer', 'classification',
    'foreign', 'labels', 'expected_revision', 'source_id', 'goal_id', 'agent_id', 'key', 'statement',
    'source_ref', 'source_quote', 'operation_id', 'execute', 'expires_at', 'namespace', 'scope_ref',
    'query_summary', 'max_results', 'timeout_seconds', 'observed_at', 'extension_id', 'delivery',
    'envelope_id', 'resource_type', 'resource_id', 'after', 'max_items', 'budget_tokens', 'zzz'];
  const values = [null, true, false, 0, -1, 2 ** 63, 1.5, '', 'x', 'é'.repeat(300), 'a'.repeat(5000), [], [1],
    {}, { a: 1 }, 'src_x', '2026-11-29T21:07:22.123Z', 'g 1', '../..', '\u0000', 'note', 'cold', 1];
  const args = () => Object.fromEntries(Array.from({ length: Math.floor(rnd() * 8) }, () => [pick(keys), pick(values)]));
  const message = () => {
    const m = { jsonrpc: pick(['2.0', '2.0', '2.0', '1.0', 2]), id: pick([1, 'a', null, 1.5, {}, []]) };
    if (rnd() < 0.7) {
      m.method = 'tools/call';
      m.params = pick([{ name: pick(tools), arguments: pick([args(), args(), [], 'x', null]) }, [], 'p', {}]);
    } else {
      m.method = pick(['initialize', 'ping', 'tools/list', 'notifications/initialized', 'resources/list',
        'server/discover', 7]);
      if (rnd() < 0.5) m.params = pick([{}, { protocolVersion: pick(['2025-11-25', 'x', 1]) }, { cursor: 1 }, []]);
    }
    if (rnd() < 0.1) delete m.id;
    if (rnd() < 0.1 && m.params && typeof m.params === 'object' && !Array.isArray(m.params)) m.params._meta = meta();
    return m;
  };
  // A message of revision 2026-07-28: mostly well formed, its _meta sometimes broken.
  const meta = () => {
    const version = pick(['2026-07-28', '2026-07-28', '2025-11-25', 'bad', 1, null]);
    return rnd() < 0.6 ? { 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'f', version: '1' } }
      : pick([{ 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': pick([{}, 1]),
        'io.modelcontextprotocol/clientInfo': pick([undefined, 'x']) }, { 'io.modelcontextprotocol/protocolVersion': version }, 'x', {}]);
  };
  const modernMessage = () => {
    const m = { jsonrpc: '2.0', id: pick([1, 'a', 2]), method: pick(['tools/call', 'tools/call', 'tools/list', 'server/discover', 'ping', 'initialize', 'x']) };
    m.params = { _meta: meta(), ...(m.method === 'tools/call' ? { name: pick(tools), arguments: pick([args(), args(), []]) } : {}) };
    if (rnd() < 0.1) delete m.id;
    return m;
  };
  const statuses = new Map();
  let modern = 0; // answers under 2026-07-28
  for (let i = 0; i < 1500; i++) {
    const r = rnd();
    let body, single;
    if (r < 0.15) body = JSON.stringify(Array.from({ length: Math.floor(rnd() * 40) }, message));
    else if (r < 0.25) {
      const b = JSON.stringify(message());
      const at = Math.floor(rnd() * b.length);
      body = b.slice(0, at) + pick(['', '}', '\u0000', '"', '[[[[']) + b.slice(at);
    } else if (r < 0.4) body = JSON.stringify(single = modernMessage());
    else body = JSON.stringify(single = message());
    const headers = { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' };
    if (rnd() < 0.3) headers['MCP-Protocol-Version'] = pick(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', 'bad']);
    if (rnd() < 0.2) headers['Mcp-Method'] = pick(['tools/call', 'tools/list', 'server/discover', 'x']);
    if (rnd() < 0.2) headers['Mcp-Name'] = pick([...tools.filter(Boolean), '=?base64?bWVtb3J5X3NlYXJjaA==?=', '=?base64?%%?=', '=?base64??=']);
    if (single?.params?._meta?.['io.modelcontextprotocol/protocolVersion'] === '2026-07-28' && rnd() < 0.7) {
      headers['MCP-Protocol-Version'] = '2026-07-28'; // as a modern client sends them
      if (typeof single.method === 'string') headers['Mcp-Method'] = single.method;
      if (typeof single.params.name === 'string') headers['Mcp-Name'] = single.params.name;
    }
    const res = await fetch(`${srv.url}/mcp`, { method: 'POST', headers, body });
    const text = await res.text();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    // 404: a method 2026-07-28 does not have
    assert.ok([200, 202, 400, 404].includes(res.status), `request ${i}: ${res.status} ${text.slice(0, 200)}`);
    if (res.status === 202) assert.equal(text, '');
    else assert.doesNotThrow(() => JSON.parse(text), `request ${i}: not JSON`);
    if (res.status === 200 && JSON.parse(text).result?.resultType === 'complete') modern++;
  }
  assert.ok(statuses.get(200) > 200 && statuses.get(400) > 100 && statuses.get(202) > 10 &&
    modern > 5 && statuses.get(404) > 5,
    `a spread of answers: ${[...statuses]}`);
});
