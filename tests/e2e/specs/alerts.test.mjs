// Alerts: the live list with the numbers behind each alert.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, screenshot, parseNum, assertShown} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

test('alerts view lists /api/v1/alerts with their numbers', async () => {
  await open(page, 'alerts');
  const {alerts} = await api('alerts');
  const cards = page.locator('[data-testid="alert"]');
  assert.equal(await cards.count(), alerts.length);
  if (alerts.length === 0) {
    assert.match(await page.textContent('[data-testid="notice-empty"]'), /No alerts\./);
  }
  const keyOf = (x) => [x.rule, x.channel, x.os, x.build ?? '', x.signature ?? ''].join('|');
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

test('the state filter lives in the URL', async () => {
  await open(page, 'alerts?state=firing');
  const {alerts} = await api('alerts');
  const firing = alerts.filter((a) => String(a.state).toLowerCase() === 'firing');
  assert.equal(await page.locator('[data-testid="alert"]').count(), firing.length);
  assert.equal(await page.getAttribute('[aria-label="Show"] a[aria-current="true"]', 'href'), '#/alerts?state=firing');
  assert.ok(parseNum(firing.length) >= 0);
});
