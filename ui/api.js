// The API client: the only module that calls fetch. It owns the token (sessionStorage
// only, never logged, never put in a URL), decodes problem+json into ApiError, pages through
// next_cursor, and reads the event stream (fetch streaming: EventSource cannot send a bearer
// token).

const TOKEN_KEY = 'recallgate.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// A refused call: status, the problem's code and detail, and the whole problem body.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || `http_${status}`;
    this.problem = problem;
  }
}

// Words for a refusal that say what to do next.
export function explainError(err) {
  if (!(err instanceof ApiError))
    return 'The server could not be reached. Check that recallgate is running, then retry.';
  switch (err.status) {
  case 401:
    return 'The token was not accepted (401): it is mistyped, or it has been deleted. ' +
      'Sign out and paste a valid token.';
  case 403:
    return `This token lacks the scope for this (403): ${err.message} ` +
      'Ask an admin for a token with that scope.';
  case 404:
    return `Not found (404): ${err.message} Check the id; another tenant's resources are ` +
      'never shown.';
  case 409:
    return err.problem.current_revision !== undefined
      ? `Someone changed this first (409 ${err.code}): the current revision is ` +
        `${err.problem.current_revision}. Reload to see it, then decide again.`
      : `Conflict (409 ${err.code}): ${err.message}`;
  case 422: {
    const fields = (err.problem.errors || []).map((e) => `${e.field}: ${e.reason}`);
    return `The input was refused (422 ${err.code}): ${fields.join('; ') || err.message}`;
  }
  case 429:
    return 'Too many requests (429): wait a moment and retry.';
  case 503:
    return `The service is unavailable (503 ${err.code}): retry in a few seconds.`;
  default:
    return `The request failed (${err.status} ${err.code}): ${err.message}`;
  }
}

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const t = token();
  if (t)
    h.Authorization = `Bearer ${t}`;
  return h;
}

async function problemOf(resp) {
  try {
    return await resp.json();
  } catch {
    return {};
  }
}

// Read your writes (docs/scaling.md): the newest Recallgate-Commit-LSN this page got goes back
// as Recallgate-Min-LSN, so a read served by a standby shows what the page just wrote.
let minLsn = null;

function lsnValue(text) {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text || '');
  return m ? BigInt(`0x${m[1]}`) * 4294967296n + BigInt(`0x${m[2]}`) : null;
}

function noteCommit(resp) {
  const text = resp.headers.get('Recallgate-Commit-LSN');
  const v = lsnValue(text);
  if (v !== null && (minLsn === null || v > lsnValue(minLsn)))
    minLsn = text;
}

// One call; resolves to the parsed body (null for 204), rejects with ApiError or a network
// TypeError. path starts with /v1/.
export async function call(method, path, body) {
  const init = { method, headers: headers(), cache: 'no-store', credentials: 'omit' };
  if (minLsn)
    init.headers['Recallgate-Min-LSN'] = minLsn;
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  noteCommit(resp);
  if (!resp.ok)
    throw new ApiError(resp.status, await problemOf(resp));
  if (resp.status === 204)
    return null;
  return resp.json();
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);
export const put = (path, body) => call('PUT', path, body);

// A path with its query (empty values left out; an array value repeats its parameter, as
// ?label=k:v&label=k2:v2) and every segment encoded.
export function url(segments, query = {}) {
  const path = '/' + segments.map((s) => encodeURIComponent(s)).join('/');
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    for (const one of Array.isArray(v) ? v : [v])
      if (one !== undefined && one !== null && one !== '')
        q.append(k, String(one));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

// One page of a list endpoint: {items, next_cursor}; pass the previous next_cursor as after.
export function page(segments, query, after) {
  return get(url(segments, { ...query, after }));
}

// Parses text/event-stream blocks; returns the unparsed rest.
function parseEvents(buffer, onEvent, state) {
  let sep;
  while ((sep = buffer.search(/\r?\n\r?\n/)) >= 0) {
    const block = buffer.slice(0, sep);
    buffer = buffer.slice(sep + (buffer[sep] === '\r' ? 4 : 2));
    const ev = { id: null, event: 'message', data: [] };
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':'))
        continue; // a comment: the keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id')
        ev.id = value;
      else if (field === 'event')
        ev.event = value;
      else if (field === 'data')
        ev.data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value))
        state.retry = Number(value);
    }
    if (ev.id !== null)
      state.lastId = ev.id;
    if (ev.data.length)
      onEvent({ id: ev.id, event: ev.event, data: ev.data.join('\n') });
  }
  return buffer;
}

// Opens GET /v1/events and calls onEvent for each event until the stream ends. Resolves
// with the stream's last state ({lastId, retry}) when the server closes it; rejects with
// ApiError when refused (404 before the events stream exists), or a network error.
export async function stream(query, lastId, signal, onEvent, onOpen) {
  const extra = { Accept: 'text/event-stream' };
  if (lastId)
    extra['Last-Event-ID'] = lastId;
  const resp = await fetch(url(['v1', 'events'], query),
    { headers: headers(extra), cache: 'no-store', credentials: 'omit', signal });
  if (!resp.ok)
    throw new ApiError(resp.status, await problemOf(resp));
  onOpen();
  const state = { lastId, retry: 2000 };
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done)
      return state;
    buffer = parseEvents(buffer + decoder.decode(value, { stream: true }), onEvent, state);
  }
}
