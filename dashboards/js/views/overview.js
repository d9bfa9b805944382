// Overview: ingest (rate from /status deltas), builds with crash and hang
// rates against the builds before them on the same channel, active alerts.

import {h, note, table} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {sparkline} from '../charts.js';
import {emptyState, section, facts, stateBadge, signatureLink, ratioClass} from './common.js';
import {alertFields, alertQuery} from './alerts.js';

export const title = 'Overview';

// Hang rate of a build row: bhr when it has one, else the main-ping (legacy) rate.
export function hangRate(b) {
  const hb = b.hangs || {};
  for (const src of ['bhr', 'main']) {
    if (hb[src] && hb[src].hang_ms_per_hour !== null && hb[src].hang_ms_per_hour !== undefined) {
      return {source: src, ms: hb[src].hang_ms_per_hour, count: hb[src].hang_count_per_hour};
    }
  }
  return {source: null, ms: null, count: null};
}

// "× baseline" of a build row: the API's comparison at equal age (`at_equal_age`, ADR 0029),
// the one the alert rules make — the build's life so far against each baseline build's
// first as many hours. The row's own rates are the window's.
function vsCell(ctx, b, cmp, kind, testid) {
  if (!cmp || cmp.ratio === null || cmp.ratio === undefined) {
    return h(
        'td', {
          class: 'num muted',
          'data-testid': testid,
          title: cmp ? 'the baselines have no rate at this age' :
                       'fewer qualifying earlier builds on this channel than a baseline needs'
        },
        '—');
  }
  const crash = kind === 'crash';
  const unit = crash ? 'crashes per 1000 h' : 'hang ms/h';
  const own = crash ? cmp.crash_rate_per_1000h : cmp.hang_ms_per_hour;
  const base = crash ? cmp.baseline_crash_rate_per_1000h : cmp.baseline_hang_ms_per_hour;
  const ids = crash ? cmp.baseline_builds : cmp.baseline_build_dates;
  const title = `at ${cmp.age_hours} h old: ${fmt.num(own)} ${unit} against ${fmt.num(base)} for ` +
      `${ids.length} earlier build(s) over their first ${cmp.age_hours} h: ${ids.join(', ')}`;
  return h(
      'td', {class: 'num ' + ratioClass(cmp.ratio), 'data-testid': testid, title},
      h('a', {
        href: ctx.href('releases', {channel: b.channel, build_id: b.build_id}),
        'data-testid': testid + '-link'
      },
        fmt.ratio(cmp.ratio)));
}

function ingestPanel(ctx) {
  const st = ctx.status;
  if (!st) return section('Ingest', {id: 'ingest'}, emptyState(ctx, 'status'));
  const rec = st.records || {};
  const rejected = Object.entries(st.rejected || {}).sort((a, b) => b[1] - a[1]);
  const rejTotal = rejected.reduce((a, [, n]) => a + n, 0);
  const c = st.consumer || {};
  return section('Ingest', {id: 'ingest', testid: 'ingest'},
    h('div', {class: 'ingest'},
      h('div', {class: 'big-stat'},
        h('span', {class: 'big', 'data-testid': 'ingest-rate'}, ctx.ingestRate === null ? '—' : fmt.num(ctx.ingestRate)),
        h('span', {class: 'unit'}, 'documents/s'),
        sparkline(ctx.rateHistory, {width: 160, height: 30, label: 'ingest rate, documents per second'}),
        h('span', {class: 'muted small'}, ctx.ingestRate === null ? 'measuring…' : 'from /status deltas over the last minute')),
      facts([
        ['Documents', fmt.int(st.documents), {'data-testid': 'fact-documents'}],
        ['Records', `${fmt.int(rec.main)} main · ${fmt.int(rec.bhr)} bhr · ${fmt.int(rec.crash)} crash`, {'data-testid': 'fact-records'}],
        ['Rejected', rejTotal ? `${fmt.int(rejTotal)} (${rejected.slice(0, 3).map(([k, n]) => `${k} ${fmt.int(n)}`).join(', ')})` : '0'],
        ['Duplicates', fmt.int(st.duplicates)],
        ['Late dropped', fmt.int(st.late_dropped)],
        ['Stream time', st.stream_time ? `${fmt.timestamp(st.stream_time)} (${fmt.relative(st.stream_time)})` : '— (no events yet)'],
        ['Kafka', c.enabled ? `${c.consuming ? 'consuming' : 'not consuming'}, lag ${c.lag === undefined || c.lag < 0 ? '—' : fmt.int(c.lag)}` +
          (c.errors ? `, ${fmt.int(c.errors)} errors` : '') : 'not configured'],
        ['Series', `${fmt.int(st.series)} (${fmt.bytes(st.memory_bytes)})`],
        ['Data read', fmt.bytes(st.bytes)],
      ], 'ingest-facts')));
}

