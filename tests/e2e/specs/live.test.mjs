// Live updates: documents produced to Kafka after the page has loaded change
// the numbers on screen without a reload (event: snapshot on /api/v1/stream).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, screenshot, parseNum, eventually, produce, lineCount, settledAt} from '../lib.mjs';

const {SEISMO_BIN, SEISMO_BROKERS, E2E_TOPIC, E2E_LIVE_FILE, E2E_LIVE_ALERT_FILE, E2E_LIVE_HOLD_FILE} = process.env;
const skip = !(SEISMO_BIN && SEISMO_BROKERS && E2E_TOPIC && E2E_LIVE_FILE && E2E_LIVE_ALERT_FILE && E2E_LIVE_HOLD_FILE) &&
  'needs the Kafka fixture from tests/e2e/run';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

// The page and the API agree on the crash total; returns the API's answer. Right after the
// daemon counted a test's documents the warm-up round that holds them may still be running
// (ADR 0025): the page can open on the round before, and its SSE event brings the newer one.
async function showsApiTotal() {
  return eventually(async () => {
    const [shown, t] = await Promise.all([page.textContent('[data-testid="crash-total"] dd'), api('crashes/top', {limit: 50})]);
    return parseNum(shown) === t.total ? t : null;
  }, 20000, 'the page shows the crash total of /api/v1/crashes/top');
}

test('Top Crashers and the document count update live when Kafka delivers more crashes', {skip}, async () => {
  await open(page, 'crashes');
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 10000, 'stream connected');
  const before = await showsApiTotal();
  // Anything that survives until the end proves there was no reload.
  await page.evaluate(() => { window.__e2eNoReload = true; });
  const navigations = [];
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations.push(f.url()); });

  const documents = (await api('status')).documents;
  await produce(E2E_LIVE_FILE);
  const after = await eventually(async () => {
    const t = await api('crashes/top', {limit: 50});
    return t.total > before.total ? t : null;
  }, 30000, 'the daemon counted the produced crashes');
  // The page catches up with the API, total and rows read together: the produced file may
  // still be arriving, and a snapshot between reading the page and asking the API reorders
  // rows whose counts are close.
  const signatures = () => page.$$eval('table[data-testid="top-crashers"] tbody tr',
    (trs) => trs.map((t) => t.dataset.signature));
  let last;
  await eventually(async () => {
    const [shown, rows, now] = await Promise.all([
      page.textContent('[data-testid="crash-total"] dd'), signatures(), api('crashes/top', {limit: 50})]);
    last = {rows, api: now.rows.map((r) => r.signature)};
    return parseNum(shown) === now.total && now.total >= after.total &&
      JSON.stringify(last.rows) === JSON.stringify(last.api);
  }, 20000, 'the page shows the new crash total and the rows of the API');
  assert.deepEqual(last.rows, last.api);
  assert.equal(await page.evaluate(() => window.__e2eNoReload), true, 'no reload');
  assert.deepEqual(navigations.filter((u) => !u.includes('#/crashes')), [], 'no navigation away');
  assert.equal(await page.getAttribute('#conn', 'data-state'), 'live');
  const st = await api('status');
  await eventually(async () => parseNum((await page.textContent('#foot')).match(/([\d,]+) documents/)[1]) >= st.documents - 0,
    10000, 'footer document count');
  await screenshot(page, 'live-update');
  await settledAt(documents + lineCount(E2E_LIVE_FILE));
  assert.deepEqual(b.errors, []);
});

// A live update does not redraw the view under a held button (a drag to zoom would be
// dropped): it waits for the release, then shows the new numbers.
test('a live update waits while a button is held on a chart', {skip}, async () => {
  await open(page, 'crashes');
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 10000, 'stream connected');
  const before = await showsApiTotal();
  const over = page.locator('[data-testid="crash-trend-chart"] .u-over');
  // A live update can draw the chart anew between finding it and scrolling to it (CI saw
  // "Element is not attached to the DOM" once): found again until it holds still. The button
  // goes down at the same place of the page either way.
  const box = await eventually(async () => {
    await over.scrollIntoViewIfNeeded({timeout: 2000});
    return over.boundingBox();
  }, 10000, 'the crash trend chart in view');
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.mouse.down();
  const documents = (await api('status')).documents;
  await produce(E2E_LIVE_HOLD_FILE);
  const after = await eventually(async () => {
    const t = await api('crashes/top', {limit: 50});
    return t.total > before.total ? t : null;
  }, 30000, 'the daemon counted the produced crashes');
  // The snapshot event came and its redraw waits: the old total is still on screen.
  await page.waitForFunction(() => document.getElementById('view').dataset.deferred === 'held', null, {timeout: 20000});
  assert.equal(parseNum(await page.textContent('[data-testid="crash-total"] dd')), before.total);
  await page.mouse.up();
  await eventually(async () => {
    const [shown, now] = await Promise.all([page.textContent('[data-testid="crash-total"] dd'), api('crashes/top', {limit: 50})]);
    return parseNum(shown) === now.total && now.total >= after.total;
  }, 20000, 'the page shows the new crash total after the release');
  assert.equal(await page.evaluate(() => document.getElementById('view').dataset.deferred), undefined);
  await settledAt(documents + lineCount(E2E_LIVE_HOLD_FILE));
  assert.deepEqual(b.errors, []);
});

// The fixture's "dev-edition" channel has a new build without crash reports; they
// arrive through Kafka now, with a planted signature spike.
test('a new alert arrives on the Alerts view without reload when Kafka delivers a bad build', {skip}, async () => {
  await open(page, 'alerts');
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 10000, 'stream connected');
  const card = page.locator('[data-testid="alert"][data-channel="dev-edition"]');
  assert.equal(await card.count(), 0, 'no dev-edition alert before the bad build\'s crashes');
  assert.equal((await api('alerts', {channel: 'dev-edition'})).alerts.length, 0);
  await page.evaluate(() => { window.__e2eNoReload = true; });
  const documents = (await api('status')).documents;
  await produce(E2E_LIVE_ALERT_FILE);
  // The alert engine evaluates every second ([alerts] interval in the fixture).
  await eventually(async () => (await card.count()) >= 1, 60000, 'a dev-edition alert card on the page');
  assert.equal(await page.evaluate(() => window.__e2eNoReload), true, 'no reload');
  const {alerts} = await api('alerts', {channel: 'dev-edition'});
  const shown = await card.first().getAttribute('data-rule');
  assert.ok(alerts.some((a) => a.rule === shown), `${shown} comes from /api/v1/alerts`);
  await screenshot(page, 'live-alert');
  await settledAt(documents + lineCount(E2E_LIVE_ALERT_FILE));
  assert.deepEqual(b.errors, []);
});
