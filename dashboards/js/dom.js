// Tiny DOM helpers. Every string from the API goes through text nodes or
// attribute setters, never innerHTML, so a signature such as
// "operator<<" or "<script>" renders as text.

// h('a', {href: '#', class: 'x', onclick: fn}, 'text', child, [more, children])
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object') {
      for (const [prop, val] of Object.entries(v)) el.style.setProperty(prop.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), val);
    }
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// SVG element shorthand: s('rect', {x: 0, ...}).
export function s(tag, attrs, ...children) {
  return h('svg:' + tag, attrs, ...children);
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// Replaces the children of `el` with `children` in one step.
export function mount(el, ...children) {
  const frag = document.createDocumentFragment();
  append(frag, children);
  el.replaceChildren(frag);
}

// A table with a caption (visually hidden when `hideCaption`), column headers
// (<th scope="col">) and rows built by the caller. `columns` items:
// {label, num: right-aligned numeric column, title}.
export function table({caption, hideCaption = false, columns, rows, className = '', testid}) {
  return h('table', {class: 'data ' + className, 'data-testid': testid},
    h('caption', {class: hideCaption ? 'visually-hidden' : ''}, caption),
    h('thead', {}, h('tr', {}, columns.map((c) =>
      h('th', {scope: 'col', class: c.num ? 'num' : '', title: c.title}, c.label)))),
    h('tbody', {}, rows));
}

// A notice panel for empty, loading and error states.
export function notice(kind, title, detail) {
  return h('div', {class: 'notice notice-' + kind, role: kind === 'error' ? 'alert' : 'status',
    'data-testid': 'notice-' + kind},
    h('p', {class: 'notice-title'}, title),
    detail ? h('p', {class: 'notice-detail'}, detail) : null);
}

// A one-line note above a view: a filter that was adjusted or a number's definition.
export function note(text, testid) {
  return h('p', {class: 'note', role: 'note', 'data-testid': testid}, text);
}
