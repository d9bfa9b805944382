// Alerts: the live list, each with the numbers that justify it (counts,
// exposures, ratio, p-value, baseline builds) and its life cycle.

import {h, table} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {emptyState, section, stateBadge, signatureLink, choices} from './common.js';

export const title = 'Alerts';

const RULES = {
  crash_signature_spike: 'Crash signature spike',
  new_crash_signature: 'New crash signature',
  crash_rate_regression: 'Crash rate regression',
  hang_spike: 'Hang spike',
  burst: 'Burst',
};

// Nested objects the alert engine may group its fields in.
const GROUPS = ['key', 'numbers', 'stats', 'evidence', 'values', 'detail'];

// Looks a field up at the top level, then in the nested groups.
function pick(a, ...names) {
  for (const n of names) if (a[n] !== undefined && a[n] !== null && typeof a[n] !== 'object') return a[n];
  for (const g of GROUPS) {
    const o = a[g];
    if (o && typeof o === 'object') {
      for (const n of names) if (o[n] !== undefined && o[n] !== null && typeof o[n] !== 'object') return o[n];
    }
  }
  return null;
}

function pickArray(a, ...names) {
  for (const src of [a, ...GROUPS.map((g) => a[g]).filter((o) => o && typeof o === 'object')]) {
    for (const n of names) if (Array.isArray(src[n])) return src[n];
  }
  return null;
}

// The fields the dashboard shows, whatever grouping the engine uses.
export function alertFields(a) {
  return {
    rule: pick(a, 'rule'),
    state: pick(a, 'state'),
    channel: pick(a, 'channel'),
    os: pick(a, 'os'),
    build: pick(a, 'build_id', 'build_date', 'build'),
    version: pick(a, 'version'),
    signature: pick(a, 'signature'),
    process: pick(a, 'class', 'process_class', 'process'),
    source: pick(a, 'source'),
    hang_ms_new: pick(a, 'hang_ms_new'),
    hang_ms_base: pick(a, 'hang_ms_base'),
    p_adjusted: pick(a, 'p_adjusted'),
    age_hours: pick(a, 'age_hours'),
    since: pick(a, 'since'),
    count_new: pick(a, 'count_new', 'new_count', 'count'),
    count_base: pick(a, 'count_base', 'baseline_count', 'base_count'),
    exposure_new: pick(a, 'exposure_new', 'new_exposure', 'exposure'),
    exposure_base: pick(a, 'exposure_base', 'baseline_exposure', 'base_exposure'),
    rate_new: pick(a, 'rate_new', 'new_rate'),
    rate_base: pick(a, 'rate_base', 'baseline_rate', 'base_rate'),
    ratio: pick(a, 'ratio', 'rate_ratio'),
    p_value: pick(a, 'p_value', 'p', 'pvalue'),
    installs: pick(a, 'installs', 'installs_new'),
    exposure_kind: pick(a, 'exposure_kind', 'exposure_unit'),
    baseline_builds: pickArray(a, 'baseline_builds', 'baseline'),
    first_seen: pick(a, 'first_seen', 'started_at'),
    last_seen: pick(a, 'last_seen', 'updated_at'),
    link: pick(a, 'dashboard_path', 'link', 'path'),
  };
}

const SHOWN = new Set(['rule', 'state', 'channel', 'os', 'build_id', 'build', 'version', 'signature', 'class',
  'process_class', 'process', 'count_new', 'new_count', 'count', 'count_base', 'baseline_count', 'base_count',
  'exposure_new', 'new_exposure', 'exposure', 'exposure_base', 'baseline_exposure', 'base_exposure', 'rate_new',
  'new_rate', 'rate_base', 'baseline_rate', 'base_rate', 'ratio', 'rate_ratio', 'p_value', 'p', 'pvalue',
  'installs', 'installs_new', 'exposure_kind', 'exposure_unit', 'baseline_builds', 'baseline', 'first_seen',
  'since', 'started_at', 'last_seen', 'updated_at', 'link', 'url', 'path', 'dashboard_path', 'build_date', 'source',
  'hang_ms_new', 'hang_ms_base', 'p_adjusted', 'age_hours']);

