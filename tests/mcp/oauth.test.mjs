// ctest mcp_oauth: recallgate as an OAuth 2.1 resource server (docs/mcp.md, "OAuth 2.1") against a real
// authorization server (oidc-provider on loopback, oauth_server.mjs) issuing JWT access
// tokens, with the official SDK client's own OAuth flow (client credentials): discovery from
// the 401's resource_metadata, scopes that shape tools/list and refuse calls, the refusals
// (another audience, expired, no tenant, another issuer), key rotation with a rate-limited
// refetch, the hashed actor in the audit, and recallgate's own tokens beside OAuth.
// node --test; nothing skips.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, createHmac, createPublicKey } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { LAUNCH } from '../lib/launch.mjs';
import { connect, rest, startServer, token, unique } from './lib.mjs';
import { SECRET, newKey, startAuthServer } from './oauth_server.mjs';

// The seconds between two fetches of the issuer's keys, shortened from the default minute so
// that the rotation is seen within the test.
const REFETCH_S = 4;

const tenant = unique('mcp-oauth');
const clients = [
  { id: 'agent', tenant, scope: 'memory:read memory:write audit:read' },
  { id: 'reader', tenant, scope: 'memory:read' },
  { id: 'tenantless', tenant: null, scope: 'memory:read' },
];
const rsa = newKey('RS256');
let as, other, srv, url, resource, admin;

before(async () => {
  as = await startAuthServer({ clients, keys: [rsa] });
  // Another issuer with the very same key: its tokens verify, and only iss tells them apart.
  other = await startAuthServer({ clients, keys: [rsa] });
  const port = execFileSync(LAUNCH, ['port'], { encoding: 'utf8' }).trim();
  resource = `http://127.0.0.1:${port}/mcp`;
  srv = await startServer({
    RECALLGATE_OAUTH_ISSUER: as.issuer,
    RECALLGATE_OAUTH_RESOURCE: resource,
    RECALLGATE_OAUTH_JWKS_REFETCH: String(REFETCH_S),
  }, ['--port', port]);
  url = srv.url;
  admin = token(tenant, 'admin');
});
after(async () => {
  assert.equal(await srv?.stop(), 0, 'recallgate exits 0 on SIGTERM');
  await as?.close();
  await other?.close();
});

