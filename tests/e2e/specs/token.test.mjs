// A daemon with a bearer token ([http] auth_token_file): the dashboard's files
// load without it, the page asks for the token once (the API answers 401),
// keeps it for the tab, sends it on every request, reads the live stream with
// fetch (EventSource cannot send headers) and updates when Kafka delivers more.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {launch, api, settled, screenshot, eventually, freePort, parseNum, produce, lineCount} from '../lib.mjs';

const {SEISMO_BIN, SEISMO_BROKERS, E2E_TOKEN_TOPIC, E2E_CORPUS_DIR, E2E_LIVE_FILE, SEISMO_STATIC_DIR} = process.env;
const skip = !(SEISMO_BIN && SEISMO_BROKERS && E2E_TOKEN_TOPIC && E2E_CORPUS_DIR && E2E_LIVE_FILE) &&
  'needs the fixture of tests/e2e/run';
const TOKEN = 'e2e-secret-0123456789';

let b;
let daemon;
let dir;
let url;

before(async () => {
  b = await launch();
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seismo-e2e-token-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  fs.writeFileSync(path.join(dir, 'token'), TOKEN + '\n', {mode: 0o600});
  const files = ['main', 'bhr', 'crash'].map((k) => `"${path.join(E2E_CORPUS_DIR, k + '.ndjson')}"`).join(', ');
  fs.writeFileSync(path.join(dir, 'seismo.toml'), [
    '[kafka]', `brokers = "${SEISMO_BROKERS}"`, 'group_id = "seismo-e2e-token"', `topics = ["${E2E_TOKEN_TOPIC}"]`,
    '[kafka.properties]', '"session.timeout.ms" = "6000"',
    '[sources]', `files = [${files}]`,
    '[http]', `listen = "127.0.0.1:${port}"`, 'health_listen = "127.0.0.1:0"', `static_dir = "${SEISMO_STATIC_DIR}"`,
    `auth_token_file = "${path.join(dir, 'token')}"`,
    '[log]', 'level = "warn"', ''].join('\n'));
  const log = fs.openSync(path.join(dir, 'daemon.log'), 'w');
  daemon = spawn(SEISMO_BIN, ['run', '--config', path.join(dir, 'seismo.toml')], {stdio: ['ignore', log, log]});
  try {
    await eventually(async () => (await fetch(`${url}/readyz`, {headers: {Authorization: `Bearer ${TOKEN}`}})).ok,
      60000, 'token daemon ready');
  } catch (e) {
    e.message += `\ndaemon log:\n${fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').slice(-4000)}`;
    throw e;
  }
});

after(async () => {
  await b.close();
  if (daemon) {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
  }
  if (dir) fs.rmSync(dir, {recursive: true, force: true});
});

test('the dashboard asks for the token, then shows data and live updates', {skip, timeout: 120000}, async () => {
  // The API refuses requests without the token; the page's files do not need it.
  assert.equal((await fetch(`${url}/api/v1/status`)).status, 401);
  assert.equal((await fetch(`${url}/`)).status, 200);
  const page = await b.page();
  await page.goto(`${url}/#/overview`);
  await page.locator('#auth').waitFor({state: 'visible', timeout: 15000});
  await page.locator('[data-testid="notice-auth"]').waitFor({state: 'visible', timeout: 15000});
  assert.equal(await page.getAttribute('#conn', 'data-state'), 'locked');
  await screenshot(page, 'token-asked');

  // A wrong token is refused and the form stays.
  await page.fill('#auth-token', 'not-the-token');
  await page.press('#auth-token', 'Enter');
  await page.locator('#auth-error').waitFor({state: 'visible'});
  assert.match(await page.textContent('#auth-error'), /refused/);
  assert.ok(await page.isVisible('#auth'));

  // The right one: the form goes, the Overview fills in from the API.
  await page.fill('#auth-token', TOKEN);
  await page.press('#auth-token', 'Enter');
  await page.locator('#auth').waitFor({state: 'hidden'});
  await settled(page);
  const opts = {base: url, token: TOKEN};
  const st = await api('status', {}, opts);
  assert.equal(parseNum(await page.textContent('[data-testid="fact-documents"] dd')), st.documents);
  const {builds} = await api('builds', {limit: 200}, opts);
  assert.equal(await page.locator('table[data-testid="builds-table"] > tbody > tr').count(), builds.length);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('seismo.token')), TOKEN);

  // The tab keeps the token across a reload.
  await page.reload();
  await settled(page);
  assert.ok(await page.isHidden('#auth'), 'no second question after a reload');

  // Live: the stream (fetch with the header) reports new crashes from Kafka.
  await page.goto(`${url}/#/crashes`);
  await settled(page);
  await eventually(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 15000, 'stream connected');
  const before = await api('crashes/top', {limit: 50}, opts);
  assert.equal(parseNum(await page.textContent('[data-testid="crash-total"] dd')), before.total);
  await page.evaluate(() => { window.__e2eNoReload = true; });
  await produce(E2E_LIVE_FILE, E2E_TOKEN_TOPIC);
  await eventually(async () => {
    const [shown, now] = await Promise.all([page.textContent('[data-testid="crash-total"] dd'),
      api('crashes/top', {limit: 50}, opts)]);
    return now.total >= before.total + lineCount(E2E_LIVE_FILE) && parseNum(shown) === now.total;
  }, 40000, 'the page shows the crashes that arrived');
  assert.equal(await page.evaluate(() => window.__e2eNoReload), true, 'no reload');
  assert.equal(await page.getAttribute('#conn', 'data-state'), 'live');
  await screenshot(page, 'token-live');
  assert.deepEqual(b.errors.filter((e) => !/401 \(Unauthorized\)/.test(e)), []);
});
