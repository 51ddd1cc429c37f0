// The shell: sign-in, the scope summary (the Access view), the navigation and hash routing.
// Each view is one module under views/ exporting render(main, ctx), which may return a
// function that stops it (the timeline's stream). The views are imported up front (about
// 78 KB): no module is fetched late, when a view opens, so opening one never waits on the
// network or fails half-way.
import { clearToken, explainError, setToken, token } from './api.js';
import { el, fill, note, table, badge } from './dom.js';
import { SCOPES, probeScopes } from './scopes.js';
import * as envelopes from './views/envelopes.js';
import * as explain from './views/explain.js';
import * as preferences from './views/preferences.js';
import * as providers from './views/providers.js';
import * as receipts from './views/receipts.js';
import * as sources from './views/sources.js';
import * as threads from './views/threads.js';
import * as timeline from './views/timeline.js';

const VIEWS = { timeline, explain, sources, threads, preferences, envelopes, providers,
  receipts };

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const signout = document.getElementById('signout');
let scopes = null; // Map scope → true | false | 'absent' | 'unknown' once signed in
let stopView = null;

function signInForm(message) {
  const input = el('input', { type: 'password', id: 'token', name: 'token',
    autocomplete: 'off', spellcheck: 'false', required: true });
  const status = el('div', { 'aria-live': 'polite' }, message || null);
  const form = el('form', { class: 'card signin', 'aria-labelledby': 'signin-title' },
    el('h2', { id: 'signin-title' }, 'Sign in'),
    el('p', {}, 'Paste a recallgate bearer token. It stays in this tab only (sessionStorage) ' +
      'and is sent to this server alone; closing the tab forgets it.'),
    el('div', { class: 'field' }, el('label', { for: 'token' }, 'Bearer token'), input),
    el('button', { type: 'submit' }, 'Sign in'),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = input.value.trim();
    if (!value) {
      fill(status, note('error', 'Paste a token first.'));
      return;
    }
    setToken(value);
    fill(status, note('loading', 'Checking what this token may do…'));
    await start(true);
  });
  return form;
}

function scopeSummary() {
  const rows = SCOPES.map((s) => {
    const v = scopes.get(s.scope);
    const state = v === true ? badge('allowed', 'ok')
      : v === 'absent' ? badge('not on this server', 'warn')
        : v === 'unknown' ? badge('not checked: the server was busy; sign in again', 'warn')
          : badge('not granted', 'bad');
    return [el('code', {}, s.scope), state, s.use];
  });
  return el('section', { class: 'card' },
    el('h2', {}, 'What this token may do'),
    el('p', {}, 'Each scope was checked with a call that changes nothing. A view whose scope ' +
      'is not granted explains the refusal (403) and names the scope it needs.'),
    table('Scopes of the signed-in token', ['Scope', 'State', 'Used by'], rows),
    scopes.get('events:read') === 'absent'
      ? note('info', 'This server has no event stream yet (GET /v1/events answers 404): ' +
        'the timeline polls GET /v1/audit every 2 seconds instead.') : null);
}

function showNav(on) {
  nav.hidden = !on;
  signout.hidden = !on;
}

function markCurrent(name) {
  for (const a of nav.querySelectorAll('a')) {
    if (a.getAttribute('href') === `#/${name}`)
      a.setAttribute('aria-current', 'page');
    else
      a.removeAttribute('aria-current');
  }
}

// Renders the view of the hash. focus: move the keyboard focus to the view's heading (after
// a navigation; not on page load, where the focus starts at the top of the page).
function route(focus = true) {
  if (stopView) {
    stopView();
    stopView = null;
  }
  if (!token() || !scopes) {
    showNav(false);
    fill(main, signInForm());
    return;
  }
  // #/view/param?key=value: the query prefills a view (the explain view, from a receipt).
  const [path, search = ''] = location.hash.replace(/^#\/?/, '').split(/\?(.*)/s);
  const [name, ...rest] = path.split('/');
  const view = name || 'access';
  markCurrent(view);
  document.title = `${view} · recallgate dashboard`;
  if (view === 'access' || !VIEWS[view]) {
    fill(main, scopeSummary());
  } else {
    fill(main);
    try {
      stopView = VIEWS[view].render(main, { scopes,
        param: rest.map(decodeURIComponent).join('/'),
        query: new URLSearchParams(search) }) || null;
    } catch (e) {
      fill(main, note('error', `This view failed: ${e.message}. Reload the page.`));
    }
  }
  const h = main.querySelector('h2');
  if (h && focus) {
    h.tabIndex = -1;
    h.focus({ preventScroll: true });
  }
}

async function start(focus) {
  const result = await probeScopes();
  if (!result.ok) {
    clearToken();
    scopes = null;
    showNav(false);
    fill(main, signInForm(note('error', explainError(result.error))));
    return;
  }
  scopes = result.scopes;
  showNav(true);
  route(focus);
}

signout.addEventListener('click', () => {
  clearToken();
  scopes = null;
  location.hash = '';
  route();
});
window.addEventListener('hashchange', () => route());

if (token())
  start(false);
else
  route(false);
