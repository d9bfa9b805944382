// A crash signature's page: totals, trend, and breakdowns by build, OS and
// process from /api/v1/crashes/signature.

import {h, table, notice} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {lineChart} from '../charts.js';
import {section, facts, releaseMarkers, markerBuilds} from './common.js';

export const title = 'Crash signature';

function shareCell(count, total) {
  const p = total ? (100 * count) / total : 0;
  return h('td', {class: 'num'}, h('span', {class: 'bar', style: {'--w': p + '%'}}), fmt.pct(p));
}

export async function render(ctx) {
  const sig = ctx.params.get('signature');
  const back = h('a', {href: ctx.href('crashes'), class: 'back'}, '← Top Crashers');
  if (!sig) {
    return h('div', {class: 'view'}, back, notice('empty', 'No signature chosen.', 'Pick one in Top Crashers.'));
  }
  const f = ctx.filters;
  const [d, ts, builds] = await Promise.all([
    api.get('crashes/signature', {...f, signature: sig}),
    api.get('crashes/timeseries', {...f, signature: sig}),
    markerBuilds(api, f),
  ]);
  const total = d.count || 0;
  const byBuild = d.by_build || [];
  const byOs = d.by_os || [];
  const byProc = d.by_process || [];
  for (const b of byBuild) { ctx.learn('build_id', b.build_id); ctx.learn('channel', b.channel); }
  for (const o of byOs) ctx.learn('os', o.os);
  const points = (ts.points || []).map((p) => ({...p, t: fmt.toMs(p.t), v: p.rate_per_1000h}));
  const none = (what) => h('p', {class: 'muted'}, total ? `No ${what}.` : 'No crashes with this signature in this selection.');

  return h('div', {class: 'view view-signature'},
    back,
    h('h1', {class: 'sig-title', 'data-testid': 'signature-title'}, sig),
    facts([
      ['Crashes', fmt.int(total), {'data-testid': 'sig-count'}],
      ['Installs (estimate)', fmt.int(d.installs), {'data-testid': 'sig-installs'}],
      ['Builds', fmt.int(byBuild.length)],
      ['Window', ts.window ?? ctx.filters.window ?? 'default'],
    ]),
    section('Trend', {id: 'sig-trend', subtitle: `crashes per 1000 usage hours, per ${ts.bucket ?? 'bucket'}`},
      lineChart({points, label: 'crashes per 1000 usage hours', testid: 'sig-trend-chart', height: 170,
        markers: releaseMarkers(builds), detail: (p) => [`${fmt.int(p.count)} crashes`, `usage ${fmt.num(p.usage_hours)} h`]})),
    section('By build', {id: 'by-build', testid: 'by-build'}, byBuild.length ? h('div', {class: 'scroll'}, table({
      caption: 'Crashes by build', hideCaption: true, testid: 'by-build-table',
      columns: [{label: 'Build ID'}, {label: 'Version'}, {label: 'Channel'}, {label: 'Crashes', num: true},
        {label: 'Share', num: true}, {label: 'Per 1000 usage h', num: true}],
      rows: byBuild.map((b) => h('tr', {'data-build': b.build_id},
        h('th', {scope: 'row', class: 'mono'}, b.build_id), h('td', {}, b.version), h('td', {}, b.channel),
        h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(b.count)), shareCell(b.count, total),
        h('td', {class: 'num'}, fmt.num(b.rate_per_1000h))))})) : none('builds')),
    h('div', {class: 'grid-2'},
      section('By OS', {id: 'by-os', testid: 'by-os'}, byOs.length ? table({
        caption: 'Crashes by operating system', hideCaption: true, testid: 'by-os-table',
        columns: [{label: 'OS'}, {label: 'Crashes', num: true}, {label: 'Share', num: true}],
        rows: byOs.map((o) => h('tr', {'data-os': o.os}, h('th', {scope: 'row'}, o.os),
          h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(o.count)), shareCell(o.count, total)))}) : none('OS data')),
      section('By process', {id: 'by-process', testid: 'by-process'}, byProc.length ? table({
        caption: 'Crashes by process and class', hideCaption: true, testid: 'by-process-table',
        columns: [{label: 'Process'}, {label: 'Class'}, {label: 'Crashes', num: true}, {label: 'Share', num: true}],
        rows: byProc.map((p) => h('tr', {'data-process': p.process},
          h('th', {scope: 'row'}, p.process), h('td', {}, p.class ?? '—'),
          h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(p.count)), shareCell(p.count, total)))}) : none('process data'))));
}
