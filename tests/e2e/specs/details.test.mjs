// The smaller ways the dashboard misled (issue 20, item 10): a phone-width page that
// overflowed and clipped the Alerts tab, a Build ID box too narrow for a build id, a
// Window selector on Alerts (where it does nothing), alert times counted against the
// wall clock instead of stream time, and a missing dashboards/vendor/ the log kept quiet.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {launch, api, open, screenshotWidths, eventually, freePort} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

test('at 414 px every view fits the width and every tab shows', async () => {
  await page.setViewportSize({width: 414, height: 900});
  try {
    for (const view of ['overview', 'releases?channel=aurora', 'hangs', 'crashes', 'alerts']) {
      await open(page, view);
      // The room inside the page's scrollbar (the browser shows scrollbars that take room).
      const [width, room] = await page.evaluate(() =>
        [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(width <= room, `#/${view} is ${width} px wide at 414 px (${room} px inside the scrollbar)`);
      for (const tab of ['overview', 'releases', 'hangs', 'crashes', 'alerts']) {
        const box = await page.locator(`nav a[data-view="${tab}"]`).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= room, `#/${view}: the ${tab} tab ends at ${box && box.x + box.width} px`);
      }
    }
  } finally {
    await page.setViewportSize({width: 1366, height: 768});
  }
  await open(page, 'alerts');
  await screenshotWidths(page, 'alerts-phone');
  assert.deepEqual(b.errors, []);
});

test('the Build ID box shows a whole build id', async () => {
  const id = (await api('builds', {limit: 1})).builds[0].build_id;
  await open(page, `crashes?build_id=${id}`);
  const box = page.locator('#filters input[name="build_id"]');
  assert.equal(await box.inputValue(), id);
  const [scroll, client] = await box.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  assert.ok(scroll <= client, `the build id is not cut off (${scroll} px of text in a ${client} px box)`);
  await screenshotWidths(page, 'filters-build-id');
});

test('the Window selector shows where it applies, not on Alerts', async () => {
  await open(page, 'alerts');
  assert.equal(await page.locator('#f-window').isVisible(), false, 'no Window selector on Alerts');
  for (const view of ['overview', 'hangs', 'crashes']) {
    await open(page, view);
    assert.equal(await page.locator('#f-window').isVisible(), true, `Window selector on ${view}`);
  }
});

test('alert times are counted in stream time, and say so', async () => {
  const [{alerts}, status] = await Promise.all([api('alerts'), api('status')]);
  const alert = alerts.find((a) => a.since);
  assert.ok(alert && status.stream_time, 'a planted alert and a stream time');
  await open(page, `alerts?state=${alert.state}`);
  const shown = await page.locator('[data-testid="since"]').allTextContents();
  const hours = (Date.parse(status.stream_time) - Date.parse(alert.since)) / 3600e3;
  assert.ok(shown.length > 0);
  for (const text of shown) assert.match(text, / in stream time$|^just now in stream time$/);
  // The corpus's events are days behind the clock: counted from the wall clock this
  // would read days; counted from the stream time it reads the alert's age there.
  const secs = hours * 3600;
  const want = secs < 5 ? 'just now' : secs < 60 ? `${Math.round(secs)} s ago` : secs < 3600
    ? `${Math.round(secs / 60)} min ago` : hours < 48 ? `${Math.round(hours)} h ago` : `${Math.round(hours / 24)} d ago`;
  assert.ok(shown.includes(`${want} in stream time`), `expected "${want} in stream time" in ${JSON.stringify(shown)}`);
  await open(page, 'overview');
  const since = await page.locator('[data-testid="since"]').allTextContents();
  assert.ok(since.length > 0 && since.every((t) => !/ d ago$/.test(t)), JSON.stringify(since));
  assert.match(await page.locator('th', {hasText: 'Since'}).first().textContent(), /stream time/);
});

test('a dashboards directory without vendor/ is reported in the daemon log', {skip: !process.env.SEISMO_BIN && 'SEISMO_BIN not set'}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seismo-e2e-novendor-'));
  const statics = path.join(dir, 'dashboards');
  for (const part of ['index.html', 'css', 'js']) {
    fs.cpSync(path.join(process.env.SEISMO_STATIC_DIR, part), path.join(statics, part), {recursive: true});
  }
  const port = await freePort();
  const cfg = path.join(dir, 'novendor.toml');
  fs.writeFileSync(cfg, ['[kafka]', 'topics = []', '[http]', `listen = "127.0.0.1:${port}"`, 'health_listen = "127.0.0.1:0"',
    `static_dir = "${statics}"`, '[log]', 'level = "info"', ''].join('\n'));
  const logFile = path.join(dir, 'daemon.log');
  const log = fs.openSync(logFile, 'w');
  const daemon = spawn(process.env.SEISMO_BIN, ['run', '--config', cfg], {stdio: ['ignore', log, log]});
  try {
    const url = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${url}/healthz`)).ok, 15000, 'daemon up');
    await page.goto(`${url}/#/overview`);
    await page.locator('main#view').waitFor({state: 'attached'});
    assert.match(fs.readFileSync(logFile, 'utf8'), /has no vendor\/ directory: the dashboard's charts cannot load/);
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    fs.rmSync(dir, {recursive: true, force: true});
  }
  b.errors.length = 0;  // the page could not load its chart library, on purpose
});
