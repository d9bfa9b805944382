// Alerts: the live list with the numbers behind each alert.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, screenshot, parseNum} from '../lib.mjs';

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
  for (let i = 0; i < alerts.length; i++) {
    const card = cards.nth(i);
    const rule = await card.getAttribute('data-rule');
    const a = alerts.find((x) => (x.rule ?? x.key?.rule) === rule);
    assert.ok(a, `alert ${rule} comes from the API`);
    assert.ok(await card.locator('[data-testid="alert-numbers"]').isVisible());
    assert.notEqual(await card.locator('[data-testid="p-value"]').textContent(), '');
  }
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
