// The operator's questions of docs/dashboard.md, each one a task done in the page, and each able to
// fail: (1) what changed recently: the timeline opens with history, newest first, then a new
// write appears live exactly once; (2) find a source by label and by thread, newest first;
// (3) who received a revoked source (token, thread) and "0 after revocation"; (4) what a
// thread received: its disclosures and receipts, and a receipt's explanation as of its time,
// with ranks; (5) what the agent could have seen then: explain as of an instant before a
// classification change shows the old state. Also: without audit:read, a clear message
// stands where the lists would be.
import { check, expect } from './harness.mjs';
import { HOSTILE, seedQuestions } from './seed.mjs';

// An RFC 3339 instant as a datetime-local value in this process's zone (the browser's too).
function localInput(iso) {
  const d = new Date(iso);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
    `${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

// The sources list has finished loading (its end, its next page or its empty note).
const settled = (page) => page.locator('#sources-list .pager-more > *, #sources-list .note-empty')
  .first().waitFor();

const seqsShown = (page) => page.locator('ol.events > li')
  .evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));

export async function questions({ page, base, call, audit, shot, signInReader }) {
  const q = await seedQuestions(call);

  // (1) The timeline opens with the latest 50 records, newest first; then live, no gap and
  // no repeat at the seam.
  await page.goto(`${base}/ui/#/timeline`);
  await page.getByText(/^Live: /).waitFor();
  const latest = (await call('GET', '/v1/audit?order=newest&limit=50')).items.map((r) => r.seq);
  const opened = await seqsShown(page);
  check(latest.length === 50, `the tenant should have 50 records or more (${latest.length})`);
  expect(JSON.stringify(opened) === JSON.stringify(latest),
    `the timeline did not open with the latest 50 records newest first: ${opened.slice(0, 5)}… ` +
    `(${opened.length} shown) instead of ${latest.slice(0, 5)}…`);
  await call('PUT', `/v1/memory/sources/${q.payA.source_id}/classification`,
    { expected_revision: 1, classification: 'cold' });
  const [newest] = (await call('GET', '/v1/audit?order=newest&limit=1')).items;
  await page.locator(`ol.events > li[data-seq="${newest.seq}"]`).waitFor();
  await page.waitForTimeout(800); // a repeat would arrive by now
  const after = await seqsShown(page);
  expect(JSON.stringify(after) === JSON.stringify([newest.seq, ...latest]),
    `after one write the timeline shows ${after.slice(0, 4)}… (${after.length}), not ` +
    `${newest.seq} once above the history`);
  // A filter reloads the history for it: the view is never emptied.
  await page.getByLabel('Resource type').selectOption('derivative');
  await page.getByText(/^Live: /).waitFor();
  const drv = (await call('GET', '/v1/audit?order=newest&limit=50&resource_type=derivative'))
    .items.map((r) => r.seq);
  const filtered = await seqsShown(page);
  expect(drv.length > 0 && JSON.stringify(filtered) === JSON.stringify(drv),
    `the derivative filter shows ${filtered.length} records, not its ${drv.length} of history`);
  console.log(`browser_dashboard: (1) the timeline opened with ${opened.length} records ` +
    `(seq ${opened[0]}…${opened[opened.length - 1]}) and showed seq ${newest.seq} live once`);

  // (2) Find a source by label, and by thread, newest first.
  await page.goto(`${base}/ui/#/sources`);
  await page.getByRole('table', { name: 'Sources' }).waitFor();
  const listed = () => page.locator('#sources-list tr[data-source]')
    .evaluateAll((els) => els.map((e) => e.dataset.source));
  await page.getByLabel('Labels').fill('team:payments');
  await page.getByRole('button', { name: 'Filter' }).click();
  await settled(page);
  let ids = await listed();
  expect(JSON.stringify(ids) === JSON.stringify([q.payB.source_id, q.payA.source_id]),
    `label team:payments lists ${ids}, not the two payments sources newest first`);
  await page.getByLabel('Labels').fill('team:payments, env:prod');
  await page.getByRole('button', { name: 'Filter' }).click();
  await settled(page);
  ids = await listed();
  expect(JSON.stringify(ids) === JSON.stringify([q.payA.source_id]),
    `two labels (all must match) list ${ids}`);
  await page.getByLabel('Labels').fill('');
  await page.getByLabel('Thread', { exact: true }).fill('thread-find-b');
  await page.getByRole('button', { name: 'Filter' }).click();
  await settled(page);
  ids = await listed();
  expect(JSON.stringify(ids) === JSON.stringify([q.escrow.source_id, q.payB.source_id]),
    `thread thread-find-b lists ${ids}, not its two sources newest first`);
  await page.getByLabel('Kind').selectOption('fact');
  await settled(page);
  ids = await listed();
  expect(JSON.stringify(ids) === JSON.stringify([q.payB.source_id]), `kind fact lists ${ids}`);
  await audit(page, 'sources, filtered');
  await shot(page, 'sources-filtered');

  // (3) Who received the revoked source: the delivering token and thread, and "0 after
  // revocation" from the readback.
  await page.goto(`${base}/ui/#/sources/${q.escrow.source_id}`);
  const recipients = page.getByRole('table', { name: 'Disclosures of this source and its derivatives' });
  await recipients.waitFor();
  const rows = await recipients.locator('tbody tr').allInnerTexts();
  const token = q.delivered[0].token_id;
  expect(rows.length === 2 && rows.every((r) => r.includes(token) && r.includes('thread-recv') &&
    r.includes(q.receipt.receipt_id)), `who received it: ${JSON.stringify(rows)} (want the source ` +
    `and its digest, to ${token} in thread-recv by ${q.receipt.receipt_id})`);
  expect(rows.some((r) => r.includes(q.digest.derivative_id)), 'the derivative\'s delivery is missing');
  const afterText = await page.locator('#after-revocation').innerText();
  expect(afterText === '0 after revocation', `the revoked source reads "${afterText}"`);
  await page.locator('#after-revocation-fact').getByText('Revoked at').waitFor();
  await audit(page, 'source recipients');
  await page.locator('#recipients').scrollIntoViewIfNeeded();
  await shot(page, 'source-recipients');
  // A never-revoked source says nothing "after revocation".
  await page.goto(`${base}/ui/#/sources/${q.payB.source_id}`);
  await page.locator('#recipients').getByText('Nobody received it').waitFor();
  check(await page.locator('#after-revocation').count() === 0,
    'a source that was never revoked shows an "after revocation" count');

  // (4) The thread, reached by clicking it: its disclosures and receipts; a receipt's
  // explanation as of its time, with ranks.
  await page.goto(`${base}/ui/#/sources/${q.escrow.source_id}`);
  await recipients.getByRole('link', { name: 'thread-recv' }).first().click();
  await page.getByRole('heading', { name: 'Thread thread-recv' }).waitFor();
  const given = page.getByRole('table', { name: 'Disclosures to this thread' });
  await given.waitFor();
  expect(await given.locator('tbody tr').count() === 2, 'the thread did not list its 2 disclosures');
  const receiptRow = page.locator(`#thread-receipts tr[data-receipt="${q.receipt.receipt_id}"]`);
  await receiptRow.getByRole('link', { name: /as of its time/ }).waitFor();
  const at = q.delivered[0].at;
  expect(await receiptRow.locator('time').getAttribute('datetime') === at,
    `the receipt's time is not its disclosures' (${at})`);
  await audit(page, 'thread');
  await shot(page, 'thread');
  await receiptRow.getByRole('link', { name: /as of its time/ }).click();
  await page.getByRole('heading', { name: 'Why this retrieval' }).waitFor();
  await page.getByText('A receipt holds no query text').waitFor();
  check(await page.getByLabel('Receiving thread').inputValue() === 'thread-recv', 'the thread is not prefilled');
  // (Chromium drops trailing zeros of the milliseconds: compare instants, not strings.)
  const prefilled = await page.getByLabel(/^As of/).inputValue();
  check(new Date(prefilled).getTime() === Date.parse(at),
    `as of is not the receipt's time ${at} (${localInput(at)}): ${prefilled}`);
  await page.getByLabel('Query').fill('escrow');
  await page.getByRole('button', { name: 'Explain' }).click();
  // As of the load, the revoked source and its digest were selected, at the receipt's ranks.
  await page.locator(`tr[data-record="${q.escrow.source_id}"]`).waitFor();
  for (const input of q.receipt.loaded_inputs) {
    const cells = await page.locator(`tr[data-record="${input.record_id}"] td`).allInnerTexts();
    expect(cells[1] === String(input.rank) && cells.join(' ').includes('selected'),
      `as of the load, ${input.record_id} should be selected at rank ${input.rank}: ` +
      cells.join(' | '));
  }
  check(q.receipt.loaded_inputs.length === 2, 'the load should have delivered the source and its digest');
  expect(await page.locator('#explain-as-of time').getAttribute('datetime') === at,
    'the answer does not say which instant it is');
  await page.getByText('this is the state at that instant').waitFor();
  await audit(page, 'explain as of a receipt');
  await shot(page, 'explain-as-of');

  // (5) As of an instant before a classification change: the old state; now, the new one.
  await page.goto(`${base}/ui/#/explain`);
  await page.getByLabel('Query').fill('reconciliation');
  await page.getByLabel(/^As of/).fill(localInput(q.before));
  await page.getByRole('button', { name: 'Explain' }).click();
  const ledgerRow = page.locator(`tr[data-record="${q.ledger.source_id}"]`);
  await page.locator('#explain-as-of').waitFor();
  const ledgerCells = await ledgerRow.locator('td').allInnerTexts();
  let text = ledgerCells.join(' | ');
  expect(ledgerCells[1] === '1', `as of before the change, the ledger's rank: ${text}`);
  expect(text.includes('active') && text.includes('selected') && !text.includes('classification_cold'),
    `as of before the change, the ledger should read active and selected: ${text}`);
  await page.getByLabel(/^As of/).fill('');
  await page.getByRole('button', { name: 'Explain' }).click();
  await page.locator('#explain-results dd', { hasText: /^now$/ }).waitFor();
  text = (await ledgerRow.locator('td').allInnerTexts()).join(' | ');
  expect(text.includes('classification_cold') && text.includes('none (ineligible)'),
    `now the ledger should read cold, filtered, without a rank: ${text}`);
  check(!(await page.content()).includes(HOSTILE), 'hostile text reached the page as markup');

  // Without audit:read: a message stands where the lists would be.
  const narrow = await signInReader();
  await narrow.goto(`${base}/ui/#/threads/thread-recv`);
  await narrow.locator('#thread-disclosures').getByText('This token lacks the scope audit:read').waitFor();
  await narrow.goto(`${base}/ui/#/sources/${q.escrow.source_id}`);
  await narrow.locator('#recipients').getByText('This token lacks the scope audit:read').waitFor();
  await narrow.locator('#after-revocation').waitFor(); // the readback's count needs memory:read only
  await narrow.goto(`${base}/ui/#/timeline`);
  await narrow.getByText('The timeline needs audit:read').waitFor();
  await narrow.close();
  console.log('browser_dashboard: the five questions answered in the page (timeline, find, ' +
    'who received, thread, as of)');
  return q;
}
