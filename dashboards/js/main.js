// App shell: hash router (#/view?filters), filter bar, status polling (ingest
// rate from /status deltas), the live stream (/api/v1/stream) and the
// empty/error states. Each view module exports `title` and
// `async render(ctx) -> Node`; it is called again on every live update.

import * as api from './api.js';
import {h, mount, note, notice} from './dom.js';
import * as fmt from './format.js';
import * as alerts from './views/alerts.js';
import * as crashes from './views/crashes.js';
import * as hangs from './views/hangs.js';
import * as overview from './views/overview.js';
import * as releases from './views/releases.js';
import * as signature from './views/signature.js';

const VIEWS = {
  overview,
  releases,
  hangs,
  crashes,
  'crashes/signature': signature,
  alerts
};
// Filters shared by every view; they travel with links between views.
export const GLOBAL_FILTERS = ['window', 'channel', 'os', 'process', 'build_id'];
const STATUS_EVERY_MS = 5000;
const MIN_REFRESH_GAP_MS = 1000;

const $ = (id) => document.getElementById(id);

// ---- Routing ---------------------------------------------------------------

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, q = ''] = raw.split('?');
  const key = VIEWS[path] ? path : 'overview';
  return {key, params: new URLSearchParams(q)};
}

// '#/view?params' keeping the global filters of the current address, with
// `patch` applied (null/'' removes a parameter).
function href(view, patch = {}, {keepLocal = false} = {}) {
  const cur = parseHash();
  const q = new URLSearchParams();
  for (const [k, v] of cur.params) {
    if (keepLocal || GLOBAL_FILTERS.includes(k)) q.set(k, v);
  }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, String(v));
  }
  const qs = q.toString();
  return `#/${view}${qs ? '?' + qs : ''}`;
}

function go(view, patch, opts) {
  const next = href(view, patch, opts);
  if (next !== location.hash) location.hash = next;
}

// ---- Shared state ----------------------------------------------------------

const state = {
  status: null,            // last /api/v1/status answer
  statusError: null,       // ApiError while the API is unreachable
  statusSettled: false,    // the first /status request has answered (or failed)
  samples: [],             // [{t: wall ms, documents}] for the ingest rate
  rateHistory: [],         // docs/s per status poll, for the overview sparkline
  streamOpen: false,
  needsToken: false,       // the API answered 401: the token form is shown
  lastSnapshot: null,      // last `event: snapshot` payload
  firing: 0,
  known: {channel: new Set(), os: new Set(), process: new Set(), build_id: new Set()},
};

// Documents per second over the last minute of /status samples; null until two samples.
function ingestRate() {
  const s = state.samples;
  if (s.length < 2) return null;
  const a = s[0];
  const b = s[s.length - 1];
  const dt = (b.t - a.t) / 1000;
  return dt > 0 ? Math.max(0, (b.documents - a.documents) / dt) : null;
}

// Views report dimension values they saw, for the filter suggestions.
function learn(dim, value) {
  const set = state.known[dim];
  if (!set || value === undefined || value === null || value === '' || set.has(value) || set.size > 200) return;
  set.add(value);
  const dl = $('dl-' + dim);
  if (dl) dl.appendChild(h('option', {value}));
}

function filters(params) {
  const f = {};
  for (const k of GLOBAL_FILTERS) if (params.get(k)) f[k] = params.get(k);
  return f;
}

// ---- Rendering -------------------------------------------------------------

let renderSeq = 0;
let rendering = 0;       // renders in flight
let pending = false;
let lastRenderAt = 0;
let retryTimer = null;

function setBanner(text) {
  const b = $('banner');
  b.hidden = !text;
  b.textContent = text || '';
}

function setConn() {
  const c = $('conn');
  let st;
  let text;
  if (state.needsToken) { st = 'locked'; text = 'Token needed'; }
  else if (state.statusError) { st = 'offline'; text = 'API unreachable'; }
  else if (state.streamOpen) { st = 'live'; text = 'Live'; }
  else { st = 'connecting'; text = 'Connecting to stream…'; }
  c.dataset.state = st;
  c.textContent = text;
  c.title = st === 'live' ? 'Updates arrive from /api/v1/stream without reloading'
    : st === 'offline' ? String(state.statusError.message) : 'Waiting for /api/v1/stream';
}

