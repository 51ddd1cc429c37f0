// ctest mcp_lifecycle: the tool list is one a model can use (docs/mcp.md "Schemas"): every input
// property, nested ones included, has a description; no schema has a type union (an optional
// value is an absent property); the admin tools/list stays under 24 KiB in every revision.
// (The official Inspector CLI's --strict listing, in both eras, is inspector.test.mjs's.)
// node --test; nothing skips.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startServer, token, unique } from './lib.mjs';

const LIST_MAX = 24 * 1024;

let srv, admin;

before(async () => {
  srv = await startServer();
  admin = token(unique('mcp-schemas'), 'admin');
});
after(async () => {
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 on SIGTERM');
});

// tools/list as a client of that revision sends it (2026-07-28: _meta and Mcp-Method).
async function toolsList(version) {
  const modern = version === '2026-07-28';
  const params = modern ? { _meta: { 'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': {} } } : undefined;
  const res = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': version,
      ...(modern ? { 'Mcp-Method': 'tools/list' } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  return { bytes: Buffer.byteLength(text), tools: JSON.parse(text).result.tools };
}

// Calls fn(schema, path) for every subschema of s.
function walk(s, path, fn) {
  if (!s || typeof s !== 'object') return;
  fn(s, path);
  for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`, fn);
  if (s.items) walk(s.items, `${path}[]`, fn);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    walk(s.additionalProperties, `${path}{}`, fn);
  }
  for (const b of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(b, path, fn);
}

test('the admin tools/list is under 24 KiB, in every revision', async () => {
  for (const v of ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    const { bytes, tools } = await toolsList(v);
    assert.equal(tools.length, 21, v);
    assert.ok(bytes < LIST_MAX, `${v}: tools/list is ${bytes} bytes`);
  }
});

test('every input property is described, and no schema has a type union', async () => {
  const { tools } = await toolsList('2025-11-25');
  for (const t of tools) {
    walk(t.inputSchema, t.name, (s, path) => {
      assert.ok(!Array.isArray(s.type), `${path}: a type union`);
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        assert.ok(typeof v.description === 'string' && v.description.length > 10,
          `${path}.${k} has no description`);
      }
    });
    walk(t.outputSchema, `${t.name}(out)`, (s, path) => {
      assert.ok(!Array.isArray(s.type), `${path}: a type union`);
    });
    assert.ok(!t.description.includes('isError'), `${t.name}: the refusal shape is said once`);
  }
});
