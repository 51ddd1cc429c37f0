// The dashboard files' HTTP contract, without a browser and byte for byte (node:http, which
// neither adds Accept-Encoding nor decodes): redirect, types, security headers, ETag/304, HEAD,
// 404 problem, and gzip: Content-Encoding: gzip with Vary: Accept-Encoding when the request
// accepts gzip, the same bytes once gunzipped, identity otherwise.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';

import { ROOT, check, expect } from './harness.mjs';

const CSP = "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };

// One request; resolves to {status, headers, body: Buffer} as they came off the wire.
export function raw(base, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
        body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function uiFiles(dir = join(ROOT, 'ui')) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? uiFiles(p) : [relative(join(ROOT, 'ui'), p)];
  }).sort();
}

// The encodings a request may say it accepts, and whether gzip is then the answer.
const ACCEPT = [
  [undefined, false], ['identity', false], ['gzip', true], ['gzip, deflate, br, zstd', true],
  ['br;q=1.0, GZIP;q=0.5', true], ['x-gzip', true], ['*', true], ['gzip;q=0', false],
  ['gzip; q=0.000, *', false], ['*;q=0', false], ['deflate', false], ['gzip;q=0.001', true],
];

// Resolves to the bytes on the wire of every file of ui/, identity and gzip.
export async function checkHttp(base) {
  const r = await raw(base, '/ui');
  check(r.status === 301 && r.headers.location === '/ui/', `GET /ui → ${r.status}`);
  const wire = { identity: 0, gzip: 0, files: 0 };
  for (const file of uiFiles()) {
    const path = file === 'index.html' ? '/ui/' : `/ui/${file}`;
    const disk = readFileSync(join(ROOT, 'ui', file));
    const type = TYPES[file.slice(file.lastIndexOf('.'))];
    const plain = await raw(base, path);
    const h = plain.headers;
    check(plain.status === 200 && h['content-type'] === type,
      `${path}: ${plain.status} ${h['content-type']}`);
    check(plain.body.equals(disk), `${path}: the body is not ui/${file}`);
    check(h['content-security-policy'] === CSP, `${path}: CSP ${h['content-security-policy']}`);
    check(h['x-content-type-options'] === 'nosniff', `${path}: no nosniff`);
    check(h['referrer-policy'] === 'no-referrer', `${path}: no Referrer-Policy`);
    check(h['cache-control'] === 'no-cache', `${path}: Cache-Control ${h['cache-control']}`);
    const etag = h.etag;
    check(/^"[0-9a-f]{24}"$/.test(etag || ''), `${path}: ETag ${etag}`);
    const c = await raw(base, path, { headers: { 'If-None-Match': `"x", W/${etag}` } });
    check(c.status === 304 && c.body.length === 0 && c.headers.etag === etag,
      `${path}: If-None-Match → ${c.status}`);
    const star = await raw(base, path, { headers: { 'If-None-Match': '*' } });
    check(star.status === 304, `${path}: If-None-Match * → ${star.status}`);
    const other = await raw(base, path, { headers: { 'If-None-Match': '"0123"' } });
    check(other.status === 200 && other.body.length === disk.length,
      `${path}: another ETag → ${other.status}`);
    const head = await raw(base, path, { method: 'HEAD' });
    check(head.status === 200 && head.headers['content-length'] === String(disk.length) &&
      head.body.length === 0, `${path}: HEAD → ${head.status}`);

    // gzip, when it is asked for: fewer bytes, the same file once decoded, its own ETag.
    expect(/\baccept-encoding\b/i.test(h.vary || ''), `${path}: no Vary: Accept-Encoding (${h.vary})`);
    expect(h['content-encoding'] === undefined, `${path}: encoded without Accept-Encoding`);
    const gz = await raw(base, path, { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
    wire.identity += plain.body.length;
    wire.gzip += gz.body.length;
    wire.files++;
    if (!expect(gz.headers['content-encoding'] === 'gzip',
      `${path}: Accept-Encoding gzip → Content-Encoding ${gz.headers['content-encoding']}`))
      continue;
    expect(gz.body.length < disk.length, `${path}: gzip ${gz.body.length} ≥ ${disk.length} bytes`);
    expect(gunzipSync(gz.body).equals(disk), `${path}: the gzip body does not decode to ui/${file}`);
    expect(/\baccept-encoding\b/i.test(gz.headers.vary || ''), `${path}: gzip without Vary`);
    expect(gz.headers['content-type'] === type, `${path}: gzip type ${gz.headers['content-type']}`);
    const gzTag = gz.headers.etag;
    expect(gzTag === etag.replace(/"$/, '-gz"'), `${path}: the gzip ETag is ${gzTag}`);
    const gz304 = await raw(base, path, { headers: { 'Accept-Encoding': 'gzip',
      'If-None-Match': gzTag } });
    expect(gz304.status === 304 && gz304.headers.etag === gzTag,
      `${path}: gzip If-None-Match → ${gz304.status}`);
    const gzHead = await raw(base, path, { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } });
    expect(gzHead.headers['content-length'] === String(gz.body.length) &&
      gzHead.headers['content-encoding'] === 'gzip', `${path}: gzip HEAD`);
    for (const [accept, gzip] of ACCEPT) {
      const a = await raw(base, path, { headers: accept === undefined ? {} : { 'Accept-Encoding': accept } });
      expect(a.status === 200 && (a.headers['content-encoding'] === 'gzip') === gzip &&
        a.body.length === (gzip ? gz.body.length : disk.length),
      `${path}: Accept-Encoding ${accept} → ${a.headers['content-encoding'] || 'identity'}`);
    }
  }
  const missing = await raw(base, '/ui/nope.js');
  check(missing.status === 404 &&
    missing.headers['content-type'].startsWith('application/problem+json') &&
    JSON.parse(missing.body).code === 'not_found', `/ui/nope.js → ${missing.status}`);
  return wire;
}
