// Releases: a build beside its baseline builds at equal age (ADR 0029) — Mission Control's
// release lines, live: each build's crash rate per 1000 usage hours and hang ms per usage
// hour against hours since its first ping, and the comparison the alert rules make at the
// build's age. An alert's link lands here with its signature, class or hang signature.

import * as api from '../api.js';
import {releaseChart} from '../charts.js';
import {h, note, table} from '../dom.js';
import * as fmt from '../format.js';

import {choices, emptyState, ratioClass, section} from './common.js';

export const title = 'Releases';

// Crash classes a line can show (the API's line points), "total" first.
export const CLASSES = [
  ['total', 'All crashes'], ['parent', 'Parent'], ['content', 'Content'],
  ['content_shutdown', 'Content shutdown'], ['gpu', 'GPU'], ['startup', 'Startup']
];

function lineLabel(l) {
  return l.build_id ? `${l.build_id}${l.version ? ' (' + l.version + ')' : ''}` : l.build_date;
}

// How much usage a build has so far against its baselines: at the same age (the comparison's
// usage, per baseline build) and over their whole retained lives (their lines' last points).
// A rate on a small share of the usage a build will have is an early number (issue 20).
export function completeness(usageNow, cmp, lines) {
  const n = cmp.baseline_builds.length;
  const atAge = n ? cmp.baseline.usage_hours / n : 0;
  const lives = lines.filter((l) => l.role === 'baseline').map((l) => l.points.at(-1)?.usage_hours ?? 0);
  const life = lives.length ? lives.reduce((a, v) => a + v, 0) / lives.length : 0;
  return {atAge, life, shareAtAge: atAge > 0 ? (100 * usageNow) / atAge : null,
    shareOfLife: life > 0 ? (100 * usageNow) / life : null};
}

function completenessNote(usageNow, cmp, lines, age, testid) {
  const c = completeness(usageNow, cmp, lines);
  if (c.shareAtAge === null) return null;
  const early = c.shareOfLife !== null && c.shareOfLife < 25;
  return h('p', {class: 'completeness' + (early ? ' early' : ''), 'data-testid': testid},
    `Data so far: ${fmt.num(usageNow)} usage hours, ${fmt.pct(c.shareAtAge)} of what a baseline build had at ${age} h ` +
    `(${fmt.num(c.atAge)} h each)` +
    (c.shareOfLife !== null ? ` and ${fmt.pct(c.shareOfLife)} of what one had over its whole retained life (${fmt.num(c.life)} h)` : '') +
    (early ? ' — an early number: young builds\' rates move as their usage arrives.' : '.'));
}

function comparisonTable(rows, testid) {
  return h('div', {class: 'scroll'}, table({
             caption: 'The build and its baselines at the build\'s age',
             hideCaption: true,
             testid,
             className: 'numbers',
             columns: [
               {label: ''}, {label: 'Usage (h)', num: true}, {label: rows.countLabel, num: true},
               {label: rows.rateLabel, num: true}
             ],
             rows: rows.body
           }));
}

