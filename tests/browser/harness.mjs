// What the browser test's parts share: arguments, failing, the pinned npm packages, the
// server under test, the test's own API client, and the page watcher.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { launch } from '../lib/launch.mjs';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(HERE, '..', '..');
export const CHROMIUM = process.env.RG_CHROMIUM || '/usr/bin/chromium';
const DEPS = JSON.parse(readFileSync(join(HERE, 'package.json'))).dependencies;

export function arg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

export function fail(msg) {
  console.error(`browser_dashboard: FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

// A step the rest of the walk depends on: stop at once when it does not hold.
export function check(cond, msg) {
  if (!cond)
    fail(msg);
}

// A property of the page (layout, contrast, accessibility, transfer): every one that does not
// hold is listed at the end, and the run fails then, so one run shows them all.
export const defects = [];
export function expect(cond, msg) {
  if (!cond) {
    console.error(`browser_dashboard: defect: ${msg}`);
    defects.push(msg);
  }
  return cond;
}

// The npm packages pinned in package.json + package-lock.json (playwright-core, axe-core),
// installed by `npm ci` into the ignored tests/browser/node_modules when one is missing or of
// another version.
export function installPackages() {
  const stale = Object.entries(DEPS).filter(([name, version]) => {
    const pkg = join(HERE, 'node_modules', name, 'package.json');
    return !existsSync(pkg) || JSON.parse(readFileSync(pkg)).version !== version;
  });
  if (stale.length === 0)
    return;
  console.log(`browser_dashboard: npm ci (${stale.map(([n, v]) => `${n} ${v}`).join(', ')})`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: HERE, stdio: 'inherit',
      env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' } });
  check(r.status === 0, `npm ci failed in ${HERE} (status ${r.status})`);
}

export function playwright() {
  return import(pathToFileURL(join(HERE, 'node_modules', 'playwright-core', 'index.mjs')).href);
}

// Serves the binary with scripts/rg-launch on a free port (or on `port`, for a restart), ready
// when /readyz is 200; `tokens` ("name:tenant:scopes") are minted first. A short drain: a
// restart must not wait on open event streams.
export async function serve(bin, work, port, tokens = []) {
  const args = ['--ready', '/readyz', '--log', join(work, `server-${Date.now()}.log`)];
  if (port)
    args.push('--port', String(port));
  for (const t of tokens)
    args.push('--token', t);
  try {
    return await launch(bin, args, { env: { ...process.env, RECALLGATE_DRAIN_TIMEOUT: '1' } });
  } catch (e) {
    fail(`the server did not start (logs in ${work}): ${e.message}`);
  }
}

// The API, as the test's own client (seeding and changes behind the page's back).
export function api(base, tok) {
  return async (method, path, body) => {
    const init = { method, headers: { Authorization: `Bearer ${tok}` } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(base + path, init);
    const text = await r.text();
    check(r.ok, `${method} ${path} → ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

// Fails the run on console errors, page errors, CSP violations and requests to another
// origin. Chromium itself logs "Failed to load resource: … status of 4xx" for every refused
// fetch; the refusals this test provokes on purpose (scope probes of ids that exist nowhere:
// 404; the stale write: 409; the events stream before it exists: 404) are counted and allowed
// only for same-origin /v1/ calls, and only with those statuses.
export async function watch(page, base, problems, refusals, outage) {
  page.on('console', (msg) => {
    if (msg.type() !== 'error')
      return;
    const where = msg.location().url || '';
    const m = /^Failed to load resource: the server responded with a status of (\d+)/.exec(msg.text());
    if (m && where.startsWith(`${base}/v1/`) && ['401', '403', '404', '409'].includes(m[1])) {
      refusals.push(`${m[1]} ${where.slice(base.length)}`);
      return;
    }
    if (outage.on && /ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_CONNECTION_RESET/.test(msg.text()))
      return; // the server is down on purpose
    problems.push(`console error: ${msg.text()} (${where})`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  // A request that got no answer (one the page cancels itself, navigating away or ending
  // its event stream, is ERR_ABORTED and fine).
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText;
    if (why !== 'net::ERR_ABORTED' && !outage.on)
      problems.push(`request failed: ${req.method()} ${req.url()}: ${why}`);
  });
  page.on('request', (req) => {
    const u = req.url();
    if (!u.startsWith(`${base}/`))
      problems.push(`request to another origin: ${u}`);
  });
  // Every CSP violation, reported by the page itself (Chromium also logs it as a console
  // error): the init script runs in each document before the page's own code.
  await page.exposeBinding('rgCspViolation', (_src, v) => problems.push(`CSP violation: ${v}`));
  await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
    window.rgCspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} ` +
      `(${e.sourceFile || ''}:${e.lineNumber || 0})`)));
}
