// The tenant the browser test walks through, seeded through the API: sources (one cold, a
// foreign pointer under a withdrawn assent), derivatives, a preference journal with a
// 1,100-byte statement, envelopes, a provider and a load receipt. User-written text carries
// HOSTILE markup, which must reach every view as text and never run.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './harness.mjs';

// Markup that would run (or set window.rgXss) if a view ever put API text in as HTML.
export const HOSTILE = '<img src=x onerror="window.rgXss=1"><script>window.rgXss=2</script>' +
  '<svg onload="window.rgXss=3"></svg>"\'><iframe srcdoc="<b>x</b>"></iframe>';

// A statement of exactly 1,100 bytes (the operator's case of issue 22): words, a 400-byte run
// with no break opportunity (a URL), and the hostile markup.
export const LONG_STATEMENT = (() => {
  const head = `Link the runbook https://wiki.example/${'a'.repeat(400)} before any deploy. ` +
    `${HOSTILE} `;
  let s = head;
  while (s.length < 1100)
    s += 'Keep release notes short and plain. ';
  return s.slice(0, 1100);
})();

export async function seed(call) {
  const src = (content, classification = 'active') => call('POST', '/v1/memory/sources',
    { source_kind: 'note', thread_id: 'thread-ops', content, classification });
  for (let i = 1; i <= 20; i++) // enough for a second page of the sources list
    await src(`Filler note ${i} about lunch menus.`);
  const deploys = await src(`The deploy calendar moves deploys to Wednesday. ${HOSTILE}`);
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
  const pref = (key, statement, expected, op, quote = `"${statement}"`) => call('PUT',
    `/v1/goals/launch/agents/planner/preferences/${key}`, { statement, source_ref: `chat:${op}`,
      source_quote: quote, expected_revision: expected, operation_id: op, execute: true });
  await pref('tone', 'Write release notes in plain words.', null, 'op-1');
  await pref('tone', 'Write release notes in plain, short words.', 1, 'op-2');
  await pref('deploy-day', 'Prefer Wednesday deploys.', 2, 'op-3');
  await call('POST', '/v1/goals/launch/agents/planner/preferences/deploy-day/retire',
    { source_ref: 'chat:op-4', source_quote: '"forget the deploy day"', expected_revision: 3,
      operation_id: 'op-4', execute: true });
  await pref('runbook', LONG_STATEMENT, 4, 'op-5', `${HOSTILE} ${'q'.repeat(300)}`);
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

// The data of the operator's questions (docs/dashboard.md), seeded after the main walk so that its
// counts stay as they are: sources to find by label and thread; a source (with a derivative)
// loaded into a thread's context, then revoked; a source whose classification changed after
// a recorded instant. Returns the ids, the receipt and the instants the questions need.
export async function seedQuestions(call) {
  const src = (content, extra = {}) => call('POST', '/v1/memory/sources',
    { source_kind: 'note', content, ...extra });
  const payA = await src('Payroll runs on the 25th.', { thread_id: 'thread-find-a',
    labels: { team: 'payments', env: 'prod' } });
  const other = await src('Lunch is at noon.', { labels: { team: 'kitchen' } });
  const payB = await src(`Payroll approvals need the CFO. ${HOSTILE}`, { source_kind: 'fact',
    thread_id: 'thread-find-b', labels: { team: 'payments' } });
  const escrow = await src('Escrow figures for the quarter are confidential.',
    { thread_id: 'thread-find-b' });
  const digest = await call('POST', '/v1/memory/derivatives', { kind: 'summary',
    derived_from: [{ source_id: escrow.source_id, revision: 1 }],
    content: 'Digest: escrow figures are confidential.' });
  const load = await call('POST', '/v1/memory/context', { query: 'escrow', max_items: 5,
    thread_id: 'thread-recv' });
  const delivered = await call('GET', '/v1/disclosures?thread_id=thread-recv');
  await call('POST', `/v1/memory/sources/${escrow.source_id}/revoke`,
    { expected_revision: 1, reason_code: 'owner_request' });
  // The classification change: active at `before`, cold from a moment later.
  const ledger = await src('Ledger reconciliation checklist for month end.');
  await new Promise((r) => setTimeout(r, 300));
  const before = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 300));
  await call('PUT', `/v1/memory/sources/${ledger.source_id}/classification`,
    { expected_revision: 1, classification: 'cold' });
  return { payA, payB, other, escrow, digest, ledger, before, receipt: load.load_receipt,
    delivered: delivered.items };
}
