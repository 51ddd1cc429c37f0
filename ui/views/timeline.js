// Timeline: what changed recently. It opens with history (the latest 50 audit records,
// newest first, GET /v1/audit?order=newest, audit:read), then goes live from the newest seq
// it showed: the event stream (GET /v1/events, fetch streaming) with Last-Event-ID set to
// that seq sends every record after it, so the seam has no gap and no repeat. After a drop
// it resumes with the last id it saw. Where the server has no event stream (404), or the
// token lacks events:read, it polls GET /v1/audit?after= every 2 s from that seq instead.
import { ApiError, explainError, page, stream } from '../api.js';
import { code, el, field, fill, link, note, time } from '../dom.js';

const TYPES = ['token', 'thread', 'source', 'derivative', 'assent', 'preference_journal',
  'provider', 'semantic_preference_config', 'workspace', 'envelope'];
const HISTORY = 50; // records the timeline opens with
const KEEP = 300; // records shown at most
const POLL_MS = 2000;

function resourceLink(rec) {
  if (rec.resource_type === 'source')
    return link(`sources/${encodeURIComponent(rec.resource_id)}`, rec.resource_id);
  if (rec.resource_type === 'thread')
    return link(`threads/${encodeURIComponent(rec.resource_id)}`, rec.resource_id);
  if (rec.resource_type === 'preference_journal') // "goal/agent"
    return link(`preferences/${rec.resource_id.split('/').map(encodeURIComponent).join('/')}`,
      rec.resource_id);
  if (rec.resource_type === 'envelope')
    return link(`envelopes/${encodeURIComponent(rec.resource_id)}`, rec.resource_id);
  return code(rec.resource_id);
}

function row(rec, isLive) {
  const rev = rec.revision_before === null ? `→ ${rec.revision_after}`
    : `${rec.revision_before} → ${rec.revision_after}`;
  return el('li', { class: isLive ? 'event event-live' : 'event', 'data-seq': rec.seq,
    'data-action': rec.action },
  el('span', { class: 'event-time' }, time(rec.at)),
  el('strong', { class: 'event-action' }, rec.action),
  el('span', { class: 'event-resource' }, resourceLink(rec)),
  el('span', { class: 'muted' }, `revision ${rev} · seq ${rec.seq} · by `,
    code(rec.actor_token_id), isLive ? ' · live' : ''));
}

