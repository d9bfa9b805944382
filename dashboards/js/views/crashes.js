// Crashes: Top Crashers with rank change against the previous window of the
// same length and a per-signature sparkline, plus the trend of all crashes.
// Triage: the classes release management sets aside (OOM, empty dumps, content
// processes killed at shutdown) can be left out; each row says how much of it
// happens at startup and which build it was first seen in.

import {h, note, table} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {lineChart, sparkline} from '../charts.js';
import {emptyState, section, choices, facts, signatureLink, releaseMarkers, markerBuilds} from './common.js';

export const title = 'Crashes';

// The previous window of equal length holds no crash of the selection (right after
// start), or there is none (window all): no row is "new", there is nothing to compare.
function noPrevious(top) {
  return top.previous_total === null || top.previous_total === 0;
}

function rankChange(r, top) {
  if (noPrevious(top)) {
    return h('span', {class: 'rank muted', 'data-testid': 'rank-change',
      title: top.previous_total === null ? 'this window has no previous window' : 'no previous data'}, '—');
  }
  if (r.is_new) return h('span', {class: 'rank new', 'data-testid': 'rank-change', title: 'not in the previous window'}, 'new');
  const c = r.rank_change;
  if (c === null || c === undefined) return h('span', {class: 'rank', 'data-testid': 'rank-change'}, '—');
  if (c === 0) return h('span', {class: 'rank same', 'data-testid': 'rank-change', title: 'same rank as the previous window'}, '=');
  return h('span', {class: 'rank ' + (c > 0 ? 'up' : 'down'), 'data-testid': 'rank-change',
    title: `${c > 0 ? 'up' : 'down'} ${Math.abs(c)} from rank ${r.previous_rank} in the previous window`},
  `${c > 0 ? '▲' : '▼'} ${Math.abs(c)}`);
}

// What `exclude=` can leave out (the API's names), with the toggle's label and the note's words.
const EXCLUSIONS = [['oom', 'OOM', 'OOM'], ['empty', 'Empty dumps', 'empty dumps'],
  ['shutdownkill', 'Shutdown kills', 'shutdown kills']];

function excludedOf(ctx) {
  const want = (ctx.params.get('exclude') || '').split(',');
  return EXCLUSIONS.map(([k]) => k).filter((k) => want.includes(k));
}

// Toggle buttons (links) for each exclusion: pressed ones are left out.
function exclusionToggles(ctx, excluded) {
  return h('div', {class: 'choices', role: 'group', 'aria-label': 'Leave out', 'data-testid': 'exclusions'},
    h('span', {class: 'choices-label'}, 'Leave out'),
    EXCLUSIONS.map(([k, label]) => {
      const on = excluded.includes(k);
      const next = on ? excluded.filter((x) => x !== k) : EXCLUSIONS.map(([x]) => x).filter((x) => x === k || excluded.includes(x));
      return h('a', {href: ctx.href('crashes', {exclude: next.join(',')}, {keepLocal: true}), class: 'choice',
        role: 'button', 'aria-pressed': on ? 'true' : 'false', 'aria-current': on ? 'true' : null,
        'data-exclusion': k}, label);
    }));
}

