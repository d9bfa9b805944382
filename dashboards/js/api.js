// The dashboard's only door to seismo: GET /api/v1/... (docs/api.md) and the
// live stream. When the daemon has a bearer token ([http] auth_token_file) the
// page asks for it once (main.js), keeps it in sessionStorage (this tab only,
// gone when the tab closes) and sends it as `Authorization: Bearer` on every
// request; the stream is then read with fetch, since EventSource cannot send
// headers.

const BASE = 'api/v1/';
const TIMEOUT_MS = 10000;
const TOKEN_KEY = 'seismo.token';
const STREAM_RETRY_MS = 2000;
// A 503 with Retry-After is seismo saying "busy: retry in a moment" (its answer memory is
// held by the answers in flight, docs/api.md): asked again after the time it names (at
// most BUSY_WAIT_MAX_MS), up to BUSY_RETRIES times, before the view says so.
const BUSY_RETRIES = 3;
const BUSY_WAIT_MAX_MS = 3000;
let memoryToken = '';  // when sessionStorage is unavailable

export function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

// Stores (or with '' forgets) the token for this tab.
export function setToken(value) {
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token lasts until reload */ }
  memoryToken = value || '';
}

function authHeaders() {
  const t = token() || memoryToken;
  return t ? {Authorization: `Bearer ${t}`} : {};
}

// Thrown for every failed request. `unreachable` is true when no HTTP answer
// came back (daemon down, network error, timeout) or the server failed (5xx);
// `status` 401 means the daemon wants a (different) token.
export class ApiError extends Error {
  constructor(message, {status = 0, unreachable = false, path = ''} = {}) {
    super(message);
    this.status = status;
    this.unreachable = unreachable;
    this.path = path;
  }
}

// Query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

// How long a busy answer asks the client to wait (its Retry-After in seconds), or null
// when the answer is not a busy one.
function busyWait(res) {
  if (res.status !== 503) return null;
  const after = Number(res.headers.get('Retry-After'));
  return Number.isFinite(after) && after >= 0 ? Math.min(after * 1000, BUSY_WAIT_MAX_MS) : null;
}

// GET api/v1/<path>?<params> as JSON.
export async function get(path, params) {
  for (let attempt = 0; ; ++attempt) {
    const res = await fetchAnswer(path, params);
    const wait = attempt < BUSY_RETRIES ? busyWait(res) : null;
    if (wait === null) return readAnswer(path, res);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

async function fetchAnswer(path, params) {
  const url = BASE + path + query(params);
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  try {
    return await fetch(url, {cache: 'no-store', signal: ctl.signal, headers: {Accept: 'application/json', ...authHeaders()}});
  } catch (e) {
    throw new ApiError(`/api/v1/${path}: no answer (${e.name === 'AbortError' ? 'timed out' : e.message})`,
      {unreachable: true, path});
  } finally {
    clearTimeout(timer);
  }
}

// The answer's JSON, or the ApiError it stands for.
async function readAnswer(path, res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const why = body && body.error ? body.error : `HTTP ${res.status}`;
    throw new ApiError(`/api/v1/${path}: ${why}`, {status: res.status, unreachable: res.status >= 500, path});
  }
  if (body === null) throw new ApiError(`/api/v1/${path}: answer is not JSON`, {status: res.status, path});
  return body;
}

// Runs `fn` over `items` with at most `limit` calls in flight.
export async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (e) {
        out[i] = e;
      }
    }
  }
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker));
  return out;
}

// Splits Server-Sent Events text into events; returns the unfinished rest.
//   "event: alert\ndata: {...}\n\n" -> onEvent('alert', '{...}')
export function parseSse(text, onEvent) {
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop();
  for (const block of blocks) {
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) onEvent(type, data.join('\n'));
  }
  return rest;
}

// Opens /api/v1/stream: EventSource without a token, else fetch + a stream
// reader (reconnecting after STREAM_RETRY_MS like EventSource does).
// Handlers: onOpen(), onEvent(type, data), onDown(error). Returns close().
export function openStream({onOpen, onEvent, onDown}) {
  if (!token() && !memoryToken && typeof EventSource !== 'undefined') {
    const es = new EventSource(BASE + 'stream');
    es.addEventListener('open', () => onOpen());
    es.addEventListener('error', () => onDown(new ApiError('/api/v1/stream: disconnected', {unreachable: true})));
    for (const type of ['snapshot', 'alert']) es.addEventListener(type, (ev) => onEvent(type, ev.data));
    return () => es.close();
  }
  let closed = false;
  let ctl = null;
  let retry = null;
  const run = async () => {
    ctl = new AbortController();
    try {
      const res = await fetch(BASE + 'stream', {cache: 'no-store', signal: ctl.signal,
        headers: {Accept: 'text/event-stream', ...authHeaders()}});
      if (!res.ok || !res.body) throw new ApiError(`/api/v1/stream: HTTP ${res.status}`, {status: res.status});
      onOpen();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf = parseSse(buf + value, onEvent);
      }
      if (!closed) onDown(new ApiError('/api/v1/stream: closed by the server', {unreachable: true}));
    } catch (e) {
      if (closed) return;
      onDown(e instanceof ApiError ? e : new ApiError(`/api/v1/stream: ${e.message}`, {unreachable: true}));
      if (e instanceof ApiError && e.status === 401) return;  // a new token reopens the stream
    }
    if (!closed) retry = setTimeout(run, STREAM_RETRY_MS);
  };
  run();
  return () => { closed = true; clearTimeout(retry); ctl?.abort(); };
}
