// Hangs: build date → thread → signature drill-down, stacks on click, flame
// graph and trend chart, filters in the URL.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, api, apiError, open, settled, screenshot, screenshotWidths, readmeScreenshot, tableRows, assertShown, parseNum, drawnPoints,
  hoverTip, eventually, BASE_URL} from '../lib.mjs';

let b;
let page;
before(async () => { b = await launch(); page = await b.page(); });
after(async () => { await b.close(); });

function assertRowsMatch(rows, apiRows, keyOf) {
  assert.ok(apiRows.length > 0, 'the API has rows for this selection');
  assert.deepEqual(rows.map((r) => r.key), apiRows.map(keyOf), 'same rows in the same order');
  for (const [i, r] of apiRows.entries()) {
    const what = `${keyOf(r)}`;
    assertShown(rows[i].byId['ms-per-hour'], r.hang_ms_per_hour, `${what} ms/h`);
    assertShown(rows[i].byId['count-per-hour'], r.hang_count_per_hour, `${what} count/h`);
    assertShown(rows[i].byId['hang-ms'], Math.round(r.hang_ms), `${what} hang ms`);
    assert.equal(parseNum(rows[i].byId['hang-count']), r.hang_count, `${what} hang count`);
  }
}

test('drill down from build date to thread to signature, with the numbers of /api/v1/hangs', async () => {
  await open(page, 'hangs');
  const byDate = await api('hangs', {by: 'build_date', limit: 25});
  assertRowsMatch(await tableRows(page, 'hangs-table'), byDate.rows, (r) => `${r.channel}:${r.build_date}`);
  assertShown(await page.textContent('[data-testid="usage-hours"] dd'), byDate.usage_hours, 'usage hours');
  await screenshot(page, 'hangs');

  const {build_date: date, channel} = byDate.rows[0];
  await page.click(`tr[data-key="${channel}:${date}"] a`);
  await settled(page);
  assert.match(page.url(), new RegExp(`build_date=${date}`));
  assert.match(page.url(), new RegExp(`channel=${channel}`));
  const byThread = await api('hangs', {by: 'thread', build_date: date, channel, limit: 25});
  assertRowsMatch(await tableRows(page, 'hangs-table'), byThread.rows, (r) => r.thread);

  const thread = byThread.rows[0].thread;
  await page.click(`table[data-testid="hangs-table"] tbody tr >> nth=0 >> a`);
  await settled(page);
  assert.match(page.url(), new RegExp(`thread=${encodeURIComponent(thread)}`));
  const bySig = await api('hangs', {by: 'signature', build_date: date, channel, thread, limit: 25});
  assertRowsMatch(await tableRows(page, 'hangs-table'), bySig.rows, (r) => r.signature);

  // Stacks on click: innermost frame first, numbers of the top stack.
  const top = bySig.rows[0];
  const button = page.locator('table[data-testid="hangs-table"] tbody tr >> nth=0 >> button');
  assert.equal(await button.getAttribute('aria-expanded'), 'false');
  await button.click();
  assert.equal(await button.getAttribute('aria-expanded'), 'true');
  const stacks = page.locator('[data-testid="stacks"]').first();
  await stacks.waitFor({state: 'visible'});
  const frames = await stacks.locator('.stack').first().locator(':scope > ol.frames > li').allTextContents();
  assert.equal(frames[0], top.stacks[0].stack.at(-1), 'innermost frame first');
  assert.equal(frames.length, Math.min(40, top.stacks[0].stack.length));
  const head = await stacks.locator('.stack h4').first().textContent();
  assert.match(head, new RegExp(`${Math.round(top.stacks[0].hang_ms).toLocaleString('en-US')} ms, ${top.stacks[0].hang_count.toLocaleString('en-US')} hangs`));
  assert.equal(await stacks.locator('.stack').count(), top.stacks.length);
  await screenshot(page, 'hangs-stacks');
  assert.deepEqual(b.errors, []);
});

