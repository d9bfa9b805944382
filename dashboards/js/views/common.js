// Pieces shared by the views.

import {h, notice} from '../dom.js';

// The state shown when a list is empty: "waiting for data…" while seismo has
// seen no documents yet, otherwise "nothing matches".
export function emptyState(ctx, what) {
  if (ctx.waiting()) {
    return notice('waiting', 'Waiting for data…',
      'seismo has not aggregated any documents yet. This page updates by itself as data arrives.');
  }
  return notice('empty', `No ${what} in this selection.`,
    'Try a longer window or fewer filters (Clear filters, above).');
}

// A section with a heading and optional actions at the right of the heading.
export function section(title, {id, actions, testid, subtitle} = {}, ...body) {
  const hid = id ? id + '-title' : undefined;
  return h('section', {class: 'panel', id, 'aria-labelledby': hid, 'data-testid': testid},
    h('div', {class: 'panel-head'},
      h('h2', {id: hid}, title),
      subtitle ? h('span', {class: 'panel-sub'}, subtitle) : null,
      actions ? h('div', {class: 'panel-actions'}, actions) : null),
    body);
}

// Link to the crash signature page, keeping the global filters.
export function signatureLink(ctx, sig) {
  return h('a', {class: 'sig', href: ctx.href('crashes/signature', {signature: sig})}, sig);
}

// A state badge: firing, pending, resolved.
export function stateBadge(state) {
  const s = String(state || 'unknown').toLowerCase();
  return h('span', {class: 'state state-' + s}, s);
}

// A small "key: value" list.
export function facts(pairs, testid) {
  return h('dl', {class: 'facts', 'data-testid': testid},
    pairs.filter(Boolean).map(([k, v, attrs]) => h('div', attrs || {}, h('dt', {}, k), h('dd', {}, v))));
}

// A segmented control of links (role radio-like, plain links so the choice lives in the URL).
export function choices(label, options, current, hrefOf) {
  return h('div', {class: 'choices', role: 'group', 'aria-label': label},
    h('span', {class: 'choices-label'}, label),
    options.map(([value, text]) => h('a', {href: hrefOf(value), class: 'choice',
      'aria-current': value === current ? 'true' : null}, text)));
}

// Ratio against a baseline with a colour class: worse (≥ 1.5×), better (≤ 0.67×).
export function ratioClass(r) {
  if (r === null || r === undefined || !Number.isFinite(r)) return '';
  return r >= 1.5 ? 'worse' : r <= 0.67 ? 'better' : '';
}

// Release markers for a trend chart: each build's first ping (/builds `first_seen`), labelled
// with its channel and version.
export function releaseMarkers(builds) {
  return (builds || []).filter((b) => b.first_seen)
    .map((b) => ({t: Date.parse(b.first_seen), label: `${b.channel} ${b.version || b.build_id}`}))
    .sort((a, b) => a.t - b.t);
}

// The builds whose first pings mark a view's trend charts: those of the filters' channel and
// build, over the whole retention.
export function markerBuilds(api, filters) {
  return api.get('builds', {channel: filters.channel, build_id: filters.build_id, window: 'all', limit: 200})
    .then((b) => (Array.isArray(b.builds) ? b.builds : []));
}

