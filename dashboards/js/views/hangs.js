// Hangs: a build date → thread → signature drill-down with hang ms and hang
// counts per usage hour, the top stacks of a signature on click, a flame
// graph and a trend chart of the same selection.

import {h, note, table} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {lineChart, flameGraph} from '../charts.js';
import {emptyState, section, choices, facts, releaseMarkers, markerBuilds} from './common.js';
import {fetchDiff, diffBody} from './hangs_diff.js';

export const title = 'Hangs';

const LEVELS = ['build_date', 'thread', 'signature'];
const FRAMES_SHOWN = 40;
const DEFAULT_ROWS = 25;
// Signature rows whose stacks are open, kept across live updates.
const expanded = new Set();

function level(params) {
  const by = params.get('by');
  if (LEVELS.includes(by)) return by;
  if (params.get('signature')) return 'signature';
  if (!params.get('build_date')) return 'build_date';
  if (!params.get('thread')) return 'thread';
  return 'signature';
}

const rowKey = (r) => `${r.signature}\u0000${r.thread}\u0000${r.process}`;

function rateCells(r) {
  return [
    h('td', {class: 'num', 'data-testid': 'ms-per-hour'}, fmt.num(r.hang_ms_per_hour)),
    h('td', {class: 'num', 'data-testid': 'count-per-hour'}, fmt.num(r.hang_count_per_hour)),
    h('td', {class: 'num', 'data-testid': 'hang-ms'}, fmt.int(r.hang_ms)),
    h('td', {class: 'num', 'data-testid': 'hang-count'}, fmt.int(r.hang_count)),
  ];
}
const RATE_COLUMNS = [
  {label: 'Hang ms / usage h', num: true, title: 'hang milliseconds per usage hour'},
  {label: 'Hangs / usage h', num: true, title: 'hang count per usage hour'},
  {label: 'Hang ms', num: true}, {label: 'Hangs', num: true}];

function stacksCell(r, colspan) {
  const stacks = Array.isArray(r.stacks) ? r.stacks : [];
  return h('td', {colspan, class: 'stacks-cell'},
    stacks.length === 0 ? h('p', {class: 'muted'}, 'No stacks recorded for this signature.') :
      h('div', {class: 'stacks', 'data-testid': 'stacks'}, stacks.map((st, i) => {
        const frames = [...(st.stack || [])].reverse();  // innermost first
        const head = frames.slice(0, FRAMES_SHOWN);
        const rest = frames.slice(FRAMES_SHOWN);
        const share = r.hang_ms ? (100 * st.hang_ms) / r.hang_ms : null;
        return h('div', {class: 'stack'},
          h('h4', {}, `Stack ${i + 1}: ${fmt.int(st.hang_ms)} ms, ${fmt.int(st.hang_count)} hangs`,
            share === null ? '' : ` (${fmt.pct(share)} of this signature's hang ms)`,
            h('span', {class: 'muted small'}, ` · ${frames.length} frames, innermost first`)),
          h('ol', {class: 'frames'}, head.map((f) => h('li', {}, f))),
          rest.length ? h('details', {}, h('summary', {}, `${rest.length} more frames toward the root`),
            h('ol', {class: 'frames', start: FRAMES_SHOWN + 1}, rest.map((f) => h('li', {}, f)))) : null);
      })));
}

// Versions of the builds of each (channel, build date), from /api/v1/builds.
function versionsByDate(builds) {
  const out = new Map();
  for (const b of builds) {
    const key = `${b.channel}:${String(b.build_id).slice(0, 8)}`;
    if (!out.has(key)) out.set(key, new Set());
    out.get(key).add(b.version);
  }
  return out;
}

