// ctest mcp_modern: /mcp under MCP revision 2026-07-28 (the modern era, docs/mcp.md
// "Revisions"), beside the legacy revisions on the same endpoint. The official modern SDK
// client (@modelcontextprotocol/client, pinned in package.json) connects without initialize,
// lists the tools (the same as a legacy client sees, by scope) and calls them: a valid call, an
// invalid one and one without its scope answer what /v1 answers, and a mutation is audited as
// through /v1. Then raw HTTP, one case a rule: header/body mismatches, a missing _meta, an
// unsupported version, gone methods, server/discover's content, resultType on every result and
// the cache hints. node --test; nothing skips.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connect, connectModern, mask, rest, startServer, token, unique } from './lib.mjs';

const MODERN = '2026-07-28';
const SERVED = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-http', version: '1.0.0' },
};
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

let srv, url, admin, reader, modern, legacy;
const tenant = unique('mcp-modern');
const word = unique('okapi').replace(/[^a-z]/g, '');

before(async () => {
  srv = await startServer();
  url = srv.url;
  admin = token(tenant, 'admin');
  reader = token(tenant, 'memory:read');
  modern = await connectModern(`${url}/mcp`, admin);
  legacy = await connect(`${url}/mcp`, admin);
});
after(async () => {
  await modern?.client.close();
  await legacy?.client.close();
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 on SIGTERM');
});

async function source(content) {
  const r = await rest(url, admin, 'POST', '/v1/memory/sources', { source_kind: 'note', content });
  assert.equal(r.status, 201);
  return r.body;
}

// A call's answer, or its refusal's problem (as text only, like the legacy era's).
async function called(client, name, args, isError) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, isError, `${name}: ${r.content[0].text}`);
  if (isError) {
    assert.equal(r.structuredContent, undefined);
    return JSON.parse(r.content[0].text);
  }
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, 'text is the same JSON');
  return r.structuredContent;
}

describe('the official modern SDK client', () => {
  test('connects without initialize: revision 2026-07-28, from server/discover', () => {
    assert.equal(modern.client.getProtocolEra(), 'modern');
    assert.equal(modern.client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(modern.client.getServerVersion().name, 'recallgate');
    assert.ok(modern.client.getServerCapabilities().tools, 'tools capability');
    assert.equal(modern.client.getInstructions(), legacy.client.getInstructions(),
      'one instructions text for both eras');
    assert.equal(modern.transport.sessionId, undefined, 'stateless: no Mcp-Session-Id');
  });

  test("'auto' negotiation probes with server/discover and stays modern", async () => {
    const auto = await connectModern(`${url}/mcp`, admin, { mode: 'auto' });
    assert.equal(auto.client.getProtocolEra(), 'modern');
    assert.equal(auto.client.getNegotiatedProtocolVersion(), MODERN);
    await auto.client.close();
  });

  for (const [who, tok] of [['admin', () => admin], ['memory:read', () => reader]]) {
    test(`tools/list for a ${who} token is the legacy era's list`, async () => {
      const m = await connectModern(`${url}/mcp`, tok());
      const l = await connect(`${url}/mcp`, tok());
      const [mt, lt] = [(await m.client.listTools()).tools, (await l.client.listTools()).tools];
      assert.deepEqual(mt, lt);
      assert.ok(mt.length > 0 && mt.every((t) => t.title && t.outputSchema && t.annotations));
      assert.equal(mt.some((t) => t.name === 'source_create'), who === 'admin', 'by scope');
      await m.client.close();
      await l.client.close();
    });
  }

  test('a valid call answers what /v1 answers', async () => {
    const s = await source(`the ${word} ate leaves`);
    const args = { query: word, limit: 5 };
    const r = await rest(url, admin, 'POST', '/v1/memory/search', args);
    const got = await called(modern.client, 'memory_search', args, false);
    assert.deepEqual(got, r.body);
    assert.deepEqual(got.items.map((i) => i.record_id), [s.source_id]);
  });

  test('an invalid call is an isError result with the /v1 problem', async () => {
    const bad = { query: '', limit: 51 };
    const r = await rest(url, admin, 'POST', '/v1/memory/search', bad);
    const p = await called(modern.client, 'memory_search', bad, true);
    assert.deepEqual(mask(p, ['request_id']), mask(r.body, ['request_id']));
    assert.deepEqual(p.errors.map((e) => e.field).sort(), ['limit', 'query']);
  });

  test('a call without its scope is forbidden, as through /v1', async () => {
    const m = await connectModern(`${url}/mcp`, reader);
    const p = await called(m.client, 'source_create', { source_kind: 'note', content: 'x' }, true);
    assert.equal(p.code, 'forbidden');
    assert.match(p.detail, /memory:write/);
    await m.client.close();
  });

  test('a mutation is audited as the /v1 call is', async () => {
    const args = { source_kind: 'fact', content: `audited ${word}` };
    const r = await rest(url, admin, 'POST', '/v1/memory/sources', args);
    const got = await called(modern.client, 'source_create', args, false);
    assert.deepEqual(mask(got, ['source_id', 'created_at']), mask(r.body, ['source_id', 'created_at']));
    const trail = async (id) => (await rest(url, admin, 'GET',
      `/v1/audit?resource_type=source&resource_id=${id}`)).body.items;
    const volatile = ['seq', 'at', 'resource_id', 'request_id', 'prev_hash', 'hash'];
    const viaMcp = await trail(got.source_id);
    assert.deepEqual(viaMcp.map((x) => x.action), ['source.created']);
    assert.deepEqual(mask(viaMcp, volatile), mask(await trail(r.body.source_id), volatile));
  });

  test('an unknown tool is a JSON-RPC error (-32602)', async () => {
    await assert.rejects(modern.client.callTool({ name: 'no_such_tool', arguments: {} }),
      (e) => e.code === -32602);
  });
});

// POST /mcp as a 2026-07-28 client sends it: the standard headers mirror the body.
function request(method, params = {}, meta = META, id = 7) {
  return { jsonrpc: '2.0', id, method, params: meta ? { ...params, _meta: meta } : params };
}
function headersOf(m) {
  return {
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': m.method,
    ...(typeof m.params?.name === 'string' ? { 'Mcp-Name': m.params.name } : {}),
  };
}
async function post(body, headers = headersOf(body), tok = admin) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${tok}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== null)),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

