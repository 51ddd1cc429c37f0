// Sources: the list (paged), and one source with its classification toggle (a compare-and-
// swap on expected_revision: a 409 shows the current revision), its derivatives as a tree,
// its assent, its audit trail, and revocation with readback.
import { ApiError, explainError, get, page, post, put, url } from '../api.js';
import { badge, chips, code, el, facts, field, fill, link, note, table, time } from '../dom.js';
import { disclosureTable } from '../disclosures.js';
import { errorNote, missingScope, pager } from '../view.js';

const src = (id, ...rest) => url(['v1', 'memory', 'sources', id, ...rest]);

function stateBadge(rec) {
  return rec.effective_retrieval_state === 'eligible' ? badge('eligible', 'ok')
    : el('span', { class: 'state' }, badge('ineligible', 'bad'), ' ',
      chips(rec.ineligible_reasons, ''));
}

const KINDS = ['note', 'thread_summary', 'document', 'fact'];
const ID = '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}';

function select(name, options) {
  return el('select', { name }, options.map(([v, text]) => el('option', { value: v }, text)));
}

// "team:ops, env:prod" → ['team:ops', 'env:prod'] (each k:v must match; a label's value may
// hold spaces, not commas).
function labelsOf(text) {
  return text.split(',').map((l) => l.trim()).filter(Boolean);
}

// Find a source without its id: filters (all must match), newest first by default.
function list(ctx) {
  const classification = select('classification', [['', 'any'], ['active', 'active'],
    ['cold', 'cold']]);
  const state = select('state', [['', 'any'], ['eligible', 'eligible'],
    ['ineligible', 'ineligible']]);
  const kind = select('source_kind', [['', 'any'], ...KINDS.map((k) => [k, k])]);
  const order = select('order', [['newest', 'newest first'], ['oldest', 'oldest first']]);
  const thread = el('input', { name: 'thread_id', type: 'text', pattern: ID,
    placeholder: 'thread-42' });
  const labels = el('input', { name: 'label', type: 'text', placeholder: 'team:ops, env:prod' });
  const open = el('input', { name: 'source_id', type: 'text', placeholder: 'src_…' });
  const box = el('div', { id: 'sources-list' });
  function load() {
    const q = { classification: classification.value, state: state.value,
      source_kind: kind.value, thread_id: thread.value.trim(), label: labelsOf(labels.value),
      order: order.value, limit: 20 };
    const what = [q.classification, q.state, q.source_kind, q.thread_id && `thread ${q.thread_id}`,
      ...q.label].filter(Boolean);
    fill(box, pager((after) => page(['v1', 'memory', 'sources'], q, after),
      (items) => table('Sources', ['Source', 'Kind', 'Classification', 'Retrieval',
        'Revision', 'Created', 'Updated'], items.map((s) => ({
        attrs: { 'data-source': s.source_id },
        cells: [link(`sources/${encodeURIComponent(s.source_id)}`, s.source_id), s.source_kind,
          s.classification, stateBadge(s), String(s.revision), time(s.created_at),
          time(s.updated_at)] }))),
      `No source matches${what.length ? ` (${what.join(', ')})` : ''}. Sources are created ` +
      'by agents through POST /v1/memory/sources; change the filters, or create one.'));
  }
  for (const s of [classification, state, kind, order])
    s.addEventListener('change', load);
  load();
  return [
    el('form', { class: 'inline', id: 'sources-filter', onsubmit: (e) => {
      e.preventDefault();
      load();
    } }, field('Classification', classification), field('Retrieval state', state),
    field('Kind', kind), field('Order', order), field('Thread', thread),
    field('Labels', labels, 'k:v, comma-separated; all must match'),
    el('button', { type: 'submit' }, 'Filter')),
    el('form', { class: 'inline', onsubmit: (e) => {
      e.preventDefault();
      if (open.value.trim())
        location.hash = `#/sources/${encodeURIComponent(open.value.trim())}`;
    } }, field('Open a source by id', open), el('button', { type: 'submit' }, 'Open')),
    box,
  ];
}

// Derivatives downstream of the source, as a tree built from each one's provenance.
async function derivativeTree(sourceId, readback) {
  const nodes = await Promise.all(readback.derivatives.map((d) =>
    get(url(['v1', 'memory', 'derivatives', d.derivative_id]))));
  const children = new Map();
  for (const d of nodes)
    for (const p of d.provenance || [])
      children.set(p.source_id, [...(children.get(p.source_id) || []), d]);
  const seen = new Set();
  function branch(id) {
    const kids = children.get(id) || [];
    if (kids.length === 0)
      return null;
    return el('ul', {}, kids.map((d) => {
      const id2 = d.derivative_id || d.source_id;
      const again = seen.has(id2);
      seen.add(id2);
      return el('li', {}, code(id2), ` ${d.kind || ''} · revision ${d.revision} `,
        stateBadge(d), again ? el('span', { class: 'muted' }, ' (shown above)') : branch(id2));
    }));
  }
  return el('div', { class: 'tree' }, el('span', {}, code(sourceId), ' (this source)'),
    branch(sourceId) || el('p', { class: 'muted' }, 'No derivative was made from it.'));
}

