// Shared fixture for the dashboard's browser tests: Debian's Chromium driven by
// playwright-core, the daemon under test (SEISMO_URL, started by ./run), JSON
// from the same daemon's API to compute expectations, screenshots.

import {chromium} from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import net from 'node:net';

export const BASE_URL = (process.env.SEISMO_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');
export const SHOTS = process.env.E2E_SCREENSHOTS || path.resolve('build/e2e-screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// A fresh browser profile per launch; never a downloaded browser.
export async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'seismo-e2e-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: {width: 1366, height: 768},  // a laptop screen
    // Scrollbars that take room, as a desktop browser's do (Playwright hides them when headless):
    // a layout that depends on whether a scrollbar shows is tested as users see it.
    ignoreDefaultArgs: ['--hide-scrollbars'],
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  const requests = [];
  const busy = new Map();  // API URL -> when it last answered 503 without a success since
  context.on('page', (p) => watch(p, errors));
  for (const p of context.pages()) watch(p, errors);
  context.on('request', (r) => requests.push(r.url()));
  context.on('response', (r) => {
    if (!r.url().includes('/api/v1/')) return;
    if (r.status() === 503) busy.set(r.url(), Date.now());
    else if (r.ok()) busy.delete(r.url());
  });
  return {
    context,
    // Uncaught page errors and console errors, asserted empty by the tests. A busy answer
    // (503, "retry in a moment") is the daemon under load, not a fault, when the page asks
    // again and gets its answer; one still unanswered after BUSY_GRACE_MS is an error.
    get errors() {
      for (const [u, at] of busy) {
        if (Date.now() - at > BUSY_GRACE_MS) {
          errors.push(`busy, never answered: ${u}`);
          busy.delete(u);
        }
      }
      return errors;
    },
    requests,  // every URL the pages asked for
    async page() {
      const p = context.pages()[0] ?? await context.newPage();
      return p;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, {recursive: true, force: true});
    },
  };
}

// The dashboard asks a busy API again after its Retry-After (dashboards/js/api.js): within
// this time a busy URL must have been answered.
const BUSY_GRACE_MS = 8000;
// What Chromium logs for any answer with an error status; a busy one is judged by `busy`.
const BUSY_CONSOLE = /^Failed to load resource: the server responded with a status of 503\b/;

function watch(page, errors) {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !BUSY_CONSOLE.test(m.text())) errors.push(`console: ${m.text()}`);
  });
}

// GET /api/v1/<path> from the daemon under test (or `base`, with `token`), as JSON.
export async function api(p, params = {}, {base = BASE_URL, token = ''} = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const url = `${base}/api/v1/${p}${q.size ? '?' + q : ''}`;
  // A busy answer (503 with Retry-After) is asked again until the daemon answers, as the
  // dashboard does.
  const res = await eventually(async () => {
    const r = await fetch(url, token ? {headers: {Authorization: `Bearer ${token}`}} : {});
    if (r.status !== 503 || !r.headers.has('retry-after')) return r;
    await r.arrayBuffer();
    return null;
  }, 15000, `${url} answered, not busy`);
  assert.equal(res.status, 200, `${url} answered ${res.status}`);
  return res.json();
}

// Opens a view and waits until it has rendered from the API (not the loading notice).
export async function open(page, hash) {
  await page.goto(`${BASE_URL}/#/${hash}`);
  await settled(page);
}

// Waits until the current hash has rendered.
export async function settled(page) {
  await page.waitForFunction(() => {
    const m = document.getElementById('view');
    return m && m.dataset.rendered === location.hash && !m.querySelector('[data-testid="notice-loading"]');
  }, null, {timeout: 15000});
}

// A full-page screenshot of a long view at 414 px renders the whole page once more: on a
// loaded CI machine (sanitizer builds beside the browser) that once took over Playwright's
// default 30 s, so it gets 120 s; a view that never settles still fails.
export async function screenshot(page, name) {
  fs.mkdirSync(SHOTS, {recursive: true});
  await page.screenshot({path: path.join(SHOTS, name + '.png'), fullPage: true, timeout: 120000});
}

// Screenshots at a wide desktop (1600 px) and a phone (414 px) width: <name>-1600.png and
// <name>-414.png; the viewport is the laptop's again afterwards.
export async function screenshotWidths(page, name) {
  for (const width of [1600, 414]) {
    await page.setViewportSize({width, height: 900});
    await screenshot(page, `${name}-${width}`);
  }
  await page.setViewportSize({width: 1366, height: 768});
}