export function render(main, ctx) {
  const NEITHER = 'The timeline needs audit:read (its history, and polling GET /v1/audit) or ' +
    'events:read (the event stream), and this token has neither. Sign in with a token that ' +
    'has one of them.';
  const canAudit = ctx.scopes.get('audit:read') !== false;
  const blocked = !canAudit && ctx.scopes.get('events:read') !== true;
  const filter = el('select', { name: 'resource_type' },
    el('option', { value: '' }, 'every resource type'),
    TYPES.map((t) => el('option', { value: t }, t)));
  const status = el('div', { class: 'live-status', 'aria-live': 'polite' });
  const history = el('div', { class: 'history-status' });
  const list = el('ol', { class: 'events', reversed: true });
  const older = el('div', { class: 'pager-more' });
  const empty = note('empty', 'No record yet. Records appear here as they commit: change ' +
    'something (a classification, say) in another tab, or with the API.');
  fill(main,
    el('h2', {}, 'Live timeline'),
    el('p', {}, 'What changed recently: the latest audit records of this tenant, newest ' +
      'first, then every new one as it commits. Records carry ids, revisions and hashes, ' +
      'never private text.'),
    el('form', { class: 'inline', onsubmit: (e) => e.preventDefault() },
      field('Resource type', filter)),
    status, history, blocked ? note('error', NEITHER) : null, empty, list, older);
  if (blocked)
    return () => {};

  let ctl = null;
  let timer = null;
  let gen = 0; // the current connection; a loop of an older one stops at its next step

  function seen(rec) {
    return list.querySelector(`[data-seq="${CSS.escape(String(rec.seq))}"]`) !== null;
  }

  function showLive(rec) {
    if (seen(rec))
      return;
    empty.remove();
    list.prepend(row(rec, true));
    while (list.children.length > KEEP)
      list.lastElementChild.remove();
  }

  function showOlder(items) {
    for (const rec of items)
      if (!seen(rec))
        list.append(row(rec, false));
    if (list.children.length)
      empty.remove();
  }

  function say(kind, text) {
    fill(status, note(kind, text));
  }

  // A "Show older records" button that follows the newest-first cursor backwards.
  function olderButton(query, cursor, my) {
    fill(older, cursor ? el('button', { type: 'button', onclick: async () => {
      try {
        const p = await page(['v1', 'audit'], { ...query, order: 'newest', limit: HISTORY },
          cursor);
        if (gen !== my)
          return;
        showOlder(p.items);
        olderButton(query, p.next_cursor, my);
      } catch (e) {
        fill(older, note('error', explainError(e)));
      }
    } }, 'Show older records') : null);
  }

  // The latest records, newest first; resolves to the newest seq shown ('0' when there is
  // none: the stream then sends everything after 0, i.e. whatever commits from now on), or
  // null when the history cannot be read (no audit:read).
  async function loadHistory(query, my) {
    if (!canAudit) {
      fill(history, note('info', 'No history: this token lacks audit:read, which the ' +
        'latest records need. Only records that commit from now on are shown.'));
      return null;
    }
    fill(history, note('loading', 'Loading the latest records…'));
    const p = await page(['v1', 'audit'], { ...query, order: 'newest', limit: HISTORY });
    if (gen !== my)
      return null;
    showOlder(p.items);
    olderButton(query, p.next_cursor, my);
    const newest = p.items.length ? String(p.items[0].seq) : '0';
    fill(history, note('info', p.items.length
      ? `The latest ${p.items.length} record${p.items.length === 1 ? '' : 's'}, newest ` +
        `first (up to seq ${newest}); new records are added above as they commit.`
      : 'No record matches yet; new records are added here as they commit.'));
    return newest;
  }

  async function runStream(query, my, from) {
    const live = () => gen === my;
    let lastId = from;
    let resumed = false;
    while (live()) {
      ctl = new AbortController();
      let retry = POLL_MS;
      try {
        const state = await stream(query, lastId, ctl.signal, (ev) => {
          if (live())
            showLive(JSON.parse(ev.data));
        }, () => say('ok', 'Live: reading the event stream' +
          (resumed ? ` (resumed after seq ${lastId}).`
            : lastId ? ` from seq ${lastId}, the newest record shown.` : '.')));
        lastId = state.lastId;
        retry = state.retry;
        say('info', 'The stream ended; reconnecting with Last-Event-ID…');
      } catch (e) {
        if (!live() || e.name === 'AbortError')
          return;
        if (e instanceof ApiError && e.status === 404 && !resumed)
          return poll(query, my, lastId); // no event stream on this server
        if (e instanceof ApiError && e.status !== 503 && e.status !== 429) {
          say('error', explainError(e));
          return;
        }
        say('info', 'The stream dropped; reconnecting with Last-Event-ID…');
      }
      resumed = true;
      await new Promise((r) => { timer = setTimeout(r, retry); });
    }
  }

  // Polling (audit:read): every 2 s, what came after the newest seq shown.
  async function poll(query, my, from) {
    const live = () => gen === my;
    if (!canAudit) {
      say('error', NEITHER);
      return;
    }
    let after = from || undefined;
    let caughtUp = false;
    while (live()) {
      try {
        const p = await page(['v1', 'audit'], { ...query, limit: 200 }, after);
        if (!live())
          return;
        p.items.forEach(showLive);
        if (p.items.length)
          after = String(p.items[p.items.length - 1].seq);
        if (p.next_cursor) {
          after = p.next_cursor;
          continue;
        }
        if (!caughtUp)
          say('ok', 'Live: polling GET /v1/audit every 2 s (' +
            (ctx.scopes.get('events:read') === false ? 'this token lacks events:read'
              : 'this server has no event stream') + ').');
        caughtUp = true;
      } catch (e) {
        say('error', `${explainError(e)} Retrying every 2 s.`);
      }
      await new Promise((r) => { timer = setTimeout(r, POLL_MS); });
    }
  }

  // A filter reloads the history for it, then goes live from its newest seq.
  async function start() {
    const my = gen;
    const type = filter.value;
    fill(list);
    fill(older);
    list.before(empty);
    say('loading', 'Connecting…');
    const query = type ? { resource_type: type } : {};
    let from;
    try {
      from = await loadHistory(query, my);
    } catch (e) {
      if (gen !== my)
        return;
      fill(history, note('error', `The history could not be read: ${explainError(e)}`));
      from = null;
    }
    if (gen !== my)
      return;
    // The stream when the token may read it; else polling, which needs audit:read.
    if (ctx.scopes.get('events:read') === true)
      runStream(query, my, from);
    else
      poll(query, my, from);
  }

  function stop() {
    gen++;
    if (ctl)
      ctl.abort();
    clearTimeout(timer);
  }

  filter.addEventListener('change', () => {
    stop();
    start();
  });
  start();
  return stop;
}