function drillTable(ctx, lv, rows, versions) {
  if (lv === 'build_date') {
    // One row per (channel, build date): a date's builds differ by channel.
    return table({caption: 'Hangs by channel and build date', hideCaption: true, testid: 'hangs-table',
      columns: [{label: 'Build date'}, {label: 'Channel'}, {label: 'Versions', title: 'versions of the builds of that channel and date (/api/v1/builds)'}, ...RATE_COLUMNS],
      rows: rows.map((r) => h('tr', {'data-key': `${r.channel}:${r.build_date}`},
        h('th', {scope: 'row'}, h('a', {href: ctx.href('hangs', {build_date: r.build_date, channel: r.channel, by: null}, {keepLocal: true}),
          title: 'Show the threads of this channel and build date'}, fmt.buildId(r.build_date))),
        h('td', {'data-testid': 'channel'}, r.channel ?? '—'),
        h('td', {'data-testid': 'versions'}, [...(versions.get(`${r.channel}:${r.build_date}`) || [])].sort().join(', ') || '—'),
        rateCells(r)))});
  }
  if (lv === 'thread') {
    return table({caption: 'Hangs by thread', hideCaption: true, testid: 'hangs-table',
      columns: [{label: 'Thread'}, {label: 'Process'}, ...RATE_COLUMNS],
      rows: rows.map((r) => h('tr', {'data-key': r.thread},
        h('th', {scope: 'row'}, h('a', {href: ctx.href('hangs', {thread: r.thread, by: null}, {keepLocal: true}),
          title: 'Show the signatures of this thread'}, r.thread)),
        h('td', {}, r.process ?? '—'), rateCells(r)))});
  }
  const out = [];
  for (const r of rows) {
    const key = rowKey(r);
    const open = expanded.has(key);
    const stacksId = 'stacks-' + out.length;
    out.push(h('tr', {'data-key': r.signature, class: open ? 'open' : ''},
      h('th', {scope: 'row'}, h('button', {type: 'button', class: 'linkish sig', 'aria-expanded': String(open),
        'aria-controls': stacksId, title: 'Show the top stacks of this signature',
        onclick: (ev) => {
          if (expanded.has(key)) expanded.delete(key); else expanded.add(key);
          const tr = ev.currentTarget.closest('tr');
          const now = expanded.has(key);
          ev.currentTarget.setAttribute('aria-expanded', String(now));
          tr.classList.toggle('open', now);
          const next = tr.nextElementSibling;
          if (next && next.classList.contains('stacks-row')) next.hidden = !now;
        }}, h('span', {class: 'caret', 'aria-hidden': 'true'}), r.signature)),
      h('td', {}, r.thread ?? '—'), h('td', {}, r.process ?? '—'), rateCells(r)));
    out.push(h('tr', {class: 'stacks-row', id: stacksId, hidden: !open}, stacksCell(r, 7)));
  }
  return table({caption: 'Hang signatures (innermost frame)', hideCaption: true, testid: 'hangs-table',
    columns: [{label: 'Signature'}, {label: 'Thread'}, {label: 'Process'}, ...RATE_COLUMNS], rows: out});
}

function breadcrumb(ctx) {
  const p = ctx.params;
  const date = p.get('build_date');
  const thread = p.get('thread');
  const parts = [h('li', {}, date || thread || p.get('signature')
    ? h('a', {href: ctx.href('hangs', {build_date: null, thread: null, signature: null, by: null}, {keepLocal: true})}, 'All build dates')
    : h('span', {'aria-current': 'location'}, 'All build dates'))];
  if (date) {
    parts.push(h('li', {}, thread
      ? h('a', {href: ctx.href('hangs', {thread: null, by: null}, {keepLocal: true})}, `Build date ${fmt.buildId(date)}`)
      : h('span', {'aria-current': 'location'}, `Build date ${fmt.buildId(date)}`)));
  }
  const sig = p.get('signature');
  if (thread) {
    parts.push(h('li', {}, sig
      ? h('a', {href: ctx.href('hangs', {signature: null}, {keepLocal: true})}, `Thread ${thread}`)
      : h('span', {'aria-current': 'location'}, `Thread ${thread}`)));
  }
  if (sig) {
    parts.push(h('li', {}, h('span', {'aria-current': 'location', class: 'sig'}, `Signature ${sig}`), ' ',
      h('a', {href: ctx.href('hangs', {signature: null}, {keepLocal: true}), class: 'small',
        'aria-label': 'Remove the signature filter'}, '(all signatures)')));
  }
  return h('nav', {class: 'crumbs', 'aria-label': 'Selection'}, h('ol', {}, parts));
}

function selectionText(ctx, source, date) {
  const bits = [`${source} hangs`];
  for (const k of ['build_date', 'thread', 'signature', 'channel', 'os', 'process']) {
    const v = k === 'build_date' ? date : ctx.params.get(k);
    if (v) bits.push(`${k.replace('_', ' ')} ${v}`);
  }
  return bits.join(' · ');
}

// Hangs are kept per build date, not per build (the API refuses build_id): a Build ID
// filter selects its build date, and the page says so.
function buildDateOf(p) {
  const id = p.get('build_id');
  if (!id) return {date: p.get('build_date') || undefined, buildNote: null};
  const date = p.get('build_date') || id.slice(0, 8);
  return {date, buildNote: note(`Hangs are recorded per build date, not per build: Build ID ${id} selects `
    + `build date ${fmt.buildId(date)} (every build of that day).`, 'hangs-build-note')};
}

