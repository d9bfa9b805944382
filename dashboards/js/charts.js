// Charts drawn as SVG without a library: a time-series line chart with axes and
// a hover read-out, a sparkline, and an icicle-style flame graph.
// Charts that need their pixel width draw when the browser lays them out
// (ResizeObserver) and redraw on resize.

import {h, s, mount} from './dom.js';
import * as fmt from './format.js';

// Calls draw(width) whenever `el` is laid out with a new width.
function onWidth(el, draw) {
  let last = -1;
  const ro = new ResizeObserver(() => {
    if (!el.isConnected) { ro.disconnect(); return; }
    const w = Math.floor(el.clientWidth);
    if (w > 0 && w !== last) { last = w; draw(w); }
  });
  ro.observe(el);
}

// A "nice" step for about `count` ticks over [0, max].
function niceStep(max, count) {
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

const MIN = 60e3;
const TIME_STEPS = [MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, 60 * MIN, 180 * MIN, 360 * MIN,
  720 * MIN, 1440 * MIN, 2880 * MIN, 7 * 1440 * MIN];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function timeLabel(ms, step) {
  const d = new Date(ms);
  const hm = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  const day = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  if (step >= 1440 * MIN) return day;
  return d.getUTCHours() === 0 && d.getUTCMinutes() === 0 ? day : hm;
}

// A line chart of one series over time.
//   points: [{t: ms, v: number|null, ...}]   (null leaves a gap)
//   label: what the series is ("hang ms per usage hour"), yFormat: v -> text,
//   detail(point): extra lines for the hover read-out.
// Leading buckets without data (no usage, nothing counted) are left out, so
// a window longer than the data does not squeeze it into one edge.
export function lineChart({points: all, label, yFormat = fmt.num, detail, height = 200, testid}) {
  const first = all.findIndex((p) => !emptyBucket(p));
  const points = first < 0 ? [] : all.slice(first);
  const el = h('figure', {class: 'chart', 'data-testid': testid});
  const valid = points.filter((p) => p.v !== null && p.v !== undefined && !Number.isNaN(p.v));
  if (valid.length === 0) {
    el.appendChild(h('p', {class: 'chart-empty'}, `No ${label} in this window yet.`));
    return el;
  }
  const tip = h('div', {class: 'chart-tip', hidden: true});
  const plot = h('div', {class: 'chart-plot', style: {height: height + 'px', position: 'relative'}});
  el.appendChild(plot);
  if (first > 0) {
    el.appendChild(h('figcaption', {class: 'chart-note'},
      `From ${fmt.timestamp(points[0].t)}, the first bucket with data; the ${first} earlier buckets of the window are empty.`));
  }
  onWidth(plot, (width) => {
    const m = {l: 64, r: 14, t: 12, b: 26};
    const W = width - m.l - m.r;
    const H = height - m.t - m.b;
    let t0 = points[0].t;
    let t1 = points[points.length - 1].t;
    if (t1 === t0) { t0 -= MIN; t1 += MIN; }
    const vmax = Math.max(...valid.map((p) => p.v)) || 1;
    const ystep = niceStep(vmax, 4);
    const ymax = Math.ceil(vmax / ystep) * ystep;
    const x = (t) => m.l + ((t - t0) / (t1 - t0)) * W;
    const y = (v) => m.t + H - (v / ymax) * H;

    const g = [];
    for (let v = 0; v <= ymax + ystep / 2; v += ystep) {
      g.push(s('line', {class: 'grid', x1: m.l, x2: m.l + W, y1: y(v), y2: y(v)}));
      g.push(s('text', {class: 'tick', x: m.l - 6, y: y(v) + 4, 'text-anchor': 'end'}, yFormat(v)));
    }
    const step = TIME_STEPS.find((st) => (t1 - t0) / st <= W / 90) ?? TIME_STEPS[TIME_STEPS.length - 1];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      g.push(s('line', {class: 'grid', x1: x(t), x2: x(t), y1: m.t, y2: m.t + H}));
      g.push(s('text', {class: 'tick', x: x(t), y: m.t + H + 17, 'text-anchor': 'middle'}, timeLabel(t, step)));
    }
    // Line and area, broken at nulls.
    let line = '';
    let area = '';
    let run = [];
    const flush = () => {
      if (run.length === 0) return;
      const pts = run.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`);
      line += 'M' + pts.join('L');
      area += `M${x(run[0].t).toFixed(1)},${y(0)}L${pts.join('L')}L${x(run[run.length - 1].t).toFixed(1)},${y(0)}Z`;
      run = [];
    };
    for (const p of points) {
      if (p.v === null || p.v === undefined || Number.isNaN(p.v)) flush();
      else run.push(p);
    }
    flush();
    const cursor = s('line', {class: 'cursor', y1: m.t, y2: m.t + H, visibility: 'hidden'});
    const dot = s('circle', {class: 'dot', r: 3.5, visibility: 'hidden'});
    const overlay = s('rect', {class: 'overlay', x: m.l, y: m.t, width: W, height: H});
    const svg = s('svg', {width, height, role: 'img',
      'aria-label': `${label}: ${valid.length} points from ${fmt.timestamp(t0)} to ${fmt.timestamp(t1)}, ` +
        `highest ${yFormat(vmax)}`},
    g, s('path', {class: 'area', d: area}), s('path', {class: 'line', d: line}),
    s('line', {class: 'axis', x1: m.l, x2: m.l + W, y1: m.t + H, y2: m.t + H}), cursor, dot, overlay);

    overlay.addEventListener('mousemove', (ev) => {
      const box = svg.getBoundingClientRect();
      const tx = t0 + ((ev.clientX - box.left - m.l) / W) * (t1 - t0);
      let best = valid[0];
      for (const p of valid) if (Math.abs(p.t - tx) < Math.abs(best.t - tx)) best = p;
      cursor.setAttribute('x1', x(best.t)); cursor.setAttribute('x2', x(best.t));
      cursor.setAttribute('visibility', 'visible');
      dot.setAttribute('cx', x(best.t)); dot.setAttribute('cy', y(best.v));
      dot.setAttribute('visibility', 'visible');
      mount(tip, h('strong', {}, fmt.timestamp(best.t)), h('br'), `${label}: ${yFormat(best.v)}`,
        (detail ? detail(best) : []).map((d) => [h('br'), d]));
      tip.hidden = false;
      const left = Math.min(x(best.t) + 12, width - 230);
      tip.style.left = Math.max(0, left) + 'px';
      tip.style.top = '8px';
    });
    overlay.addEventListener('mouseleave', () => {
      tip.hidden = true;
      cursor.setAttribute('visibility', 'hidden');
      dot.setAttribute('visibility', 'hidden');
    });
    mount(plot, svg, tip);
  });
  return el;
}

// A time-series bucket with nothing in it: no value, or 0 with no usage.
export function emptyBucket(p) {
  return p.v === null || p.v === undefined || Number.isNaN(p.v) || (p.v === 0 && !p.usage_hours);
}

// A small trend line for a table cell. values: numbers (null = gap).
export function sparkline(values, {width = 120, height = 26, label = 'trend'} = {}) {
  const vals = values.map((v) => (v === null || v === undefined || Number.isNaN(v) ? 0 : v));
  const max = Math.max(0, ...vals);
  const svg = s('svg', {class: 'spark', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': vals.length ? `${label}: ${vals.length} buckets, peak ${fmt.num(max)}` : `${label}: no data`});
  if (vals.length < 2) return svg;
  const x = (i) => (i / (vals.length - 1)) * (width - 2) + 1;
  const y = (v) => height - 2 - (max > 0 ? (v / max) * (height - 4) : 0);
  const pts = vals.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  svg.appendChild(s('polygon', {class: 'spark-area', points: `1,${height - 2} ${pts} ${x(vals.length - 1).toFixed(1)},${height - 2}`}));
  svg.appendChild(s('polyline', {class: 'spark-line', points: pts}));
  return svg;
}

// Zoom state of flame graphs, by key, so a live refresh keeps the zoom.
const flameZoom = new Map();

function frameColor(name) {
  if (name === '(root)') return 'hsl(220 10% 70%)';
  if (/^\(.*\)$/.test(name)) return 'hsl(205 55% 72%)';            // markers: (content script)
  if (/^0x[0-9a-f]+$|\+0x[0-9a-f]+$/i.test(name)) return 'hsl(40 20% 72%)'; // native frames
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return `hsl(${10 + (Math.abs(hash) % 40)} 80% ${62 + (Math.abs(hash >> 8) % 12)}%)`;
}

// An icicle flame graph (root at the top, callees below, width = hang ms) of
// the tree from /api/v1/hangs/flamegraph?format=tree. Click a frame to zoom
// into it, click an ancestor (or "reset") to zoom out.
export function flameGraph(tree, {key = 'flame', rowHeight = 18, testid = 'flamegraph'} = {}) {
  const el = h('figure', {class: 'flame', 'data-testid': testid});
  const info = h('p', {class: 'flame-info', 'aria-live': 'polite'}, 'Hover a frame for its numbers; click to zoom.');
  const canvas = h('div', {class: 'flame-canvas'});
  const reset = h('button', {type: 'button', class: 'small', onclick: () => { flameZoom.delete(key); redraw(); }},
    'Reset zoom');
  el.append(h('div', {class: 'flame-bar'}, info, reset), canvas);
  const rootMs = tree.hang_ms || 0;
  let width = 0;

  const describe = (n) => `${n.name} — ${fmt.int(n.hang_ms)} ms` +
    ` (${fmt.pct(rootMs ? (100 * n.hang_ms) / rootMs : 0)} of the selection), ${fmt.int(n.hang_count)} hangs`;

  function redraw() {
    if (width <= 0) return;
    // Follow the zoom path by names from the root.
    const path = flameZoom.get(key) || [];
    const chain = [tree];
    for (const name of path) {
      const next = (chain[chain.length - 1].children || []).find((c) => c.name === name);
      if (!next) break;
      chain.push(next);
    }
    const focus = chain[chain.length - 1];
    const rects = [];
    let drawn = 0;
    let maxDepth = 0;
    const add = (n, depth, x0, w, ancestor, zpath) => {
      maxDepth = Math.max(maxDepth, depth);
      const y = depth * rowHeight;
      const label = w > 28 ? n.name.slice(0, Math.floor((w - 8) / 7)) : '';
      const text = label.length < n.name.length && label ? label.slice(0, -1) + '…' : label;
      const g = s('g', {class: 'frame' + (ancestor ? ' ancestor' : ''), tabindex: 0, role: 'button',
        'aria-label': describe(n)},
      s('title', {}, describe(n)),
      s('rect', {x: x0 + 0.5, y: y + 0.5, width: Math.max(0.5, w - 1), height: rowHeight - 1,
        rx: 2, fill: frameColor(n.name)}),
      text ? s('text', {x: x0 + 4, y: y + rowHeight - 5}, text) : null);
      const zoom = () => {
        if (zpath.length === 0) flameZoom.delete(key); else flameZoom.set(key, zpath);
        redraw();
      };
      g.addEventListener('click', zoom);
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); zoom(); } });
      g.addEventListener('mouseenter', () => { info.textContent = describe(n); });
      rects.push(g);
      drawn++;
    };
    chain.slice(0, -1).forEach((n, i) => add(n, i, 0, width, true, path.slice(0, i)));
    const walk = (n, depth, x0, w, zpath) => {
      add(n, depth, x0, w, false, zpath);
      const kids = [...(n.children || [])].sort((a, b) => b.hang_ms - a.hang_ms);
      let cx = x0;
      for (const c of kids) {
        const cw = n.hang_ms > 0 ? (w * c.hang_ms) / n.hang_ms : 0;
        if (cw >= 1 && drawn < 6000) walk(c, depth + 1, cx, cw, [...zpath, c.name]);
        cx += cw;
      }
    };
    walk(focus, chain.length - 1, 0, width, path.slice(0, chain.length - 1));
    const height = (maxDepth + 1) * rowHeight;
    reset.disabled = chain.length === 1;
    mount(canvas, s('svg', {width, height, class: 'flame-svg', role: 'group',
      'aria-label': `Flame graph: ${fmt.int(rootMs)} ms of hangs, ${maxDepth + 1} levels`}, rects));
  }

  if (!rootMs) {
    mount(el, h('p', {class: 'chart-empty'}, 'No hang stacks in this selection yet.'));
    return el;
  }
  onWidth(canvas, (w) => { width = w; redraw(); });
  return el;
}
