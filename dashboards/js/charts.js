// Charts: time-series line charts and sparklines drawn by uPlot (npm `uplot`,
// copied to vendor/ by `npm ci` in dashboards/; ADR 0005), and an icicle-style
// flame graph drawn as SVG. Charts that need their pixel width draw when the
// browser lays them out (ResizeObserver) and redraw on resize.

import {h, s, mount} from './dom.js';
import * as fmt from './format.js';

// uPlot loads once; if vendor/ is missing (npm ci never ran) charts say so
// instead of the whole dashboard failing to load.
let uPlot = null;
let uPlotError = null;
const uPlotReady = import('../vendor/uplot/uPlot.esm.js')
  .then((m) => { uPlot = m.default; })
  .catch((e) => { uPlotError = e; });

// Live uPlot instances; those whose element left the page (or never reached
// it within a minute) are destroyed: a view re-renders on every live update.
const live = new Map();  // uPlot -> {created: ms, attached: bool}
function track(u) { live.set(u, {created: Date.now(), attached: u.root.isConnected}); }
function sweep() {
  const now = Date.now();
  for (const [u, st] of live) {
    if (u.root.isConnected) { st.attached = true; continue; }
    if (st.attached || now - st.created > 60000) { u.destroy(); live.delete(u); }
  }
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function missingLibrary(el) {
  mount(el, h('p', {class: 'chart-empty', 'data-testid': 'chart-missing-library'},
    'Charts need the dashboard\'s libraries: run scripts/setup (npm ci in dashboards/).'));
}

// Calls draw(width) whenever `el` is laid out with a new width, once uPlot is loaded.
function onWidth(el, draw) {
  let last = -1;
  const ro = new ResizeObserver(() => {
    if (!el.isConnected) { ro.disconnect(); sweep(); return; }
    const w = Math.floor(el.clientWidth);
    if (w <= 0 || w === last) return;
    last = w;
    uPlotReady.then(() => {
      if (!el.isConnected) return;
      if (uPlotError) { ro.disconnect(); missingLibrary(el); return; }
      draw(w);
    });
  });
  ro.observe(el);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// Axis labels in UTC, like every timestamp of the dashboard: "10:30", a day's
// first tick "Nov 20".
function timeLabels(u, splits) {
  return splits.map((sec) => {
    const d = new Date(sec * 1000);
    if (d.getUTCHours() === 0 && d.getUTCMinutes() === 0) return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
    return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  });
}

// Tick steps of 1, 2 and 5 times a power of ten (uPlot picks the one that fits), and a
// tick's text with as many decimals as its step needs: 0, 2.5, 5, 7.5 — never 0, 3, 5, 8.
export const NICE_STEPS = (() => {
  const out = [];
  for (let e = -6; e <= 12; e++) for (const m of [1, 2, 2.5, 5]) out.push(m * 10 ** e);
  return out;
})();
export function tickText(v, step) {
  let decimals = 0;  // as many as the step needs to be written exactly
  while (decimals < 6 && Math.abs(Math.round(step * 10 ** decimals) - step * 10 ** decimals) > 1e-9 * 10 ** decimals) decimals++;
  return v.toLocaleString('en-US', {minimumFractionDigits: decimals, maximumFractionDigits: decimals});
}

// A line chart of one series over time.
//   points: [{t: ms, v: number|null, ...}]   (null leaves a gap)
//   label: what the series is ("hang ms per usage hour"), yFormat: v -> text (the read-out),
//   detail(point): extra lines for the hover read-out,
//   markers: [{t: ms, label}] drawn as dashed lines where they fall in the chart (releases).
// Leading buckets without data (no usage, nothing counted) are left out, so
// a window longer than the data does not squeeze it into one edge. Drag across the chart
// to zoom into a span of time; double-click to zoom out.
export function lineChart({points: all, label, yFormat = fmt.num, detail, height = 200, testid, markers = []}) {
  const first = all.findIndex((p) => !emptyBucket(p));
  const points = first < 0 ? [] : all.slice(first);
  const el = h('figure', {class: 'chart', 'data-testid': testid});
  const valid = points.filter((p) => p.v !== null && p.v !== undefined && !Number.isNaN(p.v));
  if (valid.length === 0) {
    el.appendChild(h('p', {class: 'chart-empty'}, `No ${label} in this window yet.`));
    return el;
  }
  const vmax = Math.max(...valid.map((p) => p.v));
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  const tip = h('div', {class: 'chart-tip', hidden: true});
  // The canvas is not readable by assistive technology: the figure says what it shows.
  const plot = h('div', {class: 'chart-plot', role: 'img', style: {height: height + 'px', position: 'relative'},
    'aria-label': `${label}: ${valid.length} points from ${fmt.timestamp(t0)} to ${fmt.timestamp(t1)}, ` +
      `highest ${yFormat(vmax)}`});
  el.appendChild(plot);
  if (first > 0) {
    el.appendChild(h('figcaption', {class: 'chart-note'},
      `From ${fmt.timestamp(points[0].t)}, the first bucket with data; the ${first} earlier buckets of the window are empty.`));
  }
  const xs = points.map((p) => p.t / 1000);
  const ys = points.map((p) => (p.v === null || p.v === undefined || Number.isNaN(p.v) ? null : p.v));
  const inRange = markers.filter((m) => m.t >= t0 && m.t <= t1);
  const zoomKey = testid ? `${testid}|${location.hash}` : null;  // the same chart of the same selection
  el.dataset.markers = String(inRange.length);
  if (xs.length > 1) el.appendChild(h('figcaption', {class: 'chart-note'}, 'Drag across the chart to zoom in; double-click to zoom out.' +
    (inRange.length ? ` Dashed lines: builds first seen (${inRange.map((m) => m.label).join(', ')}).` : '')));
  let chart = null;
  onWidth(plot, (width) => {
    if (chart) { chart.setSize({width, height}); return; }
    sweep();
    const ink = cssVar('--muted', '#5d6678');
    const grid = {stroke: cssVar('--line', '#dfe3ea'), width: 1};
    const axis = {stroke: ink, grid, ticks: {stroke: grid.stroke, width: 1}, font: '11px system-ui, sans-serif'};
    const drawMarkers = (u) => {
      const ctx = u.ctx;
      const [lo, hi] = [u.scales.x.min, u.scales.x.max];
      ctx.save();
      ctx.strokeStyle = ink;
      ctx.fillStyle = ink;
      ctx.font = `${Math.round(10 * devicePixelRatio)}px system-ui, sans-serif`;
      ctx.setLineDash([3 * devicePixelRatio, 3 * devicePixelRatio]);
      // Labels stack in up to three rows; one with no room left is not drawn (its line is, and
      // the caption names every build). Near the right edge a label sits left of its line.
      const rowEnds = [-Infinity, -Infinity, -Infinity];
      const gap = 6 * devicePixelRatio;
      const shown = inRange.filter((m) => m.t / 1000 >= lo && m.t / 1000 <= hi)
        .map((m) => ({label: m.label, px: Math.round(u.valToPos(m.t / 1000, 'x', true))}))
        .sort((a, b) => a.px - b.px);
      for (const {label: text, px} of shown) {
        ctx.beginPath();
        ctx.moveTo(px, u.bbox.top);
        ctx.lineTo(px, u.bbox.top + u.bbox.height);
        ctx.stroke();
        const w = ctx.measureText(text).width;
        const right = px + 3 * devicePixelRatio + w > u.bbox.left + u.bbox.width;
        const start = right ? px - 3 * devicePixelRatio - w : px + 3 * devicePixelRatio;
        const row = rowEnds.findIndex((end) => start >= end);
        if (row < 0) continue;
        rowEnds[row] = start + w + gap;
        ctx.fillText(text, start, u.bbox.top + (10 + 12 * row) * devicePixelRatio);
      }
      ctx.restore();
    };
    chart = new uPlot({
      width, height,
      legend: {show: false},
      scales: {x: {time: true, range: (u, lo, hi) => (lo === hi ? [lo - 60, hi + 60] : [lo, hi])},
        y: {range: (u, lo, hi) => [0, hi > 0 ? hi * 1.05 : 1]}},
      series: [{}, {label, stroke: cssVar('--chart', '#2d5fd3'), fill: cssVar('--chart-fill', 'rgba(45,95,211,.12)'),
        width: 1.6, spanGaps: false, points: {show: (u, si, i0, i1) => i1 - i0 < 3}}],
      axes: [{...axis, values: timeLabels, space: 70},
        {...axis, incrs: NICE_STEPS, size: 64, values: (u, splits, ai, space, step) => {
          const texts = splits.map((v) => tickText(v, step));
          el.dataset.yticks = texts.join('|');
          return texts;
        }}],
      cursor: {drag: {x: true, y: false, setScale: true}, points: {size: 7}, y: false},
      hooks: {draw: [drawMarkers], setScale: [(u, key) => {
        if (key !== 'x') return;
        const [lo, hi] = [u.scales.x.min, u.scales.x.max];
        el.dataset.xrange = `${Math.round(lo * 1000)},${Math.round(hi * 1000)}`;
        // A zoom outlives the live refreshes that redraw the view; the whole span forgets it.
        if (!zoomKey) return;
        if (lo <= xs[0] && hi >= xs[xs.length - 1]) chartZoom.delete(zoomKey);
        else chartZoom.set(zoomKey, [lo, hi]);
      }], setCursor: [(u) => {
        const i = nearestValue(ys, u.cursor.idx);
        const p = i === null ? null : points[i];
        if (!p) { tip.hidden = true; return; }
        mount(tip, h('strong', {}, fmt.timestamp(p.t)), h('br'), `${label}: ${yFormat(p.v)}`,
          (detail ? detail(p) : []).map((d) => [h('br'), d]));
        tip.hidden = false;
        const x = u.valToPos(xs[i], 'x') + u.over.offsetLeft;
        tip.style.left = Math.max(0, Math.min(x + 12, width - 230)) + 'px';
        tip.style.top = '8px';
      }]},
    }, [xs, ys], plot);
    plot.appendChild(tip);
    track(chart);
    const zoom = zoomKey && chartZoom.get(zoomKey);
    if (zoom && zoom[0] < xs[xs.length - 1] && zoom[1] > xs[0]) {
      chart.setScale('x', {min: Math.max(zoom[0], xs[0]), max: Math.min(zoom[1], xs[xs.length - 1])});
    }
  });
  return el;
}

// Release lines (ADR 0029): one line per build over hours since its first ping, the build
// drawn strong and its baselines lighter, a dashed marker at the build's age.
//   lines: [{label, role: 'build' | 'baseline' | 'earlier', points: [{x: age hours, v}]}]
// Every line is also a legend entry naming the build and its value at `markAt`.
export function releaseChart({lines, label, yFormat = fmt.num, markAt = null, height = 240, testid}) {
  const el = h('figure', {class: 'chart release-chart', 'data-testid': testid});
  const maxX = Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p.x)));
  const valid = lines.some((l) => l.points.some((p) => p.v !== null && p.v !== undefined));
  if (!valid || maxX === 0) {
    el.appendChild(h('p', {class: 'chart-empty'}, `No ${label} yet.`));
    return el;
  }
  // The build in the chart colour; baselines in greys, newest darkest; other earlier builds in tans.
  const shades = {baseline: ['#7d879b', '#a3abbb', '#c5cbd6'], earlier: ['#b08d5e', '#c9ab84', '#ddc9ad']};
  const seen = {baseline: 0, earlier: 0};
  const styled = lines.map(
      (l) => ({
        ...l,
        color: l.role === 'build' ? cssVar('--chart', '#2d5fd3') : shades[l.role][seen[l.role]++ % 3]
      }));
  const xs = Array.from({length: maxX}, (_, i) => i + 1);
  const data = [
    xs, ...styled.map((l) => {
      const by = new Map(l.points.map((p) => [p.x, p.v]));
      return xs.map((x) => (by.has(x) && by.get(x) !== undefined ? by.get(x) : null));
    })
  ];
  const at = (l) => {
    if (markAt === null) return null;
    const p = l.points.find((q) => q.x === markAt);
    return p ? p.v : null;
  };
  const plot = h('div', {
    class: 'chart-plot',
    role: 'img',
    style: {height: height + 'px', position: 'relative'},
    'aria-label': `${label} by hours since each build's first ping: ` +
        styled
            .map(
                (l) => `${l.label} ${
                    markAt !== null && at(l) !== null ? yFormat(at(l)) + ' at ' + markAt + ' h' : ''}`)
            .join('; ')
  });
  el.appendChild(plot);
  el.appendChild(
      h('ul', {class: 'release-legend', 'data-testid': testid ? testid + '-legend' : undefined},
        styled.map(
            (l) =>
                h('li', {'data-role': l.role, 'data-build': l.label},
                  h('span', {class: 'swatch', style: {background: l.color}}), l.label,
                  h('span', {class: 'muted'}, ` (${l.role})`),
                  markAt !== null && at(l) !== null ?
                      h('span', {class: 'num'}, ` ${yFormat(at(l))} at ${markAt} h`) :
                      null))));
  let chart = null;
  onWidth(plot, (width) => {
    if (chart) {
      chart.setSize({width, height});
      return;
    }
    sweep();
    const ink = cssVar('--muted', '#5d6678');
    const grid = {stroke: cssVar('--line', '#dfe3ea'), width: 1};
    const axis =
        {stroke: ink, grid, ticks: {stroke: grid.stroke, width: 1}, font: '11px system-ui, sans-serif'};
    const marker = (u) => {
      if (markAt === null) return;
      const x = Math.round(u.valToPos(markAt, 'x', true));
      const ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = ink;
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.restore();
    };
    chart = new uPlot(
        {
          width,
          height,
          legend: {show: false},
          scales: {
            x: {time: false, range: (u, lo, hi) => [1, Math.max(hi, 2)]},
            y: {range: (u, lo, hi) => [0, hi > 0 ? hi * 1.05 : 1]}
          },
          series: [
            {}, ...styled.map((l) => ({
                                label: l.label,
                                stroke: l.color,
                                width: l.role === 'build' ? 2.4 : 1.4,
                                spanGaps: false,
                                points: {show: false}
                              }))
          ],
          axes: [
            {...axis, values: (u, splits) => splits.map((v) => `${v} h`), space: 60},
            {...axis, values: (u, splits) => splits.map((v) => yFormat(v)), size: 64}
          ],
          cursor: {drag: {x: false, y: false}, y: false},
          hooks: {draw: [marker]},
        },
        data, plot);
    track(chart);
  });
  return el;
}