// Scalar fields not shown elsewhere, so no number the engine reports is hidden.
function otherFields(a) {
  const out = [];
  const visit = (o, prefix) => {
    for (const [k, v] of Object.entries(o)) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) { if (GROUPS.includes(k)) visit(v, k + '.'); continue; }
      if (SHOWN.has(k) || Array.isArray(v)) continue;
      out.push([prefix + k, typeof v === 'number' ? fmt.num(v) : String(v)]);
    }
  };
  visit(a, '');
  return out;
}

// Where the alert's subject is shown on this dashboard.
function subjectHref(ctx, f) {
  // The engine's own link ("/#/crashes/signature?…"), made relative to this page.
  if (typeof f.link === 'string' && /^\/?#\//.test(f.link)) return f.link.replace(/^\//, '');
  if (f.signature && f.rule === 'hang_spike') return ctx.href('hangs', {by: 'signature'});
  if (f.signature) return ctx.href('crashes/signature', {signature: f.signature});
  return null;
}

const rate = (count, exposure) => (count !== null && exposure ? (1000 * count) / exposure : null);

function alertCard(ctx, a, i) {
  const f = alertFields(a);
  const stream = ctx.status?.stream_time;
  const hoursExposure = !f.exposure_kind || /hour|usage/i.test(String(f.exposure_kind));
  const hang = f.rule === 'hang_spike';
  const expo = (v) => (v === null ? '—' : hoursExposure ? `${fmt.num(v)} h` : fmt.num(v));
  const rNew = f.rate_new ?? (hoursExposure && !hang ? rate(f.count_new, f.exposure_new) : null);
  const rBase = f.rate_base ?? (hoursExposure && !hang ? rate(f.count_base, f.exposure_base) : null);
  const rateLabel = !hoursExposure ? 'Share of crashes' : hang ? 'Hang ms per usage hour' : 'Crashes per 1000 h';
  const subject = subjectHref(ctx, f);
  const hid = `alert-${i}-title`;
  const other = otherFields(a);
  return h('article', {class: 'alert-card state-' + String(f.state || '').toLowerCase(), 'aria-labelledby': hid,
    'data-testid': 'alert', 'data-rule': f.rule, 'data-signature': f.signature ?? '', 'data-build': f.build ?? '',
    'data-os': f.os ?? '', 'data-channel': f.channel ?? ''},
  h('header', {},
    stateBadge(f.state),
    h('h3', {id: hid}, RULES[f.rule] || f.rule || 'alert'),
    f.signature ? (subject ? h('a', {class: 'sig', href: subject}, f.signature) : h('span', {class: 'sig'}, f.signature))
      : f.process ? (subject ? h('a', {class: 'sig', href: subject}, `${f.process} crashes`)
        : h('span', {class: 'sig'}, `${f.process} crashes`)) : null),
  h('p', {class: 'alert-key'},
    [['channel', f.channel], ['OS', f.os], [hang ? 'build date' : 'build', f.build], ['version', f.version],
      ['class', f.signature ? f.process : null], ['source', f.source]]
      .filter(([, v]) => v !== null && v !== undefined && v !== '')
      .map(([k, v]) => h('span', {}, h('span', {class: 'muted'}, k + ' '), h('span', {class: 'mono'}, String(v))))),
  table({caption: 'The numbers behind this alert', hideCaption: true, className: 'numbers', testid: 'alert-numbers',
    columns: [{label: ''}, {label: 'New build', num: true}, {label: 'Baseline', num: true}],
    rows: [
      h('tr', {}, h('th', {scope: 'row'}, 'Count'), h('td', {class: 'num', 'data-testid': 'count-new'}, fmt.int(f.count_new)),
        h('td', {class: 'num', 'data-testid': 'count-base'}, fmt.int(f.count_base))),
      h('tr', {}, h('th', {scope: 'row'}, hoursExposure ? 'Exposure (usage)' : `Exposure (${f.exposure_kind})`),
        h('td', {class: 'num'}, expo(f.exposure_new)), h('td', {class: 'num'}, expo(f.exposure_base))),
      hang ? h('tr', {}, h('th', {scope: 'row'}, 'Hang ms'),
        h('td', {class: 'num'}, fmt.int(f.hang_ms_new)), h('td', {class: 'num'}, fmt.int(f.hang_ms_base))) : null,
      rNew !== null || rBase !== null ? h('tr', {}, h('th', {scope: 'row'}, rateLabel),
        h('td', {class: 'num', 'data-testid': 'rate-new'}, fmt.num(rNew)),
        h('td', {class: 'num', 'data-testid': 'rate-base'}, fmt.num(rBase))) : null,
    ]}),
  h('dl', {class: 'facts inline'},
    h('div', {}, h('dt', {}, 'Ratio'), h('dd', {'data-testid': 'ratio'}, fmt.ratio(f.ratio))),
    h('div', {}, h('dt', {}, 'p-value'), h('dd', {'data-testid': 'p-value'}, fmt.pValue(f.p_value))),
    f.p_adjusted !== null ? h('div', {}, h('dt', {}, 'p adjusted'), h('dd', {}, fmt.pValue(f.p_adjusted))) : null,
    f.age_hours !== null ? h('div', {}, h('dt', {}, 'Build age'), h('dd', {}, fmt.duration(f.age_hours * 3600))) : null,
    f.installs !== null ? h('div', {}, h('dt', {}, 'Installs'), h('dd', {}, fmt.int(f.installs))) : null,
    h('div', {}, h('dt', {}, 'Baseline builds'), h('dd', {class: 'mono', 'data-testid': 'baseline-builds'},
      f.baseline_builds && f.baseline_builds.length
        ? f.baseline_builds.map((b) => (typeof b === 'object' ? b.build_id ?? JSON.stringify(b) : String(b))).join(', ') : '—')),
    h('div', {}, h('dt', {}, 'First seen'), h('dd', {title: fmt.timestamp(f.first_seen), 'data-testid': 'first-seen'},
      fmt.streamRelative(f.first_seen, stream))),
    h('div', {}, h('dt', {}, 'Last seen'), h('dd', {title: fmt.timestamp(f.last_seen)}, fmt.streamRelative(f.last_seen, stream))),
    f.since !== null ? h('div', {}, h('dt', {}, `${f.state || 'state'} since`), h('dd', {title: fmt.timestamp(f.since),
      'data-testid': 'since'}, fmt.streamRelative(f.since, stream))) : null),
  other.length ? h('details', {class: 'other'}, h('summary', {}, 'All fields'),
    h('dl', {class: 'facts inline'}, other.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))))) : null);
}

