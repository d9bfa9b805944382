// Nothing is fetched from outside at run time: every request the dashboard
// makes, in every view, goes to the daemon on loopback, including the charting
// library (dashboards/vendor/, installed from npm by scripts/setup).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, open, api, BASE_URL} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

test('every view requests only loopback addresses and draws its charts with the served library', async () => {
  const responses = new Map();
  page.on('response', (r) => responses.set(r.url(), r.status()));
  const {rows} = await api('crashes/top', {limit: 1});
  for (const view of ['overview', 'hangs', 'crashes', `crashes/signature?signature=${encodeURIComponent(rows[0].signature)}`,
    'alerts']) {
    await open(page, view);
  }
  await page.locator('[data-testid="sig-trend-chart"] .uplot canvas, [data-testid="alert-list"], [data-testid="notice-empty"]')
    .first().waitFor({state: 'attached'});
  await open(page, 'hangs');
  await page.locator('[data-testid="hang-trend-chart"] .uplot canvas').waitFor({state: 'attached', timeout: 10000});
  assert.ok(b.requests.length > 10, `${b.requests.length} requests seen`);
  const outside = b.requests.filter((u) => {
    const url = new URL(u);
    if (url.protocol === 'data:' || url.protocol === 'blob:') return false;
    return !LOOPBACK.has(url.hostname) && !LOOPBACK.has(`[${url.hostname}]`);
  });
  assert.deepEqual(outside, [], 'requests to non-loopback hosts');
  const lib = `${BASE_URL}/vendor/uplot/uPlot.esm.js`;
  assert.ok(b.requests.includes(lib), 'uPlot comes from the daemon');
  assert.equal(responses.get(lib) ?? 200, 200);
  assert.equal(await page.locator('[data-testid="chart-missing-library"]').count(), 0);
  assert.deepEqual(b.errors, []);
});