export async function render(ctx) {
  const f = ctx.filters;
  const excluded = excludedOf(ctx);
  // One request for the list and every row's sparkline (sparklines=1).
  const [top, ts, builds] = await Promise.all([
    api.get('crashes/top', {...f, limit: 50, sparklines: 1, exclude: excluded.join(',') || undefined}),
    api.get('crashes/timeseries', f),
    markerBuilds(api, f),
  ]);
  const rows = Array.isArray(top.rows) ? top.rows : [];

  const procs = [['', 'Any'], ['parent', 'Parent'], ['content', 'Content'], ['gpu', 'GPU'], ['rdd', 'RDD'],
    ['utility', 'Utility'], ['gmplugin', 'GMP']];
  const controls = h('div', {class: 'control-row'},
    choices('Process', procs, f.process || '', (v) => ctx.href('crashes', {process: v}, {keepLocal: true})),
    exclusionToggles(ctx, excluded));

  const body = rows.length === 0 ? emptyState(ctx, 'crashes') : h('div', {class: 'scroll'}, table({
    caption: 'Top Crashers', hideCaption: true, testid: 'top-crashers',
    columns: [{label: 'Rank', num: true}, {label: 'Change', title: 'rank change against the previous window of the same length'},
      {label: 'Signature'}, {label: 'Crashes', num: true}, {label: 'Share', num: true, title: 'of all crashes in the selection'},
      {label: 'Per 1000 usage h', num: true}, {label: 'Installs', num: true, title: 'distinct installs (estimate, ±2 %)'},
      {label: 'Startup', num: true, title: 'share of its crashes within 60 s of process start'},
      {label: 'First build', title: 'the build it was first seen in (under the filters, over the retention)'},
      {label: 'Trend', title: top.trend_from ? `crashes in ${top.trend_bins} steps since ${fmt.timestamp(top.trend_from)}` : 'crashes over the window'}],
    rows: rows.map((r) => {
      const spark = sparkline(r.trend || [], {label: `crashes of ${r.signature}`});
      return h('tr', {'data-signature': r.signature},
        h('td', {class: 'num', 'data-testid': 'rank'}, fmt.int(r.rank)),
        h('td', {}, rankChange(r, top)),
        h('th', {scope: 'row'}, signatureLink(ctx, r.signature)),
        h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(r.count)),
        h('td', {class: 'num', 'data-testid': 'share'}, h('span', {class: 'bar', style: {'--w': Math.min(100, r.share || 0) + '%'}}),
          fmt.pct(r.share)),
        h('td', {class: 'num', 'data-testid': 'rate'}, fmt.num(r.rate_per_1000h)),
        h('td', {class: 'num', 'data-testid': 'installs'}, fmt.int(r.installs)),
        h('td', {class: 'num', 'data-testid': 'startup'}, fmt.pct(r.startup_share)),
        h('td', {'data-testid': 'first-build', title: r.first_seen ? `first seen ${fmt.timestamp(r.first_seen)}` : null},
          r.first_build || '—'),
        h('td', {class: 'spark-cell'}, spark));
    }),
  }));

  const rate = top.usage_hours ? (1000 * (top.total || 0)) / top.usage_hours : null;
  const points = (ts.points || []).map((p) => ({...p, t: fmt.toMs(p.t), v: p.rate_per_1000h}));
  return h('div', {class: 'view view-crashes'},
    h('h1', {class: 'visually-hidden'}, 'Crashes'),
    section('Top Crashers', {id: 'top', testid: 'top', actions: controls,
      subtitle: `window ${top.window ?? '—'} · rank change against the previous ${top.window ?? ''} window`},
    top.previous_total === 0 ? note(`No previous data: the previous ${top.window} window holds no crashes of this `
      + 'selection (seismo has not seen that far back yet), so no rank change or "new" is shown.', 'no-previous-note') : null,
    top.excluded ? note(`Left out: ${fmt.int(top.excluded.count)} crashes of ${fmt.int(top.excluded.signatures)} `
      + `signature${top.excluded.signatures === 1 ? '' : 's'} (${EXCLUSIONS.filter(([k]) => excluded.includes(k))
        .map(([, , words]) => words).join(', ')}); totals, shares and ranks are of what remains.`, 'excluded-note') : null,
    note('Crash reports only (the Overview\'s crash totals also add main pings\' gpu, plugin and GMP '
      + 'sub-process crash counts); the Content filter includes content shutdown kills.', 'crashes-definitions'),
    facts([
      ['Crashes', fmt.int(top.total), {'data-testid': 'crash-total'}],
      ['Usage', `${fmt.num(top.usage_hours)} h`, {'data-testid': 'crash-usage'}],
      ['Crashes per 1000 usage h', fmt.num(rate), {'data-testid': 'crash-rate'}],
      ['Signatures shown', fmt.int(rows.length)],
    ]), body),
    section('Trend', {id: 'crash-trend', testid: 'crash-trend',
      subtitle: `crashes per 1000 usage hours, per ${ts.bucket ?? 'bucket'}`},
      lineChart({points, label: 'crashes per 1000 usage hours', testid: 'crash-trend-chart', markers: releaseMarkers(builds),
        detail: (p) => [`${fmt.int(p.count)} crashes`, `usage ${fmt.num(p.usage_hours)} h`]})));
}