export async function render(ctx) {
  const p = ctx.params;
  const {date, buildNote} = buildDateOf(p);
  const lv = level(p);
  const sel = {...ctx.filters, build_id: undefined, source: p.get('source') || undefined,
    build_date: date, thread: p.get('thread') || undefined,
    signature: p.get('signature') || undefined};
  const limit = Math.min(1000, Math.max(1, Number(p.get('limit')) || DEFAULT_ROWS));
  // The flame graph of the selection, or its build date against the baselines (flame=diff).
  const diff = p.get('flame') === 'diff';
  const [list, ts, tree, builds, marked] = await Promise.all([
    api.get('hangs', {...sel, by: lv, limit}),
    api.get('hangs/timeseries', sel),
    diff ? fetchDiff(sel) : api.get('hangs/flamegraph', {...sel, format: 'tree'}),
    lv === 'build_date' ? api.get('builds', {window: sel.window, channel: sel.channel, os: sel.os, limit: 1000}) : null,
    markerBuilds(api, {channel: sel.channel}),
  ]);
  const versions = versionsByDate(builds?.builds || []);
  const rows = Array.isArray(list.rows) ? list.rows : [];
  // A link to one signature (e.g. from an alert) opens its stacks.
  if (sel.signature && lv === 'signature' && rows.length === 1) expanded.add(rowKey(rows[0]));
  const source = list.source || p.get('source') || 'bhr';
  for (const r of rows) { ctx.learn('process', r.process); }

  const controls = h('div', {class: 'controls'},
    choices('Source', [['bhr', 'bhr pings'], ['main', 'main pings (legacy)']], source,
      (v) => ctx.href('hangs', {source: v}, {keepLocal: true})),
    choices('Group by', [['build_date', 'Build date'], ['thread', 'Thread'], ['signature', 'Signature']], lv,
      (v) => ctx.href('hangs', {by: v}, {keepLocal: true})));

  const points = (ts.points || []).map((pt) => ({...pt, t: fmt.toMs(pt.t), v: pt.hang_ms_per_hour}));
  const collapsedHref = 'api/v1/hangs/flamegraph' + api.query({...sel, source, format: 'collapsed'});

  return h('div', {class: 'view view-hangs'},
    h('h1', {class: 'visually-hidden'}, 'Hangs'),
    buildNote,
    section('Hangs', {id: 'hang-table', testid: 'hang-table', actions: controls,
      subtitle: `window ${list.window ?? '—'} · ${selectionText(ctx, source, date)}`},
    breadcrumb(ctx),
    facts([['Usage in selection', `${fmt.num(list.usage_hours)} h`, {'data-testid': 'usage-hours'}],
      ['Rows', `${fmt.int(rows.length)}${rows.length >= limit ? ` (top ${limit})` : ''}`]]),
    rows.length ? h('div', {class: 'scroll'}, drillTable(ctx, lv, rows, versions)) : emptyState(ctx, 'hangs'),
    rows.length >= limit && limit < 1000
      ? h('p', {}, h('a', {href: ctx.href('hangs', {limit: Math.min(1000, limit * 4)}, {keepLocal: true})}, `Show up to ${Math.min(1000, limit * 4)} rows`))
      : null),
    section('Trend', {id: 'hang-trend', testid: 'hang-trend',
        subtitle: `hang ms per usage hour per ${ts.bucket ?? 'bucket'}`},
      lineChart({points, label: 'hang ms per usage hour', testid: 'hang-trend-chart',
        markers: releaseMarkers(date ? marked.filter((x) => x.build_date === date) : marked),
        detail: (pt) => [`hang ms ${fmt.int(pt.hang_ms)}`, `hangs ${fmt.int(pt.hang_count)}`,
          `usage ${fmt.num(pt.usage_hours)} h`]})),
      section('Flame graph', {id: 'flame', testid: 'flame',
        subtitle: diff ? 'this build date against its baseline build dates at equal age, every OS; ' +
          'width = hang ms per usage hour, colour = the change'
          : 'root at the top, width = hang ms',
        actions: h('div', {class: 'controls'},
          choices('Show', [['', 'This selection'], ['diff', 'Against baselines']], diff ? 'diff' : '',
            (v) => ctx.href('hangs', {flame: v}, {keepLocal: true})),
          diff ? null : h('a', {href: collapsedHref, class: 'small', download: 'hangs.collapsed.txt'}, 'Folded stacks (text)'))},
      diff ? diffBody(ctx, tree) : flameGraph(tree, {key: 'hangs:' + JSON.stringify(sel)})));
}
