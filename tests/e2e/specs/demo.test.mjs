// `seismo demo` end to end: its own process (not the daemon ./run starts) at the default
// speed on a free port. Waits, bounded, until the planted crash signature spike and hang
// regression of the bad release fire and nothing else does, checks that the dashboard's
// Alerts view shows them, saves screenshots (demo-alerts.png, demo-overview.png; also to
// $E2E_DEMO_SCREENSHOT when set, which is how docs/demo.png is made), and stops the demo
// with SIGTERM, expecting exit 0.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {launch, screenshot, eventually, settled, sleep, SHOTS} from '../lib.mjs';

const BIN = process.env.SEISMO_BIN || path.resolve('../../build/seismo');
const ALERT_BUDGET_MS = 180_000;  // the README promises the alerts within three minutes

let demo;
let exited;
let url;
let logTail = [];
let b;

before(async () => {
  demo = spawn(BIN, ['demo', '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
  exited = new Promise((resolve) => demo.on('exit', (code, signal) => resolve({code, signal})));
  readline.createInterface({input: demo.stderr}).on('line', (l) => { logTail = [...logTail.slice(-40), l]; });
  const lines = readline.createInterface({input: demo.stdout});
  url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('seismo demo printed no URL within 30 s')), 30_000);
    lines.once('line', (l) => { clearTimeout(t); resolve(l.trim().replace(/\/$/, '')); });
    demo.once('exit', (code) => reject(new Error(`seismo demo exited (${code}) before printing its URL`)));
  });
  b = await launch();
});

after(async () => {
  await b?.close();
  if (demo && demo.exitCode === null && demo.signalCode === null) demo.kill('SIGKILL');
});

const key = (a) => `${a.rule} ${a.channel} ${a.signature}`;
const PLANTED = ['crash_signature_spike release mozilla::scenario::Crash05', 'hang_spike release scenario::Hang03'];

test('the planted crash spike and hang regression fire within three minutes, and nothing else', {timeout: 240_000},
  async () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the first line of stdout is the dashboard URL');
    const started = Date.now();
    let last = [];
    const fired = await eventually(async () => {
      const res = await fetch(`${url}/api/v1/alerts`);
      assert.equal(res.status, 200);
      last = (await res.json()).alerts;
      const others = last.filter((a) => !PLANTED.includes(key(a)));
      assert.deepEqual(others.map((a) => `${key(a)} (${a.state})`), [], 'no alert but the planted ones, in any state');
      const firing = last.filter((a) => a.state === 'firing').map(key).sort();
      return firing.length === PLANTED.length && firing.every((k, i) => k === [...PLANTED].sort()[i]) ? last : null;
    }, ALERT_BUDGET_MS, `planted alerts firing (last: ${JSON.stringify(last.map(key))}; log:\n${logTail.join('\n')})`);
    console.log(`# demo: both planted alerts firing ${((Date.now() - started) / 1000).toFixed(0)} s after the URL`);
    const spike = fired.find((a) => a.rule === 'crash_signature_spike');
    const hang = fired.find((a) => a.rule === 'hang_spike');
    assert.ok(spike.ratio >= 2 && hang.ratio >= 2, 'ratios of at least 2');
    assert.equal(spike.build.slice(0, 8), hang.build, 'both on the same bad build');
    assert.equal(spike.baseline_builds.length, 3, 'compared with the three release builds before it');

    // The Alerts view shows both, firing, with their numbers.
    const page = await b.page();
    await page.goto(`${url}/#/alerts`);
    await settled(page);
    await eventually(async () => (await page.locator('[data-testid="alert"]').count()) === 2, 15_000, 'two alert cards');
    const shown = {};
    for (const a of fired) {
      const card = page.locator(`[data-testid="alert"][data-rule="${a.rule}"][data-channel="release"]`);
      assert.equal(await card.count(), 1, `${a.rule} card`);
      assert.equal(await card.getAttribute('data-signature'), a.signature);
      assert.equal(await card.getAttribute('data-build'), a.build);
      assert.match(await card.getAttribute('class'), /state-firing/);
      shown[a.rule] = Number((await card.locator('[data-testid="count-new"]').textContent()).replace(/,/g, ''));
    }
    // The demo keeps running: a card shows the count of some evaluation between the
    // two reads of the API (a new build's count only grows).
    const later = (await (await fetch(`${url}/api/v1/alerts`)).json()).alerts;
    for (const a of fired) {
      const now = later.find((x) => x.rule === a.rule && x.signature === a.signature);
      assert.ok(shown[a.rule] >= a.count_new && shown[a.rule] <= now.count_new,
        `${a.rule} card count ${shown[a.rule]} within [${a.count_new}, ${now.count_new}]`);
    }
    await screenshot(page, 'demo-alerts');
    if (process.env.E2E_DEMO_SCREENSHOT) {
      await page.screenshot({path: path.resolve('../..', process.env.E2E_DEMO_SCREENSHOT), fullPage: false});
    }
    // The Overview: live data from every channel, the active alerts.
    await page.goto(`${url}/#/overview`);
    await settled(page);
    await eventually(async () => (await page.locator('table[data-testid="active-alerts-table"] > tbody > tr').count()) === 2,
      15_000, 'two active alerts on the Overview');
    assert.ok(await page.locator('table[data-testid="builds-table"] > tbody > tr').count() >= 12, 'builds of three channels');
    const builds = await (await fetch(`${url}/api/v1/builds?limit=100`)).json();
    assert.deepEqual([...new Set(builds.builds.map((x) => x.channel))].sort(), ['beta', 'nightly', 'release']);
    await screenshot(page, 'demo-overview');
    assert.deepEqual(b.errors, []);
  });

test('SIGTERM stops the demo cleanly (exit 0)', {timeout: 60_000}, async () => {
  demo.kill('SIGTERM');
  const {code, signal} = await Promise.race([exited, sleep(45_000).then(() => ({code: 'timeout'}))]);
  assert.equal(signal, null, `killed by ${signal}`);
  assert.equal(code, 0, `exit ${code}; log:\n${logTail.join('\n')}`);
  assert.ok(fs.existsSync(path.join(SHOTS, 'demo-alerts.png')));
});