// A live update leaves a filter box the user is typing in alone; a navigation (a link, the
// address) sets every box to the address's filters.
function syncChrome(route, live) {
  for (const a of document.querySelectorAll('nav a[data-view]')) {
    const cur = a.dataset.view === route.key.split('/')[0];
    if (cur) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    a.setAttribute('href', href(a.dataset.view));
  }
  const form = $('filters');
  for (const k of GLOBAL_FILTERS) {
    const input = form.elements[k];
    if (input && (!live || document.activeElement !== input)) input.value = route.params.get(k) || '';
  }
  // Alerts are the engine's current list: a window does not narrow them.
  // Alerts list the engine's current state; Releases compare whole lives: no window applies.
  $('f-window').closest('label').hidden = route.key === 'alerts' || route.key === 'releases';
  const view = VIEWS[route.key];
  document.title = `seismo — ${view.title}`;
}

function configuredWindows() {
  const windows = state.status?.windows?.length ? state.status.windows : ['1h', '24h', '7d'];
  // The API's default: 24h when configured, else the middle window.
  const def = windows.includes('24h') ? '24h' : windows[Math.floor(windows.length / 2)] ?? '24h';
  return {windows, def};
}

// "90m" -> 5400000; null for what is not a plain duration.
function durationMs(w) {
  const m = /^(\d+)(s|m|h|d)$/.exec(w || '');
  return m ? Number(m[1]) * {s: 1e3, m: 6e4, h: 36e5, d: 864e5}[m[2]] : null;
}

// A shared link may name a window this seismo does not keep (another config): the
// view falls back to the default window and says so, instead of the API's 400.
function checkWindow(params) {
  const w = params.get('window');
  if (!w || w === 'all' || !state.status?.windows?.length) return {params, windowNote: null};
  const {windows, def} = configuredWindows();
  const ms = durationMs(w);
  if (ms !== null && windows.some((x) => durationMs(x) === ms)) return {params, windowNote: null};
  const kept = new URLSearchParams(params);
  kept.delete('window');
  return {params: kept, windowNote: note(`This link's window "${w}" is not kept by this seismo `
    + `(windows: ${[...windows, 'all'].join(', ')}); showing the default window, ${def}.`, 'window-note')};
}

function fillWindows() {
  const sel = $('f-window');
  const {windows, def} = configuredWindows();
  const want = ['', ...windows.filter((w) => w !== def), 'all'];
  const labels = want.map((w) => (w === '' ? `${def} (default)` : w === 'all' ? 'all retained' : w));
  const sig = want.join(',');
  if (sel.dataset.sig !== sig) {
    sel.dataset.sig = sig;
    mount(sel, want.map((w, i) => h('option', {value: w}, labels[i])));
  }
  sel.value = checkWindow(parseHash().params).params.get('window') || '';
}

async function render({live = false} = {}) {
  // Nothing is drawn before the first /status has answered: a view needs its windows to
  // check a link's (a stream event or a hash change can come first; start() renders then).
  if (!state.statusSettled) return;
  // A navigation always renders at once (a newer render wins); a live
  // update waits for the render in flight and then runs once.
  if (live && rendering) { pending = true; return; }
  // Nor does it while a button is held on the view (a drag to zoom, a text selection):
  // redrawing would drop what the hand is doing. It runs on release.
  if (live && held) { deferWhileHeld(); return; }
  rendering++;
  if (live) pending = false;
  const seq = ++renderSeq;
  const hashRoute = parseHash();
  const {params, windowNote} = checkWindow(hashRoute.params);
  const route = {...hashRoute, params};
  const view = VIEWS[route.key];
  const main = $('view');
  syncChrome(route, live);
  fillWindows();
  if (!live) {
    main.dataset.view = route.key;
    if (!main.firstElementChild || main.dataset.rendered !== location.hash) {
      mount(main, notice('loading', 'Loading…'));
    }
  }
  const ctx = {
    params: route.params,
    filters: filters(route.params),
    status: state.status,
    ingestRate: ingestRate(),
    rateHistory: state.rateHistory,
    href, go, learn,
    waiting: () => !state.status || !state.status.documents,
  };
  try {
    const node = await view.render(ctx);
    if (seq === renderSeq && live && held) {
      deferWhileHeld();
    } else if (seq === renderSeq) {
      mount(main, windowNote, node);
      delete main.dataset.deferred;
      main.dataset.rendered = location.hash;
      main.dataset.updated = String(Date.now());
      if (!state.statusError) setBanner(null);
    }
  } catch (e) {
    if (seq === renderSeq) showError(e, live);
  } finally {
    rendering--;
    lastRenderAt = Date.now();
    if (pending && rendering === 0) setTimeout(() => render({live: true}), MIN_REFRESH_GAP_MS);
  }
}

