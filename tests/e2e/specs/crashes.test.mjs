// Crashes: Top Crashers (rank, rank change, count, share, rate, installs,
// sparklines) and a signature page (by build, OS, process).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, open, settled, screenshot, screenshotWidths, readmeScreenshot, tableRows, assertShown, parseNum, drawnPoints,
  eventually} from '../lib.mjs';

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
  // Every row has a sparkline (uPlot, canvas) of its counts from the same answer: its
  // bins hold the row's count, and the drawing peaks where they do.
  const withTrend = await api('crashes/top', {limit: 50, sparklines: 1});
  const sparks = page.locator('table[data-testid="top-crashers"] .spark[role="img"]');
  assert.equal(await sparks.count(), top.rows.length);
  await page.locator('table[data-testid="top-crashers"] .spark canvas').nth(top.rows.length - 1)
    .waitFor({state: 'attached', timeout: 10000});
  for (const [i, r] of withTrend.rows.entries()) {
    assert.equal(r.trend.length, withTrend.trend_bins);
    assert.equal(r.trend.reduce((a, c) => a + c, 0), r.count, `${r.signature}: its bins hold its count`);
    const label = await sparks.nth(i).getAttribute('aria-label');
    assert.ok(label.startsWith(`crashes of ${r.signature}: ${withTrend.trend_bins} buckets, peak `), label);
    assertShown(label.replace(/^.*, peak /, ''), Math.max(...r.trend), `${r.signature} sparkline peak`);
  }
  // One request for the list and its sparklines: none per signature.
  const perSignature = b.requests.filter((u) => u.includes('/api/v1/crashes/timeseries') && u.includes('signature='));
  assert.deepEqual(perSignature, []);
  const trend = await page.getAttribute('[data-testid="crash-trend-chart"] [role="img"]', 'aria-label');
  await page.locator('[data-testid="crash-trend-chart"] .uplot canvas').waitFor({state: 'attached', timeout: 10000});
  const all = await api('crashes/timeseries');
  const drawn = drawnPoints(all.points, 'rate_per_1000h');
  assert.match(trend, new RegExp(`^crashes per 1000 usage hours: ${drawn.length} points`));
  assertShown(/highest (.*)$/.exec(trend)[1], Math.max(...drawn.map((p) => p.rate_per_1000h)), 'crash trend peak');
  await screenshot(page, 'crashes');
  assert.deepEqual(b.errors, []);
});

// Issue 20 item 6: rates (not counts), release markers, ticks on round steps, drag-to-zoom.
test('the crash trend plots rates with release markers, round ticks, and zooms on a drag', async () => {
  await open(page, 'crashes?channel=aurora&window=7d');
  const fig = page.locator('[data-testid="crash-trend-chart"]');
  await fig.locator('.uplot canvas').waitFor({state: 'attached', timeout: 10000});
  const ts = await api('crashes/timeseries', {channel: 'aurora', window: '7d'});
  const drawn = drawnPoints(ts.points, 'rate_per_1000h');
  const t0 = Date.parse(drawn[0].t);
  const t1 = Date.parse(drawn.at(-1).t);
  // A marker for each aurora build first seen within the chart.
  const {builds} = await api('builds', {channel: 'aurora', window: 'all', limit: 200});
  const within = builds.filter((x) => x.first_seen && Date.parse(x.first_seen) >= t0 && Date.parse(x.first_seen) <= t1);
  assert.ok(within.length >= 1, 'an aurora build starts within the week');
  assert.equal(await fig.getAttribute('data-markers'), String(within.length));
  for (const x of within) assert.match(await fig.textContent(), new RegExp(`aurora ${x.version.replace('.', '\\.')}`));
  // Ticks: a constant step of 1, 2, 2.5 or 5 times a power of ten, each written with the
  // same decimals (not 0, 3, 5, 8).
  const ticks = (await fig.getAttribute('data-yticks')).split('|');
  const values = ticks.map((x) => Number(x.replace(/,/g, '')));
  const step = values[1] - values[0];
  for (let i = 1; i < values.length; i++) assert.ok(Math.abs(values[i] - values[i - 1] - step) < 1e-9, ticks.join(' '));
  const mantissa = step / 10 ** Math.floor(Math.log10(step));
  assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(mantissa - m) < 1e-9), `step ${step}`);
  assert.equal(new Set(ticks.map((x) => (x.split('.')[1] || '').length)).size, 1, ticks.join(' '));
  // Drag across the middle: the chart zooms into that span; a double-click zooms out. (Again
  // until it shows: on a loaded machine the chart may still be drawn anew under the first drag.)
  const xrange = async () => (await fig.getAttribute('data-xrange')).split(',').map(Number);
  await eventually(async () => {
    await fig.locator('.u-over').scrollIntoViewIfNeeded();
    const over = await fig.locator('.u-over').boundingBox();
    await page.mouse.move(over.x + over.width * 0.3, over.y + over.height / 2);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2, {steps: 8});
    await page.mouse.up();
    const [lo, hi] = await xrange();
    if (!(lo > t0 && hi < t1 && hi > lo)) throw new Error(`zoomed to ${new Date(lo).toISOString()} .. ${new Date(hi).toISOString()}`);
    return true;
  }, 10_000, 'a drag zooms into its span');
  await eventually(async () => {
    await fig.locator('.u-over').dblclick();
    const [lo2, hi2] = await xrange();
    return lo2 <= t0 + 1000 && hi2 >= t1 - 1000;
  }, 10_000, 'a double-click zooms out');
  await screenshotWidths(page, 'crashes-trend');
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