// The README's images: when $<envVar> names a file (a path from the repository's root, e.g.
// E2E_OVERVIEW_SCREENSHOT=docs/overview.png), saves the page — or the element `selector`
// names — there at 1280 px; the viewport is the laptop's again afterwards.
export async function readmeScreenshot(page, envVar, {selector = null, fullPage = true} = {}) {
  const file = process.env[envVar];
  if (!file) return;
  await page.setViewportSize({width: 1280, height: 900});
  const where = path.resolve('../..', file);
  if (selector) {
    await page.locator(selector).waitFor({timeout: 10000});
    await page.locator(selector).screenshot({path: where});
  } else {
    await page.screenshot({path: where, fullPage});
  }
  await page.setViewportSize({width: 1366, height: 768});
}

// GET /api/v1/<path> expecting a 400: the {"error"} message.
export async function apiError(p, params = {}) {
  const url = `${BASE_URL}/api/v1/${p}?${new URLSearchParams(params)}`;
  const res = await fetch(url);
  assert.equal(res.status, 400, `${url} answered ${res.status}`);
  return (await res.json()).error;
}

// "1,234.5 ms" -> 1234.5; "×2.35" -> 2.35; "9.7 %" -> 9.7; "—" -> null.
export function parseNum(text) {
  const t = String(text).replace(/[,\s×%]|ms\/h|h$/g, '');
  if (t === '—' || t === '') return null;
  const v = Number(t.replace(/[^0-9.eE+-]/g, ''));
  return Number.isNaN(v) ? null : v;
}

// A shown number matches the expected one to the precision it is shown with
// ("1,235" within 0.5, "12.3" within 0.05, "0.0123" within 0.00005).
export function assertShown(text, expected, what) {
  const shown = parseNum(text);
  if (expected === null || expected === undefined) {
    assert.equal(shown, null, `${what}: expected no value, shown "${text}"`);
    return;
  }
  assert.notEqual(shown, null, `${what}: expected ${expected}, shown "${text}"`);
  const m = /\.(\d+)/.exec(String(text).replace(/,/g, ''));
  const decimals = m ? m[1].length : 0;
  const tol = 0.5 * 10 ** -decimals * 1.0001 + 1e-9;
  assert.ok(Math.abs(shown - expected) <= tol, `${what}: shown "${text}", expected ${expected}`);
}

// Text of every cell of the rows of a table, by data-testid.
export async function tableRows(page, testid) {
  return page.$$eval(`table[data-testid="${testid}"] > tbody > tr:not(.stacks-row)`, (trs) =>
    trs.map((tr) => ({
      key: tr.dataset.key ?? tr.dataset.signature ?? tr.dataset.build ?? null,
      cells: [...tr.children].map((c) => c.textContent.trim()),
      byId: Object.fromEntries([...tr.querySelectorAll('[data-testid]')].map((c) => [c.dataset.testid, c.textContent.trim()])),
    })));
}

// Points a trend chart draws: from the first bucket with data (a value, or
// usage) on; leading empty buckets of the window are left out.
export function drawnPoints(points, key) {
  const empty = (p) => p[key] === null || p[key] === undefined || (p[key] === 0 && !p.usage_hours);
  const first = points.findIndex((p) => !empty(p));
  return first < 0 ? [] : points.slice(first).filter((p) => p[key] !== null && p[key] !== undefined);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` until it returns a truthy value or `ms` pass.
export async function eventually(fn, ms, what) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(250);
  }
  throw new Error(`${what}: not true within ${ms} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// Hovers a uPlot chart until its tip shows, and returns the tip's text. A live update can
// redraw the chart under a still mouse, and the new chart's tip stays hidden until the mouse
// moves; so the mouse moves to another point of the plot on each try.
export async function hoverTip(page, chart, ms = 20000) {
  let i = 0;
  return eventually(async () => {
    const box = await page.locator(`${chart} .u-over`).boundingBox();
    if (!box) return null;
    const at = 0.3 + 0.1 * (i++ % 5);
    await page.mouse.move(box.x + box.width * at, box.y + box.height / 2);
    const tip = page.locator(`${chart} .chart-tip`);
    if (!(await tip.isVisible())) return null;
    return (await tip.textContent()) || null;
  }, ms, `the tip of ${chart}`);
}

// `seismo produce` of an NDJSON file to a topic of the fixture's broker.
export function produce(file, topic = process.env.E2E_TOPIC) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.env.SEISMO_BIN, ['produce', '--brokers', process.env.SEISMO_BROKERS, '--topic', topic, file],
      {stdio: ['ignore', 'ignore', 'pipe']});
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => (code === 0 ? resolve(err) : reject(new Error(`produce exited ${code}: ${err}`))));
  });
}

export function lineCount(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').length;
}

// Waits until the daemon has counted `documents` documents (later tests compare
// the page with the API, so nothing may still be arriving).
export async function settledAt(documents, opts = {}) {
  await eventually(async () => (await api('status', {}, opts)).documents >= documents, 60000,
    `daemon counted ${documents} documents`);
}

// A free TCP port on 127.0.0.1 (for a daemon a test starts itself).
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const {port} = srv.address(); srv.close(() => resolve(port)); });
  });
}