// The index of the non-null value nearest to `i` (the read-out skips empty buckets).
function nearestValue(ys, i) {
  if (i === null || i === undefined) return null;
  for (let d = 0; d < ys.length; d++) {
    if (i - d >= 0 && ys[i - d] !== null) return i - d;
    if (i + d < ys.length && ys[i + d] !== null) return i + d;
  }
  return null;
}

// A time-series bucket with nothing in it: no value, or 0 with no usage.
export function emptyBucket(p) {
  return p.v === null || p.v === undefined || Number.isNaN(p.v) || (p.v === 0 && !p.usage_hours);
}

// A small trend line for a table cell. values: numbers (null = 0).
export function sparkline(values, {width = 120, height = 26, label = 'trend'} = {}) {
  const vals = values.map((v) => (v === null || v === undefined || Number.isNaN(v) ? 0 : v));
  const max = Math.max(0, ...vals);
  const el = h('span', {class: 'spark', role: 'img', style: {width: width + 'px', height: height + 'px'},
    'aria-label': vals.length ? `${label}: ${vals.length} buckets, peak ${fmt.num(max)}` : `${label}: no data`});
  if (vals.length < 2) return el;
  uPlotReady.then(() => {
    if (uPlotError) return;  // the view's trend chart says why
    sweep();
    const u = new uPlot({
      width, height, pxAlign: false,
      legend: {show: false}, cursor: {show: false}, select: {show: false},
      axes: [{show: false}, {show: false}],
      scales: {x: {time: false}, y: {range: [0, max > 0 ? max * 1.08 : 1]}},
      padding: [2, 1, 1, 1],
      series: [{}, {stroke: cssVar('--chart', '#2d5fd3'), fill: cssVar('--chart-fill', 'rgba(45,95,211,.12)'),
        width: 1.3, points: {show: false}}],
    }, [vals.map((_, i) => i), vals], el);
    track(u);
  });
  return el;
}

