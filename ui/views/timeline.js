// Live timeline: the tenant's audit records as they commit. It reads the event stream
// (GET /v1/events, fetch streaming) and resumes with Last-Event-ID after a drop. Where the
// server has no event stream (404), it polls GET /v1/audit every 2 s from the newest cursor.
import { ApiError, explainError, page, stream } from '../api.js';
import { code, el, field, fill, link, note, time } from '../dom.js';

const TYPES = ['token', 'thread', 'source', 'derivative', 'assent', 'preference_journal',
  'provider', 'semantic_preference_config', 'workspace', 'envelope'];
const KEEP = 300; // records shown at most
const POLL_MS = 2000;

function resourceLink(rec) {
  if (rec.resource_type === 'source')
    return link(`sources/${encodeURIComponent(rec.resource_id)}`, rec.resource_id);
  if (rec.resource_type === 'preference_journal') // "goal/agent"
    return link(`preferences/${rec.resource_id.split('/').map(encodeURIComponent).join('/')}`,
      rec.resource_id);
  if (rec.resource_type === 'envelope')
    return link(`envelopes/${encodeURIComponent(rec.resource_id)}`, rec.resource_id);
  return code(rec.resource_id);
}

function row(rec) {
  const rev = rec.revision_before === null ? `→ ${rec.revision_after}`
    : `${rec.revision_before} → ${rec.revision_after}`;
  return el('li', { class: 'event', 'data-seq': rec.seq, 'data-action': rec.action },
    el('span', { class: 'event-time' }, time(rec.at)),
    el('strong', { class: 'event-action' }, rec.action),
    el('span', { class: 'event-resource' }, resourceLink(rec)),
    el('span', { class: 'muted' }, `revision ${rev} · seq ${rec.seq} · by `,
      code(rec.actor_token_id)));
}

export function render(main, ctx) {
  const NEITHER = 'The timeline needs events:read (the event stream) or audit:read (polling ' +
    'GET /v1/audit), and this token has neither. Sign in with a token that has one of them.';
  const blocked = ctx.scopes.get('audit:read') === false && ctx.scopes.get('events:read') !== true;
  const filter = el('select', { name: 'resource_type' },
    el('option', { value: '' }, 'every resource type'),
    TYPES.map((t) => el('option', { value: t }, t)));
  const status = el('div', { class: 'live-status', 'aria-live': 'polite' });
  const list = el('ol', { class: 'events', reversed: true });
  const empty = note('empty', 'No record yet. Records appear here as they commit: change ' +
    'something (a classification, say) in another tab, or with the API.');
  fill(main,
    el('h2', {}, 'Live timeline'),
    el('p', {}, 'Every audit record of this tenant as it commits, newest first. Records ' +
      'carry ids, revisions and hashes, never private text.'),
    el('form', { class: 'inline', onsubmit: (e) => e.preventDefault() },
      field('Resource type', filter)),
    status, blocked ? note('error', NEITHER) : null, empty, list);
  if (blocked)
    return () => {};

  let ctl = null;
  let timer = null;
  let gen = 0; // the current connection; a loop of an older one stops at its next step

  function show(rec) {
    if (list.querySelector(`[data-seq="${CSS.escape(String(rec.seq))}"]`))
      return;
    empty.remove();
    list.prepend(row(rec));
    while (list.children.length > KEEP)
      list.lastElementChild.remove();
  }

  function say(kind, text) {
    fill(status, note(kind, text));
  }

  async function runStream(query, my) {
    const live = () => gen === my;
    let lastId = null;
    while (live()) {
      ctl = new AbortController();
      let retry = POLL_MS;
      try {
        const state = await stream(query, lastId, ctl.signal,
          (ev) => show(JSON.parse(ev.data)),
          () => say('ok', 'Live: reading the event stream' +
            (lastId ? ` (resumed after seq ${lastId}).` : '.')));
        lastId = state.lastId;
        retry = state.retry;
        say('info', 'The stream ended; reconnecting with Last-Event-ID…');
      } catch (e) {
        if (!live() || e.name === 'AbortError')
          return;
        if (e instanceof ApiError && e.status === 404 && lastId === null)
          return poll(query, my); // no event stream on this server
        if (e instanceof ApiError && e.status !== 503 && e.status !== 429) {
          say('error', explainError(e));
          return;
        }
        say('info', 'The stream dropped; reconnecting with Last-Event-ID…');
      }
      await new Promise((r) => { timer = setTimeout(r, retry); });
    }
  }

  // Polling: first walk to the newest record (showing the last ones), then ask every 2 s.
  async function poll(query, my) {
    const live = () => gen === my;
    if (ctx.scopes.get('audit:read') === false) {
      say('error', NEITHER);
      return;
    }
    let after;
    let caughtUp = false;
    while (live()) {
      try {
        const p = await page(['v1', 'audit'], { ...query, limit: 200 }, after);
        if (!live())
          return;
        p.items.forEach(show);
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

  function start() {
    const type = filter.value;
    fill(list);
    list.before(empty);
    say('loading', 'Connecting…');
    const query = type ? { resource_type: type } : {};
    // The stream when the token may read it; else (no stream on this server, or no
    // events:read) polling, which needs audit:read.
    if (ctx.scopes.get('events:read') === true)
      runStream(query, gen);
    else
      poll(query, gen);
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