function showError(e, live) {
  const main = $('view');
  if (e instanceof api.ApiError && e.status === 401) {
    mount(main, notice('auth', 'This seismo needs an access token.',
      'Enter the token of this seismo ([http] auth_token_file) above; it is kept for this browser tab only.'));
    main.dataset.rendered = '';
    askToken();
  } else if (e instanceof api.ApiError && e.unreachable) {
    const shownAt = Number(main.dataset.updated || 0);
    if (live && main.dataset.rendered === location.hash && shownAt) {
      setBanner(`Cannot reach the seismo API — showing data from ${fmt.relative(shownAt)}; retrying.`);
    } else {
      mount(main, notice('error', 'Cannot reach the seismo API.',
        `${e.message}. The dashboard retries every ${STATUS_EVERY_MS / 1000} s and recovers by itself; check that seismo is running.`));
      main.dataset.rendered = '';
    }
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => render({live: true}), STATUS_EVERY_MS);
  } else {
    mount(main, notice('error', 'This view could not be shown.', e.message || String(e)));
    main.dataset.rendered = '';
    console.error(e);
  }
}

// A button held down on the view defers live updates until it is released.
let held = false;
let heldPending = false;

function deferWhileHeld() {
  heldPending = true;
  $('view').dataset.deferred = 'held';  // for tests: a live update waits for the release
}

// Only the primary button holds (a right-click's menu swallows its release), and anything
// that ends a press without a pointerup releases: a drag of a link, a context menu, the tab
// hidden, the window left, or a move with no button down.
function wireHold() {
  $('view').addEventListener('pointerdown', (ev) => { if (ev.button === 0 && ev.isPrimary) held = true; });
  const release = () => {
    if (!held) return;
    held = false;
    if (heldPending) { heldPending = false; scheduleRefresh(); }
  };
  for (const type of ['pointerup', 'pointercancel', 'blur', 'contextmenu', 'dragstart', 'dragend']) {
    window.addEventListener(type, release);
  }
  document.addEventListener('visibilitychange', release);
  window.addEventListener('pointermove', (ev) => { if (held && ev.buttons === 0) release(); });
}

// A live update: re-render the current view, at most once per MIN_REFRESH_GAP_MS.
function scheduleRefresh() {
  const wait = Math.max(0, lastRenderAt + MIN_REFRESH_GAP_MS - Date.now());
  if (rendering) { pending = true; return; }
  setTimeout(() => render({live: true}), wait);
}

// ---- Status, alerts badge, stream -----------------------------------------

function renderFoot() {
  const st = state.status;
  const foot = $('foot');
  if (!st) { mount(foot, state.statusError ? 'API unreachable' : 'connecting…'); return; }
  const rate = ingestRate();
  mount(foot,
    h('span', {'data-testid': 'foot-rate'}, `ingest ${rate === null ? '—' : fmt.num(rate)} docs/s`),
    h('span', {}, `${fmt.int(st.documents)} documents`),
    h('span', {title: fmt.timestamp(st.stream_time)},
      `stream time ${st.stream_time ? fmt.timestamp(st.stream_time) + ' (' + fmt.relative(st.stream_time) + ')' : '— (no events yet)'}`),
    h('span', {}, `seismo ${st.version ?? ''}, up ${fmt.duration(st.uptime_s)}`));
}

