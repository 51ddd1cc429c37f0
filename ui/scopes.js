// What the signed-in token may do. The API has no "who am I" call, so each scope is probed
// with a call that changes nothing: a 403 (whose detail names the missing scope) means no,
// any other answer means yes (404 for an id that does not exist still means the scope
// passed: the scope is checked before the handler looks anything up).
import { ApiError, call, stream, url } from './api.js';

const NONE = 'x0'; // an id that matches the id pattern and exists nowhere

export const SCOPES = [
  { scope: 'memory:read', use: 'sources, explanations, readback, load receipts',
    probe: () => call('GET', url(['v1', 'memory', 'sources'], { limit: 1 })) },
  { scope: 'memory:admin', use: 'classification toggle, revocation',
    probe: () => call('PUT', url(['v1', 'memory', 'sources', NONE, 'classification']),
      { expected_revision: 1, classification: 'active' }) },
  { scope: 'assent:grant', use: 'reading assents',
    probe: () => call('GET', url(['v1', 'assents', NONE])) },
  { scope: 'audit:read', use: 'timeline history, who received a source, thread view, envelope list, ' +
    'audit history',
    probe: () => call('GET', url(['v1', 'audit'], { limit: 1 })) },
  { scope: 'events:read', use: 'live timeline (event stream)', probe: probeEvents },
  { scope: 'preferences:read', use: 'preference journals and their history',
    probe: () => call('GET', url(['v1', 'goals', NONE, 'agents', NONE, 'preferences'])) },
  { scope: 'envelopes:read', use: 'envelope verdicts',
    probe: () => call('GET', url(['v1', 'envelopes', NONE])) },
  { scope: 'envelopes:write', use: 're-verifying an envelope',
    probe: () => call('POST', url(['v1', 'envelopes', NONE, 'verify']), {}) },
  { scope: 'providers:admin', use: 'providers and their doctor',
    probe: () => call('GET', url(['v1', 'providers'], { limit: 1 })) },
  { scope: 'decision_context.read', use: 'decision-context receipts',
    probe: () => call('GET', url(['v1', 'decision-context', 'receipts', NONE])) },
];

// The events stream is probed by opening it and closing it at once. Until the server has
// the stream, it answers 404, and the timeline polls GET /v1/audit instead.
async function probeEvents() {
  const ctl = new AbortController();
  try {
    await stream({}, null, ctl.signal, () => {}, () => ctl.abort());
  } catch (e) {
    if (e instanceof ApiError)
      throw e;
  }
}

// Resolves to {ok, scopes: Map(scope → true|false|'absent'|'unknown'), error?}. ok is false when
// the token itself is refused (401) or the server cannot be reached.
export async function probeScopes() {
  // One call first: a refused token (401) is refused everywhere, so stop there.
  try {
    await call('GET', url(['v1', 'memory', 'sources'], { limit: 1 }));
  } catch (e) {
    if (!(e instanceof ApiError) || e.status === 401)
      return { ok: false, error: e, scopes: new Map() };
  }
  const results = await Promise.all(SCOPES.map(async (s) => {
    try {
      await s.probe();
      return [s.scope, true];
    } catch (e) {
      if (!(e instanceof ApiError))
        return [s.scope, e];
      if (e.status === 401)
        return [s.scope, e];
      if (e.status === 403)
        return [s.scope, false];
      if (s.scope === 'events:read' && e.status === 404)
        return [s.scope, 'absent'];
      if (e.status === 429 || e.status >= 500)
        return [s.scope, 'unknown']; // busy: the answer says nothing about the scope
      return [s.scope, true];
    }
  }));
  const failed = results.find(([, v]) => v instanceof Error);
  if (failed)
    return { ok: false, error: failed[1], scopes: new Map() };
  return { ok: true, scopes: new Map(results) };
}
