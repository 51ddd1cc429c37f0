// Envelopes: each verdict (MATCH / DRIFT / UNVERIFIABLE) with its failure codes and checks.
// There is no list endpoint: the envelopes are found through the audit trail (audit:read),
// or opened by id; "Verify again" asks for a fresh verdict against the workspace as it is.
import { get, page, post, url } from '../api.js';
import { badge, chips, code, el, facts, field, fill, link, note, table, time } from '../dom.js';
import { errorNote, missingScope, pager } from '../view.js';

const KIND = { MATCH: 'ok', DRIFT: 'warn', UNVERIFIABLE: 'bad' };

function verdict(env) {
  return [
    facts([['Envelope', code(env.envelope_id)],
      ['Verdict', el('span', { id: 'verdict' }, badge(env.verdict, KIND[env.verdict] || 'muted'))],
      ['Failure codes', el('span', { id: 'failure-codes' }, chips(env.failure_codes))],
      ['Workspace', env.workspace_id ? el('span', {}, code(env.workspace_id),
        env.workspace_revision === null ? '' : ` at snapshot revision ${env.workspace_revision}`)
        : el('span', { class: 'muted' }, 'none (freshness skipped)')],
      // The EnvelopeVerdict schema's times (openapi/openapi.yaml): created_at is the
      // submission, updated_at when this verdict was computed (submission or last verify).
      ['Submitted', el('span', { id: 'envelope-submitted' }, time(env.created_at))],
      ['Verdict computed', el('span', { id: 'envelope-verified' }, time(env.updated_at))],
      ['Revision', el('span', { id: 'envelope-revision' },
        `${env.revision} (1 at submission, one more per verification)`)]]),
    env.checks && env.checks.length ? table('Checks', ['Check', 'Result', 'Detail'],
      env.checks.map((c) => [code(c.check),
        badge(c.result, c.result === 'pass' ? 'ok' : c.result === 'fail' ? 'bad' : 'muted'),
        c.detail || ''])) : null,
  ];
}

function detail(ctx, id) {
  const box = el('div', {}, note('loading', 'Loading the envelope…'));
  const out = el('div', { 'aria-live': 'polite' });
  async function load(fresh) {
    try {
      const env = fresh || await get(url(['v1', 'envelopes', id]));
      fill(box, el('section', { class: 'card' }, verdict(env),
        ctx.scopes.get('envelopes:write') === false ? null
          : el('button', { type: 'button', onclick: verify }, 'Verify again'), out));
    } catch (e) {
      fill(box, errorNote(e));
    }
  }
  async function verify() {
    fill(out, note('loading', 'Verifying…'));
    try {
      const env = await post(url(['v1', 'envelopes', id, 'verify']), {});
      await load({ envelope_id: id, ...env });
    } catch (e) {
      fill(out, errorNote(e));
    }
  }
  load();
  return [el('p', {}, link('envelopes', '← All envelopes')), box];
}

export function render(main, ctx) {
  const blocked = missingScope(ctx, 'envelopes:read', 'the envelopes view');
  if (ctx.param) {
    fill(main, el('h2', {}, `Envelope ${ctx.param}`), blocked,
      blocked ? null : detail(ctx, ctx.param));
    return;
  }
  const input = el('input', { name: 'envelope_id', type: 'text', required: true,
    placeholder: 'env_…' });
  const form = el('form', { class: 'inline', onsubmit: (e) => {
    e.preventDefault();
    location.hash = `#/envelopes/${encodeURIComponent(input.value.trim())}`;
  } }, field('Open an envelope by id', input), el('button', { type: 'submit' }, 'Open'));
  const listing = ctx.scopes.get('audit:read') === false
    ? note('info', 'Listing envelopes needs audit:read (they are found through the audit ' +
      'trail); open one by id instead.')
    : pager((after) => page(['v1', 'audit'], { resource_type: 'envelope', limit: 20 }, after),
      (items) => table('Envelope submissions and verifications (audit)', ['At', 'Action',
        'Envelope', 'Verdict'], items.map((r) => [time(r.at), r.action,
        link(`envelopes/${encodeURIComponent(r.resource_id)}`, r.resource_id),
        r.details && r.details.verdict
          ? badge(r.details.verdict, KIND[r.details.verdict] || 'muted')
          : el('span', { class: 'muted' }, 'open it')])),
      'No envelope yet. Agents submit them with POST /v1/envelopes.');
  fill(main, el('h2', {}, 'Envelopes'),
    el('p', {}, 'Context envelopes with their latest verdict and failure codes.'),
    blocked, form, listing);
}