// Zoom state of trend charts (by testid) and flame graphs (by key and view), and flame
// graphs' options (inverted, search), so a live refresh keeps them.
const chartZoom = new Map();
const flameZoom = new Map();
const flameOptions = new Map();

function frameColor(name) {
  if (name === '(root)') return 'hsl(220 10% 70%)';
  if (/^\(.*\)$/.test(name)) return 'hsl(205 55% 72%)';            // markers: (content script)
  if (/^0x[0-9a-f]+$|\+0x[0-9a-f]+$/i.test(name)) return 'hsl(40 20% 72%)'; // native frames
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return `hsl(${10 + (Math.abs(hash) % 40)} 80% ${62 + (Math.abs(hash >> 8) % 12)}%)`;
}

// The callee-first (inverted) tree of a call tree: each node's own time (what ends there:
// its hang ms minus its children's) goes up its path from the node to the root, so the
// roots are where the hangs were, and below each the callers that led there. "(other)"
// nodes (folded subtrees) count as frames of their own. Exact: the root's sum is kept.
export function invertTree(tree) {
  const root = {name: '(root)', hang_ms: 0, hang_count: 0, children: []};
  const child = (parent, name) => {
    let c = parent.children.find((x) => x.name === name);
    if (!c) { c = {name, hang_ms: 0, hang_count: 0, children: []}; parent.children.push(c); }
    return c;
  };
  const visit = (n, path) => {
    const kids = n.children || [];
    const selfMs = n.hang_ms - kids.reduce((a, k) => a + k.hang_ms, 0);
    const selfCount = n.hang_count - kids.reduce((a, k) => a + k.hang_count, 0);
    const here = [...path, n.name];
    if (path.length > 0 && (selfMs > 1e-9 || selfCount > 0)) {
      let at = root;
      root.hang_ms += selfMs;
      root.hang_count += selfCount;
      for (let i = here.length - 1; i >= 1; i--) {
        at = child(at, here[i]);
        at.hang_ms += selfMs;
        at.hang_count += selfCount;
      }
    }
    for (const k of kids) visit(k, here);
  };
  visit(tree, []);
  // The root's own hangs (stacks that are empty) stay at the root.
  root.hang_ms = tree.hang_ms;
  root.hang_count = tree.hang_count;
  return root;
}