const list = request('tools/list');
const call = request('tools/call', { name: 'memory_search', arguments: { query: 'x' } });
const b64 = (s) => `=?base64?${Buffer.from(s).toString('base64')}?=`;
const without = (key) => Object.fromEntries(Object.entries(META).filter(([k]) => k !== key));

// Each rule's refusal: HTTP status and JSON-RPC code as the revision's pages give them
// (docs/mcp.md, "Revisions"), answered with the request's id.
const refusals = [
  ['MCP-Protocol-Version disagrees with _meta', list, { 'MCP-Protocol-Version': '2025-11-25' }, 400, -32020],
  ['MCP-Protocol-Version is missing', list, { 'MCP-Protocol-Version': null }, 400, -32020],
  ['Mcp-Method disagrees with the method', list, { 'Mcp-Method': 'tools/call' }, 400, -32020],
  ['Mcp-Method is missing', list, { 'Mcp-Method': null }, 400, -32020],
  ['Mcp-Name disagrees with params.name', call, { 'Mcp-Name': 'memory_context' }, 400, -32020],
  ['Mcp-Name is missing on tools/call', call, { 'Mcp-Name': null }, 400, -32020],
  ['Mcp-Name is a broken Base64 sentinel', call, { 'Mcp-Name': '=?base64?!!!?=' }, 400, -32020],
  ['Mcp-Name is the Base64 of another name', call, { 'Mcp-Name': b64('memory_contexts') }, 400, -32020],
  ['a 2026-07-28 request without _meta', request('tools/list', {}, null), {}, 400, -32602],
  ['_meta without clientCapabilities',
    request('tools/list', {}, without('io.modelcontextprotocol/clientCapabilities')), {}, 400, -32602],
  ['clientInfo that is not an Implementation',
    request('tools/list', {}, { ...META, 'io.modelcontextprotocol/clientInfo': 'me' }), {}, 400, -32602],
  ['a protocolVersion that is not a string',
    request('tools/list', {}, { ...META, 'io.modelcontextprotocol/protocolVersion': 20260728 }), {}, 400, -32602],
  ['ping: removed by 2026-07-28', request('ping'), {}, 404, -32601],
  ['initialize with the envelope: no such method', request('initialize', { protocolVersion: MODERN }), {}, 404, -32601],
  ['resources/list: no resources capability', request('resources/list'), {}, 404, -32601],
  ['a posted response', { jsonrpc: '2.0', id: 7, result: {} }, { 'Mcp-Method': null }, 400, -32600],
];

