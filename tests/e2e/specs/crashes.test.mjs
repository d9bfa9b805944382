// Crashes: Top Crashers (rank, rank change, count, share, rate, installs,
// sparklines) and a signature page (by build, OS, process).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, settled, screenshot, tableRows, assertShown, parseNum, drawnPoints} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

test('Top Crashers shows the rows of /api/v1/crashes/top with rank change and sparklines', async () => {
  await open(page, 'crashes');
  const top = await api('crashes/top', {limit: 50});
  assert.ok(top.rows.length >= 5, 'the fixture has crash signatures');
  assert.equal(parseNum(await page.textContent('[data-testid="crash-total"] dd')), top.total);
  const rows = await tableRows(page, 'top-crashers');
  assert.deepEqual(rows.map((r) => r.key), top.rows.map((r) => r.signature));
  for (const [i, r] of top.rows.entries()) {
    const shown = rows[i].byId;
    assert.equal(parseNum(shown.rank), r.rank);
    assert.equal(parseNum(shown.count), r.count, `${r.signature} count`);
    assertShown(shown.share, r.share, `${r.signature} share`);
    assertShown(shown.rate, r.rate_per_1000h, `${r.signature} rate`);
    assert.equal(parseNum(shown.installs), r.installs, `${r.signature} installs`);
    const change = r.is_new ? 'new' : r.rank_change === 0 ? '=' : r.rank_change > 0 ? `▲ ${r.rank_change}` : `▼ ${-r.rank_change}`;
    assert.equal(shown['rank-change'], r.rank_change === null && !r.is_new ? '—' : change, `${r.signature} rank change`);
  }
  // Sparklines are uPlot charts (canvas) in the first 25 rows.
  const sparks = page.locator('table[data-testid="top-crashers"] .spark[role="img"]');
  assert.equal(await sparks.count(), Math.min(25, top.rows.length));
  await page.locator('table[data-testid="top-crashers"] .spark canvas').nth(Math.min(25, top.rows.length) - 1)
    .waitFor({state: 'attached', timeout: 10000});
  // The sparkline of the top signature peaks where its time series does.
  const ts = await api('crashes/timeseries', {signature: top.rows[0].signature});
  assert.ok(ts.points.reduce((a, p) => a + p.count, 0) > 0);
  const trend = await page.getAttribute('[data-testid="crash-trend-chart"] [role="img"]', 'aria-label');
  await page.locator('[data-testid="crash-trend-chart"] .uplot canvas').waitFor({state: 'attached', timeout: 10000});
  const all = await api('crashes/timeseries');
  const drawn = drawnPoints(all.points, 'count');
  assert.match(trend, new RegExp(`^crashes: ${drawn.length} points`));
  assertShown(/highest (.*)$/.exec(trend)[1], Math.max(...drawn.map((p) => p.count)), 'crash trend peak');
  await screenshot(page, 'crashes');
  assert.deepEqual(b.errors, []);
});

test('the process filter narrows Top Crashers', async () => {
  await open(page, 'crashes');
  await page.click('[role="group"][aria-label="Process"] a:has-text("Content")');
  await settled(page);
  assert.match(page.url(), /process=content/);
  const top = await api('crashes/top', {process: 'content', limit: 50});
  const rows = await tableRows(page, 'top-crashers');
  assert.deepEqual(rows.map((r) => r.key), top.rows.map((r) => r.signature));
});

test('a signature page shows its builds, OS and processes', async () => {
  await open(page, 'crashes');
  const top = await api('crashes/top', {limit: 50});
  const sig = top.rows[0].signature;
  await page.click(`table[data-testid="top-crashers"] tr[data-signature="${sig.replace(/"/g, '\\"')}"] a.sig`);
  await settled(page);
  assert.match(page.url(), /#\/crashes\/signature\?signature=/);
  assert.equal(await page.textContent('[data-testid="signature-title"]'), sig);
  const d = await api('crashes/signature', {signature: sig});
  assert.equal(parseNum(await page.textContent('[data-testid="sig-count"] dd')), d.count);
  assert.equal(parseNum(await page.textContent('[data-testid="sig-installs"] dd')), d.installs);
  const builds = await tableRows(page, 'by-build-table');
  assert.deepEqual(builds.map((r) => r.key), d.by_build.map((x) => x.build_id));
  builds.forEach((r, i) => assert.equal(parseNum(r.byId.count), d.by_build[i].count));
  const oses = await page.$$eval('table[data-testid="by-os-table"] tbody tr', (trs) => trs.map((t) => [t.dataset.os, t.querySelector('[data-testid="count"]').textContent]));
  assert.deepEqual(oses.map(([o, c]) => [o, parseNum(c)]), d.by_os.map((x) => [x.os, x.count]));
  const procs = await page.$$eval('table[data-testid="by-process-table"] tbody tr', (trs) => trs.map((t) => [t.dataset.process, t.querySelector('[data-testid="count"]').textContent]));
  assert.deepEqual(procs.map(([p, c]) => [p, parseNum(c)]), d.by_process.map((x) => [x.process, x.count]));
  await screenshot(page, 'crash-signature');
  assert.deepEqual(b.errors, []);
});
