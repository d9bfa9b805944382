// The dashboard's only door to seismo: GET /api/v1/... (docs/api.md).

const BASE = 'api/v1/';
const TIMEOUT_MS = 10000;

// Thrown for every failed request. `unreachable` is true when no HTTP answer
// came back (daemon down, network error, timeout) or the server failed (5xx).
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

// GET api/v1/<path>?<params> as JSON.
export async function get(path, params) {
  const url = BASE + path + query(params);
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  let res;
  try {
    res = await fetch(url, {cache: 'no-store', signal: ctl.signal, headers: {Accept: 'application/json'}});
  } catch (e) {
    throw new ApiError(`/api/v1/${path}: no answer (${e.name === 'AbortError' ? 'timed out' : e.message})`,
      {unreachable: true, path});
  } finally {
    clearTimeout(timer);
  }
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
