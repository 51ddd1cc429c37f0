#!/usr/bin/env node
// The dashboard (/ui/) in real Chromium (Debian's /usr/bin/chromium, driven by playwright-core,
// never a downloaded browser), against the real binary and the real PostgreSQL.
//
//   node tests/browser/run.mjs --bin BUILD/recallgate --artifacts DIR [--docs-img docs/img]
//
// Needs DATABASE_URL (migrated). scripts/rg-launch mints the tokens of a fresh tenant and
// serves the binary on a free port; the test seeds it through the API (seed.mjs) and walks
// every view: sign-in, an explanation with a cold source filtered (its reason, no content), a
// classification flipped in one tab and seen live on the timeline of another, a 409 with the
// current revision, a revocation with a clean readback, preferences, envelopes, providers
// (the doctor run) and a load receipt. The files' HTTP contract, gzip included, is checked
// byte for byte first (http.mjs). On the way (audits.mjs): no horizontal overflow at 1280 and
// 390 px (with a 1,100-byte statement), axe-core with 0 critical and 0 serious findings, a
// focus ring and control borders of at least 3:1, and hostile markup in user text that never
// runs. It fails on any console error, page error, CSP violation or request to another origin.
// Screenshots of each view at 1280×800 and 390×844 go to --artifacts; --docs-img also copies
// those of docs/dashboard.md there, as dashboard-<width>-<view>.png. Nothing is skipped: a
// missing browser, package or database is a failure.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { CHROMIUM, ROOT, api, arg, check, defects, expect, installPackages, playwright, serve,
  watch } from './harness.mjs';
import { HOSTILE, LONG_STATEMENT, seed } from './seed.mjs';
import { checkHttp } from './http.mjs';
import { questions } from './questions.mjs';
import { axe, axeTotals, controlBorders, focusRing, noOverflow, noXss } from './audits.mjs';

const started = Date.now();

