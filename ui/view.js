// What several views share: the scope guard, error notes, and a pager over next_cursor.
import { explainError } from './api.js';
import { el, fill, note } from './dom.js';

// A note explaining why a view cannot work for this token, or null when it can.
export function missingScope(ctx, scope, what) {
  if (ctx.scopes.get(scope) === false)
    return note('error', `This token lacks the scope ${scope}, which ${what} needs. ` +
      'Sign out and sign in with a token that has it (an admin can create one with ' +
      `recallgate token create --scopes ${scope}).`);
  return null;
}

export function errorNote(err) {
  return note('error', explainError(err));
}

// A list paged through next_cursor: load(after) resolves to {items, next_cursor};
// show(items) returns the nodes for one page; empty is the text for an empty first page.
// Returns the element; "Next page" appends the following page.
export function pager(load, show, empty) {
  const box = el('div', { class: 'pager' });
  const more = el('div', { class: 'pager-more' });
  const status = el('div', { 'aria-live': 'polite' });
  let first = true;
  async function next(after) {
    fill(more);
    fill(status, note('loading', 'Loading…'));
    try {
      const page = await load(after);
      fill(status);
      if (first && page.items.length === 0) {
        fill(status, note('empty', empty));
        return;
      }
      first = false;
      box.insertBefore(el('div', { class: 'page' }, show(page.items)), more);
      if (page.next_cursor)
        fill(more, el('button', { type: 'button', onclick: () => next(page.next_cursor) },
          'Next page'));
      else
        fill(more, el('p', { class: 'muted' }, 'End of the list.'));
    } catch (e) {
      fill(status, errorNote(e));
    }
  }
  box.append(more, status);
  next(undefined);
  return box;
}
