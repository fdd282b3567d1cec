// render.js — the console's DOM building and its item views. Every value from the
// server enters the page as a text node or a property (el() below): no HTML is ever
// parsed from data, so an item holding "<script>" shows those characters. Items are shown
// as the single-table view: grouped by their partition key, ordered by their sort key in
// DynamoDB's order, coloured by entity when the model names one. It fetches nothing.

// An element: attrs are properties (class, title, ...) or on* listeners; children are
// nodes, strings (text) or arrays of them; null and false are skipped.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, String(v));
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else if (c instanceof Node) e.appendChild(c);
    else e.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
  return e;
}

// ---- AttributeValues ----

// An AttributeValue as plain data (for JSON) and its type letter.
function plain(av) {
  const [t, v] = Object.entries(av || {})[0] || ['NULL', true];
  switch (t) {
    case 'S': case 'N': case 'B': return v;
    case 'BOOL': return !!v;
    case 'NULL': return null;
    case 'SS': case 'NS': case 'BS': return [...v];
    case 'L': return v.map(plain);
    case 'M': return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
    default: return v;
  }
}

export function typeOf(av) {
  return Object.keys(av || {})[0] || '?';
}

// The text an AttributeValue shows as: a string as it is, a number's digits, binary as
// its base64, a set or document as JSON.
export function valueText(av) {
  const t = typeOf(av);
  if (t === 'S' || t === 'N' || t === 'B') return String(av[t]);
  if (t === 'BOOL') return av.BOOL ? 'true' : 'false';
  if (t === 'NULL') return 'null';
  return JSON.stringify(plain(av));
}

const MAX_SHOWN = 160;

// A value's cell: its text (cut, the whole in its title) and its type.
export function valueNode(av) {
  const text = valueText(av);
  const shown = text.length > MAX_SHOWN ? text.slice(0, MAX_SHOWN) + '…' : text;
  return el('span', { class: 'value', title: text.length > MAX_SHOWN ? text : null },
    el('span', { class: 'vtype' }, typeOf(av)), el('span', { class: 'vtext' }, shown));
}

// ---- DynamoDB's key order ----

const enc = new TextEncoder();

function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function b64(s) {
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch (e) {
    return enc.encode(s);
  }
}

// Two decimal numbers' texts (DynamoDB's N: up to 38 digits, exponents allowed).
export function compareNumbers(x, y) {
  const parse = (s) => {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(String(s).trim());
    if (!m) return { neg: false, digits: '', exp: 0 };
    let digits = (m[2] || '') + (m[3] || '');
    let exp = (m[2] || '').length + Number(m[4] || 0);
    const lead = digits.match(/^0*/)[0].length;
    digits = digits.slice(lead);
    exp -= lead;
    digits = digits.replace(/0+$/, '');
    return { neg: m[1] === '-' && digits !== '', digits, exp };
  };
  // Each is 0.DIGITS x 10^exp, DIGITS without leading or trailing zeros: a larger
  // exponent is a larger magnitude, and at one exponent the digits compare as text.
  const a = parse(x), b = parse(y);
  const sign = (n) => (n.digits === '' ? 0 : n.neg ? -1 : 1);
  if (sign(a) !== sign(b)) return sign(a) - sign(b);
  if (sign(a) === 0) return 0;
  let c = a.exp - b.exp;
  if (c === 0) c = a.digits < b.digits ? -1 : a.digits > b.digits ? 1 : 0;
  return sign(a) < 0 ? -c : c;
}

// Two key AttributeValues in DynamoDB's order: numbers by value, strings by their UTF-8
// bytes, binary by its bytes.
export function compareKeys(a, b) {
  const ta = typeOf(a), tb = typeOf(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta === 'N') return compareNumbers(a.N, b.N);
  if (ta === 'S') return compareBytes(enc.encode(a.S), enc.encode(b.S));
  if (ta === 'B') return compareBytes(b64(a.B), b64(b.B));
  return 0;
}

// ---- the single-table view ----

// Items grouped by keys.pk, each group ordered by keys.sk (forward unless told), the
// groups in the order of their partition key values.
export function groupItems(items, keys, { forward = true, sortGroups = true } = {}) {
  const groups = new Map();
  for (const it of items) {
    const pk = it[keys.pk];
    const id = pk ? typeOf(pk) + ':' + valueText(pk) : '';
    if (!groups.has(id)) groups.set(id, { pk, items: [] });
    groups.get(id).items.push(it);
  }
  const out = [...groups.values()];
  if (keys.sk)
    for (const g of out)
      g.items.sort((x, y) => (x[keys.sk] && y[keys.sk] ? compareKeys(x[keys.sk], y[keys.sk]) : 0) * (forward ? 1 : -1));
  if (sortGroups) out.sort((x, y) => (x.pk && y.pk ? compareKeys(x.pk, y.pk) : 0));
  return out;
}

export const PALETTE_SIZE = 10;

// The table of items for keys {pk, sk} (the table's or an index's), with entity
// colours from matcher ({match, colours}) when the model gives them.
export function itemsView(items, keys, matcher, opts = {}) {
  const groups = groupItems(items, keys, opts);
  const legend = el('div', { class: 'legend' });
  const seen = new Map();
  const body = el('tbody');
  for (const g of groups) {
    body.appendChild(el('tr', { class: 'group' },
      el('td', { colSpan: 3 },
        el('span', { class: 'keyname' }, keys.pk), ' = ', g.pk ? valueNode(g.pk) : '(none)',
        el('span', { class: 'count' }, ` ${g.items.length} item${g.items.length === 1 ? '' : 's'}`))));
    for (const it of g.items) {
      const entity = matcher && matcher.match ? matcher.match(it) : null;
      const slot = entity !== null && matcher.colours.has(entity) ? matcher.colours.get(entity) % PALETTE_SIZE : null;
      if (entity !== null) seen.set(entity, slot);
      const attrs = Object.keys(it).filter((n) => n !== keys.pk && n !== keys.sk).sort();
      body.appendChild(el('tr', { class: 'item' + (slot !== null ? ` entity entity-${slot}` : ''), dataset: { entity: entity || '' } },
        el('td', { class: 'skcell' }, keys.sk ? (it[keys.sk] ? valueNode(it[keys.sk]) : '(none)') : ''),
        el('td', { class: 'entcell' }, entity || ''),
        el('td', { class: 'attrs' }, attrs.map((n) => el('span', { class: 'attr' },
          el('span', { class: 'aname' }, n), valueNode(it[n]))))));
    }
  }
  for (const [name, slot] of seen) legend.appendChild(el('span', { class: `swatch entity-${slot}` }, name));
  const table = el('table', { class: 'items' },
    el('thead', null, el('tr', null,
      el('th', null, keys.sk ? `${keys.sk} (sort key)` : ''), el('th', null, 'entity'), el('th', null, 'attributes'))),
    body);
  return el('div', { class: 'itemsview' }, seen.size ? legend : null, table,
    items.length ? null : el('p', { class: 'empty' }, 'no items'));
}

// A JSON document as indented text in a <pre>.
export function jsonBlock(doc, cls = 'json') {
  return el('pre', { class: cls }, JSON.stringify(doc, null, 2));
}

export function fmt(n, digits = 1) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return '–';
  const v = Number(n);
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

export function when(epoch) {
  if (!epoch) return '–';
  return new Date(Number(epoch) * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
