// Alerts: the live list with the numbers behind each alert. The fixture plants a
// bad build on the "aurora" channel (seismo generate --kind scenario), so at least
// one alert always fires; its numbers are checked against `seismo replay` of the
// same documents.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {launch, api, open, screenshot, parseNum, assertShown, eventually} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

const keyOf = (x) => [x.rule, x.channel, x.os, x.build ?? '', x.signature ?? ''].join('|');

// The planted alert as the replay of the aurora scenario alone reports it.
function planted() {
  const replay = JSON.parse(fs.readFileSync(process.env.E2E_SCENARIO_REPLAY, 'utf8'));
  const a = replay.alerts.find((x) => x.rule === 'crash_signature_spike' && x.state === 'firing');
  assert.ok(a, 'the replay of the planted scenario fires a crash signature spike');
  return a;
}

// Waits until the daemon fires the planted alert and its alert list stops
// changing (the fixture's alert thread runs every second).
async function stableAlerts() {
  const want = keyOf(planted());
  let last = '';
  return eventually(async () => {
    const {alerts} = await api('alerts');
    const now = JSON.stringify(alerts.map((a) => keyOf(a) + a.state));
    const ok = now === last && alerts.some((a) => keyOf(a) === want && a.state === 'firing');
    last = now;
    return ok ? alerts : null;
  }, 60000, 'the planted alert firing and the alert list settled');
}

test('the planted bad build fires with the numbers of the replay, shown on its card',
  {skip: !process.env.E2E_SCENARIO_REPLAY && 'needs the fixture of tests/e2e/run'}, async () => {
    const p = planted();
    const alerts = await stableAlerts();
    const a = alerts.find((x) => keyOf(x) === keyOf(p));
    // The new build's crashes and installs are those of the documents; the baseline is
    // age-matched to the stream time, which the rest of the corpus moves on past the
    // scenario's end, so its count and the ratio are the daemon's own.
    for (const k of ['count_new', 'installs', 'version']) assert.equal(a[k], p[k], `${k} as in the replay`);
    assert.deepEqual(a.baseline_builds, p.baseline_builds);
    assert.ok(a.ratio >= 2 && a.p_value < 0.001, `a real spike (ratio ${a.ratio}, p ${a.p_value})`);

    await open(page, 'alerts?channel=aurora');
    const card = page.locator(`[data-testid="alert"][data-rule="crash_signature_spike"][data-channel="aurora"]`);
    assert.equal(await card.count(), 1);
    assert.equal(await card.getAttribute('data-signature'), p.signature);
    assert.equal(await card.getAttribute('data-build'), p.build);
    assert.match(await card.getAttribute('class'), /state-firing/);
    assert.equal(parseNum(await card.locator('[data-testid="count-new"]').textContent()), p.count_new);
    assert.equal(parseNum(await card.locator('[data-testid="count-base"]').textContent()), a.count_base);
    assertShown(await card.locator('[data-testid="ratio"]').textContent(), a.ratio, 'ratio');
    assertShown(await card.locator('[data-testid="rate-new"]').textContent(), a.rate_new, 'rate of the new build');
    assertShown(await card.locator('[data-testid="rate-base"]').textContent(), a.rate_base, 'baseline rate');
    assert.equal(await card.locator('[data-testid="baseline-builds"]').textContent(), p.baseline_builds.join(', '));
    assert.notEqual(await card.locator('[data-testid="p-value"]').textContent(), '—');
    // The channel filter went to the API: every card is an aurora alert.
    const channels = await page.$$eval('[data-testid="alert"]', (cs) => cs.map((c) => c.dataset.channel));
    assert.deepEqual([...new Set(channels)], ['aurora']);
    await screenshot(page, 'alerts-planted');
    assert.deepEqual(b.errors, []);
  });

test('alerts view lists every alert of /api/v1/alerts with its numbers', async () => {
  const alerts = await stableAlerts();
  assert.ok(alerts.length >= 1);
  await open(page, 'alerts');
  const cards = page.locator('[data-testid="alert"]');
  assert.equal(await cards.count(), alerts.length);
  const shown = [];
  for (let i = 0; i < alerts.length; i++) {
    const card = cards.nth(i);
    const key = (await Promise.all(['data-rule', 'data-channel', 'data-os', 'data-build', 'data-signature']
      .map((n) => card.getAttribute(n)))).join('|');
    shown.push(key);
    const a = alerts.find((x) => keyOf(x) === key);
    assert.ok(a, `alert ${key} comes from the API`);
    assert.equal(parseNum(await card.locator('[data-testid="count-new"]').textContent()), a.count_new, `${key} count`);
    assert.equal(parseNum(await card.locator('[data-testid="count-base"]').textContent()), a.count_base, `${key} baseline count`);
    assertShown(await card.locator('[data-testid="ratio"]').textContent(), a.ratio, `${key} ratio`);
    assert.equal(await card.locator('[data-testid="baseline-builds"]').textContent(),
      a.baseline_builds?.length ? a.baseline_builds.join(', ') : '—');
    if (a.p_value !== null && a.p_value !== undefined) {
      assert.notEqual(await card.locator('[data-testid="p-value"]').textContent(), '—');
    }
  }
  assert.deepEqual([...shown].sort(), alerts.map(keyOf).sort(), 'every alert is listed once');
  await screenshot(page, 'alerts');
  assert.deepEqual(b.errors, []);
});

test('the state filter lives in the URL and goes to the API', async () => {
  await stableAlerts();
  await open(page, 'alerts?state=firing');
  const {alerts} = await api('alerts', {state: 'firing'});
  assert.ok(alerts.length >= 1, 'the planted alert is firing');
  assert.equal(await page.locator('[data-testid="alert"]').count(), alerts.length);
  assert.equal(await page.locator('[data-testid="alert"]:not(.state-firing)').count(), 0);
  assert.equal(await page.getAttribute('[aria-label="Show"] a[aria-current="true"]', 'href'), '#/alerts?state=firing');
});
