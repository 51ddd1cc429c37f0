// Helpers for the MCP tests: the real recallgate binary on a free port against the migrated
// PostgreSQL of DATABASE_URL, and tokens, both from scripts/rg-launch (as every harness), /v1
// calls with fetch, an SDK client of each era, and a small loopback proxy. Nothing here
// skips: a missing binary, database or package is an error.
import { randomBytes } from 'node:crypto';
import http from 'node:http';

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { launch, token as launchToken } from '../lib/launch.mjs';

export const BIN = process.env.RG_BIN;
if (!BIN) throw new Error('RG_BIN (the recallgate binary) is not set');
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is not set');

export function unique(prefix) {
  return `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

// Starts `recallgate serve` with scripts/rg-launch (tests/lib/launch.mjs): resolves
// { url, stop } once /healthz answers; stop resolves to the exit status. The server's log
// (level warn) goes to this process's stderr. args: more rg-launch options (--port P).
export async function startServer(env = {}, args = []) {
  const srv = await launch(BIN, args, {
    env: { ...process.env, RECALLGATE_LOG_LEVEL: 'warn', ...env },
  });
  return { url: srv.url, stop: () => srv.stop() };
}

export function token(tenant, scopes, name = 'mcp-test') {
  return launchToken(BIN, tenant, scopes, name);
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

// The official modern SDK client (@modelcontextprotocol/client, revision 2026-07-28) connected
// over Streamable HTTP with the bearer token. versionNegotiation: { mode: { pin: '2026-07-28' } }
// (modern or fail) or { mode: 'auto' } (probe with server/discover, fall back to initialize).
export async function connectModern(mcpUrl, tok, versionNegotiation = { mode: { pin: '2026-07-28' } }) {
  const transport = new ModernTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${tok}` } },
  });
  const client = new ModernClient({ name: 'recallgate-mcp-tests', version: '1.0.0' },
    { versionNegotiation });
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
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
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
