// DOM helpers. API data reaches the page only as text (textContent, known attributes),
// never as markup: memory content, labels and statements are user-written.

const PROPS = new Set(['value', 'checked', 'disabled', 'type', 'hidden']);

// el('tag', {class, id, href, 'aria-*', onclick: fn, ...}, ...children): strings become
// text nodes; null and false children are skipped; arrays are flattened.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false)
      continue;
    if (k.startsWith('on'))
      node.addEventListener(k.slice(2), v);
    else if (PROPS.has(k))
      node[k] = v;
    else
      node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false)
      continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces node's children.
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: '2-digit',
  hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
});

// A timestamp in the browser's zone, with the UTC value on hover.
export function time(iso) {
  if (!iso)
    return el('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()))
    return el('span', {}, iso);
  return el('time', { datetime: iso, title: `${iso} (UTC)` }, localFormat.format(d));
}

// A short status message: kind is 'info', 'empty', 'error', 'ok' or 'loading'.
export function note(kind, ...text) {
  return el('p', { class: `note note-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    ...text);
}

// A labelled form control. input is an element; the label is tied to it by id.
let ids = 0;
export function field(label, input, hint) {
  if (!input.id)
    input.id = `f${++ids}`;
  return el('div', { class: 'field' }, el('label', { for: input.id }, label), input,
    hint ? el('small', { class: 'hint' }, hint) : null);
}

// Text with a run of more than 20 characters without a space may break anywhere (app.css):
// such a run would otherwise set its column's narrowest width.
const LONG_RUN = /\S{21}/;
function cellText(c) {
  return typeof c === 'string' && LONG_RUN.test(c) ? el('span', { class: 'long-words' }, c) : c;
}

// A table from column names and rows of cells (each a node or text). Each cell carries its
// column's name (data-label), which narrow screens show beside the value, one row per card;
// the explicit roles keep the table's semantics when CSS changes its display.
export function table(caption, columns, rows) {
  return el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption },
    el('table', { role: 'table' },
      el('caption', {}, caption),
      el('thead', { role: 'rowgroup' }, el('tr', { role: 'row' },
        columns.map((c) => el('th', { scope: 'col', role: 'columnheader' }, c)))),
      el('tbody', { role: 'rowgroup' }, rows.map((r) => el('tr',
        { role: 'row', ...(r.attrs || {}) },
        (r.cells || r).map((c, i) => el('td', { role: 'cell', 'data-label': columns[i] },
          el('div', {}, cellText(c)))))))));
}

// A definition list of [term, value] pairs.
export function facts(pairs) {
  return el('dl', { class: 'facts' },
    pairs.filter(Boolean).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

export function badge(text, kind) {
  return el('span', { class: `badge badge-${kind}` }, text);
}

// Codes (reason codes, failure codes) as chips: one element each, apart on screen, and list
// items for a screen reader (each read as its own word, never two codes glued together).
// Spans with list roles rather than <ul>: a chip list also sits inside phrasing content
// (a badge's line, a tree item).
export function chips(codes, none = 'none') {
  if (!codes || codes.length === 0)
    return el('span', { class: 'muted' }, none);
  return el('span', { class: 'chips', role: 'list' },
    codes.map((c) => el('span', { role: 'listitem' }, code(c))));
}

export function code(text) {
  return el('code', {}, text === null || text === undefined ? '—' : String(text));
}

// A link to another view (hash routing).
export function link(hash, text) {
  return el('a', { href: `#/${hash}` }, text);
}
