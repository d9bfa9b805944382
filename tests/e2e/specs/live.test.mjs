// Live updates: documents produced to Kafka after the page has loaded change
// the numbers on screen without a reload (event: snapshot on /api/v1/stream).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import {launch, api, open, screenshot, parseNum, eventually} from '../lib.mjs';

const {SEISMO_BIN, SEISMO_BROKERS, E2E_TOPIC, E2E_LIVE_FILE} = process.env;
const skip = !(SEISMO_BIN && SEISMO_BROKERS && E2E_TOPIC && E2E_LIVE_FILE) && 'needs the Kafka fixture from tests/e2e/run';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

function produce(file) {
  return new Promise((resolve, reject) => {
    const p = spawn(SEISMO_BIN, ['produce', '--brokers', SEISMO_BROKERS, '--topic', E2E_TOPIC, file],
      {stdio: ['ignore', 'ignore', 'pipe']});
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => (code === 0 ? resolve(err) : reject(new Error(`produce exited ${code}: ${err}`))));
  });
}

test('Top Crashers and the document count update live when Kafka delivers more crashes', {skip}, async () => {
  await open(page, 'crashes');
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 10000, 'stream connected');
  const before = await api('crashes/top', {limit: 50});
  assert.equal(parseNum(await page.textContent('[data-testid="crash-total"] dd')), before.total);
  // Anything that survives until the end proves there was no reload.
  await page.evaluate(() => { window.__e2eNoReload = true; });
  const navigations = [];
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations.push(f.url()); });

  await produce(E2E_LIVE_FILE);
  const after = await eventually(async () => {
    const t = await api('crashes/top', {limit: 50});
    return t.total > before.total ? t : null;
  }, 30000, 'the daemon counted the produced crashes');
  // The page catches up with the API (more snapshots may still arrive).
  await eventually(async () => {
    const [shown, now] = await Promise.all([page.textContent('[data-testid="crash-total"] dd'), api('crashes/top', {limit: 50})]);
    return parseNum(shown) === now.total && now.total >= after.total;
  }, 20000, 'the page shows the new crash total');
  const rows = await page.$$eval('table[data-testid="top-crashers"] tbody tr', (trs) => trs.map((t) => t.dataset.signature));
  const now = await api('crashes/top', {limit: 50});
  assert.deepEqual(rows, now.rows.map((r) => r.signature));
  assert.equal(await page.evaluate(() => window.__e2eNoReload), true, 'no reload');
  assert.deepEqual(navigations.filter((u) => !u.includes('#/crashes')), [], 'no navigation away');
  assert.equal(await page.getAttribute('#conn', 'data-state'), 'live');
  const st = await api('status');
  await eventually(async () => parseNum((await page.textContent('#foot')).match(/([\d,]+) documents/)[1]) >= st.documents - 0,
    10000, 'footer document count');
  await screenshot(page, 'live-update');
  assert.deepEqual(b.errors, []);
});
