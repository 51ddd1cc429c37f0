#!/usr/bin/env node
// The dashboard (/ui/) in real Chromium (Debian's /usr/bin/chromium, driven by playwright-core,
// never a downloaded browser), against the real binary and the real PostgreSQL.
//
//   node tests/browser/run.mjs --bin BUILD/recallgate --artifacts DIR [--docs-img docs/img]
//
// Needs DATABASE_URL (migrated). scripts/rg-launch mints the tokens of a fresh tenant and
// serves the binary on a free port; the test seeds it through the API and walks every view:
// sign-in, an explanation with a cold source filtered (its reason, no content), a
// classification flipped in one tab and seen live on the timeline of another, a 409 with the
// current revision, a revocation with a clean readback, preferences, envelopes, providers
// (the doctor run) and a load receipt. It fails on any console error, page error or request to another origin.
// Screenshots of each view (1280×800, and one at 390×844) go to --artifacts; --docs-img also
// copies the 1280×800 ones there (for docs/dashboard.md). Nothing is skipped: a missing
// browser, package or database is a failure.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createHash, randomBytes } from 'node:crypto';

import { launch } from '../lib/launch.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const CHROMIUM = process.env.RG_CHROMIUM || '/usr/bin/chromium';
const PW_VERSION =
  JSON.parse(readFileSync(join(HERE, 'package.json'))).dependencies['playwright-core'];
const started = Date.now();