test('flame graph and trend chart show the selection', async () => {
  await open(page, 'hangs');
  const tree = await api('hangs/flamegraph', {format: 'tree'});
  const root = page.locator('[data-testid="flamegraph"] g.frame').first();
  const label = await root.getAttribute('aria-label');
  assert.ok(label.startsWith('(root)'), label);
  assert.equal(parseNum(/— ([\d,]+) ms/.exec(label)[1]), Math.round(tree.hang_ms));
  // The heaviest child of the root is drawn with its name.
  const heaviest = [...tree.children].sort((x, y) => y.hang_ms - x.hang_ms)[0];
  assert.ok(await page.locator(`[data-testid="flamegraph"] g.frame[aria-label^="${heaviest.name.replace(/"/g, '\\"')} —"]`).count() >= 1);
  // Click to zoom into it: it becomes full width, reset zooms out.
  await page.locator(`[data-testid="flamegraph"] g.frame[aria-label^="${heaviest.name.replace(/"/g, '\\"')} —"]`).first().click();
  const w = await page.locator('[data-testid="flamegraph"] svg').getAttribute('width');
  const zw = await page.locator(`[data-testid="flamegraph"] g.frame:not(.ancestor)`).first().locator('rect').getAttribute('width');
  assert.ok(Number(zw) >= Number(w) - 2, 'zoomed frame spans the width');
  await page.click('[data-testid="flame"] button:has-text("Reset zoom")');

  const ts = await api('hangs/timeseries');
  const points = drawnPoints(ts.points, 'hang_ms_per_hour');
  assert.ok(points.length > 0, 'the fixture has hang buckets');
  const chart = await page.getAttribute('[data-testid="hang-trend-chart"] [role="img"]', 'aria-label');
  assert.match(chart, new RegExp(`^hang ms per usage hour: ${points.length} points`));
  const max = Math.max(...points.map((p) => p.hang_ms_per_hour));
  assertShown(/highest (.*)$/.exec(chart)[1], max, 'trend peak');
  // uPlot draws it; hovering shows the bucket's numbers.
  assert.match(await hoverTip(page, '[data-testid="hang-trend-chart"]'), /hang ms per usage hour: /);
  await screenshot(page, 'hangs-flamegraph');
});