// The ms a set of frames stands for, each stack once: frames whose name holds `query`
// (case-insensitive), not counting a match below another match.
export function matchedMs(tree, query, value = (n) => n.hang_ms) {
  const q = query.toLowerCase();
  let ms = 0;
  let frames = 0;
  const walk = (n, under) => {
    const hit = n.name !== '(root)' && n.name.toLowerCase().includes(q);
    if (hit) frames++;
    if (hit && !under) ms += value(n);
    for (const c of n.children || []) walk(c, under || hit);
  };
  walk(tree, false);
  return {ms, frames};
}

// An icicle flame graph (root at the top, callees below, width = hang ms) of
// the tree from /api/v1/hangs/flamegraph?format=tree. Click a frame to zoom
// into it, click an ancestor (or "reset") to zoom out. "Inverted" draws the
// callee-first tree (invertTree); "Search" highlights the frames whose name holds
// the text and says what share of the selection they stand for. Children too narrow
// to draw are drawn together as one "(other)" bar holding their sum.
// A differential tree passes `value` (a node's width), `unit`, `fill` (a node's colour)
// and `describe` (its read-out), and `invertible: false`.
export function flameGraph(tree, {key = 'flame', rowHeight = 18, testid = 'flamegraph', value = (n) => n.hang_ms,
  unit = 'ms', fill = (n) => frameColor(n.name), describe: describeNode = null, invertible = true} = {}) {
  const el = h('figure', {class: 'flame', 'data-testid': testid});
  const info = h('p', {class: 'flame-info', 'aria-live': 'polite'}, 'Hover a frame for its numbers; click to zoom.');
  const canvas = h('div', {class: 'flame-canvas'});
  const reset = h('button', {type: 'button', class: 'small', onclick: () => { flameZoom.delete(key + view()); redraw(); }},
    'Reset zoom');
  const opts = flameOptions.get(key) || {inverted: false, query: ''};
  flameOptions.set(key, opts);
  const view = () => (opts.inverted ? ':inverted' : '');
  const invert = h('label', {class: 'flame-toggle'}, h('input', {type: 'checkbox', 'data-testid': 'flame-inverted',
    checked: opts.inverted || null, onchange: (ev) => { opts.inverted = ev.target.checked; redraw(); }}), ' Inverted (callees first)');
  const matchInfo = h('span', {class: 'flame-match', 'data-testid': 'flame-match', 'aria-live': 'polite'});
  const search = h('input', {type: 'search', placeholder: 'Search frames', 'aria-label': 'Search frames',
    'data-testid': 'flame-search', value: opts.query, size: 18,
    oninput: (ev) => { opts.query = ev.target.value; redraw(); }});
  if (!invertible) opts.inverted = false;
  el.append(h('div', {class: 'flame-bar'}, info,
    h('span', {class: 'flame-tools'}, search, matchInfo, invertible ? invert : null, reset)), canvas);
  // A node's width: its value, or for a bar drawn for narrow children, their sum (`v`).
  const val = (n) => (n.v !== undefined ? n.v : value(n)) || 0;
  const rootMs = val(tree);
  let inverted = null;
  let width = 0;
  const amount = (x) => (unit === 'ms' ? fmt.int(x) : fmt.num(x));

  const describe = describeNode || ((n) => `${n.name} — ${fmt.int(n.hang_ms)} ms` +
    ` (${fmt.pct(rootMs ? (100 * n.hang_ms) / rootMs : 0)} of the selection), ${fmt.int(n.hang_count)} hangs`);

  function redraw() {
    if (width <= 0) return;
    const shown = opts.inverted ? (inverted ??= invertTree(tree)) : tree;
    const zkey = key + view();
    const q = opts.query.trim().toLowerCase();
    if (q) {
      const m = matchedMs(shown, q, val);
      matchInfo.textContent = `${fmt.int(m.frames)} matching frames: ${amount(m.ms)} ${unit}, ` +
        `${fmt.pct(rootMs ? (100 * m.ms) / rootMs : 0)} of the selection`;
    } else {
      matchInfo.textContent = '';
    }
    // Follow the zoom path by names from the root.
    const path = flameZoom.get(zkey) || [];
    const chain = [shown];
    for (const name of path) {
      const next = (chain[chain.length - 1].children || []).find((c) => c.name === name);
      if (!next) break;
      chain.push(next);
    }
    const focus = chain[chain.length - 1];
    const rects = [];
    let drawn = 0;
    let maxDepth = 0;
    const add = (n, depth, x0, w, ancestor, zpath, narrow = 0) => {
      maxDepth = Math.max(maxDepth, depth);
      const y = depth * rowHeight;
      const label = w > 28 ? n.name.slice(0, Math.floor((w - 8) / 7)) : '';
      const text = label.length < n.name.length && label ? label.slice(0, -1) + '…' : label;
      const hit = q && n.name !== '(root)' && n.name.toLowerCase().includes(q);
      const desc = narrow ? `(other) — ${narrow} frames too narrow to draw: ${amount(val(n))} ${unit} ` +
        `(${fmt.pct(rootMs ? (100 * val(n)) / rootMs : 0)} of the selection)` : describe(n);
      const g = s('g', {class: 'frame' + (ancestor ? ' ancestor' : '') + (narrow ? ' narrow' : '') +
        (q ? (hit ? ' match' : ' dim') : ''), tabindex: 0, role: 'button', 'aria-label': desc},
      s('title', {}, desc),
      s('rect', {x: x0 + 0.5, y: y + 0.5, width: Math.max(0.5, w - 1), height: rowHeight - 1,
        rx: 2, fill: narrow ? 'hsl(220 10% 82%)' : fill(n)}),
      text ? s('text', {x: x0 + 4, y: y + rowHeight - 5}, narrow ? '(other)'.slice(0, text.length) : text) : null);
      if (!narrow) {
        const zoom = () => {
          if (zpath.length === 0) flameZoom.delete(zkey); else flameZoom.set(zkey, zpath);
          redraw();
        };
        g.addEventListener('click', zoom);
        g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); zoom(); } });
      }
      g.addEventListener('mouseenter', () => { info.textContent = desc; });
      rects.push(g);
      drawn++;
    };
    chain.slice(0, -1).forEach((n, i) => add(n, i, 0, width, true, path.slice(0, i)));
    const walk = (n, depth, x0, w, zpath) => {
      add(n, depth, x0, w, false, zpath);
      const kids = [...(n.children || [])].sort((a, b) => val(b) - val(a));
      const total = val(n);
      let cx = x0;
      let narrowSum = 0;
      let narrowFrames = 0;
      for (const c of kids) {
        const cw = total > 0 ? (w * val(c)) / total : 0;
        if (cw >= 1 && drawn < 6000) {
          walk(c, depth + 1, cx, cw, [...zpath, c.name]);
        } else {
          narrowSum += val(c);
          narrowFrames++;
        }
        cx += cw;
      }
      // What was too narrow (or past the drawing budget) is one bar at the end of the row,
      // so the row's widths still add up to its parent's.
      const nw = total > 0 ? (w * narrowSum) / total : 0;
      if (narrowFrames > 0 && nw >= 0.5) {
        add({name: '(other)', v: narrowSum}, depth + 1, x0 + w - nw, nw, false, zpath, narrowFrames);
      }
    };
    walk(focus, chain.length - 1, 0, width, path.slice(0, chain.length - 1));
    const height = (maxDepth + 1) * rowHeight;
    reset.disabled = chain.length === 1;
    mount(canvas, s('svg', {width, height, class: 'flame-svg', role: 'group',
      'aria-label': `Flame graph${opts.inverted ? ' (inverted: callees first)' : ''}: ${amount(rootMs)} ${unit} of hangs, ` +
        `${maxDepth + 1} levels`}, rects));
  }

  if (!rootMs) {
    mount(el, h('p', {class: 'chart-empty'}, 'No hang stacks in this selection yet.'));
    return el;
  }
  onWidth(canvas, (w) => { width = w; redraw(); });
  return el;
}