function arg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function fail(msg) {
  console.error(`browser_dashboard: FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

function check(cond, msg) {
  if (!cond)
    fail(msg);
}

// playwright-core, pinned in package.json + package-lock.json, installed by `npm ci` into the
// ignored tests/browser/node_modules when it is missing or of another version.
async function playwright() {
  const pkg = join(HERE, 'node_modules', 'playwright-core', 'package.json');
  const have = existsSync(pkg) ? JSON.parse(readFileSync(pkg)).version : null;
  if (have !== PW_VERSION) {
    console.log(`browser_dashboard: npm ci (playwright-core ${PW_VERSION}; found ${have})`);
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: HERE, stdio: 'inherit',
        env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' } });
    check(r.status === 0, `npm ci failed in ${HERE} (status ${r.status})`);
  }
  return import(pathToFileURL(join(HERE, 'node_modules', 'playwright-core', 'index.mjs')).href);
}

// Serves the binary with scripts/rg-launch on a free port (or on `port`, for a restart), ready
// when /readyz is 200; `tokens` ("name:tenant:scopes") are minted first. A short drain: a
// restart must not wait on open event streams.
async function serve(bin, work, port, tokens = []) {
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
function api(base, tok) {
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

async function seed(call) {
  const src = (content, classification = 'active') => call('POST', '/v1/memory/sources',
    { source_kind: 'note', thread_id: 'thread-ops', content, classification });
  for (let i = 1; i <= 20; i++) // enough for a second page of the sources list
    await src(`Filler note ${i} about lunch menus.`);
  const deploys = await src('The deploy calendar moves deploys to Wednesday.');
  const cold = await src('COLD-SECRET: deploys froze during the incident review.', 'cold');
  const summary = await call('POST', '/v1/memory/derivatives', { kind: 'summary',
    derived_from: [{ source_id: deploys.source_id, revision: 1 }],
    content: 'Summary: deploys happen on Wednesday.' });
  const release = await src('Release deploys need two approvals.');
  const cache = await call('POST', '/v1/memory/derivatives', { kind: 'cache',
    derived_from: [{ source_id: release.source_id, revision: 1 }],
    content: 'Cached: deploys need approvals.' });
  await call('POST', '/v1/memory/derivatives', { kind: 'prompt',
    derived_from: [{ source_id: cache.derivative_id, revision: 1 }],
    content: 'Prompt: ask for two approvals before deploys.' });
  // A foreign thin pointer, admitted under its owner's assent (bound to its identity).
  const pointer = { uri: 'https://wiki.example/deploys', content_hash: `sha256:${'ab'.repeat(32)}` };
  const identity = 'sha256:' + createHash('sha256')
    .update(`wiki-team\n${pointer.uri}\n${pointer.content_hash}`).digest('hex');
  const assent = await call('POST', '/v1/assents', { owner: 'wiki-team',
    source_identity: identity, expires_at: '2030-01-01T00:00:00.000Z' });
  const foreign = await call('POST', '/v1/memory/sources', { source_kind: 'document', pointer,
    foreign: { owner: 'wiki-team', assent_id: assent.assent_id } });
  // Its summary is retrievable until the owner withdraws the assent.
  const wiki = await call('POST', '/v1/memory/derivatives', { kind: 'summary',
    derived_from: [{ source_id: foreign.source_id, revision: 1 }],
    content: 'Wiki summary: deploys freeze in December.' });
  await call('POST', `/v1/assents/${assent.assent_id}/revoke`, { expected_revision: 1 });
  const pref = (key, statement, expected, op) => call('PUT',
    `/v1/goals/launch/agents/planner/preferences/${key}`, { statement, source_ref: `chat:${op}`,
      source_quote: `"${statement}"`, expected_revision: expected, operation_id: op, execute: true });
  await pref('tone', 'Write release notes in plain words.', null, 'op-1');
  await pref('tone', 'Write release notes in plain, short words.', 1, 'op-2');
  await pref('deploy-day', 'Prefer Wednesday deploys.', 2, 'op-3');
  await call('POST', '/v1/goals/launch/agents/planner/preferences/deploy-day/retire',
    { source_ref: 'chat:op-4', source_quote: '"forget the deploy day"', expected_revision: 3,
      operation_id: 'op-4', execute: true });
  const fixture = JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', 'envelopes',
    'context-envelope-v1.json')));
  const good = await call('POST', '/v1/envelopes', { envelope: fixture.conformance_fixture.happy_path });
  const bare = await call('POST', '/v1/envelopes', { envelope: { envelope_id: 'bare-1' } });
  await call('POST', '/v1/providers', { extension_id: 'advisor-down',
    protocol: 'decision_context_advisory_provider_v0', endpoint_url: 'http://127.0.0.1:9/advisor',
    timeout_seconds: 1, permissions: ['decision_context.read'], enabled: true });
  const load = await call('POST', '/v1/memory/context', { query: 'deploys', max_items: 2 });
  return { deploys, cold, summary, release, cache, good, bare, assent, foreign, wiki,
    receipt: load.load_receipt };
}

// The static files' HTTP contract, without a browser: redirect, types, headers, ETag/304,
// HEAD, 404 problem.
async function checkHttp(base) {
  const r = await fetch(`${base}/ui`, { redirect: 'manual' });
  check(r.status === 301 && r.headers.get('location') === '/ui/', `GET /ui → ${r.status}`);
  const types = { '/ui/': 'text/html; charset=utf-8', '/ui/app.js': 'text/javascript; charset=utf-8',
    '/ui/views/explain.js': 'text/javascript; charset=utf-8', '/ui/app.css': 'text/css; charset=utf-8',
    '/ui/favicon.svg': 'image/svg+xml' };
  for (const [path, type] of Object.entries(types)) {
    const g = await fetch(base + path);
    const body = await g.arrayBuffer();
    const h = g.headers;
    check(g.status === 200 && h.get('content-type') === type, `${path}: ${g.status} ${h.get('content-type')}`);
    check(h.get('content-security-policy') === "default-src 'self'; base-uri 'none'; " +
      "frame-ancestors 'none'; form-action 'self'", `${path}: CSP ${h.get('content-security-policy')}`);
    check(h.get('x-content-type-options') === 'nosniff', `${path}: no nosniff`);
    check(h.get('referrer-policy') === 'no-referrer', `${path}: no Referrer-Policy`);
    check(h.get('cache-control') === 'no-cache', `${path}: Cache-Control ${h.get('cache-control')}`);
    const etag = h.get('etag');
    check(/^"[0-9a-f]{24}"$/.test(etag || ''), `${path}: ETag ${etag}`);
    const c = await fetch(base + path, { headers: { 'If-None-Match': `"x", W/${etag}` } });
    check(c.status === 304 && (await c.arrayBuffer()).byteLength === 0 &&
      c.headers.get('etag') === etag, `${path}: If-None-Match → ${c.status}`);
    const star = await fetch(base + path, { headers: { 'If-None-Match': '*' } });
    check(star.status === 304, `${path}: If-None-Match * → ${star.status}`);
    const other = await fetch(base + path, { headers: { 'If-None-Match': '"0123"' } });
    check(other.status === 200 && (await other.arrayBuffer()).byteLength === body.byteLength,
      `${path}: another ETag → ${other.status}`);
    const head = await fetch(base + path, { method: 'HEAD' });
    check(head.status === 200 && head.headers.get('content-length') === String(body.byteLength) &&
      (await head.arrayBuffer()).byteLength === 0, `${path}: HEAD → ${head.status}`);
  }
  const missing = await fetch(`${base}/ui/nope.js`);
  check(missing.status === 404 && missing.headers.get('content-type').startsWith('application/problem+json') &&
    (await missing.json()).code === 'not_found', `/ui/nope.js → ${missing.status}`);
}

// Fails the run on console errors, page errors and requests to another origin. Chromium
// itself logs "Failed to load resource: … status of 4xx" for every refused fetch; the
// refusals this test provokes on purpose (scope probes of ids that exist nowhere: 404; the
// stale write: 409; the events stream before it exists: 404) are counted and allowed only
// for same-origin /v1/ calls, and only with those statuses.
function watch(page, base, problems, refusals, outage) {
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
}

async function main() {
  const bin = arg('--bin');
  const artifacts = arg('--artifacts') || join(ROOT, 'build-test', 'browser-artifacts');
  const docsImg = arg('--docs-img');
  check(bin && existsSync(bin), `--bin ${bin}: no such binary`);
  check(process.env.DATABASE_URL, 'DATABASE_URL (a migrated database) is required');
  check(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (scripts/bootstrap)`);
  mkdirSync(artifacts, { recursive: true });
  const { chromium } = await playwright();

  const tenant = `ui-${randomBytes(6).toString('hex')}`;
  const work = mkdtempSync(join(tmpdir(), 'rg-browser-'));
  let srv = await serve(bin, work, 0, [`admin:${tenant}:admin`, `reader:${tenant}:memory:read`]);
  const { admin, reader } = srv.tokens;
  const { url: base, port } = srv;
  const outage = { on: false };
  console.log(`browser_dashboard: tenant ${tenant}, server ${base}, chromium ${CHROMIUM}`);
  const call = api(base, admin);
  const problems = [];
  const refusals = [];
  let browser;
  const shots = [];
  try {
    await checkHttp(base);
    const s = await seed(call);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
      args: ['--no-sandbox', '--disable-gpu'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    watch(page, base, problems, refusals, outage);
    page.setDefaultTimeout(15000);
    const shot = async (p, name) => {
      const file = join(artifacts, `${name}.png`);
      await p.screenshot({ path: file, fullPage: false });
      shots.push(file);
      return file;
    };
    const signIn = async (p, tok) => {
      await p.goto(`${base}/ui/`);
      await p.getByLabel('Bearer token').fill(tok);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { name: 'What this token may do' }).waitFor();
    };

    // The headers of the page itself.
    const resp = await page.goto(`${base}/ui`);
    check(resp.url() === `${base}/ui/`, `GET /ui did not land on /ui/ (${resp.url()})`);
    const h = resp.headers();
    check(h['content-security-policy']?.startsWith("default-src 'self'"), `CSP: ${h['content-security-policy']}`);
    check(h['x-content-type-options'] === 'nosniff', 'nosniff is missing');
    check(h['content-type'] === 'text/html; charset=utf-8', `content type ${h['content-type']}`);

    // 1. A refused token is explained in words; a narrow token shows what it may not do.
    await page.getByLabel('Bearer token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The token was not accepted (401)').waitFor();
    check(!(await page.evaluate(() => JSON.stringify(sessionStorage))).includes('not-a-token'),
      'a refused token stayed in sessionStorage');
    await signIn(page, reader);
    const row = page.getByRole('row', { name: /providers:admin/ });
    check((await row.innerText()).includes('not granted'), 'providers:admin should read not granted');
    await page.goto(`${base}/ui/#/providers`);
    await page.getByText('This token lacks the scope providers:admin').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();

    // 2. Sign in as admin: every scope allowed; the token is in sessionStorage only.
    await signIn(page, admin);
    check(!(await page.evaluate(() => JSON.stringify(localStorage))).includes(admin),
      'the token reached localStorage');
    await shot(page, 'access');

    // Keyboard: from the top of the page, the skip link first, then the views, each
    // reachable with Tab and Enter; the view's heading takes the focus.
    await page.reload();
    await page.getByRole('heading', { name: 'What this token may do' }).waitFor();
    await page.keyboard.press('Tab');
    check(await page.evaluate(() => document.activeElement.textContent) === 'Skip to content',
      'Tab does not reach the skip link first');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Why this retrieval' }).waitFor();
    check(await page.evaluate(() => document.activeElement.tagName) === 'H2',
      'focus does not move to the view heading');

    // 3. Why this retrieval: the cold source is filtered, with its reason and no content.
    await page.getByLabel('Query').fill('deploys');
    await page.getByRole('button', { name: 'Explain' }).click();
    const coldRow = page.locator(`tr[data-record="${s.cold.source_id}"]`);
    await coldRow.waitFor();
    const coldText = await coldRow.innerText();
    check(coldText.includes('classification_cold') && coldText.includes('filtered'),
      `the cold row lacks its reason: ${coldText}`);
    check(coldText.includes('withheld'), 'the cold row does not say its content is withheld');
    check(!(await page.content()).includes('COLD-SECRET'), 'the cold content reached the page');
    const wikiRow = await page.locator(`tr[data-record="${s.wiki.derivative_id}"]`).innerText();
    // (a foreign source is a pointer without text: its summary is what matches)
    check(wikiRow.includes('upstream_ineligible') && wikiRow.includes('withheld'),
      `the summary of a source whose assent was withdrawn: ${wikiRow}`);
    check(!(await page.content()).includes('freeze in December'), 'filtered content reached the page');
    const okRow = page.locator(`tr[data-record="${s.deploys.source_id}"]`);
    check((await okRow.innerText()).includes('selected'), 'the active source is not selected');
    await page.locator('#explain-results').evaluate((e) => e.scrollIntoView());
    await shot(page, 'explain');

    // 4. The timeline in a second tab, live; the classification flipped in the first.
    const live = await context.newPage();
    watch(live, base, problems, refusals, outage);
    live.setDefaultTimeout(15000);
    await live.goto(`${base}/ui/`); // sessionStorage is per tab: sign in again
    await live.getByLabel('Bearer token').fill(admin);
    await live.getByRole('button', { name: 'Sign in' }).click();
    await live.getByRole('heading', { name: 'What this token may do' }).waitFor();
    await live.getByRole('link', { name: 'Timeline' }).click();
    await live.getByText(/^Live: /).waitFor();
    const mode = await live.locator('.live-status').innerText();
    await page.goto(`${base}/ui/#/sources/${s.cold.source_id}`);
    await page.locator('#toggle-classification').click();
    await page.getByText('Classified active (from revision 1).').waitFor();
    const flipped = live.locator(`li[data-action="source.classification.updated"]`)
      .filter({ hasText: s.cold.source_id });
    const t0 = Date.now();
    await flipped.waitFor({ timeout: 10000 });
    console.log(`browser_dashboard: timeline (${mode.trim()}) showed the flip after ${Date.now() - t0} ms`);

    // 4b. A drop: the server restarts, a change commits before the page reconnects, and the
    // timeline still shows it (the stream resumes with Last-Event-ID; polling with after=).
    outage.on = true;
    await srv.stop();
    srv = await serve(bin, work, port);
    await call('PUT', `/v1/memory/sources/${s.deploys.source_id}/classification`,
      { expected_revision: 1, classification: 'cold' });
    await live.locator('li[data-action="source.classification.updated"]')
      .filter({ hasText: s.deploys.source_id }).waitFor({ timeout: 15000 });
    if (mode.includes('reading the event stream'))
      await live.getByText(/resumed after seq \d+/).waitFor();
    outage.on = false;
    await shot(live, 'timeline');
    console.log('browser_dashboard: after a server restart the timeline resumed without a gap');

    // 4c. The resource-type filter: only thread records from now on.
    await live.getByLabel('Resource type').selectOption('thread');
    await live.getByText(/^Live: /).waitFor();
    await call('PUT', '/v1/threads/thread-ops/memory-mode', { expected_revision: 0, mode: 'disabled' });
    await live.locator('li[data-action="thread.memory_mode.updated"]').waitFor();
    check(await live.locator('li[data-action^="source."]').count() === 0,
      'the thread filter still shows source records');

    // 5. A stale toggle: changed behind the page's back, the page shows the 409 and revision.
    await call('PUT', `/v1/memory/sources/${s.cold.source_id}/classification`,
      { expected_revision: 2, classification: 'cold' });
    await page.locator('#toggle-classification').click();
    await page.getByText('the current revision is 3').waitFor();
    await page.getByRole('button', { name: 'Reload revision 3' }).click();
    await page.getByText('This source is cold.').waitFor();

    // 6. Revocation with readback: zero residual records, clean; the tree shows the chain.
    await page.goto(`${base}/ui/#/sources/${s.release.source_id}`);
    await page.locator('.tree').getByText(s.cache.derivative_id).waitFor();
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Revoke this source' }).click();
    await page.getByText('Revoked. The readback below').waitFor();
    check((await page.locator('#residual').innerText()) === '0', 'residual records after revocation');
    check((await page.locator('#readback').innerText()).includes('clean: nothing downstream'),
      'the readback is not clean');
    await page.locator('#readback').evaluate((e) => e.closest('section').scrollIntoView());
    await shot(page, 'source');

    // The assent of a foreign source, found through its identity.
    await page.goto(`${base}/ui/#/sources/${s.foreign.source_id}`);
    const assents = page.getByRole('table', { name: 'Assents bound to this source identity' });
    await assents.getByText(s.assent.assent_id).waitFor();
    check((await assents.innerText()).includes('revoked'), 'the withdrawn assent does not read revoked');

    // 7. The other views, each with its screenshot.
    await page.goto(`${base}/ui/#/preferences/launch/planner`);
    await page.getByRole('table', { name: 'Entries' })
      .getByRole('cell', { name: 'Write release notes in plain, short words.' }).waitFor();
    await page.getByRole('table', { name: 'History (oldest first)' }).waitFor();
    await shot(page, 'preferences');

    await page.goto(`${base}/ui/#/envelopes`);
    await page.getByRole('link', { name: s.bare.envelope_id }).first().click();
    await page.locator('#verdict').getByText('UNVERIFIABLE').waitFor();
    await page.getByText('lossy_summary').first().waitFor();
    await shot(page, 'envelopes');

    await page.goto(`${base}/ui/#/providers`);
    await page.getByRole('button', { name: 'Run the doctor of advisor-down' }).click();
    await page.getByText('doctor_unreachable').waitFor();
    await shot(page, 'providers');

    await page.goto(`${base}/ui/#/receipts/${s.receipt.receipt_id}`);
    await page.getByRole('table', { name: 'Delivered inputs' }).waitFor();
    await shot(page, 'receipts');

    await page.goto(`${base}/ui/#/sources`);
    await page.getByRole('table', { name: 'Sources' }).waitFor();
    await shot(page, 'sources');
    // Long lists page through next_cursor: 20 a page here, 24 sources in all.
    check(await page.locator('.page tbody tr').count() === 20, 'the first page is not 20 rows');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('End of the list.').waitFor();
    check(await page.locator('.page tbody tr').count() === 24, 'the second page did not follow');

    // 8. Readable at 390×844; the explanation for a thread whose memory is disabled (4c).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/ui/#/explain`);
    await page.getByLabel('Query').fill('deploys');
    await page.getByLabel('Receiving thread').fill('thread-ops');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator(`tr[data-record="${s.cold.source_id}"]`).waitFor();
    await page.getByText('every candidate is withheld from it').waitFor();
    for (const row of await page.locator('tr[data-record]').allInnerTexts())
      check(row.includes('thread_memory_disabled'), `a row for the disabled thread: ${row}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    check(overflow <= 0, `the page is ${overflow} px wider than a 390 px screen`);
    await page.locator(`tr[data-record="${s.cold.source_id}"]`).scrollIntoViewIfNeeded();
    await shot(page, 'explain-390x844');
    await live.close();
  } catch (e) {
    // What the page showed when it failed, for the log reader.
    for (const [i, p] of (browser ? browser.contexts().flatMap((c) => c.pages()) : []).entries()) {
      const file = join(artifacts, `failure-${i}.png`);
      await p.screenshot({ path: file }).catch(() => {});
      console.error(`browser_dashboard: the page at failure: ${file} (${p.url()})`);
    }
    if (problems.length)
      console.error(`browser_dashboard: seen before the failure:\n  ${problems.join('\n  ')}`);
    throw e;
  } finally {
    if (browser)
      await browser.close();
    await srv.stop();
  }
  check(problems.length === 0, `\n  ${problems.join('\n  ')}`);
  if (docsImg) {
    mkdirSync(docsImg, { recursive: true });
    for (const f of shots.filter((x) => !x.includes('390x844')))
      copyFileSync(f, join(docsImg, `dashboard-${f.split('/').pop()}`));
  }
  console.log(`browser_dashboard: refusals the page handled on purpose: ${refusals.length} ` +
    `(${[...new Set(refusals)].join(', ')})`);
  console.log(`browser_dashboard: screenshots in ${artifacts}:\n  ${shots.join('\n  ')}`);
  console.log(`browser_dashboard: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  if (!process.exitCode) {
    console.error(`browser_dashboard: FAIL: ${e.stack || e}`);
    process.exitCode = 1;
  }
});
