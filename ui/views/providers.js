// Providers: each registered extension with its doctor state, and a button that runs the
// doctor (POST /v1/providers/{id}/doctor; the service makes the call, never the browser).
import { explainError, page, post, url } from '../api.js';
import { badge, code, el, fill, note, table, time } from '../dom.js';
import { missingScope, pager } from '../view.js';

const DOCTOR = {
  doctor_unreachable: 'the doctor URL could not be reached',
  doctor_timeout: "the doctor did not answer within the provider's timeout",
  doctor_http_error: 'the doctor answered with an HTTP error',
  doctor_invalid_response: 'the doctor\'s answer is not {"ok": true, "protocol": …}',
  doctor_protocol_mismatch: 'the doctor names another protocol',
};

function doctorState(p) {
  if (p.doctor_ready)
    return badge(`ready at revision ${p.doctor_verified_revision}`, 'ok');
  return badge(p.doctor_verified_revision === null ? 'not checked or failed' : 'not ready', 'warn');
}

function row(p) {
  const cell = el('span', { 'aria-live': 'polite' }, doctorState(p));
  // The name starts with the visible label, so speech users can say what they see (WCAG 2.5.3).
  const btn = el('button', { type: 'button', class: 'small',
    'aria-label': `Run doctor for ${p.extension_id}`,
    onclick: async () => {
      btn.disabled = true;
      fill(cell, note('loading', 'Running the doctor…'));
      try {
        const d = await post(url(['v1', 'providers', p.extension_id, 'doctor']));
        fill(cell, d.doctor_ready ? badge(`ready at revision ${d.revision}`, 'ok')
          : el('span', {}, badge('not ready', 'bad'), ' ', code(d.reason_code), ' ',
            DOCTOR[d.reason_code] || ''));
      } catch (e) {
        fill(cell, note('error', explainError(e)));
      }
      btn.disabled = false;
    } }, 'Run doctor');
  return { attrs: { 'data-provider': p.extension_id }, cells: [code(p.extension_id),
    code(p.protocol), p.enabled ? badge('enabled', 'ok') : badge('disabled', 'muted'),
    String(p.revision), code(p.endpoint_url), cell, btn, time(p.updated_at)] };
}

export function render(main, ctx) {
  const blocked = missingScope(ctx, 'providers:admin', 'the providers view');
  fill(main, el('h2', {}, 'Providers'),
    el('p', {}, 'Registered extensions. Dispatch goes only to an enabled provider whose doctor ' +
      'passed at its current revision; every provider call fails open.'),
    blocked, blocked ? null : pager((after) => page(['v1', 'providers'], { limit: 20 }, after),
      (items) => table('Providers', ['Extension', 'Protocol', 'Enabled', 'Revision',
        'Endpoint', 'Doctor', 'Action', 'Updated'], items.map(row)),
      'No provider is registered. Register one with POST /v1/providers, then run its doctor ' +
      'here.'));
}