const CHANNEL_ORDER = ['release', 'esr', 'beta', 'aurora', 'nightly'];
const channelRank = (c) => (CHANNEL_ORDER.includes(c) ? CHANNEL_ORDER.indexOf(c) : CHANNEL_ORDER.length);

// "Installs crashed" of a build row: the share of its installs that crashed (ADR 0031),
// with the counts and the classes in the title.
function affectedCell(a) {
  if (!a || a.installs === null || a.installs === undefined) {
    return h('td', {class: 'num muted', 'data-testid': 'affected', title: 'no install id in this build\'s documents'}, '—');
  }
  const classes = ['parent', 'content', 'gpu'].filter((c) => a.crashed[c] > 0)
    .map((c) => `${c} ${fmt.pct(a.share[c])}`).join(', ');
  return h('td', {class: 'num', 'data-testid': 'affected',
    title: `${fmt.int(a.crashed.total)} of ${fmt.int(a.installs)} installs crashed over the build's life` +
      (classes ? ` (${classes})` : '')}, fmt.pct(a.share.total));
}

function buildsPanel(ctx, builds) {
  if (builds.length === 0) return section('Builds', {id: 'builds'}, emptyState(ctx, 'builds'));
  // Grouped by channel (release first), newest build first within a channel,
  // so each build sits just above the builds it is compared with.
  const ordered = builds.map((build, i) => ({build, i, hang: hangRate(build)}))
                      .sort(
                          (a, b) => channelRank(a.build.channel) - channelRank(b.build.channel) ||
                              a.build.channel.localeCompare(b.build.channel) || a.i - b.i);
  const rows = ordered.map((r, k) => {
    const b = r.build;
    const cr = b.crash_rate_per_1000h || {};
    const age = b.at_equal_age || {};
    const first = k === 0 || ordered[k - 1].build.channel !== b.channel;
    return h(
        'tr',
        {'data-build': b.build_id, 'data-channel': b.channel, class: first && k > 0 ? 'group-start' : ''},
        h('td', {}, b.channel), h('td', {}, b.version),
        h('th', {scope: 'row', class: 'mono'},
          h('a', {
            href: ctx.href('crashes', {build_id: b.build_id, channel: b.channel}),
            title: `Top Crashers of ${b.version} (built ${fmt.buildId(b.build_id)})`
          },
            b.build_id)),
        h('td', {class: 'num', 'data-testid': 'usage'}, fmt.num(b.usage_hours)),
        h('td', {class: 'num', 'data-testid': 'crashes'}, fmt.int(b.crashes?.total)),
        h('td', {class: 'num', 'data-testid': 'crash-rate'}, fmt.num(cr.total)),
        vsCell(ctx, b, age.crashes, 'crash', 'crash-vs'), affectedCell(b.affected_installs),
        h('td', {class: 'num'}, fmt.num(cr.parent)),
        h('td', {class: 'num'}, fmt.num(cr.content)), h('td', {class: 'num'}, fmt.num(cr.startup)),
        h('td',
          {class: 'num', 'data-testid': 'hang-rate', title: r.hang.source ? `${r.hang.source} pings` : ''},
          r.hang.ms === null ? '—' : fmt.num(r.hang.ms)),
        vsCell(ctx, b, age.hangs, 'hang', 'hang-vs'), h('td', {class: 'num'}, fmt.num(r.hang.count)));
  });
  for (const b of builds) { ctx.learn('channel', b.channel); ctx.learn('build_id', b.build_id); }
  return section(
      'Builds', {
        id: 'builds',
        testid: 'builds',
        subtitle:
            'by channel, newest first; rates over the window. × baseline: each build\'s life so far against ' +
            'its baseline builds (earlier builds of the channel) over as many hours of theirs — at equal age, as the ' +
            'alert rules compare (red ≥ ×1.5, green ≤ ×0.67)'
      },
      h('div', {class: 'scroll'}, table({
          caption: 'Builds with crash rates per 1000 usage hours and hang rates per usage hour',
          hideCaption: true,
          testid: 'builds-table',
          columns: [
            {label: 'Channel'}, {label: 'Version'}, {label: 'Build ID'},
            {label: 'Usage (h)', num: true, title: 'usage hours from main pings'},
            {label: 'Crashes', num: true},
            {label: 'Crashes /1000 h', num: true, title: 'all crash classes per 1000 usage hours'}, {
              label: '× baseline',
              num: true,
              title: 'crash rate at equal age ÷ the baseline builds\' at the same age'
            },
            {
              label: 'Installs crashed',
              num: true,
              title: 'share of the build\'s installs (seen in main pings or crash reports, over its retained life, ' +
                  'not the window) that crashed: crash-free installs turned round; estimates, ±2 %'
            },
            {label: 'Parent', num: true, title: 'parent crashes per 1000 h'}, {
              label: 'Content',
              num: true,
              title: 'content crashes per 1000 h, without content shutdown kills'
            },
            {label: 'Startup', num: true, title: 'startup crashes per 1000 h'},
            {label: 'Hang ms/h', num: true, title: 'hang milliseconds per usage hour (bhr, else main pings)'},
            {
              label: '× baseline',
              num: true,
              title: 'hang ms/h at equal age ÷ the baseline build dates\' at the same age'
            },
            {label: 'Hangs/h', num: true, title: 'hang count per usage hour'}
          ],
          rows,
        })),
      note(
          'Crashes here are crash reports plus main pings\' gpu, plugin and GMP sub-process crash counts ' +
              '(SUBPROCESS_CRASHES_WITH_DUMP); Top Crashers counts crash reports only. Content leaves out content ' +
              'shutdown kills (IPC ShutDownKill), which the Top Crashers Content filter includes.',
          'builds-definitions'));
}