async function main() {
  const bin = arg('--bin');
  const artifacts = arg('--artifacts') || join(ROOT, 'build-test', 'browser-artifacts');
  const docsImg = arg('--docs-img');
  check(bin && existsSync(bin), `--bin ${bin}: no such binary`);
  check(process.env.DATABASE_URL, 'DATABASE_URL (a migrated database) is required');
  check(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (scripts/bootstrap)`);
  mkdirSync(artifacts, { recursive: true });
  installPackages();
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
    const wire = await checkHttp(base);
    console.log(`browser_dashboard: the ${wire.files} files of ui/ on the wire: ` +
      `${wire.identity} bytes identity, ${wire.gzip} bytes gzip`);
    const s = await seed(call);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
      args: ['--no-sandbox', '--disable-gpu'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await watch(page, base, problems, refusals, outage);
    page.setDefaultTimeout(15000);
    const shot = async (p, name) => {
      const file = join(artifacts, `${p.viewportSize().width}-${name}.png`);
      await p.screenshot({ path: file, fullPage: false });
      shots.push(file);
      return file;
    };
    // What every view must hold once it has rendered.
    const audit = async (p, where) => {
      await noOverflow(p, where);
      await noXss(p, where);
      await axe(p, where);
    };
    const signIn = async (p, tok) => {
      await p.goto(`${base}/ui/`);
      await p.getByLabel('Bearer token').fill(tok);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { name: 'What this token may do' }).waitFor();
    };

    // The headers of the page itself: Chromium asks for gzip and gets it.
    const resp = await page.goto(`${base}/ui`);
    check(resp.url() === `${base}/ui/`, `GET /ui did not land on /ui/ (${resp.url()})`);
    const h = resp.headers();
    check(h['content-security-policy']?.startsWith("default-src 'self'"), `CSP: ${h['content-security-policy']}`);
    check(h['x-content-type-options'] === 'nosniff', 'nosniff is missing');
    check(h['content-type'] === 'text/html; charset=utf-8', `content type ${h['content-type']}`);
    expect(h['content-encoding'] === 'gzip', `Chromium got /ui/ as ${h['content-encoding'] || 'identity'}`);
    await page.getByLabel('Bearer token').waitFor();
    await audit(page, 'sign-in');
    await controlBorders(page, 'sign-in');
    await page.getByLabel('Bearer token').focus();
    await focusRing(page, 'sign-in, the token field');

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
    await audit(page, 'access');
    await shot(page, 'access');

    // Keyboard: from the top of the page, the skip link first, then the views, each
    // reachable with Tab and Enter; the view's heading takes the focus. The ring of each
    // focused control is 3:1 against what is behind it.
    await page.reload();
    await page.getByRole('heading', { name: 'What this token may do' }).waitFor();
    await page.keyboard.press('Tab');
    check(await page.evaluate(() => document.activeElement.textContent) === 'Skip to content',
      'Tab does not reach the skip link first');
    await focusRing(page, 'the skip link');
    await page.keyboard.press('Tab');
    await focusRing(page, 'a nav link');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Why this retrieval' }).waitFor();
    check(await page.evaluate(() => document.activeElement.tagName) === 'H2',
      'focus does not move to the view heading');

    // 3. Why this retrieval: the cold source is filtered, with its reason and no content.
    await page.getByLabel('Query').fill('deploys');
    await controlBorders(page, 'explain');
    await page.keyboard.press('Tab');
    await focusRing(page, 'explain, after the query');
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
    const coldChips = await coldRow.locator('[role="list"] > [role="listitem"]').allTextContents();
    expect(coldChips.join('|') === 'classification_cold',
      `the cold row's ineligible reasons are not one chip each: ${JSON.stringify(coldChips)}`);
    const okRow = page.locator(`tr[data-record="${s.deploys.source_id}"]`);
    check((await okRow.innerText()).includes('selected'), 'the active source is not selected');
    // Its content holds hostile markup: shown as text, never run.
    await okRow.getByRole('button', { name: /content/i }).click();
    await okRow.locator('q.content').waitFor();
    check((await okRow.locator('q.content').textContent()).includes(HOSTILE),
      'the content is not shown as the text it is');
    await page.locator('#explain-results').evaluate((e) => e.scrollIntoView());
    await audit(page, 'explain');
    await shot(page, 'explain');

    // 4. The timeline in a second tab, live; the classification flipped in the first.
    const live = await context.newPage();
    await watch(live, base, problems, refusals, outage);
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
    await audit(live, 'timeline');
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
    await page.getByRole('table', { name: 'Audit trail of this source' }).waitFor();
    await audit(page, 'source');
    await page.locator('#readback').evaluate((e) => e.closest('section').scrollIntoView());
    await shot(page, 'source');

    // The assent of a foreign source, found through its identity.
    await page.goto(`${base}/ui/#/sources/${s.foreign.source_id}`);
    const assents = page.getByRole('table', { name: 'Assents bound to this source identity' });
    await assents.getByText(s.assent.assent_id).waitFor();
    check((await assents.innerText()).includes('revoked'), 'the withdrawn assent does not read revoked');

    // 7. The other views, each with its screenshot. The journal holds a 1,100-byte statement
    // (with hostile markup): it wraps inside the table, as text.
    await page.goto(`${base}/ui/#/preferences/launch/planner`);
    await page.getByRole('table', { name: 'Entries' })
      .getByRole('cell', { name: 'Write release notes in plain, short words.' }).waitFor();
    await page.getByRole('table', { name: 'History (oldest first)' }).waitFor();
    const long = page.getByRole('table', { name: 'Entries' }).locator('tr', { hasText: 'runbook' });
    check((await long.locator('td').nth(2).textContent()) === LONG_STATEMENT,
      'the 1,100-byte statement is not shown as the text it is');
    await controlBorders(page, 'preferences');
    await audit(page, 'preferences');
    await shot(page, 'preferences');

    await page.goto(`${base}/ui/#/envelopes`);
    await page.getByRole('link', { name: s.bare.envelope_id }).first().click();
    await page.locator('#verdict').getByText('UNVERIFIABLE').waitFor();
    await page.getByText('lossy_summary').first().waitFor();
    await envelopeChecks(page, s.bare);
    await audit(page, 'envelope');
    await shot(page, 'envelopes');
    await page.getByRole('button', { name: 'Verify again' }).click();
    await page.locator('#envelope-revision').getByText(/^2\b/).waitFor({ timeout: 5000 })
      .catch(() => expect(false, 'after Verify again, the revision does not read 2'));
    const verified = page.locator('#envelope-verified time');
    const again = (await verified.count()) ? await verified.getAttribute('datetime') : null;
    expect(again && Date.parse(again) >= Date.parse(s.bare.updated_at),
      `after Verify again, the verdict time is ${again}`);

    await page.goto(`${base}/ui/#/providers`);
    await page.locator('tr[data-provider="advisor-down"] button').click();
    await page.getByText('doctor_unreachable').waitFor();
    await audit(page, 'providers');
    await shot(page, 'providers');

    await page.goto(`${base}/ui/#/receipts/${s.receipt.receipt_id}`);
    await page.getByRole('table', { name: 'Delivered inputs' }).waitFor();
    await audit(page, 'receipts');
    await shot(page, 'receipts');

    await page.goto(`${base}/ui/#/sources`);
    await page.getByRole('table', { name: 'Sources' }).waitFor();
    await audit(page, 'sources');
    await shot(page, 'sources');
    // Long lists page through next_cursor: 20 a page here, 24 sources in all.
    check(await page.locator('.page tbody tr').count() === 20, 'the first page is not 20 rows');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('End of the list.').waitFor();
    check(await page.locator('.page tbody tr').count() === 24, 'the second page did not follow');

    // 7b. The operator's questions, without an id in hand (questions.mjs).
    await questions({ page, base, call, audit, shot, signInReader: async () => {
      const p = await context.newPage();
      await watch(p, base, problems, refusals, outage);
      p.setDefaultTimeout(15000);
      await signIn(p, reader);
      return p;
    } });

    // 8. Readable at 390×844: every view fits, the nav in sight, detail headings wrapped; the
    // explanation for a thread whose memory is disabled (4c).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/ui/#/explain`);
    await page.getByLabel('Query').fill('deploys');
    await page.getByLabel('Receiving thread').fill('thread-ops');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator(`tr[data-record="${s.cold.source_id}"]`).waitFor();
    await page.getByText('every candidate is withheld from it').waitFor();
    for (const row of await page.locator('tr[data-record]').allInnerTexts())
      check(row.includes('thread_memory_disabled'), `a row for the disabled thread: ${row}`);
    await audit(page, 'explain at 390 px');
    await page.locator(`tr[data-record="${s.cold.source_id}"]`).scrollIntoViewIfNeeded();
    await shot(page, 'explain');
    const narrow = [
      ['access', '', 'What this token may do', null],
      ['source', `sources/${s.deploys.source_id}`, `Source ${s.deploys.source_id}`, '#readback'],
      ['preferences', 'preferences/launch/planner', 'Preference journal', 'table'],
      ['envelopes', `envelopes/${s.bare.envelope_id}`, `Envelope ${s.bare.envelope_id}`, '#verdict'],
      ['providers', 'providers', 'Providers', 'table'],
      ['receipts', `receipts/${s.receipt.receipt_id}`, 'Receipts', 'table'],
      ['timeline', 'timeline', 'Live timeline', '.live-status .note-ok'],
      ['thread', 'threads/thread-recv', 'Thread thread-recv', '#thread-receipts table'],
      ['threads', 'threads', 'Threads', 'table'],
      ['sources', 'sources', 'Sources', 'table'],
    ];
    for (const [name, hash, heading, ready] of narrow) {
      await page.goto(`${base}/ui/#/${hash}`);
      await page.getByRole('heading', { name: heading }).waitFor();
      if (ready)
        await page.locator(ready).first().waitFor();
      await audit(page, `${name} at 390 px`);
      if (name === 'preferences')
        await page.getByRole('table', { name: 'Entries' }).locator('tr', { hasText: 'runbook' })
          .evaluate((e) => e.scrollIntoView({ block: 'start' }));
      if (name === 'envelopes')
        await envelopeChecks(page, { ...s.bare, revision: 2 });
      await shot(page, name);
    }
    // A hostile id in the address: the heading shows it as text.
    await page.goto(`${base}/ui/#/receipts/${encodeURIComponent(HOSTILE)}`);
    await page.getByRole('heading', { name: 'Receipts' }).waitFor();
    await page.locator('#receipt .note').waitFor();
    await noXss(page, 'a hostile receipt id');
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
  console.log(`browser_dashboard: axe on ${axeTotals.pages} pages: ${axeTotals.critical} critical, ` +
    `${axeTotals.serious} serious, ${axeTotals.moderate} moderate, ${axeTotals.minor} minor`);
  check(problems.length === 0, `\n  ${problems.join('\n  ')}`);
  check(defects.length === 0, `${defects.length} defect(s):\n  ${defects.join('\n  ')}`);
  if (docsImg) {
    mkdirSync(docsImg, { recursive: true });
    for (const f of shots.filter((x) => /\/(1280-|390-(explain|source|preferences|envelopes|thread)\.png)/.test(x)))
      copyFileSync(f, join(docsImg, `dashboard-${f.split('/').pop()}`));
  }
  console.log(`browser_dashboard: refusals the page handled on purpose: ${refusals.length} ` +
    `(${[...new Set(refusals)].join(', ')})`);
  console.log(`browser_dashboard: screenshots in ${artifacts}:\n  ${shots.join('\n  ')}`);
  console.log(`browser_dashboard: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// The envelope's failure codes are one chip each, apart on screen, and its times are the
// API's created_at and updated_at, shown as dates.
async function envelopeChecks(page, env) {
  const chips = page.locator('#failure-codes [role="list"] > [role="listitem"]');
  const texts = await chips.allTextContents();
  expect(texts.join(' ') === env.failure_codes.join(' '),
    `the failure codes are not one chip each: ${JSON.stringify(texts)} for ${env.failure_codes}`);
  const boxes = await chips.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
  for (let i = 1; i < boxes.length; i++) {
    const [a, b] = [boxes[i - 1], boxes[i]];
    expect(b.left >= a.right + 2 || b.top >= a.bottom, `failure-code chips ${i} and ${i + 1} touch`);
  }
  for (const [id, iso] of [['#envelope-submitted', env.created_at], ['#envelope-verified', null]]) {
    const t = page.locator(`${id} time`);
    const when = (await t.count()) ? await t.getAttribute('datetime') : null;
    expect(when !== null && !Number.isNaN(Date.parse(when)) && (iso === null || when === iso) &&
      /\d{4}/.test(await t.textContent()), `the envelope shows no date in ${id} (${when})`);
  }
}

main().catch((e) => {
  if (!process.exitCode) {
    console.error(`browser_dashboard: FAIL: ${e.stack || e}`);
    process.exitCode = 1;
  }
});