// An SDK client that gets its own token: ClientCredentialsProvider, discovery from the 401.
async function oauthClient(clientId, scope) {
  const authProvider = new ClientCredentialsProvider({
    clientId, clientSecret: SECRET, scope, expectedIssuer: as.issuer,
  });
  const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider });
  const client = new Client({ name: 'recallgate-oauth-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, authProvider };
}

// A tools/list with a bearer token, by hand: { status, www }.
async function listWith(tok) {
  const res = await fetch(resource, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.text();
  return { status: res.status, www: res.headers.get('www-authenticate') };
}

const metadataUrl = () => `${new URL(resource).origin}/.well-known/oauth-protected-resource`;

describe('discovery', () => {
  test('a 401 names the protected resource metadata, which names the issuer', async () => {
    const res = await fetch(resource, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl()}"`);
    const v1 = await rest(url, 'rg_not-a-token', 'GET', '/v1/memory/sources');
    assert.equal(v1.status, 401);
    for (const u of [metadataUrl(), `${metadataUrl()}/mcp`]) {
      const m = await fetch(u);
      assert.equal(m.status, 200, u);
      const doc = await m.json();
      assert.equal(doc.resource, resource);
      assert.deepEqual(doc.authorization_servers, [as.issuer]);
      assert.deepEqual(doc.bearer_methods_supported, ['header']);
      assert.ok(doc.scopes_supported.includes('memory:write') && doc.scopes_supported.includes('admin'));
    }
  });
});

describe('the SDK client with its own OAuth flow', () => {
  let agent, reader, created;

  test('client credentials: discovers, gets a token for this resource, lists and calls tools', async () => {
    agent = await oauthClient('agent', 'memory:read memory:write audit:read');
    const tok = agent.authProvider.tokens().access_token;
    const claims = JSON.parse(Buffer.from(tok.split('.')[1], 'base64url'));
    assert.equal(claims.aud, resource, 'the SDK asked for this resource (RFC 8707)');
    const names = (await agent.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('source_create') && names.includes('memory_search') &&
      names.includes('audit_verify'), names.join());
    assert.ok(!names.includes('preference_view'), 'no preferences:read, no preference_view');
    const r = await agent.client.callTool({ name: 'source_create',
      arguments: { source_kind: 'note', content: `written by an OAuth agent ${unique('w')}` } });
    assert.equal(r.isError, false, JSON.stringify(r.structuredContent));
    created = r.structuredContent.source_id;
    assert.equal(as.jwksFetches(), 1, 'the issuer keys were fetched once');
  });

  test('the audit names the caller by a hash of issuer and subject, never the subject', async () => {
    const items = (await rest(url, admin, 'GET',
      `/v1/audit?resource_type=source&resource_id=${created}`)).body.items;
    assert.equal(items.length, 1);
    const want = 'jwt_' + createHash('sha256').update(`${as.issuer}\nagent`).digest('hex').slice(0, 32);
    assert.equal(items[0].actor_token_id, want);
    assert.ok(!JSON.stringify(items[0]).includes('"agent"'));
  });

  test('the same token works on /v1', async () => {
    const tok = agent.authProvider.tokens().access_token;
    const r = await rest(url, tok, 'GET', `/v1/memory/sources/${created}`);
    assert.equal(r.status, 200);
    assert.equal((await rest(url, tok, 'GET', '/v1/tokens')).status, 403, 'no admin scope');
  });

  test('scopes limit tools/list and calls: a missing scope is a forbidden isError result', async () => {
    reader = await oauthClient('reader', 'memory:read');
    const names = (await reader.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('memory_search'));
    assert.ok(!names.includes('source_create'), names.join());
    const r = await reader.client.callTool({ name: 'source_create', arguments: { source_kind: 'note', content: 'x' } });
    assert.equal(r.isError, true);
    assert.equal(JSON.parse(r.content[0].text).code, 'forbidden', 'the problem, as text');
    await reader.client.close();
    await agent.client.close();
  });
});

describe('refused tokens: 401 with the metadata URL', () => {
  const refused = async (tok) => {
    const r = await listWith(tok);
    assert.equal(r.status, 401);
    assert.equal(r.www, `Bearer resource_metadata="${metadataUrl()}"`);
  };

  test('a token for another audience', async () => {
    await refused(await as.token('agent', `${new URL(resource).origin}/other`));
  });

  test('an expired token (issued two hours ago for ten minutes)', async () => {
    await refused(await as.token('agent', resource, undefined, 7200));
  });

  test('a token without the tenant claim', async () => {
    await refused(await as.token('tenantless', resource));
  });

  test('a token of another issuer (signed with the same key)', async () => {
    await refused(await other.token('agent', resource));
  });

  test('a token whose signature does not verify', async () => {
    const [h, p] = (await as.token('agent', resource)).split('.');
    const forged = JSON.parse(Buffer.from(p, 'base64url'));
    forged.scope = 'admin';
    await refused(`${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${'A'.repeat(342)}`);
  });

  test('alg none, and HS256 keyed with the issuer public key (algorithm confusion)', async () => {
    const [h, p] = (await as.token('agent', resource)).split('.');
    const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const header = JSON.parse(Buffer.from(h, 'base64url'));
    await refused(`${b64({ ...header, alg: 'none' })}.${p}.`);
    const pem = createPublicKey({ key: rsa, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const input = `${b64({ ...header, alg: 'HS256' })}.${p}`;
    await refused(`${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`);
  });

  test('a token that is not a JWT, or none', async () => {
    await refused('a.b.c');
    await refused('');
  });
});

describe('key rotation', () => {
  test('a new key works once fetched; unknown keys are fetched at most once per interval', async () => {
    const fetched = as.jwksFetches();
    const ec = newKey('ES256');
    as.rotate([ec, rsa], 'ES256');
    await sleep(REFETCH_S * 1000 + 500); // the first fetch's interval is over
    const fresh = await as.token('agent', resource);
    assert.equal(JSON.parse(Buffer.from(fresh.split('.')[0], 'base64url')).kid, ec.kid);
    // 16 requests at once with the new key: one fetch serves them all (the others wait for it
    // on their lanes, or find the key already there).
    const all = await Promise.all(Array.from({ length: 16 }, () => listWith(fresh)));
    assert.deepEqual(all.map((r) => r.status), Array(16).fill(200), 'an ES256 token of the new key');
    assert.equal(as.jwksFetches(), fetched + 1);

    // Another rotation within the interval: its unknown key fetches nothing, twice.
    const ec2 = newKey('ES256');
    as.rotate([ec2, ec, rsa], 'ES256'); // oidc-provider keeps an RSA key for its ID tokens
    const newer = await as.token('agent', resource);
    assert.equal((await listWith(newer)).status, 401);
    assert.equal((await listWith(newer)).status, 401);
    assert.equal(as.jwksFetches(), fetched + 1, 'no second fetch within the interval');
    assert.equal((await listWith(fresh)).status, 200, 'the known key still works');

    await sleep(REFETCH_S * 1000 + 500);
    assert.equal((await listWith(newer)).status, 200, 'fetched once the interval is over');
    assert.equal(as.jwksFetches(), fetched + 2);
  });
});

describe("recallgate's own tokens beside OAuth", () => {
  test('a static token on /mcp and /v1', async () => {
    const own = await connect(resource, admin);
    const names = (await own.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('source_create') && names.includes('preference_view'));
    await own.client.close();
    assert.equal((await rest(url, admin, 'GET', '/v1/memory/sources')).status, 200);
  });
});
