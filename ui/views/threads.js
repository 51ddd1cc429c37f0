// Threads: what did this thread receive? A thread id (typed, or clicked wherever one is
// shown) → its memory mode, the disclosures delivered to it (GET /v1/disclosures?thread_id=)
// and its load receipts (GET /v1/context/load-receipts?thread_id=), each receipt linking to
// itself and to the explanation as of its time. Without an id, the threads that received
// memory most recently. The lists need audit:read.
import { get, page, url } from '../api.js';
import { badge, code, el, facts, field, fill, link, note, table, time } from '../dom.js';
import { disclosureTable, receiptLink, threadLink } from '../disclosures.js';
import { errorNote, missingScope, pager } from '../view.js';

const ID = '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}';

function openForm(value) {
  const input = el('input', { name: 'thread_id', type: 'text', required: true, pattern: ID,
    placeholder: 'thread-42', value: value || '' });
  return el('form', { class: 'inline', id: 'thread-form', onsubmit: (e) => {
    e.preventDefault();
    if (input.value.trim())
      location.hash = `#/threads/${encodeURIComponent(input.value.trim())}`;
  } }, field('Thread id', input), el('button', { type: 'submit' }, 'Open thread'));
}

// The threads named by the latest disclosures, newest first (one page of 200 rows).
function recent(ctx) {
  const out = el('div', { 'aria-live': 'polite' }, note('loading', 'Looking for threads…'));
  const blocked = missingScope(ctx, 'audit:read', 'the list of threads that received memory');
  if (!blocked)
    page(['v1', 'disclosures'], { limit: 200 }).then((p) => {
      const last = new Map();
      for (const d of p.items)
        if (d.thread_id !== null && !last.has(d.thread_id))
          last.set(d.thread_id, d.at);
      fill(out, last.size === 0
        ? note('empty', 'No thread has received memory yet: a context load with a thread_id ' +
          '(POST /v1/memory/context) records what it delivered.')
        : table('Threads that received memory recently', ['Thread', 'Last delivery'],
          [...last].map(([id, at]) => [threadLink(id), time(at)])));
    }).catch((e) => fill(out, errorNote(e)));
  return el('section', { class: 'card' }, el('h3', {}, 'Served recently'),
    blocked || out);
}

// When each receipt was made: receipts carry no time, so it is read from the disclosures
// they delivered (same transaction). A receipt that delivered nothing has none.
function receiptTimes(thread) {
  const known = new Map();
  let firstPage = null;
  return async (r) => {
    if (!firstPage)
      firstPage = page(['v1', 'disclosures'], { thread_id: thread, limit: 1000 }).then((p) => {
        for (const d of p.items)
          if (d.receipt_id && !known.has(d.receipt_id))
            known.set(d.receipt_id, d.at);
      });
    await firstPage;
    if (!known.has(r.receipt_id) && r.loaded_inputs.length) {
      const p = await page(['v1', 'disclosures'], { thread_id: thread, limit: 1000,
        record_id: r.loaded_inputs[0].record_id });
      for (const d of p.items)
        if (d.receipt_id === r.receipt_id)
          known.set(r.receipt_id, d.at);
    }
    return known.get(r.receipt_id) || null;
  };
}

function explainHref(thread, r, at) {
  const q = new URLSearchParams({ thread_id: thread, receipt: r.receipt_id });
  if (at)
    q.set('as_of', at);
  if (r.selected_count > 0)
    q.set('limit', String(Math.min(50, r.selected_count)));
  return `#/explain?${q}`;
}

function receipts(thread) {
  const timeOf = receiptTimes(thread);
  return pager((after) => page(['v1', 'context', 'load-receipts'],
    { thread_id: thread, limit: 20 }, after), (items) => {
    const rows = items.map((r) => {
      const when = el('span', {}, el('span', { class: 'muted' }, '…'));
      const explain = el('span', {});
      timeOf(r).then((at) => {
        fill(when, at ? time(at) : el('span', { class: 'muted' },
          'not known: it delivered nothing, and a receipt carries no time'));
        fill(explain, el('a', { href: explainHref(thread, r, at),
          'aria-label': `${at ? 'Explain as of its time' : 'Explain (now)'}: ${r.receipt_id}` },
        at ? 'Explain as of its time' : 'Explain (now)'));
      }).catch((e) => fill(when, errorNote(e)));
      return { attrs: { 'data-receipt': r.receipt_id },
        cells: [receiptLink(r.receipt_id), when, `${r.delivered_count} delivered, ` +
          `${r.suppressed_count} suppressed of ${r.candidate_count}`,
        r.loaded_inputs.length ? el('span', { class: 'chips', role: 'list' },
          r.loaded_inputs.map((i) => el('span', { role: 'listitem' },
            code(`${i.rank}. ${i.record_id}`)))) : el('span', { class: 'muted' }, 'none'),
        explain] };
    });
    return table('Load receipts of this thread', ['Receipt', 'When', 'Counts',
      'Delivered (rank. record)', 'Explanation'], rows);
  }, 'No load receipt names this thread: no context load was made for it (receipts stored ' +
    'before the disclosure ledger existed have no thread).');
}

function detail(ctx, thread) {
  const mode = el('div', {}, missingScope(ctx, 'memory:read', 'reading its memory mode') ||
    note('loading', 'Reading its memory mode…'));
  if (ctx.scopes.get('memory:read') !== false)
    get(url(['v1', 'threads', thread, 'memory-mode'])).then((m) => fill(mode, facts([
    ['Thread', code(m.thread_id)],
    ['Memory mode', el('span', {}, m.mode === 'disabled' ? badge('disabled', 'bad')
      : badge('enabled', 'ok'), m.mode === 'disabled' ? ' it receives no memory' : '')],
    ['Revision', m.revision === 0 ? 'never set (0)' : String(m.revision)],
    ['Since', time(m.effective_at)],
  ]))).catch((e) => fill(mode, errorNote(e)));
  // One note per section: a node can stand in one place only.
  const blocked = () => missingScope(ctx, 'audit:read', 'what a thread received');
  return [
    el('section', { class: 'card' }, mode),
    el('section', { class: 'card', id: 'thread-disclosures' },
      el('h3', {}, 'What this thread received'),
      el('p', {}, 'Every record whose content was delivered into this thread, newest first: ' +
        'when, which record, the token that received it and the load receipt. Content is ' +
        'never shown here.'),
      blocked() || pager((after) => page(['v1', 'disclosures'], { thread_id: thread, limit: 50 },
        after), (items) => disclosureTable('Disclosures to this thread', items),
      'Nothing was delivered to this thread.')),
    el('section', { class: 'card', id: 'thread-receipts' },
      el('h3', {}, 'Load receipts'),
      el('p', {}, 'Each context load for this thread, newest first. A receipt holds no ' +
        'query text, only hashes and ranks: "Explain as of its time" opens the explanation ' +
        'for this thread at the instant of the load, and you type the query the agent used.'),
      blocked() || receipts(thread)),
  ];
}

export function render(main, ctx) {
  if (ctx.param)
    fill(main, el('p', {}, link('threads', '← Threads')), el('h2', {}, `Thread ${ctx.param}`),
      openForm(ctx.param), detail(ctx, ctx.param));
  else
    fill(main, el('h2', {}, 'Threads'),
      el('p', {}, 'What did a thread receive? Enter a thread id, or pick one of the threads ' +
        'served recently; a thread id shown anywhere in the dashboard links here.'),
      openForm(''), recent(ctx));
}