// Issue 20 item 9: no blank where frames are too narrow to draw, search, inverted view.
test('the flame graph draws narrow frames as one (other) bar, finds frames, and turns callee-first', async () => {
  await page.setViewportSize({width: 800, height: 900});  // narrower: more frames under a pixel
  try {
    await open(page, 'hangs');
    const tree = await api('hangs/flamegraph', {format: 'tree'});
    // Every row's bars add up to their parent's width: a node whose children do not all fit
    // ends its row with an "(other)" bar of their sum.
    // The bars and the width of one drawing, read in one go: the narrower viewport redraws
    // the graph when its resize reaches it, and live updates redraw it too.
    const drawing = () => page.evaluate(() => {
      const svg = document.querySelector('[data-testid="flamegraph"] svg');
      if (!svg) return null;
      const bars = [...svg.querySelectorAll('g.frame')].map((g) => ({
        label: g.getAttribute('aria-label'), narrow: g.classList.contains('narrow'),
        x: Number(g.querySelector('rect').getAttribute('x')), y: Number(g.querySelector('rect').getAttribute('y')),
        w: Number(g.querySelector('rect').getAttribute('width'))}));
      return {bars, width: Number(svg.getAttribute('width'))};
    });
    const firstRow = (d) => d.bars.filter((b) => Math.abs(b.y - 18.5) < 0.01);  // the root's children's row
    const rowWidth = (d) => firstRow(d).reduce((a, b) => a + b.w + 1, 0);
    let last = null;
    const {bars, width: svgWidth} = await eventually(async () => {
      last = await drawing();
      return last && last.width <= 800 && Math.abs(rowWidth(last) - last.width) <= firstRow(last).length ? last : null;
    }, 20000, 'a drawing at 800 px whose first row fills the width').catch((e) => {
      throw new Error(`${e.message}: the first row is ${last && rowWidth(last)} of ${last && last.width}`);
    });
    const narrow = bars.filter((b) => b.narrow);
    assert.ok(narrow.length > 0, 'at 800 px some frames are too narrow to draw');
    for (const b of narrow) assert.match(b.label, /^\(other\) — \d+ frames too narrow to draw: [\d,]+ ms/);
    assert.ok(svgWidth <= 800, `drawn at the narrower width (${svgWidth})`);
    // The graph's box and the page keep their width whether they scroll or not: a drawing whose
    // height brought a scrollbar that narrowed the box it was drawn to, redrawn narrower and
    // shorter without it, was redrawn at every frame for as long as the page was open.
    const widths = await page.evaluate(() => {
      const canvas = document.querySelector('[data-testid="flamegraph"] .flame-canvas');
      const tall = document.createElement('div');
      tall.style.height = '5000px';
      // Each box without content that overflows it, then with.
      const across = (box, width) => {
        const kids = [...box.children].map((c) => [c, c.style.display]);
        kids.forEach(([c]) => { c.style.display = 'none'; });
        const short = width();
        box.append(tall);
        const long = width();
        tall.remove();
        kids.forEach(([c, display]) => { c.style.display = display; });
        return [short, long];
      };
      return {canvas: across(canvas, () => canvas.clientWidth),
        page: across(document.body, () => document.documentElement.clientWidth)};
    });
    assert.equal(widths.canvas[1], widths.canvas[0], "the graph's box, overflowing or not");
    assert.equal(widths.page[1], widths.page[0], 'the page, overflowing or not');

    // Search: the frames whose name holds the text, and their share of the selection (each
    // stack once), as computed from the tree.
    const heaviest = [...tree.children].sort((x, y) => y.hang_ms - x.hang_ms)[0];
    const query = heaviest.name.slice(0, Math.max(3, Math.floor(heaviest.name.length / 2))).toLowerCase();
    let ms = 0;
    let frames = 0;
    const walk = (n, under) => {
      const hit = n.name !== '(root)' && n.name.toLowerCase().includes(query);
      if (hit) frames++;
      if (hit && !under) ms += n.hang_ms;
      for (const c of n.children || []) walk(c, under || hit);
    };
    walk(tree, false);
    await page.fill('[data-testid="flame-search"]', query);
    const said = await page.textContent('[data-testid="flame-match"]');
    const [, shownFrames, shownMs] = /^([\d,]+) matching frames: ([\d,]+) ms, /.exec(said);
    assert.equal(parseNum(shownFrames), frames);
    assertShown(shownMs, ms, 'matched ms');
    assert.ok(await page.locator('[data-testid="flamegraph"] g.frame.match').count() >= 1);
    await page.fill('[data-testid="flame-search"]', '');

    // Inverted: the root's children are where the hangs were (the innermost frames), with the
    // same total; each is the sum of the own time of every node of that name.
    await page.check('[data-testid="flame-inverted"]');
    const own = new Map();
    const visit = (n) => {
      const kids = n.children || [];
      const self = n.hang_ms - kids.reduce((a, k) => a + k.hang_ms, 0);
      if (n.name !== '(root)' && self > 1e-9) own.set(n.name, (own.get(n.name) ?? 0) + self);
      kids.forEach(visit);
    };
    visit(tree);
    const [leaf, leafMs] = [...own.entries()].sort((x, y) => y[1] - x[1])[0];
    const label = await page.locator(`[data-testid="flamegraph"] g.frame[aria-label^="${leaf.replace(/"/g, '\\"')} —"]`)
      .first().getAttribute('aria-label');
    assertShown(/— ([\d,]+) ms/.exec(label)[1], leafMs, `inverted: ${leaf}'s own time`);
    const rootLabel = await page.locator('[data-testid="flamegraph"] g.frame').first().getAttribute('aria-label');
    assert.equal(parseNum(/— ([\d,]+) ms/.exec(rootLabel)[1]), Math.round(tree.hang_ms), 'the same total');
    assert.match(await page.getAttribute('[data-testid="flamegraph"] svg', 'aria-label'), /inverted: callees first/);
    await screenshotWidths(page, 'hangs-flamegraph-inverted');
    await page.uncheck('[data-testid="flame-inverted"]');
  } finally {
    await page.setViewportSize({width: 1366, height: 768});
  }
  assert.deepEqual(b.errors, []);
});

test('filters live in the URL: a shared link shows the same selection', async () => {
  const {builds} = await api('builds', {limit: 200});
  const channel = builds[0].channel;
  await open(page, 'hangs?by=signature');
  await page.fill('#filters input[name="channel"]', channel);
  await page.press('#filters input[name="channel"]', 'Enter');
  await settled(page);
  const url = page.url();
  assert.match(url, new RegExp(`channel=${channel}`));
  assert.match(url, /by=signature/);
  const expected = await api('hangs', {by: 'signature', channel, limit: 25});
  // A second page opened from the address alone shows the same rows.
  const other = await b.context.newPage();
  await other.goto(url);
  await settled(other);
  const rows = await tableRows(other, 'hangs-table');
  assert.deepEqual(rows.map((r) => r.key), expected.rows.map((r) => r.signature));
  assert.equal(await other.inputValue('#filters input[name="channel"]'), channel);
  await other.close();
  assert.ok(url.startsWith(BASE_URL));
});

