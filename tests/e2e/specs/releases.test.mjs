// Releases (ADR 0029): a build beside its baseline builds at equal age — the comparison the
// alert rules make, and each build's rates by hours since its first ping. The fixture's
// "aurora" channel is a release timeline with a planted crash spike (tests/e2e/run), so its
// newest build has three baselines and a firing crash_signature_spike whose link lands here.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, settled, screenshotWidths, readmeScreenshot, tableRows, assertShown, eventually} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

async function rows(testid) {
  const out = {};
  for (const r of await tableRows(page, testid)) {
    const key = await page.$eval(`table[data-testid="${testid}"] tbody tr:nth-child(${Object.keys(out).length + 1})`,
      (tr) => tr.dataset.testid);
    out[key] = r;
  }
  return out;
}

test('a channel\'s newest build beside its baselines at its age, with the numbers of the API', async () => {
  await open(page, 'releases?channel=aurora');
  const r = await api('releases', {channel: 'aurora'});
  const c = r.crashes;
  assert.ok(c && c.comparison, 'the aurora build has a comparison');
  assert.equal(c.comparison.baseline_builds.length, 3);
  // The verdict and the comparison table: the build's and the baselines' totals at its age.
  const verdict = await page.textContent('[data-testid="crash-verdict"]');
  assert.match(verdict, new RegExp(`^At ${c.age_hours} h old, ${c.build_id} has `));
  assertShown(await page.textContent('[data-testid="crash-ratio"]'), c.comparison.ratio.total, 'ratio');
  const t = await rows('crash-comparison');
  assertShown(t['row-build'].byId.rate, c.comparison.build.crash_rate_per_1000h.total, 'build rate');
  assertShown(t['row-build'].byId.count, c.comparison.build.crashes.total, 'build crashes');
  assertShown(t['row-baseline'].byId.rate, c.comparison.baseline.crash_rate_per_1000h.total, 'baseline rate');
  assertShown(t['row-baseline'].byId.count, c.comparison.baseline.crashes.total, 'baseline crashes');
  assert.match(t['row-baseline'].cells[0], new RegExp(c.comparison.baseline_builds.join(', ')));
  // How complete the data is: the build's usage against a baseline's at the same age and over
  // a baseline's whole retained life (its line's last point), from the same answer.
  const n = c.comparison.baseline_builds.length;
  const atAge = c.comparison.baseline.usage_hours / n;
  const baseLines = c.lines.filter((l) => l.role === 'baseline');
  const life = baseLines.reduce((a, l) => a + l.points.at(-1).usage_hours, 0) / baseLines.length;
  const done = await page.textContent('[data-testid="crash-completeness"]');
  const [, shownAtAge, shownEach, shownLife] =
    /^Data so far: [\d,.]+ usage hours, ([\d.,]+) % of what a baseline build had at \d+ h \(([\d,.]+) h each\) and ([\d.,]+) % of/.exec(done);
  assertShown(shownAtAge, (100 * c.comparison.build.usage_hours) / atAge, 'share at age');
  assertShown(shownEach, atAge, 'a baseline\'s usage at that age');
  assertShown(shownLife, (100 * c.comparison.build.usage_hours) / life, 'share of a whole life');
  // One line per build, the build first, each with its value at the build's age.
  const legend = await page.$$eval('[data-testid="crash-lines-legend"] li', (lis) =>
    lis.map((li) => ({role: li.dataset.role, build: li.dataset.build, text: li.textContent})));
  assert.deepEqual(legend.map((l) => l.role), ['build', 'baseline', 'baseline', 'baseline']);
  for (const [i, line] of c.lines.entries()) {
    assert.ok(legend[i].build.startsWith(line.build_id), `line ${i}: ${legend[i].build}`);
    const at = line.points.find((p) => p.age_hours === c.age_hours);
    if (at) assertShown(/ ([\d.,]+) at \d+ h/.exec(legend[i].text)[1], at.crash_rate_per_1000h.total, `${line.build_id} at age`);
  }
  // The build's own line at its age is its comparison's rate.
  assertShown(String(c.lines[0].points.at(-1).crash_rate_per_1000h.total), c.comparison.build.crash_rate_per_1000h.total,
    'the build line ends at its rate');
  // The chart is drawn, and the Window filter (which does not apply) is hidden.
  await page.waitForSelector('[data-testid="crash-lines"] canvas');
  assert.equal(await page.isVisible('#f-window'), false);
  // Hangs: the build date beside its baselines.
  if (r.hangs?.comparison) {
    assertShown(await page.textContent('[data-testid="hang-ratio"]'), r.hangs.comparison.ratio, 'hang ratio');
  }
  await screenshotWidths(page, 'releases');
  assert.deepEqual(b.errors, []);
});