const ORDER = {firing: 0, pending: 1, resolved: 2};

// The global filters /api/v1/alerts narrows by (alerts not split by a
// dimension, e.g. over all OSes, stay in the list; docs/api.md).
export function alertQuery(filters) {
  const q = {};
  for (const k of ['channel', 'os', 'process', 'build_id']) if (filters[k]) q[k] = filters[k];
  return q;
}

export async function render(ctx) {
  const want = ctx.params.get('state') || '';
  const q = alertQuery(ctx.filters);
  const [all, chosen] = await Promise.all([api.get('alerts', q), want ? api.get('alerts', {...q, state: want}) : null]);
  const counts = {firing: 0, pending: 0, resolved: 0};
  for (const x of all.alerts || []) counts[String(x.state || '').toLowerCase()] = (counts[String(x.state || '').toLowerCase()] || 0) + 1;
  const list = [...((chosen || all).alerts || [])];
  list.sort((x, y) => (ORDER[String(x.state).toLowerCase()] ?? 3) - (ORDER[String(y.state).toLowerCase()] ?? 3) ||
    String(alertFields(y).last_seen ?? '').localeCompare(String(alertFields(x).last_seen ?? '')));

  const filter = choices('Show', [['', `All`], ['firing', `Firing (${counts.firing})`],
    ['pending', `Pending (${counts.pending})`], ['resolved', `Resolved (${counts.resolved})`]],
  want, (v) => ctx.href('alerts', {state: v}, {keepLocal: true}));
  let body;
  if (list.length === 0) {
    body = ctx.waiting() ? emptyState(ctx, 'alerts')
      : h('div', {class: 'notice notice-empty', role: 'status', 'data-testid': 'notice-empty'},
        h('p', {class: 'notice-title'}, want ? `No ${want} alerts.` : 'No alerts.'),
        h('p', {class: 'notice-detail'}, 'Alerts appear here by themselves when a new build makes crashes or hangs worse ' +
          'than the builds before it, or a signature bursts. The list updates live.'));
  } else {
    body = h('div', {class: 'alert-list', 'data-testid': 'alert-list'}, list.map((x, i) => alertCard(ctx, x, i)));
  }
  return h('div', {class: 'view view-alerts'},
    section('Alerts', {id: 'alerts', testid: 'alerts', actions: filter,
      subtitle: `${fmt.int(list.length)} shown · live from /api/v1/stream`}, body));
}
