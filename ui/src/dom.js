// DOM building blocks: elements built from tag, attributes and children, always writing text through
// textContent (names and messages come from users and are never parsed as HTML), plus the
// number and time formats every table shares.

// h('td', { class: 'num', dataset: { share: '0.75' } }, '75 %', child...)
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = value;
    else if (key === 'checked' || key === 'disabled' || key === 'hidden' || key === 'selected') el[key] = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A table: columns [{ label, num? }], rows of cells (a cell is a Node, a string, or
// { value, num?, attrs? }).
export function table(columns, rows, { empty = 'Nothing here yet.', attrs = {} } = {}) {
  const head = h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.num ? 'num' : null, scope: 'col' }, c.label))));
  const body = h('tbody');
  for (const row of rows) {
    const tr = row instanceof Node ? row : h('tr', {}, row.map((cell, i) => td(cell, columns[i])));
    body.append(tr);
  }
  if (rows.length === 0) {
    body.append(h('tr', { class: 'empty-row' }, h('td', { colspan: String(columns.length), class: 'empty' }, empty)));
  }
  return h('table', { class: 'grid', ...attrs }, head, body);
}

export function td(cell, column = {}) {
  if (cell instanceof Node) return h('td', { class: column.num ? 'num' : null }, cell);
  if (cell && typeof cell === 'object') {
    return h('td', { class: cell.num ?? column.num ? 'num' : null, ...(cell.attrs ?? {}) }, cell.value ?? '');
  }
  return h('td', { class: column.num ? 'num' : null }, cell ?? '');
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind}`.trim() }, text);
}

export function emptyState(title, detail = '') {
  return h('div', { class: 'empty-state' }, h('strong', {}, title), detail ? h('p', {}, detail) : null);
}

export function section(title, ...children) {
  return h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...children);
}

// Numbers: fixed decimals without trailing noise; '—' for null.
export function num(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (!Number.isFinite(value)) return String(value);
  const fixed = Number(value).toFixed(digits);
  return digits > 0 ? fixed.replace(/\.?0+$/, '') : fixed;
}

export function int(value) {
  if (value === null || value === undefined) return '—';
  return Math.round(value).toLocaleString('en-US');
}

export function percent(share, digits = 1) {
  if (share === null || share === undefined) return '—';
  return `${num(share * 100, digits)} %`;
}

export function ago(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 1) return 'just now';
  if (seconds < 90) return `${num(seconds, 1)} s ago`;
  if (seconds < 5400) return `${num(seconds / 60, 0)} min ago`;
  return `${num(seconds / 3600, 1)} h ago`;
}

export function timestamp(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