// Issue 20, item 7: right after start (here: a selection whose previous window holds no
// crash) Top Crashers says "no previous data" instead of marking every row "new".
test('an empty previous window is "no previous data", not every row new', async () => {
  const builds = (await api('builds', {limit: 1000})).builds;
  let found = null;
  for (const window of ['1h', '24h']) {
    for (const x of builds) {
      const top = await api('crashes/top', {window, build_id: x.build_id, limit: 50});
      if (top.total > 0 && top.previous_total === 0) { found = {window, build: x.build_id, top}; break; }
    }
    if (found) break;
  }
  assert.ok(found, 'the corpus has a build whose crashes all fall in the last window');
  assert.ok(found.top.rows.every((r) => r.is_new === false && r.previous_rank === null));
  await open(page, `crashes?window=${found.window}&build_id=${found.build}`);
  assert.match(await page.textContent('[data-testid="no-previous-note"]'), /^No previous data/);
  const rows = await tableRows(page, 'top-crashers');
  assert.deepEqual(rows.map((r) => r.key), found.top.rows.map((r) => r.signature));
  for (const r of rows) assert.equal(r.byId['rank-change'], '—');
  assert.equal(await page.locator('table[data-testid="top-crashers"] .rank.new').count(), 0);
  await screenshotWidths(page, 'crashes-no-previous');
  assert.deepEqual(b.errors, []);
});

// Issue 20 (add): triage. OOM, empty dumps and shutdown kills can be left out (the API's
// exclude=), and each row says its startup share and the build it was first seen in.
test('Top Crashers leaves out OOM and shutdown kills on request, with startup share and first build', async () => {
  const all = await api('crashes/top', {limit: 50});
  assert.ok(all.rows.some((r) => r.signature.startsWith('OOM |')), 'the fixture has OOM signatures');
  assert.ok(all.rows.some((r) => /^IPCError-(browser|content) \| ShutDownKill/.test(r.signature)), 'the fixture has shutdown kills');
  await open(page, 'crashes');
  // The new columns, row by row, from the same answer.
  const shownAll = await tableRows(page, 'top-crashers');
  for (const [i, r] of all.rows.entries()) {
    assertShown(shownAll[i].byId.startup, r.startup_share, `${r.signature} startup share`);
    assert.equal(shownAll[i].byId['first-build'], r.first_build, `${r.signature} first build`);
  }
  assert.equal(await page.locator('[data-testid="excluded-note"]').count(), 0);
  const toggles = page.locator('[data-testid="exclusions"]');
  assert.equal(await toggles.locator('[aria-pressed="true"]').count(), 0);
  await toggles.locator('[data-exclusion="oom"]').click();
  await settled(page);
  await toggles.locator('[data-exclusion="shutdownkill"]').click();
  await settled(page);
  assert.match(page.url(), /exclude=oom%2Cshutdownkill|exclude=oom,shutdownkill/);
  assert.equal(await toggles.locator('[data-exclusion="oom"]').getAttribute('aria-pressed'), 'true');
  assert.equal(await toggles.locator('[data-exclusion="empty"]').getAttribute('aria-pressed'), 'false');
  const top = await api('crashes/top', {limit: 50, exclude: 'oom,shutdownkill'});
  const rows = await tableRows(page, 'top-crashers');
  assert.deepEqual(rows.map((r) => r.key), top.rows.map((r) => r.signature));
  const kill = /^IPCError-(browser|content) \| ShutDownKill( \||$)/;
  assert.ok(rows.every((r) => !r.key.startsWith('OOM |') && !kill.test(r.key)));
  assert.equal(parseNum(await page.textContent('[data-testid="crash-total"] dd')), top.total);
  const left = all.rows.filter((r) => r.signature.startsWith('OOM |') || kill.test(r.signature));
  assert.equal(top.excluded.count + top.total, all.total);
  assert.ok(top.excluded.signatures >= left.length);
  const note = await page.textContent('[data-testid="excluded-note"]');
  assert.match(note, new RegExp(`^Left out: ${top.excluded.count.toLocaleString('en-US')} crashes of ${top.excluded.signatures} signatures \\(OOM, shutdown kills\\)`));
  await screenshotWidths(page, 'crashes-triage');
  // E2E_TOPCRASHERS_SCREENSHOT=docs/top-crashers.png tests/e2e/run specs/crashes.test.mjs refreshes the README's image.
  await readmeScreenshot(page, 'E2E_TOPCRASHERS_SCREENSHOT');
  // Pressing a toggle again puts its signatures back.
  await toggles.locator('[data-exclusion="oom"]').click();
  await settled(page);
  const back = await api('crashes/top', {limit: 50, exclude: 'shutdownkill'});
  assert.deepEqual((await tableRows(page, 'top-crashers')).map((r) => r.key), back.rows.map((r) => r.signature));
  assert.deepEqual(b.errors, []);
});
