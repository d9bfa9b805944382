// The differential flame graph of the Hangs view (issue 20, ADR 0030): a build date's
// hang stacks against its baseline build dates' at equal age, from
// /api/v1/hangs/flamegraph/diff. Width is hang ms per usage hour of one side (this build
// by default, or its baselines, to see the paths it no longer takes); colour is the
// change: red where the build hangs more per usage hour than its baselines, blue where
// less, white where the same.

import {h, note} from '../dom.js';
import * as api from '../api.js';
import * as fmt from '../format.js';
import {flameGraph} from '../charts.js';
import {choices, facts} from './common.js';

// The request of a Hangs selection: the diff is over every OS and at equal age, so the
// window and OS filters do not apply.
export function diffQuery(sel) {
  return {channel: sel.channel, build_date: sel.build_date, source: sel.source, process: sel.process,
    thread: sel.thread, signature: sel.signature};
}

export function fetchDiff(sel) {
  if (!sel.channel) return Promise.resolve(null);
  return api.get('hangs/flamegraph/diff', diffQuery(sel)).then((d) => ({...d, query_date: sel.build_date}));
}

// The largest change of any node, for the colour scale.
function maxChange(tree) {
  let max = 0;
  const walk = (n) => {
    if (n.name !== '(root)' && Number.isFinite(n.delta_ms_per_hour)) max = Math.max(max, Math.abs(n.delta_ms_per_hour));
    for (const c of n.children || []) walk(c);
  };
  walk(tree);
  return max;
}

// Red for more, blue for less, lighter as the change is smaller.
export function deltaColor(delta, max) {
  if (!Number.isFinite(delta) || max <= 0) return 'hsl(220 10% 85%)';
  const t = Math.min(1, Math.abs(delta) / max);
  const light = 96 - 40 * t;
  return delta >= 0 ? `hsl(4 78% ${light}%)` : `hsl(214 78% ${light}%)`;
}

function signed(x) {
  if (!Number.isFinite(x)) return '—';
  return (x > 0 ? '+' : x < 0 ? '−' : '±') + fmt.num(Math.abs(x));
}

function describe(n) {
  return `${n.name} — ${fmt.num(n.hang_ms_per_hour)} ms per usage hour in this build, ` +
    `${fmt.num(n.baseline_hang_ms_per_hour)} in its baselines (${signed(n.delta_ms_per_hour)})`;
}

// The section's body for the diff answer `d` (null: no channel chosen).
export function diffBody(ctx, d) {
  if (!d) {
    return note('Choose a channel in the filters above: a build date is compared with the build dates just ' +
      'before it on its channel.', 'flame-diff-channel');
  }
  if (!d.tree) {
    const why = d.build_date === null ? (d.query_date ? `${d.channel} has no hang usage of build date ${d.query_date}`
      : `${d.channel} has no hang usage yet`)
      : d.source === null ? `build date ${d.build_date} has no usage of that source`
        : `build date ${d.build_date} of ${d.channel} has too few earlier build dates with enough usage to compare with`;
    return note(`No differential flame graph: ${why}.`, 'flame-diff-none');
  }
  const side = ctx.params.get('flame_width') === 'baseline' ? 'baseline' : 'build';
  const max = maxChange(d.tree);
  // Nothing of the build to draw (no hang in the selection yet): its baselines' paths are
  // what it no longer takes, one click away.
  const empty = side === 'build' && !(d.tree.hang_ms_per_hour > 0);
  const width = choices('Width', [['', 'This build'], ['baseline', 'Baselines']], side === 'baseline' ? 'baseline' : '',
    (v) => ctx.href('hangs', {flame_width: v}, {keepLocal: true}));
  return [
    facts([
      ['Build date', fmt.buildId(d.build_date), {'data-testid': 'diff-build-date'}],
      ['Baselines', (d.baseline_build_dates || []).map(fmt.buildId).join(', '), {'data-testid': 'diff-baselines'}],
      ['Age', `${fmt.int(d.age_hours)} h`],
      ['Pings', d.source, {'data-testid': 'diff-source'}],
      ['Hang ms / usage h', `${fmt.num(d.build.hang_ms_per_hour)} vs ${fmt.num(d.baseline.hang_ms_per_hour)}`,
        {'data-testid': 'diff-rates'}],
    ]),
    h('div', {class: 'flame-legend', 'data-testid': 'flame-diff-legend'}, width,
      h('span', {class: 'swatch', style: {background: deltaColor(max, max)}}), ` more (up to ${signed(max)} ms/h)`,
      h('span', {class: 'swatch', style: {background: deltaColor(0, max)}}), ' same',
      h('span', {class: 'swatch', style: {background: deltaColor(-max, max)}}), ' less than the baselines, per usage hour'),
    empty ? note('This build date has no hangs in this selection yet: "Width: Baselines" draws its ' +
      'baselines\' stacks, coloured by what it no longer hangs in.', 'flame-diff-empty') : flameGraph(d.tree, {
      key: `diff:${JSON.stringify(diffQuery(d))}:${side}`, testid: 'flamegraph-diff', unit: 'ms/h', invertible: false,
      value: (n) => (side === 'baseline' ? n.baseline_hang_ms_per_hour : n.hang_ms_per_hour),
      fill: (n) => deltaColor(n.delta_ms_per_hour, max), describe,
    }),
  ];
}
