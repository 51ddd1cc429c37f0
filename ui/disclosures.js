// Disclosures (docs/disclosures.md) as several views show them: who received which record, when,
// through which token, thread, surface and receipt. Rows hold ids and hashes, never content.
import { badge, code, el, link, table, time } from './dom.js';

export function threadLink(id) {
  if (id === null || id === undefined)
    return el('span', { class: 'muted' }, 'none (a content read)');
  return link(`threads/${encodeURIComponent(id)}`, id);
}

export function receiptLink(id) {
  if (id === null || id === undefined)
    return el('span', { class: 'muted' }, 'none');
  return link(`receipts/${encodeURIComponent(id)}`, id);
}

export function recordLink(id, kind) {
  return kind === 'source' ? link(`sources/${encodeURIComponent(id)}`, id) : code(id);
}

// One page of disclosure rows as a table; each row carries data-disclosure and data-receipt
// (for the test and for a reader's own selectors).
export function disclosureTable(caption, items) {
  return table(caption, ['When', 'Record', 'Token', 'Thread', 'Surface · via', 'Receipt'],
    items.map((d) => ({
      attrs: { 'data-disclosure': d.disclosure_id, 'data-receipt': d.receipt_id || '' },
      cells: [time(d.at), el('span', {}, recordLink(d.record_id, d.record_kind),
        el('small', { class: 'muted block' }, `${d.record_kind}, revision ${d.revision}`)),
      code(d.token_id), threadLink(d.thread_id),
      el('span', {}, d.surface === 'context' ? badge('context (retrieval)', 'warn')
        : badge('content (inspection)', 'muted'), ` · ${d.via}`), receiptLink(d.receipt_id)],
    })));
}
