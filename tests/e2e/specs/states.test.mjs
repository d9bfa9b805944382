// Error state when the API is unreachable, recovery, and the empty state of a
// daemon that has seen no data yet ("waiting for data…").
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {launch, open, settled, screenshot, eventually, freePort, BASE_URL} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

test('an unreachable API shows an error state, and the view recovers by itself', async () => {
  await page.route('**/api/v1/**', (route) => route.abort('connectionrefused'));
  await page.goto(`${BASE_URL}/#/crashes`);
  await page.locator('[data-testid="notice-error"]').waitFor({state: 'visible', timeout: 10000});
  assert.match(await page.textContent('[data-testid="notice-error"]'), /Cannot reach the seismo API/);
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'offline', 10000, 'offline indicator');
  await screenshot(page, 'error-unreachable');
  await page.unroute('**/api/v1/**');
  await page.locator('table[data-testid="top-crashers"]').waitFor({state: 'visible', timeout: 15000});
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) !== 'offline', 10000, 'back online');
});

// seismo answers 503 "busy" with Retry-After when the answers in flight hold its answer
// memory (docs/api.md): the dashboard asks again after that time, and the view shows its
// data with no error, and no banner.
test('a busy answer is asked again after its Retry-After: the view shows its data, no error', async () => {
  let busyAnswers = 0;
  await page.route('**/api/v1/crashes/top**', async (route) => {
    if (busyAnswers < 2) {
      ++busyAnswers;
      await route.fulfill({status: 503, headers: {'Retry-After': '1'}, contentType: 'application/json',
        body: JSON.stringify({error: 'busy: the answers in flight hold all of http.answer_memory; retry in a moment'})});
    } else {
      await route.continue();
    }
  });
  try {
    const before = b.errors.length;
    // Whether the page ever showed an error notice or the banner, from its first node on.
    await page.addInitScript(() => {
      new MutationObserver(() => {
        if (document.querySelector('[data-testid="notice-error"], #banner:not([hidden])')) window.__sawError = true;
      }).observe(document, {subtree: true, childList: true, attributes: true});
    });
    await page.goto('about:blank');  // a fresh load, not a hash change on the last test's page
    await page.goto(`${BASE_URL}/#/crashes`);
    await page.locator('table[data-testid="top-crashers"]').waitFor({state: 'visible', timeout: 15000});
    assert.equal(busyAnswers, 2);
    assert.equal(await page.evaluate(() => window.__sawError === true), false, 'an error was shown meanwhile');
    assert.deepEqual(b.errors.slice(before), []);
  } finally {
    await page.unroute('**/api/v1/crashes/top**');
  }
});

test('a daemon without data shows "waiting for data…"', {skip: !process.env.SEISMO_BIN && 'SEISMO_BIN not set'}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seismo-e2e-empty-'));
  const port = await freePort();
  const cfg = path.join(dir, 'empty.toml');
  fs.writeFileSync(cfg, [
    '[kafka]', 'topics = []', '[http]', `listen = "127.0.0.1:${port}"`, 'health_listen = "127.0.0.1:0"',
    `static_dir = "${process.env.SEISMO_STATIC_DIR}"`, '[log]', 'level = "warn"', ''].join('\n'));
  const log = fs.openSync(path.join(dir, 'daemon.log'), 'w');
  const daemon = spawn(process.env.SEISMO_BIN, ['run', '--config', cfg], {stdio: ['ignore', log, log]});
  try {
    const url = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${url}/healthz`)).ok, 15000, 'empty daemon up');
    for (const view of ['overview', 'hangs', 'crashes']) {
      await page.goto(`${url}/#/${view}`);
      await settled(page);
      await page.locator('[data-testid="notice-waiting"]').first().waitFor({state: 'visible'});
      assert.match(await page.locator('[data-testid="notice-waiting"]').first().textContent(), /Waiting for data…/);
      if (view === 'overview') await screenshot(page, 'empty-waiting-for-data');
    }
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    fs.rmSync(dir, {recursive: true, force: true});
  }
  assert.deepEqual(b.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(e)), []);
});
