// Helpers for the MCP tests: the real recallgate binary on a free port against the migrated
// PostgreSQL of DATABASE_URL (like tests/integration/harness.h), tokens from its CLI, /v1
// calls with fetch, an SDK client, and a small loopback proxy. Nothing here skips: a missing
// binary, database or package is an error.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const BIN = process.env.RG_BIN;
if (!BIN) throw new Error('RG_BIN (the recallgate binary) is not set');
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is not set');

export function unique(prefix) {
  return `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Starts `recallgate serve`; resolves { url, stop } once /healthz answers.
export async function startServer(env = {}) {
  const port = await freePort();
  const child = spawn(BIN, ['serve'], {
    env: { ...process.env, RECALLGATE_ADDR: `127.0.0.1:${port}`, RECALLGATE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`recallgate exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch { /* not yet listening */ }
    await new Promise((r) => setTimeout(r, 100));
    if (i === 99) throw new Error('recallgate did not answer /healthz within 10 s');
  }
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
  return { url, stop };
}

export function token(tenant, scopes, name = 'mcp-test') {
  return execFileSync(BIN, ['token', 'create', '--tenant', tenant, '--scopes', scopes, '--name', name],
    { encoding: 'utf8' }).trim();
}

// A /v1 call: { status, body } (body parsed when JSON).
export async function rest(url, tok, method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${tok}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// An official SDK client connected over Streamable HTTP with the bearer token.
export async function connect(mcpUrl, tok) {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${tok}` } },
  });
  const client = new Client({ name: 'recallgate-mcp-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// A loopback HTTP proxy: each request goes to the next of `targets` in turn (round robin),
// with `addHeaders` added; Host is passed on as the client sent it (as a gateway does).
// Resolves { url, counts, close }.
export async function startProxy(targets, addHeaders = {}) {
  const counts = targets.map(() => 0);
  let next = 0;
  const server = http.createServer((req, res) => {
    const i = next++ % targets.length;
    counts[i]++;
    const target = new URL(targets[i]);
    const up = http.request({
      host: target.hostname, port: target.port, method: req.method, path: req.url,
      headers: { ...req.headers, ...addHeaders },
    }, (upRes) => {
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  const port = await freePort();
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

// A copy of v with the members named in keys (at any depth) replaced by '…': what differs
// between two calls by nature (new ids, times, latencies).
export function mask(v, keys) {
  if (Array.isArray(v)) return v.map((x) => mask(x, keys));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, keys.includes(k) ? '…' : mask(x, keys)]));
  }
  return v;
}
