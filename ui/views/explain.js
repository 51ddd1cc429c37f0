// Why this retrieval: a query → every candidate record with its rank, status and reason code
// (POST /v1/memory/retrieval/explain), now or as of a past instant (as_of: the state in force
// then). Filtered records never show content; a selected source's content can be opened on
// request (GET .../content). #/explain?thread_id=&as_of=&limit=&receipt= prefills the form
// (the thread view links a load receipt here: receipts hold no query text).
import { get, post, url } from '../api.js';
import { badge, chips, code, el, facts, field, fill, link, note, table, time } from '../dom.js';
import { threadLink } from '../disclosures.js';
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

function rankCell(it, limit) {
  if (it.rank === null || it.rank === undefined)
    return el('span', { class: 'muted' }, 'none (ineligible)');
  return el('span', {}, String(it.rank),
    it.reason === 'beyond_limit' ? el('span', { class: 'muted' }, ` (> limit ${limit})`) : '');
}

// datetime-local value (the browser's zone) ↔ RFC 3339 UTC.
function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()))
    return '';
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
    `${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function asOfNote(asOf) {
  return note('info', 'As of ', time(asOf), ` (${asOf} UTC): this is the state at that ` +
    'instant, not now. Only records that existed then are listed, each with the revision, ' +
    'classification, revocation, assent and thread memory mode in force then.');
}

function results(answer, mode, limit) {
  const rows = answer.items.map((it) => ({
    attrs: { 'data-record': it.record_id, class: it.included ? 'row-ok' : 'row-filtered' },
    cells: [
      recordLink(it),
      rankCell(it, limit),
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
    answer.as_of ? asOfNote(answer.as_of) : null,
    facts([
      ['Query SHA-256', code(answer.query_sha256)],
      answer.as_of ? ['As of', el('span', { id: 'explain-as-of' }, time(answer.as_of))]
        : ['As of', 'now'],
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
        ['Record', 'Rank', 'Kind', 'Revision', 'Classification', 'Status', 'Reason',
          'Ineligible because', 'Content'], rows),
  ];
}

export function render(main, ctx) {
  const query = el('input', { name: 'query', type: 'search', required: true,
    maxlength: '1000', placeholder: 'e.g. deploys' });
  const thread = el('input', { name: 'thread_id', type: 'text',
    pattern: '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}', placeholder: 'optional' });
  const q = ctx.query || new URLSearchParams();
  thread.value = q.get('thread_id') || '';
  const limit = el('input', { name: 'limit', type: 'number', min: '1', max: '50',
    value: q.get('limit') || '10' });
  // step 0.001: a receipt's time keeps its milliseconds.
  const asOf = el('input', { name: 'as_of', type: 'datetime-local', step: '0.001',
    value: q.get('as_of') ? toLocalInput(q.get('as_of')) : '' });
  const receipt = q.get('receipt');
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
      field('Limit', limit),
      field('As of (your time zone)', asOf, 'Optional: answer as the service would have at ' +
        'this past instant. Sent as UTC; empty means now.')),
    el('fieldset', {}, el('legend', {}, 'Record kinds'),
      el('label', { class: 'check' }, kindSource, ' sources'),
      el('label', { class: 'check' }, kindDerivative, ' derivatives')),
    el('button', { type: 'submit' }, 'Explain'));
  fill(main, el('h2', {}, 'Why this retrieval'),
    el('p', {}, 'Every record whose text matches the query, eligible or not, with the first ' +
      'reason that decided it. Filtered records never show their content.'),
    missingScope(ctx, 'memory:read', 'explaining a retrieval'),
    receipt ? note('info', 'Prefilled from load receipt ', link(`receipts/${encodeURIComponent(
      receipt)}`, receipt), q.get('as_of') ? ': its thread, its number of selected items ' +
      'and its time.' : ': its thread and its number of selected items (its time is not ' +
      'known).', ' A receipt holds no query text: type the query the agent used, then ' +
      'Explain.') : null,
    form, out);

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
    if (asOf.value) {
      const at = new Date(asOf.value); // a datetime-local value is read in the local zone
      if (Number.isNaN(at.getTime()) || at.getTime() > Date.now()) {
        fill(out, note('error', 'As of must be a past instant (the service answers 422 for ' +
          'the future). Clear it to explain now.'));
        return;
      }
      body.as_of = at.toISOString();
    }
    fill(out, note('loading', 'Explaining…'));
    try {
      const [answer, mode] = await Promise.all([
        post('/v1/memory/retrieval/explain', body),
        // The mode read here is today's; as of a past instant the answer used the mode then.
        body.thread_id && !body.as_of
          ? get(url(['v1', 'threads', body.thread_id, 'memory-mode'])) : null,
      ]);
      const modeText = mode ? el('span', {},
        mode.mode === 'disabled' ? badge('disabled', 'bad') : badge('enabled', 'ok'),
        ' thread ', threadLink(mode.thread_id), `, revision ${mode.revision}`,
        mode.mode === 'disabled' ? ': every candidate is withheld from it' : '') : null;
      fill(out, results(answer, modeText, body.limit));
    } catch (e) {
      fill(out, errorNote(e));
    }
  });
}