// Issue 20, item 1: hangs are kept per build date, so a Build ID filter cannot narrow
// them. The API refuses build_id and version (a 400 naming the parameter); the page
// shows the build's date, and says so, instead of every build date.
test('a Build ID filter selects its build date on Hangs, with a visible note', async () => {
  const byDate = await api('hangs', {by: 'build_date', limit: 1000});
  assert.ok(byDate.rows.length > 1, 'the corpus has hangs of several build dates');
  const dates = new Set(byDate.rows.map((r) => r.build_date));
  const build = (await api('builds', {limit: 1000})).builds.find((x) => dates.has(x.build_id.slice(0, 8)));
  assert.ok(build, 'a build whose date has hangs');
  const date = build.build_id.slice(0, 8);
  for (const path of ['hangs', 'hangs/timeseries', 'hangs/flamegraph']) {
    assert.match(await apiError(path, {build_id: build.build_id}), /^build_id: hangs are kept per build date/, path);
    assert.match(await apiError(path, {version: build.version}), /^version: hangs are kept per build date/, path);
  }

  await open(page, `hangs?build_id=${build.build_id}`);
  const shown = await page.textContent('[data-testid="hangs-build-note"]');
  assert.ok(shown.includes(build.build_id) && shown.includes(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}`),
    shown);
  const want = await api('hangs', {by: 'build_date', build_date: date, limit: 25});
  assertRowsMatch(await tableRows(page, 'hangs-table'), want.rows, (r) => `${r.channel}:${r.build_date}`);
  assert.ok((await tableRows(page, 'hangs-table')).every((r) => r.key.endsWith(`:${date}`)), 'only the build\'s date');
  assertShown(await page.textContent('[data-testid="usage-hours"] dd'), want.usage_hours, 'usage hours');
  // The flame graph is the same selection's.
  const tree = await api('hangs/flamegraph', {build_date: date, format: 'tree'});
  const label = await page.locator('[data-testid="flamegraph"] g.frame').first().getAttribute('aria-label');
  assert.equal(parseNum(/— ([\d,]+) ms/.exec(label)[1]), Math.round(tree.hang_ms));
  await screenshotWidths(page, 'hangs-build-id');
  assert.deepEqual(b.errors, []);
});

// Issue 20, item 5: hangs by build date no longer mix channels; each row names its
// channel and the versions of that channel's builds of the date.
test('hangs by build date keep channels apart and name their versions', async () => {
  const byDate = await api('hangs', {by: 'build_date', limit: 1000});
  const {builds} = await api('builds', {limit: 1000});
  const pairs = byDate.rows.map((r) => `${r.channel}:${r.build_date}`);
  assert.equal(new Set(pairs).size, pairs.length, 'one row per (channel, build date)');
  const dates = byDate.rows.map((r) => r.build_date);
  assert.ok(dates.length > new Set(dates).size, 'the corpus has a build date of two channels');
  await open(page, 'hangs?limit=1000');
  const rows = await tableRows(page, 'hangs-table');
  assertRowsMatch(rows, byDate.rows, (r) => `${r.channel}:${r.build_date}`);
  for (const [i, r] of byDate.rows.entries()) {
    assert.equal(rows[i].byId.channel, r.channel);
    const versions = [...new Set(builds.filter((x) => x.channel === r.channel && x.build_id.startsWith(r.build_date))
      .map((x) => x.version))].sort().join(', ') || '—';
    assert.equal(rows[i].byId.versions, versions, `${r.channel} ${r.build_date} versions`);
  }
  await screenshotWidths(page, 'hangs-by-channel');
  assert.deepEqual(b.errors, []);
});

// Issue 20 (add): the differential flame graph. A build date against its baseline build
// dates at equal age: width per usage hour of one side, colour by the change, numbers
// from /api/v1/hangs/flamegraph/diff; the Releases view links to it.
test('the differential flame graph shows a build date against its baselines', async () => {
  // The channel whose newest build date hangs most beyond its baselines (the fixture plants
  // a hang regression in one).
  const {builds} = await api('builds', {window: 'all', limit: 1000});
  let d = null;
  for (const channel of [...new Set(builds.map((x) => x.channel))].sort()) {
    const x = await api('hangs/flamegraph/diff', {channel});
    if (x.tree && x.tree.children.length && (!d || x.tree.delta_ms_per_hour > d.tree.delta_ms_per_hour)) d = x;
  }
  assert.ok(d, 'some channel has a build date with baselines and hang stacks');
  // Text left in a focused filter box does not survive a navigation to another address.
  await page.fill('#filters input[name="channel"]', 'not-this-one');
  await open(page, `hangs?channel=${d.channel}&flame=diff`);
  assert.equal(await page.inputValue('#filters input[name="channel"]'), d.channel);
  assert.equal(await page.textContent('[data-testid="diff-build-date"] dd'), d.build_date.replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3'));
  const shownRates = await page.textContent('[data-testid="diff-rates"] dd');
  const [nowText, beforeText] = shownRates.split(' vs ');
  assertShown(nowText, d.build.hang_ms_per_hour, 'build ms/h');
  assertShown(beforeText, d.baseline.hang_ms_per_hour, 'baseline ms/h');
  const fig = page.locator('[data-testid="flamegraph-diff"]');
  await fig.locator('svg').waitFor({timeout: 10000});
  // The root's heaviest child: its read-out and its colour (red: more, blue: less).
  const child = [...d.tree.children].sort((x, y) => y.hang_ms_per_hour - x.hang_ms_per_hour)[0];
  const g = fig.locator(`g.frame[aria-label^="${child.name.replace(/"/g, '\\"')} —"]`).first();
  const label = await g.getAttribute('aria-label');
  const m = /— ([\d,.]+) ms per usage hour in this build, ([\d,.]+) in its baselines \(([−+±])([\d,.]+)\)/.exec(label);
  assert.ok(m, label);
  assertShown(m[1], child.hang_ms_per_hour, `${child.name} ms/h`);
  assertShown(m[2], child.baseline_hang_ms_per_hour, `${child.name} baseline ms/h`);
  assertShown(m[4], Math.abs(child.delta_ms_per_hour), `${child.name} change`);
  const fill = await g.locator('rect').getAttribute('fill');
  if (child.delta_ms_per_hour > 0) assert.match(fill, /^hsl\(4 /, 'more: red');
  else if (child.delta_ms_per_hour < 0) assert.match(fill, /^hsl\(214 /, 'less: blue');
  // Widths are the build's ms per usage hour: the root's children share the root's width so.
  const svgWidth = Number(await fig.locator('svg').getAttribute('width'));
  const w = Number(await g.locator('rect').getAttribute('width')) + 1;
  assert.ok(Math.abs(w - (svgWidth * child.hang_ms_per_hour) / d.tree.hang_ms_per_hour) <= 1.5, `${child.name} width ${w}`);
  await screenshotWidths(page, 'hangs-flamegraph-diff');
  // E2E_FLAMEDIFF_SCREENSHOT=docs/flame-diff.png tests/e2e/run specs/hangs.test.mjs refreshes the README's image.
  await readmeScreenshot(page, 'E2E_FLAMEDIFF_SCREENSHOT', {selector: '[data-testid="flame"]:has(svg)'});
  // Width by the baselines: a path the build no longer takes gets its width back.
  // force: the click skips Playwright's wait for the link to hold still. After the screenshots'
  // viewport changes the view sometimes kept re-laying out for over 30 s (1 run in 4, with the
  // scrollbars hidden, so not the scrollbar loop the flame graph's box now avoids; cause not
  // found, noted on issue 19); the link and where it leads are checked all the same.
  await page.click('[data-testid="flame-diff-legend"] a:has-text("Baselines")', {force: true});
  await settled(page);
  assert.match(page.url(), /flame_width=baseline/);
  const rootLabel = await fig.locator('g.frame').first().getAttribute('aria-label');
  const svgLabel = await fig.locator('svg').getAttribute('aria-label');
  assertShown(/: ([\d,.]+) ms\/h of hangs/.exec(svgLabel)[1], d.tree.baseline_hang_ms_per_hour, 'baseline width total');
  assert.ok(rootLabel.startsWith('(root) —'));
  // The Releases view links here for the same build date.
  await open(page, `releases?channel=${d.channel}&build_date=${d.build_date}&focus=hangs`);
  await page.click('[data-testid="hang-diff-link"]');
  await settled(page);
  assert.match(page.url(), /flame=diff/);
  assert.match(page.url(), new RegExp(`build_date=${d.build_date}`));
  await fig.locator('svg').waitFor({timeout: 10000});
  // Without a channel, the view says to choose one.
  await open(page, 'hangs?flame=diff');
  assert.match(await page.textContent('[data-testid="flame-diff-channel"]'), /Choose a channel/);
  assert.deepEqual(b.errors, []);
});