function crashSection(ctx, r, cls, signature) {
  const c = r.crashes;
  const classLabel = (CLASSES.find(([k]) => k === cls) || CLASSES[0])[1];
  const what = signature ? `crashes of ${signature}` :
      cls === 'total' ? 'crashes' :
                        `${classLabel.toLowerCase()} crashes`;
  if (!c) {
    return section(
        'Crashes', {id: 'release-crashes', testid: 'release-crashes'},
        h('p', {class: 'muted'}, `No crash report or main ping of a build on ${r.channel} yet.`));
  }
  const cmp = c.comparison;
  const classChoice = signature ?
      null :
      choices(
          'Class', CLASSES, cls,
          (v) => ctx.href('releases', {class: v === 'total' ? null : v}, {keepLocal: true}));
  const lines =
      c.lines.map((l) => ({
                    label: lineLabel(l),
                    role: l.role,
                    points: l.points.map((p) => ({x: p.age_hours, v: p.crash_rate_per_1000h[cls] ?? null}))
                  }));
  let body;
  if (cmp) {
    const key = cls === 'total' ? 'total' : cls;
    const count = (side) => side.crashes[key];
    const rate = (side) => side.crash_rate_per_1000h[key];
    const ratio = cmp.ratio[key];
    body = [
      h('p', {class: 'release-verdict', 'data-testid': 'crash-verdict'},
        `At ${c.age_hours} h old, ${c.build_id} has ${fmt.num(rate(cmp.build))} ${
            what} per 1000 usage hours; `,
        `its ${cmp.baseline_builds.length} baseline builds had ${
            fmt.num(rate(cmp.baseline))} over their first ${c.age_hours} h: `,
        h('strong', {class: ratioClass(ratio), 'data-testid': 'crash-ratio'}, fmt.ratio(ratio)), '.'),
      completenessNote(cmp.build.usage_hours, cmp, c.lines, c.age_hours, 'crash-completeness'),
      comparisonTable(
          {
            countLabel: 'Crashes',
            rateLabel: 'Per 1000 h',
            body: [
              h('tr', {'data-testid': 'row-build'},
                h('th', {scope: 'row'}, `This build, its first ${c.age_hours} h`),
                h('td', {class: 'num'}, fmt.num(cmp.build.usage_hours)),
                h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(count(cmp.build))),
                h('td', {class: 'num', 'data-testid': 'rate'}, fmt.num(rate(cmp.build)))),
              h('tr', {'data-testid': 'row-baseline'},
                h('th', {scope: 'row'},
                  `Baselines (${cmp.baseline_builds.join(', ')}), their first ${c.age_hours} h each`),
                h('td', {class: 'num'}, fmt.num(cmp.baseline.usage_hours)),
                h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(count(cmp.baseline))),
                h('td', {class: 'num', 'data-testid': 'rate'}, fmt.num(rate(cmp.baseline))))
            ]
          },
          'crash-comparison'),
    ];
  } else {
    body = note(
        `No comparison yet: fewer than ${r.policy.min_baseline_builds} earlier builds of ${
            r.channel} reached ` +
            `${fmt.num(r.policy.min_baseline_usage_hours)} usage hours. The lines show the builds before it.`,
        'crash-no-baseline');
  }
  return section(
      `Crashes of ${c.build_id}${c.version ? ' (' + c.version + ')' : ''} on ${r.channel}`, {
        id: 'release-crashes',
        testid: 'release-crashes',
        actions: classChoice,
        subtitle: `${
            what} per 1000 usage hours by hours since each build's first ping (cumulative); every OS and process`
      },
      body,
      releaseChart(
          {lines, label: `${what} per 1000 usage hours`, markAt: c.age_hours, testid: 'crash-lines'}));
}