describe('raw HTTP: each rule of 2026-07-28', () => {
  for (const [name, body, headers, status, code] of refusals) {
    test(`${name} → ${status} ${code}`, async () => {
      const r = await post(body, { ...(body.method ? headersOf(body) : { 'MCP-Protocol-Version': MODERN }), ...headers });
      assert.equal(r.status, status, JSON.stringify(r.json));
      assert.equal(r.json.error.code, code, JSON.stringify(r.json));
      assert.equal(r.json.id, 7, 'the request id is echoed');
      assert.equal(r.json.result, undefined);
    });
  }

  for (const version of ['2099-01-01', '2025-11-25']) {
    test(`a request in ${version} per _meta → 400 UnsupportedProtocolVersion naming what is served`, async () => {
      const m = request('tools/list', {}, { ...META, 'io.modelcontextprotocol/protocolVersion': version });
      const r = await post(m, { ...headersOf(m), 'MCP-Protocol-Version': version });
      assert.equal(r.status, 400);
      assert.equal(r.json.error.code, -32022);
      assert.deepEqual(r.json.error.data, { supported: SERVED, requested: version });
    });
  }

  test('a batch under 2026-07-28 → 400 -32600, and a batch with a _meta claim in any era', async () => {
    for (const header of [MODERN, '2025-03-26']) {
      const r = await post([request('tools/list'), request('tools/list', {}, META, 8)],
        { 'MCP-Protocol-Version': header });
      const code = Array.isArray(r.json) ? r.json[0].error.code : r.json.error.code;
      assert.equal(code, -32600, JSON.stringify(r.json));
      assert.equal(r.status, header === MODERN ? 400 : 200);
    }
  });

  test('a notification is accepted (202, no body), headers or not', async () => {
    const n = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: META } };
    assert.equal((await post(n, {})).status, 202);
    assert.equal((await post(n, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': n.method })).status, 202);
    assert.equal((await post(n, { 'MCP-Protocol-Version': '2025-11-25' })).status, 400, 'no contradiction');
  });

  test('Mcp-Name in the Base64 sentinel form is decoded', async () => {
    const r = await post(call, { ...headersOf(call), 'Mcp-Name': b64('memory_search') });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.result.isError, false);
  });

  test("a method's own errors stay in-band (200): an unknown tool, a cursor", async () => {
    const unknown = request('tools/call', { name: 'no_such_tool', arguments: {} });
    for (const m of [unknown, request('tools/list', { cursor: 'abc' })]) {
      const r = await post(m);
      assert.equal(r.status, 200);
      assert.equal(r.json.error.code, -32602);
    }
  });

  test('server/discover: versions, capabilities, identity, instructions, cache hints', async () => {
    const r = await post(request('server/discover'));
    assert.equal(r.status, 200);
    const d = r.json.result;
    assert.deepEqual(d.supportedVersions, SERVED);
    assert.deepEqual(d.capabilities, { tools: { listChanged: false } });
    assert.equal(d.serverInfo.name, 'recallgate');
    assert.deepEqual(d._meta[SERVER_INFO], d.serverInfo);
    assert.equal(d.instructions, legacy.client.getInstructions());
    assert.equal(d.cacheScope, 'public', 'the same answer for every caller');
    assert.ok(Number.isInteger(d.ttlMs) && d.ttlMs > 0);
    assert.equal(r.headers.get('mcp-session-id'), null);
  });

  test('every result carries resultType "complete" and the serverInfo _meta', async () => {
    const refused = request('tools/call', { name: 'source_create', arguments: { source_kind: 'note', content: 'x' } });
    const answers = [await post(request('server/discover')), await post(list), await post(call),
      await post(refused, headersOf(refused), reader)];
    for (const r of answers) {
      assert.equal(r.status, 200);
      assert.equal(r.json.result.resultType, 'complete', JSON.stringify(r.json).slice(0, 200));
      assert.equal(r.json.result._meta[SERVER_INFO].name, 'recallgate');
    }
    assert.equal(answers[3].json.result.isError, true, 'an isError result too');
  });

  test('tools/list carries cache hints, private to the token (it follows its scopes)', async () => {
    const r = await post(list);
    assert.equal(r.json.result.cacheScope, 'private');
    assert.ok(Number.isInteger(r.json.result.ttlMs) && r.json.result.ttlMs > 0);
  });

  test('the legacy era on the same endpoint has none of it', async () => {
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'MCP-Protocol-Version': '2025-11-25' });
    assert.equal(r.status, 200);
    for (const k of ['resultType', 'ttlMs', 'cacheScope', '_meta']) assert.equal(r.json.result[k], undefined, k);
    const p = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { 'MCP-Protocol-Version': '2025-11-25' });
    assert.deepEqual(p.json.result, {});
  });

  test('no token → 401 before any of it', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headersOf(list) },
      body: JSON.stringify(list),
    });
    assert.equal(res.status, 401);
  });
});
