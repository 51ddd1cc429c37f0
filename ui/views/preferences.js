// Preference journal: the entries of one goal + agent, and every operation in its history
// (oldest first, paged through next_cursor).
import { get, page, url } from '../api.js';
import { badge, code, el, facts, field, fill, note, table, time } from '../dom.js';
import { errorNote, missingScope, pager } from '../view.js';

const ID = '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}';

function stateBadge(state) {
  return badge(state, state === 'active' ? 'ok' : state === 'expired' ? 'warn' : 'muted');
}

function journal(view) {
  return [
    facts([['Journal revision', view.revision === null ? 'never written' : String(view.revision)],
      ['Authority', view.authority]]),
    view.entries.length === 0
      ? note('empty', 'This journal has no entry. Agents write it through ' +
        'PUT …/preferences/{key}; ' +
        'check the goal and agent ids.')
      : table('Entries', ['Key', 'State', 'Statement', 'Source', 'Expires', 'Entry revision',
        'Operation', 'Updated'], view.entries.map((e) => [code(e.key), stateBadge(e.state),
        e.statement === null ? el('span', { class: 'muted' }, '— (not active)') : e.statement,
        e.source_ref, time(e.expires_at), String(e.entry_revision), code(e.operation_id),
        time(e.updated_at)])),
  ];
}

function historyRows(items) {
  return table('History (oldest first)', ['At', 'Action', 'Key', 'Statement', 'Source',
    'Quote', 'Operation', 'Replaces', 'Revision'], items.map((h) => [time(h.at), h.action,
    code(h.key), h.statement === null ? el('span', { class: 'muted' }, '—') : h.statement,
    h.source_ref, h.source_quote, code(h.operation_id), code(h.predecessor_operation_id),
    String(h.revision_after)]));
}

export function render(main, ctx) {
  const [g0, a0] = (ctx.param || '').split('/');
  const goal = el('input', { name: 'goal_id', type: 'text', required: true, pattern: ID,
    value: g0 || '' });
  const agent = el('input', { name: 'agent_id', type: 'text', required: true, pattern: ID,
    value: a0 || '' });
  const out = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'inline', id: 'preferences-form' }, field('Goal id', goal),
    field('Agent id', agent), el('button', { type: 'submit' }, 'Show journal'));
  async function show() {
    fill(out, note('loading', 'Loading the journal…'));
    const segs = ['v1', 'goals', goal.value, 'agents', agent.value];
    try {
      const view = await get(url([...segs, 'preferences']));
      fill(out, el('section', { class: 'card' }, el('h3', {}, 'Journal'), journal(view)),
        el('section', { class: 'card' }, el('h3', {}, 'History'),
          pager((after) => page([...segs, 'preference-history'], { limit: 20 }, after),
            historyRows, 'No operation yet.')));
    } catch (e) {
      fill(out, errorNote(e));
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = `#/preferences/${encodeURIComponent(goal.value)}/` +
      encodeURIComponent(agent.value);
  });
  fill(main, el('h2', {}, 'Preference journal'),
    el('p', {}, 'The explicit preferences of one agent for one goal: advisory, every change a ' +
      'compare-and-swap with its receipt. Statements appear only here, never in the audit.'),
    missingScope(ctx, 'preferences:read', 'the preference journal'), form, out);
  if (g0 && a0)
    show();
}