function hangSection(ctx, r, signature) {
  const g = r.hangs;
  const what = signature ? `hang ms of ${signature}` : 'hang ms';
  if (!g) {
    return section(
        'Hangs', {id: 'release-hangs', testid: 'release-hangs'},
        h('p', {class: 'muted'}, `No hang usage of a build date on ${r.channel} yet.`));
  }
  const cmp = g.comparison;
  const lines = g.lines.map((l) => ({
                              label: lineLabel(l),
                              role: l.role,
                              points: l.points.map((p) => ({x: p.age_hours, v: p.hang_ms_per_hour ?? null}))
                            }));
  let body;
  if (cmp) {
    body = [
      h('p', {class: 'release-verdict', 'data-testid': 'hang-verdict'},
        `At ${g.age_hours} h old, builds of ${g.build_date} have ${fmt.num(cmp.build.hang_ms_per_hour)} ${
            what} per usage hour (${g.source} pings); `,
        `their ${cmp.baseline_builds.length} baseline build dates had ${
            fmt.num(cmp.baseline.hang_ms_per_hour)} over their first ${g.age_hours} h: `,
        h('strong', {class: ratioClass(cmp.ratio), 'data-testid': 'hang-ratio'}, fmt.ratio(cmp.ratio)), '.'),
      completenessNote(cmp.build.usage_hours, cmp, g.lines, g.age_hours, 'hang-completeness'),
      h('p', {}, h('a', {'data-testid': 'hang-diff-link', href: ctx.href('hangs', {channel: r.channel, os: null,
        process: null, build_id: null, build_date: g.build_date, source: g.source, signature: signature || null,
        flame: 'diff'})}, 'Which stacks changed: the differential flame graph →')),
      comparisonTable(
          {
            countLabel: 'Hangs',
            rateLabel: 'ms per hour',
            body: [
              h('tr', {'data-testid': 'row-build'},
                h('th', {scope: 'row'}, `${g.build_date}, its first ${g.age_hours} h`),
                h('td', {class: 'num'}, fmt.num(cmp.build.usage_hours)),
                h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(cmp.build.hang_count)),
                h('td', {class: 'num', 'data-testid': 'rate'}, fmt.num(cmp.build.hang_ms_per_hour))),
              h('tr', {'data-testid': 'row-baseline'},
                h('th', {scope: 'row'},
                  `Baselines (${cmp.baseline_builds.join(', ')}), their first ${g.age_hours} h each`),
                h('td', {class: 'num'}, fmt.num(cmp.baseline.usage_hours)),
                h('td', {class: 'num', 'data-testid': 'count'}, fmt.int(cmp.baseline.hang_count)),
                h('td', {class: 'num', 'data-testid': 'rate'}, fmt.num(cmp.baseline.hang_ms_per_hour)))
            ]
          },
          'hang-comparison'),
    ];
  } else {
    body = note(
        `No comparison yet: fewer than ${r.policy.min_baseline_builds} earlier build dates of ${
            r.channel} reached ` +
            `${fmt.num(r.policy.min_baseline_usage_hours)} usage hours.`,
        'hang-no-baseline');
  }
  return section(
      `Hangs of ${g.build_date} on ${r.channel}`, {
        id: 'release-hangs',
        testid: 'release-hangs',
        subtitle: `${what} per usage hour (${
            g.source} pings) by hours since each build date's first ping (cumulative)`
      },
      body,
      releaseChart({lines, label: `${what} per usage hour`, markAt: g.age_hours, testid: 'hang-lines'}));
}

// Without a channel: one link per channel to its newest build's comparison.
async function pickChannel(ctx) {
  const b = await api.get('builds', {limit: 200});
  const channels = [...new Set((b.builds || []).map((x) => x.channel))].sort();
  if (channels.length === 0)
    return section('Releases', {id: 'releases', testid: 'releases'}, emptyState(ctx, 'builds'));
  return section(
      'Releases', {
        id: 'releases',
        testid: 'releases',
        subtitle: 'a channel\'s newest build beside the builds before it, at equal age'
      },
      h('ul', {class: 'channel-list', 'data-testid': 'release-channels'},
        channels.map(
            (c) => h('li', {}, h('a', {href: ctx.href('releases', {channel: c}, {keepLocal: false})}, c)))));
}

export async function render(ctx) {
  const p = ctx.params;
  const channel = p.get('channel');
  if (!channel) return h('div', {class: 'view view-releases'}, await pickChannel(ctx));
  const q = {};
  for (const k of ['channel', 'build_id', 'build_date', 'signature', 'source'])
    if (p.get(k)) q[k] = p.get(k);
  const cls = CLASSES.some(([k]) => k === p.get('class')) ? p.get('class') : 'total';
  const r = await api.get('releases', q);
  const signature = r.signature || null;
  for (const l of r.crashes?.lines || []) ctx.learn('build_id', l.build_id);
  // A signature is a crash signature or a hang signature, never both: its own side only
  // (focus=hangs for a hang's, as a hang_spike alert links here).
  const hangs = p.get('focus') === 'hangs';
  let parts;
  if (signature) parts = [hangs ? hangSection(ctx, r, signature) : crashSection(ctx, r, cls, signature)];
  else parts = hangs ? [hangSection(ctx, r, null), crashSection(ctx, r, cls, null)]
    : [crashSection(ctx, r, cls, null), hangSection(ctx, r, null)];
  return h(
      'div', {class: 'view view-releases'}, h('h1', {class: 'visually-hidden'}, 'Releases'),
      note(
          'Each build is compared with its baseline builds — the latest earlier builds of the channel with enough ' +
              'usage — over the same number of hours since their first ping, as the alert rules compare them. ' +
              'Every OS and process; the Window filter does not apply.' +
              (signature ? ` Narrowed to the signature ${signature}.` : ''),
          'release-definition'),
      parts);
}