async function pollStatus() {
  const prevDocs = state.status?.documents;
  try {
    const st = await api.get('status');
    const wasOffline = !!state.statusError;
    state.status = st;
    state.statusError = null;
    state.samples.push({t: Date.now(), documents: st.documents || 0});
    const cutoff = Date.now() - 60000;
    while (state.samples.length > 2 && state.samples[0].t < cutoff) state.samples.shift();
    const rate = ingestRate();
    if (rate !== null) {
      state.rateHistory.push(rate);
      if (state.rateHistory.length > 120) state.rateHistory.shift();
    }
    if (wasOffline) { setBanner(null); render({live: true}); }
    // Without the stream, fall back to refreshing when the counts move.
    else if (!state.streamOpen && prevDocs !== undefined && prevDocs !== st.documents) scheduleRefresh();
  } catch (e) {
    if (e.status === 401) {
      state.statusSettled = true;
      askToken();
      setConn();
      renderFoot();
      return;
    }
    state.statusError = e;
    if (e.unreachable) setBanner(`Cannot reach the seismo API (${e.message}); retrying every ${STATUS_EVERY_MS / 1000} s.`);
    else setBanner(`seismo API error: ${e.message}`);
  }
  state.statusSettled = true;
  setConn();
  renderFoot();
  pollAlerts();
  // Views that show /status numbers update them in place between refreshes.
  const route = parseHash();
  const view = VIEWS[route.key];
  if (state.status && view.onStatus && $('view').dataset.rendered === location.hash) {
    view.onStatus({status: state.status, ingestRate: ingestRate(), rateHistory: state.rateHistory,
      waiting: () => !state.status.documents});
  }
}

async function pollAlerts() {
  try {
    const a = await api.get('alerts');
    const list = Array.isArray(a.alerts) ? a.alerts : [];
    state.firing = list.filter((x) => (x.state || '').toLowerCase() === 'firing').length;
  } catch {
    return;
  }
  const b = $('alert-badge');
  b.hidden = state.firing === 0;
  b.textContent = String(state.firing);
  b.setAttribute('aria-label', `${state.firing} firing`);
}

let closeStream = null;

function connectStream() {
  if (closeStream) closeStream();
  closeStream = api.openStream({
    onOpen: () => { state.streamOpen = true; setConn(); },
    onDown: (e) => {
      state.streamOpen = false;
      if (e.status === 401) askToken();
      setConn();
    },
    onEvent: (type, data) => {
      if (type === 'snapshot') {
        try { state.lastSnapshot = JSON.parse(data); } catch { state.lastSnapshot = null; }
        scheduleRefresh();
      } else if (type === 'alert') {
        pollAlerts();
        scheduleRefresh();
      }
    },
  });
  window.seismoStream = {close: closeStream};  // for tests and debugging
}

// ---- Access token ------------------------------------------------------------
// With [http] auth_token_file set, the API answers 401 until the page sends the
// token: the form asks for it once, api.js keeps it for this tab.

function askToken() {
  if (state.needsToken) return;
  state.needsToken = true;
  const refused = !!api.token();
  api.setToken('');
  const form = $('auth');
  form.hidden = false;
  $('auth-error').hidden = !refused;
  $('auth-error').textContent = refused ? 'The stored token was refused; enter the current one.' : '';
  $('auth-token').focus();
  setBanner(null);
  setConn();
}

function wireAuth() {
  $('auth').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = $('auth-token').value.trim();
    if (!value) return;
    api.setToken(value);
    try {
      await api.get('status');
    } catch (e) {
      if (e.status === 401) {
        api.setToken('');
        $('auth-error').hidden = false;
        $('auth-error').textContent = 'That token was refused; check it and try again.';
        $('auth-token').select();
        return;
      }
    }
    state.needsToken = false;
    $('auth').hidden = true;
    $('auth-token').value = '';
    $('auth-error').hidden = true;
    connectStream();
    await pollStatus();
    render();
  });
}

// ---- Filter bar ------------------------------------------------------------

function wireFilters() {
  const form = $('filters');
  const apply = () => {
    const patch = {};
    for (const k of GLOBAL_FILTERS) patch[k] = (form.elements[k].value || '').trim();
    go(parseHash().key, patch, {keepLocal: true});
  };
  form.addEventListener('submit', (ev) => { ev.preventDefault(); apply(); });
  form.elements.window.addEventListener('change', apply);
  for (const k of ['channel', 'os', 'process', 'build_id']) form.elements[k].addEventListener('change', apply);
  $('f-clear').addEventListener('click', () => {
    const patch = {};
    for (const k of GLOBAL_FILTERS) patch[k] = null;
    go(parseHash().key, patch, {keepLocal: true});
  });
}

// ---- Start -----------------------------------------------------------------

function start() {
  wireFilters();
  wireAuth();
  wireHold();
  window.addEventListener('hashchange', () => render());
  if (!location.hash) history.replaceState(null, '', '#/overview');
  pollStatus().then(() => render());
  // A second sample soon after the first, so the ingest rate shows early.
  setTimeout(pollStatus, 1500);
  setInterval(pollStatus, STATUS_EVERY_MS);
  setInterval(renderFoot, 1000);
  connectStream();
}

start();