function readbackFacts(rb) {
  return el('div', { id: 'readback', class: rb.clean ? 'readback clean' : 'readback' },
    facts([
      ['Revoked', rb.revoked ? 'yes' : 'no'],
      ['Derivatives downstream', String(rb.derivatives.length)],
      ['Residual eligible records', el('strong', { id: 'residual' }, String(rb.residual_eligible))],
      ['Clean', !rb.revoked
        ? badge(`not revoked: ${rb.residual_eligible} eligible downstream`, 'muted')
        : rb.clean ? badge('clean: nothing downstream is retrievable', 'ok')
          : badge('not clean: records downstream are still retrievable', 'bad')],
    ]));
}

function detail(ctx, id) {
  const box = el('div', {}, note('loading', 'Loading the source…'));
  async function load(message) {
    try {
      const [s, rb] = await Promise.all([get(src(id)), get(src(id, 'readback'))]);
      fill(box, message || null, summary(s), classify(s), revoke(s, rb),
        el('section', { class: 'card' }, el('h3', {}, 'Derivatives'),
          await derivativeTree(id, rb)),
        recipients(s, rb), assents(s), history(s));
    } catch (e) {
      fill(box, errorNote(e), el('p', {}, link('sources', 'Back to the list')));
    }
  }
  function summary(s) {
    return el('section', { class: 'card' }, facts([
      ['Source', code(s.source_id)], ['Kind', s.source_kind],
      ['Revision', el('span', { id: 'revision' }, String(s.revision))],
      ['Classification', el('span', { id: 'classification' }, s.classification)],
      ['Retrieval', stateBadge(s)], ['Content hash', code(s.content_hash)],
      ['Source identity', code(s.source_identity)],
      ['Created', time(s.created_at)], ['Updated', time(s.updated_at)],
    ]));
  }
  function classify(s) {
    const to = s.classification === 'active' ? 'cold' : 'active';
    const out = el('div', { 'aria-live': 'polite' });
    const btn = el('button', { type: 'button', id: 'toggle-classification',
      onclick: async () => {
        btn.disabled = true;
        try {
          await put(src(id, 'classification'),
            { expected_revision: s.revision, classification: to });
          await load(note('ok', `Classified ${to} (from revision ${s.revision}).`));
        } catch (e) {
          btn.disabled = false;
          fill(out, note('error', explainError(e)),
            e instanceof ApiError && e.status === 409 ? el('button', { type: 'button',
              onclick: () => load() }, `Reload revision ${e.problem.current_revision}`) : null);
        }
      } }, `Make ${to}`);
    return el('section', { class: 'card' }, el('h3', {}, 'Classification'),
      el('p', {}, `This source is ${s.classification}. The change is sent with ` +
        `expected_revision ${s.revision}: if someone changed it since, nothing changes and ` +
        'the current revision is shown.'),
      missingScope(ctx, 'memory:admin', 'changing a classification'), btn, out);
  }
  function revoke(s, rb) {
    const reason = el('input', { name: 'reason_code', type: 'text', value: 'owner_request',
      required: true, pattern: '[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}' });
    const out = el('div', { 'aria-live': 'polite' });
    const form = el('form', { class: 'inline', id: 'revoke-form' },
      field('Reason code', reason), el('button', { type: 'submit', class: 'danger' },
        'Revoke this source'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!confirm(`Revoke ${id}? Revocation is final for retrieval.`))
        return;
      try {
        await post(src(id, 'revoke'), { expected_revision: s.revision,
          reason_code: reason.value });
        await load(note('ok', 'Revoked. The readback below is read fresh from the server.'));
      } catch (e) {
        fill(out, errorNote(e));
      }
    });
    return el('section', { class: 'card' }, el('h3', {}, 'Revocation readback'),
      readbackFacts(rb), rb.derivatives.length ? table('Derivatives after revocation',
        ['Derivative', 'Kind', 'Retrieval'], rb.derivatives.map((d) =>
          [code(d.derivative_id), d.kind, d.effective_retrieval_state])) : null,
      rb.revoked ? null : [missingScope(ctx, 'memory:admin', 'revocation'), form, out]);
  }
  // Who received it: the readback's counts (over the source and its derivatives), "N after
  // revocation" as the service counted it, and the disclosure rows (audit:read).
  function recipients(s, rb) {
    const d = rb.disclosures;
    const after = el('div', { id: 'after-revocation-fact' });
    if (rb.revoked) {
      const n = d.after_revocation;
      fill(after, note(n === 0 ? 'ok' : 'error', el('strong', { id: 'after-revocation' },
        `${n} after revocation`), n === 0
        ? ': checked by the service just now (readback). No context load delivered this ' +
          'source or any of its derivatives into an agent at or after its revocation. ' +
          'Reads of the kept bytes by an operator (surface "content") are not retrieval and ' +
          'are not counted.'
        : ': context loads delivered this source or a derivative at or after its ' +
          'revocation, which the service must never do. Report it with the rows below.'));
      if (ctx.scopes.get('audit:read') !== false)
        page(['v1', 'audit'], { resource_type: 'source', resource_id: s.source_id,
          order: 'newest', limit: 50 }).then((p) => {
          const r = p.items.find((x) => x.action === 'source.revoked');
          if (r)
            after.append(el('p', { class: 'muted' }, 'Revoked at ', time(r.at),
              ` (audit seq ${r.seq}).`));
        }).catch(() => {}); // the revocation time is a detail; the count above stands
    }
    const body = missingScope(ctx, 'audit:read', 'the list of who received a source') ||
      pager((a) => page(['v1', 'memory', 'sources', s.source_id, 'disclosures'],
        { include_derivatives: 'true', limit: 50 }, a),
      (items) => disclosureTable('Disclosures of this source and its derivatives', items),
      'Nobody received it: no context load delivered it or a derivative, and nobody read ' +
        'its content.');
    return el('section', { class: 'card', id: 'recipients' }, el('h3', {}, 'Who received it'),
      el('p', {}, 'Every delivery of this source and of its derivatives (newest first): the ' +
        'token that received it, the thread it went into and the load receipt. Content is ' +
        'never shown here.'),
      facts([
        ['Deliveries', el('span', { id: 'disclosure-count' }, String(d.count))],
        ['Threads', String(d.threads)], ['Tokens', String(d.tokens)],
        ['First', time(d.first_at)], ['Last', time(d.last_at)],
      ]), after, body);
  }
  // An assent is bound to a source identity, and the source does not name its assent: the
  // assents of this identity are found in the assent.granted audit records (which carry the
  // identity), then read one by one.
  function assents(s) {
    const out = el('div', { 'aria-live': 'polite' }, note('loading', 'Looking for assents…'));
    const blocked = missingScope(ctx, 'assent:grant', 'reading assents') ||
      missingScope(ctx, 'audit:read', 'finding the assents of a source');
    async function find() {
      const ids = [];
      let after;
      for (let pages = 0; pages < 10; pages++) {
        const p = await page(['v1', 'audit'], { resource_type: 'assent', limit: 200 }, after);
        for (const r of p.items)
          if (r.action === 'assent.granted' && r.details &&
              r.details.source_identity === s.source_identity)
            ids.push(r.resource_id);
        if (!p.next_cursor)
          break;
        after = p.next_cursor;
      }
      const rows = await Promise.all(ids.map((a) => get(url(['v1', 'assents', a]))));
      fill(out, rows.length === 0
        ? note('empty', 'No assent is bound to this source identity: it is not a foreign ' +
          'source, or its owner has not granted one.')
        : table('Assents bound to this source identity', ['Assent', 'Owner', 'Revision',
          'Expires', 'Revoked'], rows.map((a) => [code(a.assent_id), a.owner,
          String(a.revision), time(a.expires_at),
          a.revoked_at ? el('span', {}, badge('revoked', 'bad'), ' ', time(a.revoked_at))
            : badge('live', 'ok')])));
    }
    if (!blocked)
      find().catch((e) => fill(out, errorNote(e)));
    return el('section', { class: 'card' }, el('h3', {}, 'Assents'),
      el('p', {}, "A foreign source is admitted under its owner's assent, bound to its source " +
        'identity; revoking the assent, or its expiry, makes the source and its derivatives ' +
        'ineligible.'), blocked || out);
  }
  function history(s) {
    const body = ctx.scopes.get('audit:read') === false
      ? missingScope(ctx, 'audit:read', 'the audit trail')
      : pager((after) => page(['v1', 'audit'], { resource_type: 'source',
        resource_id: s.source_id, limit: 20 }, after),
      (items) => table('Audit trail of this source', ['Seq', 'At', 'Action', 'Revision',
        'Details'], items.map((r) => [String(r.seq), time(r.at), r.action,
        `${r.revision_before ?? '—'} → ${r.revision_after}`,
        code(JSON.stringify(r.details))])), 'No audit record.');
    return el('section', { class: 'card' }, el('h3', {}, 'Audit trail'), body);
  }
  load();
  return [el('p', {}, link('sources', '← All sources')), box];
}

export function render(main, ctx) {
  const blocked = missingScope(ctx, 'memory:read', 'the sources view');
  if (ctx.param)
    fill(main, el('h2', {}, `Source ${ctx.param}`), blocked,
      blocked ? null : detail(ctx, ctx.param));
  else
    fill(main, el('h2', {}, 'Sources'), el('p', {}, 'Find a source without its id: filter ' +
      'by classification, retrieval state, kind, thread and label (newest first). Open one ' +
      'to see who received it, change it, revoke it or read back.'),
    blocked, blocked ? null : list(ctx));
}