test('a class narrows the lines and the comparison', async () => {
  await open(page, 'releases?channel=aurora');
  await page.click('[aria-label="Class"] a:has-text("Content")');
  await settled(page);
  assert.match(page.url(), /class=content/);
  const {crashes: c} = await api('releases', {channel: 'aurora'});
  const t = await rows('crash-comparison');
  assertShown(t['row-build'].byId.rate, c.comparison.build.crash_rate_per_1000h.content, 'content rate');
  assertShown(t['row-baseline'].byId.rate, c.comparison.baseline.crash_rate_per_1000h.content, 'baseline content rate');
  assertShown(await page.textContent('[data-testid="crash-ratio"]'), c.comparison.ratio.content, 'content ratio');
  assert.deepEqual(b.errors, []);
});

test('an alert\'s link lands on its build beside its baselines, narrowed to its signature', async () => {
  const alert = await eventually(async () => (await api('alerts', {channel: 'aurora', state: 'firing'})).alerts
    .find((a) => a.rule === 'crash_signature_spike'), 60000, 'the planted crash_signature_spike firing');
  await open(page, 'alerts');
  const card = page.locator(`[data-testid="alert"][data-rule="crash_signature_spike"][data-channel="aurora"]`).first();
  const link = card.locator('header a.sig');
  const href = await link.getAttribute('href');
  assert.match(href, /^#\/releases\?channel=aurora&build_id=\d{14}&signature=/);
  await link.click();
  await settled(page);
  const r = await api('releases', {channel: 'aurora', build_id: alert.build_id, signature: alert.signature});
  const cmp = r.crashes.comparison;
  assert.match(await page.textContent('[data-testid="crash-verdict"]'), new RegExp(`crashes of ${alert.signature.replace(/[|()\\[\]]/g, '\\$&')}`));
  const t = await rows('crash-comparison');
  // The signature's own counts: what the alert counted for the new build.
  assertShown(t['row-build'].byId.count, cmp.build.crashes.total, 'the signature\'s crashes in the build');
  assert.equal(cmp.build.crashes.total, alert.count_new, 'the alert\'s count_new');
  assertShown(t['row-baseline'].byId.count, cmp.baseline.crashes.total, 'in its baselines');
  assert.ok(cmp.ratio.total >= 2, `the spike shows (×${cmp.ratio.total})`);
  assert.equal(await page.locator('[data-testid="crash-lines-legend"] li').count(), 4, 'the build and its three baselines');
  assert.equal(await page.locator('[data-testid="release-hangs"]').count(), 0, 'a crash signature has no hangs to show');
  // E2E_RELEASES_SCREENSHOT=docs/releases.png tests/e2e/run specs/releases.test.mjs refreshes the README's image.
  await page.waitForSelector('[data-testid="crash-lines"] canvas');
  await readmeScreenshot(page, 'E2E_RELEASES_SCREENSHOT');
  assert.deepEqual(b.errors, []);
});

test('a hang alert\'s link lands on its build date beside its baselines, narrowed to its hang signature', async () => {
  const alert = await eventually(async () => (await api('alerts', {state: 'firing'})).alerts
    .find((a) => a.rule === 'hang_spike'), 60000, 'a hang_spike firing');
  await open(page, alert.dashboard_path.replace(/^\/#\//, ''));
  const r = await api('releases', {channel: alert.channel, build_date: alert.build, signature: alert.signature,
    source: alert.source});
  const cmp = r.hangs.comparison;
  assert.equal(await page.locator('[data-testid="release-crashes"]').count(), 0, 'a hang signature has no crashes');
  const t = await rows('hang-comparison');
  assertShown(t['row-build'].byId.count, cmp.build.hang_count, 'the signature\'s hangs');
  assert.equal(cmp.build.hang_count, alert.count_new, 'the alert\'s count_new');
  assertShown(t['row-baseline'].byId.count, cmp.baseline.hang_count, 'in its baselines');
  assertShown(await page.textContent('[data-testid="hang-ratio"]'), cmp.ratio, 'ratio');
  assert.deepEqual(b.errors, []);
});

test('without a channel the view lists the channels', async () => {
  await open(page, 'releases');
  const links = await page.$$eval('[data-testid="release-channels"] a', (as) => as.map((a) => a.textContent));
  assert.ok(links.includes('aurora'), links.join(', '));
  await page.click('[data-testid="release-channels"] a:has-text("aurora")');
  await settled(page);
  assert.match(page.url(), /#\/releases\?channel=aurora$/);
  assert.deepEqual(b.errors, []);
});
