// A real OAuth 2.1 authorization server for the OAuth tests: npm's oidc-provider (a certified
// OpenID Provider, pinned in package.json) on a free loopback port, with resource indicators
// (RFC 8707) and JWT access tokens (RFC 9068) for the client credentials grant. Its signing
// keys can be rotated in place (a new provider instance behind the same issuer URL), and it
// counts the fetches of its key set.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

// A new private signing key as a JWK: 'RS256' (RSA 2048) or 'ES256' (P-256).
export function newKey(alg) {
  const { privateKey } = alg === 'ES256'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`, alg, use: 'sig' };
}

export const SECRET = 'a-client-secret-for-tests-only-0123456789';

// Each client: { id, tenant (or null: no tenant claim), scope, ttl (seconds, default 600) }.
function providerFor(issuer, keys, clients, signAlg, tenantClaim) {
  const byId = new Map(clients.map((c) => [c.id, c]));
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.id, client_secret: SECRET, grant_types: ['client_credentials'],
      redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic',
      scope: c.scope,
    })),
    jwks: { keys },
    scopes: [...new Set(clients.flatMap((c) => c.scope.split(' ')))],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        // Any resource the client asks for is a JWT audience (so that "another audience" is a
        // token the authorization server really issues).
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: byId.get(client.clientId).scope,
          audience: resource,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: signAlg } },
        }),
      },
    },
    ttl: { ClientCredentials: (ctx, token, client) => byId.get(client.clientId).ttl ?? 600 },
    extraTokenClaims: (ctx, token) => {
      const c = byId.get(token.clientId);
      return c?.tenant ? { [tenantClaim]: c.tenant } : undefined;
    },
  });
  provider.on('server_error', (ctx, err) => console.error('oidc-provider:', err));
  return provider;
}

// Starts the authorization server; resolves { issuer, jwksFetches(), rotate(keys, signAlg),
// token(clientId, resource), close() }.
export async function startAuthServer({ clients, keys = [newKey('RS256')], signAlg = 'RS256', tenantClaim = 'tenant' }) {
  let fetches = 0;
  let callback = null;
  const server = http.createServer((req, res) => {
    if (req.url.startsWith('/jwks')) fetches++;
    callback(req, res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const use = (k, alg) => { callback = providerFor(issuer, k, clients, alg, tenantClaim).callback(); };
  use(keys, signAlg);
  return {
    issuer,
    jwksFetches: () => fetches,
    // Serves another key set (signing with the first key of signAlg), as a key rotation does.
    rotate: (k, alg) => use(k, alg),
    // An access token of the client for the resource, straight from the token endpoint, issued
    // as if the authorization server's clock were ageSeconds behind (an expired token is one the
    // server really issued, long enough ago). Only this process's clock is shifted, for the call.
    async token(clientId, resource, scope, ageSeconds = 0) {
      const realNow = Date.now;
      if (ageSeconds) Date.now = () => realNow() - ageSeconds * 1000;
      try {
        return await this.tokenNow(clientId, resource, scope);
      } finally {
        Date.now = realNow;
      }
    },
    async tokenNow(clientId, resource, scope) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource });
      if (scope) body.set('scope', scope);
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body,
      });
      const doc = await res.json();
      if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(doc)}`);
      return doc.access_token;
    },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
