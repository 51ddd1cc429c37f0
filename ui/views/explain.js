// Why this retrieval: a query → every candidate record with its status and reason code
// (POST /v1/memory/retrieval/explain). Filtered records never show content; a selected
// source's content can be opened on request (GET .../content).
import { get, post, url } from '../api.js';
import { badge, chips, code, el, facts, field, fill, link, note, table } from '../dom.js';
import { errorNote, missingScope } from '../view.js';

// The reasons in the order the service applies them, in words.
export const REASONS = {
  thread_memory_disabled: 'the receiving thread has memory disabled',
  revoked: 'the source was revoked',
  assent_revoked: "the owner's assent was revoked",
  assent_expired: "the owner's assent expired",
  assent_stale: 'the assent is bound to another source identity',
  assent_missing: 'no assent admits this foreign source',
  classification_cold: 'the source is classified cold',
  upstream_ineligible: 'a record it was derived from is ineligible',
  beyond_limit: 'eligible, but ranked beyond the limit',
  selected: 'eligible and selected',
};

function recordLink(item) {
  if (item.record_kind === 'source')
    return link(`sources/${encodeURIComponent(item.record_id)}`, item.record_id);
  return code(item.record_id);
}

function contentCell(item) {
  if (!item.included)
    return el('span', { class: 'muted withheld' }, 'withheld (filtered)');
  if (item.record_kind !== 'source')
    return el('span', { class: 'muted' }, 'derivative: see its sources');
  const out = el('span', {});
  // The name starts with the visible label, so speech users can say what they see (WCAG 2.5.3).
  const btn = el('button', { type: 'button', class: 'small',
    'aria-label': `Show content of ${item.record_id}`,
    onclick: async () => {
      try {
        const c = await get(url(['v1', 'memory', 'sources', item.record_id, 'content']));
        fill(out, c.content !== undefined ? el('q', { class: 'content' }, c.content)
          : el('span', {}, 'pointer to ', code(c.pointer && c.pointer.uri)));
      } catch (e) {
        fill(out, errorNote(e));
      }
    } }, 'Show content');
  return fill(out, btn);
}

function results(answer, mode) {
  const rows = answer.items.map((it) => ({
    attrs: { 'data-record': it.record_id, class: it.included ? 'row-ok' : 'row-filtered' },
    cells: [
      recordLink(it),
      it.record_kind,
      String(it.revision),
      it.classification === null ? el('span', { class: 'muted' }, 'none (derivative)')
        : it.classification,
      it.included ? badge('selected', 'ok')
        : it.reason === 'beyond_limit' ? badge('beyond limit', 'warn') : badge('filtered', 'bad'),
      el('span', {}, code(it.reason), ' ', REASONS[it.reason] || ''),
      chips(it.ineligible_reasons),
      contentCell(it),
    ],
  }));
  const selected = answer.items.filter((i) => i.included).length;
  return [
    facts([
      ['Query SHA-256', code(answer.query_sha256)],
      ['Candidates', `${answer.items.length} (${selected} selected, ` +
        `${answer.items.length - selected} not)`],
      mode ? ['Thread memory mode', mode] : null,
      answer.truncated ? ['Truncated', 'yes: more records match than are listed; ' +
        'narrow the query'] : null,
    ]),
    answer.items.length === 0
      ? note('empty', 'No record matches this query. Try other words, or check that the ' +
        'sources hold text (a pointer has none: only its derivatives match).')
      : table('Every candidate with its status and reason',
        ['Record', 'Kind', 'Revision', 'Classification', 'Status', 'Reason',
          'Ineligible because', 'Content'], rows),
  ];
}

export function render(main, ctx) {
  const query = el('input', { name: 'query', type: 'search', required: true,
    maxlength: '1000', placeholder: 'e.g. deploys' });
  const thread = el('input', { name: 'thread_id', type: 'text',
    pattern: '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}', placeholder: 'optional' });
  const limit = el('input', { name: 'limit', type: 'number', min: '1', max: '50', value: '10' });
  const kindSource = el('input', { type: 'checkbox', name: 'kinds', value: 'source',
    checked: true });
  const kindDerivative = el('input', { type: 'checkbox', name: 'kinds', value: 'derivative',
    checked: true });
  const out = el('div', { 'aria-live': 'polite', id: 'explain-results' });
  const form = el('form', { class: 'card', id: 'explain-form' },
    field('Query', query, 'The text an agent would search for. It is sent to the server ' +
      'only; the answer holds its SHA-256, never the text.'),
    el('div', { class: 'row' },
      field('Receiving thread', thread, 'Explains for this thread: a thread with memory ' +
        'disabled receives nothing.'),
      field('Limit', limit)),
    el('fieldset', {}, el('legend', {}, 'Record kinds'),
      el('label', { class: 'check' }, kindSource, ' sources'),
      el('label', { class: 'check' }, kindDerivative, ' derivatives')),
    el('button', { type: 'submit' }, 'Explain'));
  fill(main, el('h2', {}, 'Why this retrieval'),
    el('p', {}, 'Every record whose text matches the query, eligible or not, with the first ' +
      'reason that decided it. Filtered records never show their content.'),
    missingScope(ctx, 'memory:read', 'explaining a retrieval'), form, out);

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { query: query.value, limit: Number(limit.value) || 10 };
    if (thread.value)
      body.thread_id = thread.value;
    const kinds = [kindSource, kindDerivative].filter((k) => k.checked).map((k) => k.value);
    if (kinds.length === 0) {
      fill(out, note('error', 'Choose at least one record kind.'));
      return;
    }
    body.kinds = kinds;
    fill(out, note('loading', 'Explaining…'));
    try {
      const [answer, mode] = await Promise.all([
        post('/v1/memory/retrieval/explain', body),
        body.thread_id ? get(url(['v1', 'threads', body.thread_id, 'memory-mode'])) : null,
      ]);
      const modeText = mode ? el('span', {},
        mode.mode === 'disabled' ? badge('disabled', 'bad') : badge('enabled', 'ok'),
        ` thread ${mode.thread_id}, revision ${mode.revision}`,
        mode.mode === 'disabled' ? ': every candidate is withheld from it' : '') : null;
      fill(out, results(answer, modeText));
    } catch (e) {
      fill(out, errorNote(e));
    }
  });
}
