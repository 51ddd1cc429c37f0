// Receipts by id: a context load receipt (lrc_…, what a context assembly handed out) or a
// decision-context provider receipt (rcp_…). Receipts hold hashes and ranks, never content.
import { get, url } from '../api.js';
import { code, el, facts, field, fill, note, table, time } from '../dom.js';
import { errorNote } from '../view.js';

function loadReceipt(r) {
  return [
    facts([['Receipt', code(r.receipt_id)], ['Event', r.event_type],
      ['Candidates', String(r.candidate_count)], ['Selected', String(r.selected_count)],
      ['Delivered', String(r.delivered_count)], ['Suppressed', String(r.suppressed_count)],
      ['Claims usefulness', String(r.claims_usefulness)]]),
    r.loaded_inputs.length ? table('Delivered inputs', ['Rank', 'Input', 'Record',
      'Source hash', 'Delivered hash'], r.loaded_inputs.map((i) => [String(i.rank),
      code(i.input_id), code(i.record_id), code(i.source_hash), code(i.delivered_hash)]))
      : note('empty', 'Nothing was delivered.'),
    r.suppressed_inputs.length ? table('Suppressed inputs', ['Rank', 'Input', 'Record',
      'Source hash', 'Why'], r.suppressed_inputs.map((i) => [String(i.rank), code(i.input_id),
      code(i.record_id), code(i.source_hash), code(i.suppression_reason)])) : null,
  ];
}

function providerReceipt(r) {
  return [
    facts([['Receipt', code(r.receipt_id)], ['Status', r.status],
      ['Reason', code(r.reason_code)], ['Provider', code(r.extension_id)],
      ['Provider revision', String(r.provider_revision)], ['Namespace', r.namespace],
      ['Query summary', r.query_summary], ['Observed', time(r.observed_at)],
      ['Items', `${r.item_count} of ${r.requested_limit} requested`],
      ['Latency', `${r.latency_ms} ms`], ['Fails open', String(r.fail_open)]]),
    r.items.length ? table('Items (no content is kept)', ['Reference', 'Summary', 'Score'],
      r.items.map((i) => [code(i.provider_ref), i.summary, String(i.score)])) : null,
  ];
}

export function render(main, ctx) {
  const input = el('input', { name: 'receipt_id', type: 'text', required: true,
    placeholder: 'lrc_… or rcp_…', value: ctx.param || '' });
  const out = el('div', { 'aria-live': 'polite', id: 'receipt' });
  const form = el('form', { class: 'inline', id: 'receipt-form' },
    field('Receipt id', input, 'lrc_… from POST /v1/memory/context, rcp_… from ' +
      'POST /v1/decision-context/retrieve'), el('button', { type: 'submit' }, 'Load'));
  async function show(id) {
    fill(out, note('loading', 'Loading the receipt…'));
    try {
      if (id.startsWith('rcp_'))
        fill(out, el('section', { class: 'card' },
          providerReceipt(await get(url(['v1', 'decision-context', 'receipts', id])))));
      else
        fill(out, el('section', { class: 'card' },
          loadReceipt(await get(url(['v1', 'context', 'load-receipts', id])))));
    } catch (e) {
      fill(out, errorNote(e));
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = `#/receipts/${encodeURIComponent(input.value.trim())}`;
  });
  fill(main, el('h2', {}, 'Receipts'),
    el('p', {}, 'What a context load handed out, or what a provider answered, by receipt id.'),
    form, out);
  if (ctx.param)
    show(ctx.param);
}