function alertsPanel(ctx, list) {
  const active = list.filter((a) => ['firing', 'pending'].includes(String(a.state || '').toLowerCase()))
    .sort((a, b) => (a.state === 'firing' ? 0 : 1) - (b.state === 'firing' ? 0 : 1));
  const link = h('a', {href: ctx.href('alerts')}, `All alerts (${fmt.int(list.length)}) →`);
  if (active.length === 0) {
    return section('Active alerts', {id: 'active-alerts', testid: 'active-alerts', actions: link},
      h('p', {class: 'muted', 'data-testid': 'no-active-alerts'},
        ctx.waiting() ? 'Waiting for data…' : 'No alert is firing or pending. Every build is within its baseline.'));
  }
  return section('Active alerts', {id: 'active-alerts', testid: 'active-alerts', actions: link},
    h('div', {class: 'scroll'}, table({caption: 'Firing and pending alerts', hideCaption: true, testid: 'active-alerts-table',
      columns: [{label: 'State'}, {label: 'Rule'}, {label: 'Signature / build'},
        {label: 'Ratio', num: true}, {label: 'p-value', num: true},
        {label: 'Since (stream time)', title: 'first seen, counted back from the latest event seen (stream time), not the clock'}],
      rows: active.slice(0, 10).map((a) => {
        const f = alertFields(a);
        return h('tr', {'data-rule': f.rule, 'data-channel': f.channel ?? '', 'data-build': f.build ?? '',
          'data-signature': f.signature ?? ''},
          h('td', {'data-testid': 'state'}, stateBadge(a.state)), h('td', {}, f.rule),
          h('td', {}, f.signature ? signatureLink(ctx, f.signature) : f.process ? `${f.process} crashes` : '—',
            h('div', {class: 'muted small'}, [f.channel, f.os, f.build].filter(Boolean).join(' · '))),
          h('td', {class: 'num', 'data-testid': 'ratio'}, fmt.ratio(f.ratio)),
          h('td', {class: 'num', 'data-testid': 'p-value'}, fmt.pValue(f.p_value)),
          h('td', {class: 'nowrap', title: fmt.timestamp(f.first_seen), 'data-testid': 'since'},
            fmt.relative(f.first_seen, fmt.toMs(ctx.status?.stream_time) ?? Date.now())));
      })})));
}

// Called after every /status poll: redraws the ingest panel in place.
export function onStatus(ctx) {
  const old = document.querySelector('[data-testid="ingest"]');
  if (old) old.replaceWith(ingestPanel(ctx));
}

export async function render(ctx) {
  const [b, a] = await Promise.all([
    api.get('builds', {...ctx.filters, limit: 200}),
    api.get('alerts', alertQuery(ctx.filters)),
  ]);
  const builds = Array.isArray(b.builds) ? b.builds : [];
  const list = Array.isArray(a.alerts) ? a.alerts : [];
  return h('div', {class: 'view view-overview'},
    h('h1', {class: 'visually-hidden'}, 'Overview'),
    h('div', {class: 'grid-2'}, ingestPanel(ctx), alertsPanel(ctx, list)),
    buildsPanel(ctx, builds));
}
