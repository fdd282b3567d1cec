// app.js — the console's views and their wiring: sign-in, the tables, the item browser
// (the table's and every index's single-table view), the Query/Scan form with the pattern
// it is, the patterns panel, the heat of keys and partitions, and capacity and throttling
// over time. Every datum comes from a signed API call (api.js) and enters the page as
// text (render.js). It keeps the keys in this tab's sessionStorage only.

import { Api, ApiError, describeError } from './api.js';
import { describeModel, entityMatcher, guessPattern, countedBetween } from './model.js';
import { el, clear, itemsView, jsonBlock, fmt, when } from './render.js';
import { lineChart, heatMap } from './charts.js';

const api = new Api();
const $ = (id) => document.getElementById(id);

const state = {
  tables: [],
  table: null, // the selected table's name
  desc: null, // its DescribeTable's Table
  model: { loaded: false, reason: 'not read yet', Models: [], Patterns: [], Findings: [], UnusedIndexes: [], UnexercisedPatterns: [] },
  tab: 'table',
  view: null, // the item browser's view: null (the table) or an index name
  browsed: new Map(), // view -> {items, last}
  samples: [], // [{t, values: Map(key -> number)}] from GET /metrics
  heatWindow: 300,
  signedIn: false,
};

// ---- status ----

function setStatus(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

const AUTH_ERRORS = /UnrecognizedClient|InvalidSignature|IncompleteSignature|MissingAuthenticationToken|AccessDenied/;

api.onError((e) => {
  if (e instanceof ApiError && AUTH_ERRORS.test(e.type)) {
    state.signedIn = false;
    setStatus(`${e.type}: ${e.message} — enter an access key this server accepts (its --credentials file)`, true);
  } else if (e instanceof ApiError && e.type === 'NetworkError') {
    setStatus(e.message, true);
  }
});

function showError(container, e) {
  container.appendChild(el('p', { class: 'error' }, describeError(e)));
}

// ---- keys ----

function keysOf(desc, index) {
  const schema = index
    ? ([...(desc.GlobalSecondaryIndexes || []), ...(desc.LocalSecondaryIndexes || [])].find((i) => i.IndexName === index) || {}).KeySchema
    : desc.KeySchema;
  const out = { pk: null, sk: null };
  for (const k of schema || []) {
    if (k.KeyType === 'HASH') out.pk = k.AttributeName;
    if (k.KeyType === 'RANGE') out.sk = k.AttributeName;
  }
  return out;
}

function attrType(desc, name) {
  const d = (desc.AttributeDefinitions || []).find((a) => a.AttributeName === name);
  return d ? d.AttributeType : 'S';
}

function indexesOf(desc) {
  return [
    ...(desc.GlobalSecondaryIndexes || []).map((i) => ({ ...i, kind: 'global' })),
    ...(desc.LocalSecondaryIndexes || []).map((i) => ({ ...i, kind: 'local' })),
  ];
}

// The entity of an item, by the table's key templates. An index's items carry the
// table's keys too, so every view colours them as the table does.
function matcherFor() {
  if (!state.model.loaded) return null;
  const m = entityMatcher(state.model, state.table, keysOf(state.desc, null));
  return m.count ? m : null;
}

// ---- sign-in and tables ----

function restoreKeys() {
  const saved = sessionStorage.getItem('quarry-console-keys');
  if (!saved) return;
  try {
    const k = JSON.parse(saved);
    $('key-id').value = k.id || '';
    $('key-secret').value = k.secret || '';
    $('key-region').value = k.region || 'us-east-1';
  } catch (e) {
    sessionStorage.removeItem('quarry-console-keys');
  }
}

function applyKeys() {
  const id = $('key-id').value.trim(), secret = $('key-secret').value, region = $('key-region').value.trim() || 'us-east-1';
  api.setCredentials(id, secret, region);
  if (id) sessionStorage.setItem('quarry-console-keys', JSON.stringify({ id, secret, region }));
  else sessionStorage.removeItem('quarry-console-keys');
}

async function connect() {
  applyKeys();
  setStatus('connecting…');
  try {
    state.tables = await api.all('ListTables', {}, 'TableNames', 'LastEvaluatedTableName', 'ExclusiveStartTableName');
  } catch (e) {
    if (!(e instanceof ApiError && AUTH_ERRORS.test(e.type))) setStatus(describeError(e), true);
    renderTableList();
    return;
  }
  state.signedIn = true;
  const who = api.creds ? `signed with key ${api.creds.accessKeyId}` : 'signed with a placeholder key (a server without --credentials accepts any)';
  setStatus(`${location.host}: ${state.tables.length} table${state.tables.length === 1 ? '' : 's'}, ${who}`);
  renderTableList();
  await loadModel();
  if (state.tables.length && !state.tables.includes(state.table)) await selectTable(state.tables[0]);
  else if (state.table) await selectTable(state.table);
  else renderTab();
  poll();
}

function renderTableList() {
  const list = clear($('table-list'));
  if (!state.signedIn) {
    list.appendChild(el('li', { class: 'empty' }, 'not signed in'));
    return;
  }
  if (!state.tables.length) list.appendChild(el('li', { class: 'empty' }, 'no tables'));
  for (const name of state.tables)
    list.appendChild(el('li', { class: name === state.table ? 'selected' : '', dataset: { table: name }, onclick: () => selectTable(name) }, name));
}

// Marks the selected table in the list without rebuilding it, so that an entry being
// clicked stays in the document.
function markSelected(name) {
  for (const li of document.querySelectorAll('#table-list li[data-table]')) {
    li.classList.toggle('selected', li.dataset.table === name);
    const shown = li.querySelector('.indexes');
    if (shown) shown.remove();
  }
}

async function loadModel() {
  try {
    state.model = await describeModel(api);
  } catch (e) {
    state.model = { loaded: false, reason: describeError(e), Models: [], Patterns: [], Findings: [], UnusedIndexes: [], UnexercisedPatterns: [] };
  }
  const s = clear($('model-status'));
  if (state.model.loaded)
    s.appendChild(el('span', null, state.model.Models.map((m) => m.File).join(', '),
      el('br'), `${state.model.Patterns.length} patterns, ${state.model.Findings.length} findings`));
  else s.appendChild(el('span', { class: 'note', id: 'no-model' }, 'no model loaded'));
}

async function selectTable(name) {
  state.table = name;
  state.view = null;
  state.browsed = new Map();
  try {
    state.desc = (await api.call('DescribeTable', { TableName: name })).Table;
  } catch (e) {
    state.desc = null;
    setStatus(describeError(e), true);
  }
  markSelected(name);
  const li = document.querySelector(`#table-list li[data-table="${CSS.escape(name)}"]`);
  if (li && state.desc) {
    const ix = indexesOf(state.desc).map((i) => i.IndexName);
    if (ix.length) li.appendChild(el('span', { class: 'indexes' }, ix.join(', ')));
  }
  renderTab();
}

// ---- tabs ----

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
  for (const s of document.querySelectorAll('.tab')) s.classList.toggle('active', s.id === `tab-${tab}`);
  renderTab();
}

function renderTab() {
  const section = $(`tab-${state.tab}`);
  if (!state.desc && state.tab !== 'patterns') {
    clear(section).appendChild(el('p', { class: 'empty' }, state.signedIn ? 'no table selected' : 'not signed in'));
    return;
  }
  const views = { table: renderTable, items: renderItems, query: renderQuery, patterns: renderPatterns, heat: renderHeat, capacity: renderCapacity };
  Promise.resolve(views[state.tab](section)).catch((e) => showError(section, e));
}

// ---- the table ----

function keyText(schema) {
  return (schema || []).map((k) => `${k.AttributeName} (${k.KeyType === 'HASH' ? 'partition' : 'sort'})`).join(', ');
}

function renderTable(section) {
  const d = state.desc;
  clear(section);
  const billing = (d.BillingModeSummary || {}).BillingMode || 'PROVISIONED';
  const pt = d.ProvisionedThroughput || {};
  section.append(
    el('h3', null, d.TableName),
    el('table', { class: 'kv' }, el('tbody', null,
      el('tr', null, el('th', null, 'status'), el('td', null, d.TableStatus || '')),
      el('tr', null, el('th', null, 'keys'), el('td', null, keyText(d.KeySchema))),
      el('tr', null, el('th', null, 'attributes'), el('td', null, (d.AttributeDefinitions || []).map((a) => `${a.AttributeName}: ${a.AttributeType}`).join(', '))),
      el('tr', null, el('th', null, 'billing'), el('td', null, billing === 'PAY_PER_REQUEST' ? 'on demand' : `provisioned: ${pt.ReadCapacityUnits} read, ${pt.WriteCapacityUnits} write units`)),
      el('tr', null, el('th', null, 'items'), el('td', null, fmt(d.ItemCount))),
      el('tr', null, el('th', null, 'size'), el('td', null, `${fmt(d.TableSizeBytes)} bytes`)),
      d.StreamSpecification && d.StreamSpecification.StreamEnabled
        ? el('tr', null, el('th', null, 'stream'), el('td', null, d.StreamSpecification.StreamViewType || '')) : null)));
  const ix = indexesOf(d);
  section.appendChild(el('h3', null, `Indexes (${ix.length})`));
  if (!ix.length) section.appendChild(el('p', { class: 'empty' }, 'no secondary indexes'));
  else
    section.appendChild(el('table', { class: 'indexes' },
      el('thead', null, el('tr', null, ['index', 'kind', 'keys', 'projection', 'status', 'items'].map((h) => el('th', null, h)))),
      el('tbody', null, ix.map((i) => el('tr', null,
        el('td', null, i.IndexName), el('td', null, i.kind), el('td', null, keyText(i.KeySchema)),
        el('td', null, [(i.Projection || {}).ProjectionType || '', ...((i.Projection || {}).NonKeyAttributes || [])].join(' ')),
        el('td', null, i.IndexStatus || 'ACTIVE'), el('td', null, fmt(i.ItemCount)))))));
}

// ---- the item browser ----

async function browse(view, more) {
  const got = state.browsed.get(view) || { items: [], last: null };
  const req = { TableName: state.table, Limit: 100 };
  if (view) req.IndexName = view;
  if (more && got.last) req.ExclusiveStartKey = got.last;
  const r = await api.call('Scan', req);
  const next = { items: more ? [...got.items, ...(r.Items || [])] : r.Items || [], last: r.LastEvaluatedKey || null };
  state.browsed.set(view, next);
  return next;
}

async function renderItems(section) {
  clear(section);
  const views = el('div', { class: 'views' });
  const add = (label, view) => views.appendChild(el('button', {
    type: 'button', class: state.view === view ? 'active' : '', dataset: { view: view || '' },
    onclick: () => { state.view = view; renderItems(section); },
  }, label));
  add(`table ${state.table}`, null);
  for (const i of indexesOf(state.desc)) add(`${i.kind} index ${i.IndexName}`, i.IndexName);
  section.appendChild(views);
  const keys = keysOf(state.desc, state.view);
  section.appendChild(el('p', { class: 'note' },
    state.view ? `index ${state.view}'s view of the items: grouped by ${keys.pk}${keys.sk ? `, ordered by ${keys.sk}` : ''}; items without the index's keys are not in it`
      : `the table's items, grouped by ${keys.pk}${keys.sk ? `, ordered by ${keys.sk}` : ''}`,
    state.model.loaded ? (matcherFor() ? '; coloured by entity' : '; the model gives no key templates to colour entities by') : ''));
  const holder = el('div', { id: 'items-holder' }, el('p', { class: 'empty' }, 'reading…'));
  section.appendChild(holder);
  const got = state.browsed.get(state.view) || (await browse(state.view, false));
  const show = (g) => {
    clear(holder);
    holder.appendChild(itemsView(g.items, keys, matcherFor()));
    const row = el('p', null, `${g.items.length} item${g.items.length === 1 ? '' : 's'} read`);
    if (g.last) row.appendChild(el('button', { type: 'button', id: 'items-more', onclick: async () => show(await browse(state.view, true)) }, 'Read more'));
    row.appendChild(el('button', { type: 'button', id: 'items-refresh', onclick: async () => show(await browse(state.view, false)) }, 'Refresh'));
    holder.appendChild(row);
  };
  show(got);
}

// ---- the Query / Scan form ----

function typed(type, text) {
  if (type === 'N') return { N: text.trim() };
  if (type === 'B') return { B: text.trim() };
  return { S: text };
}

function buildRequest(f) {
  const index = f.index.value || null;
  const keys = keysOf(state.desc, index);
  const req = { TableName: state.table };
  if (index) req.IndexName = index;
  const names = {}, values = {};
  if (f.op.value === 'Query') {
    names['#pk'] = keys.pk;
    values[':pk'] = typed(attrType(state.desc, keys.pk), f.pk.value);
    let cond = '#pk = :pk';
    const op = f.skop.value;
    if (op && keys.sk) {
      names['#sk'] = keys.sk;
      const t = attrType(state.desc, keys.sk);
      values[':sk'] = typed(t, f.sk.value);
      if (op === 'begins_with') cond += ' AND begins_with(#sk, :sk)';
      else if (op === 'between') {
        values[':sk2'] = typed(t, f.sk2.value);
        cond += ' AND #sk BETWEEN :sk AND :sk2';
      } else cond += ` AND #sk ${op} :sk`;
    }
    req.KeyConditionExpression = cond;
    req.ScanIndexForward = f.order.value !== 'desc';
  }
  if (f.filter.value.trim()) {
    req.FilterExpression = f.filter.value.trim();
    if (f.fvalues.value.trim()) Object.assign(values, JSON.parse(f.fvalues.value));
  }
  if (Object.keys(names).length) req.ExpressionAttributeNames = names;
  if (Object.keys(values).length) req.ExpressionAttributeValues = values;
  if (f.limit.value.trim()) req.Limit = Number(f.limit.value);
  if (f.consistent.checked) req.ConsistentRead = true;
  req.ReturnConsumedCapacity = 'INDEXES';
  return req;
}

function renderQuery(section) {
  clear(section);
  const f = {
    op: el('select', { id: 'q-op', name: 'op' }, el('option', { value: 'Query' }, 'Query'), el('option', { value: 'Scan' }, 'Scan')),
    index: el('select', { id: 'q-index', name: 'index' }, el('option', { value: '' }, `table ${state.table}`),
      indexesOf(state.desc).map((i) => el('option', { value: i.IndexName }, `${i.kind} index ${i.IndexName}`))),
    pk: el('input', { id: 'q-pk', name: 'pk', size: 40, spellcheck: false }),
    skop: el('select', { id: 'q-skop', name: 'skop' }, ['', '=', '<', '<=', '>', '>=', 'begins_with', 'between'].map((o) => el('option', { value: o }, o || '(none)'))),
    sk: el('input', { id: 'q-sk', name: 'sk', size: 30, spellcheck: false }),
    sk2: el('input', { id: 'q-sk2', name: 'sk2', size: 20, spellcheck: false, placeholder: 'and (between)' }),
    filter: el('input', { id: 'q-filter', name: 'filter', size: 50, spellcheck: false, placeholder: 'e.g. #s = :s (optional)' }),
    fvalues: el('textarea', { id: 'q-fvalues', name: 'fvalues', spellcheck: false, placeholder: '{":s": {"S": "PENDING"}} (the filter\'s values)' }),
    limit: el('input', { id: 'q-limit', name: 'limit', size: 6, type: 'number', min: 1 }),
    order: el('select', { id: 'q-order', name: 'order' }, el('option', { value: 'asc' }, 'ascending'), el('option', { value: 'desc' }, 'descending')),
    consistent: el('input', { id: 'q-consistent', name: 'consistent', type: 'checkbox' }),
  };
  const pkLabel = el('span'), skLabel = el('span');
  const relabel = () => {
    const k = keysOf(state.desc, f.index.value || null);
    pkLabel.textContent = `${k.pk} (${attrType(state.desc, k.pk)}) =`;
    skLabel.textContent = k.sk ? `${k.sk} (${attrType(state.desc, k.sk)})` : '(no sort key)';
  };
  f.index.addEventListener('change', relabel);
  relabel();
  const out = el('div', { id: 'q-out' });
  const form = el('form', { class: 'query', id: 'query-form' },
    el('label', null, 'operation'), f.op,
    el('label', null, 'read'), f.index,
    el('label', null, pkLabel), f.pk,
    el('label', null, skLabel), el('span', null, f.skop, ' ', f.sk, ' ', f.sk2),
    el('label', null, 'filter'), f.filter,
    el('label', null, 'filter values'), f.fvalues,
    el('label', null, 'limit'), f.limit,
    el('label', null, 'order'), f.order,
    el('label', null, 'strongly consistent'), f.consistent,
    el('span'), el('span', null, el('button', { type: 'submit', id: 'q-run' }, 'Run'), ' ',
      el('button', { type: 'button', id: 'q-next', disabled: true }, 'Next page')));
  let lastReq = null, lastKey = null;
  const run = async (startKey) => {
    clear(out);
    let req;
    try {
      req = startKey ? { ...lastReq, ExclusiveStartKey: startKey } : buildRequest(f);
    } catch (e) {
      out.appendChild(el('p', { class: 'error' }, `the filter values are not JSON: ${e.message}`));
      return;
    }
    lastReq = { ...req };
    delete lastReq.ExclusiveStartKey;
    const op = f.op.value;
    out.appendChild(el('h3', null, 'Request'));
    out.appendChild(jsonBlock(req));
    const guess = guessPattern(state.model, {
      table: state.table, index: req.IndexName || null, op, pk: op === 'Query' ? f.pk.value : '',
      skOp: op === 'Query' ? f.skop.value : '', sk: f.sk.value, limit: req.Limit, consistent: !!req.ConsistentRead,
    });
    const patternBox = el('div', { class: 'pattern', id: 'q-pattern' }, el('strong', null, 'Pattern: '), guess.text);
    out.appendChild(patternBox);
    const before = state.model.loaded ? await describeModel(api, state.table).catch(() => null) : null;
    let r;
    try {
      r = await api.call(op, req);
    } catch (e) {
      out.appendChild(el('p', { class: 'error', id: 'q-error' }, describeError(e)));
      return;
    }
    if (before) {
      const after = await describeModel(api, state.table).catch(() => null);
      if (after) {
        const c = countedBetween(before, after);
        if (c.patterns.length)
          patternBox.appendChild(el('div', { id: 'q-server-pattern' }, `The server counted it as ${c.patterns.join(', ')}.`));
        for (const fd of c.findings) {
          patternBox.classList.add('finding');
          patternBox.appendChild(el('div', { class: 'q-finding' }, el('span', { class: 'kind' }, fd.Kind), fd.Message));
        }
        if (!c.patterns.length && !c.findings.length)
          patternBox.appendChild(el('div', { class: 'note' }, 'The server counted it under no pattern and found nothing.'));
      }
    }
    lastKey = r.LastEvaluatedKey || null;
    $('q-next').disabled = !lastKey;
    const cc = [].concat(r.ConsumedCapacity || []);
    out.appendChild(el('p', { id: 'q-summary' },
      `${r.Count} item${r.Count === 1 ? '' : 's'} returned, ${r.ScannedCount} read`,
      cc.length ? `, ${fmt(cc.reduce((a, c) => a + (c.CapacityUnits || 0), 0), 2)} capacity units` : '',
      lastKey ? '; more to read (Next page)' : ''));
    const keys = keysOf(state.desc, req.IndexName || null);
    out.appendChild(itemsView(r.Items || [], keys, matcherFor(),
      { forward: req.ScanIndexForward !== false, sortGroups: op === 'Scan' }));
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    run(null).catch((e) => showError(out, e));
  });
  f.next = form.querySelector('#q-next');
  f.next.addEventListener('click', () => run(lastKey).catch((e) => showError(out, e)));
  section.append(form, out);
}

// ---- the patterns panel ----

async function renderPatterns(section) {
  clear(section);
  section.appendChild(el('button', { type: 'button', id: 'patterns-refresh', onclick: async () => { await loadModel(); renderPatterns(section); } }, 'Refresh'));
  await loadModel();
  const m = state.model;
  if (!m.loaded) {
    section.appendChild(el('p', { class: 'empty', id: 'patterns-none' }, m.reason));
    return;
  }
  section.appendChild(el('h3', null, 'Models'));
  for (const mod of m.Models)
    section.appendChild(el('div', { class: 'model' }, el('strong', null, mod.File || ''), ` — tables ${(mod.Tables || []).join(', ')}`,
      (mod.Mismatches || []).length ? el('ul', { class: 'error' }, mod.Mismatches.map((x) => el('li', null, x))) : el('span', { class: 'note' }, '; the live tables match')));
  section.appendChild(el('h3', null, `Access patterns: declared against observed (${m.Patterns.length})`));
  const num = (o, k, d) => (o && o[k] !== undefined ? fmt(o[k], d) : '–');
  section.appendChild(el('table', { class: 'patterns', id: 'patterns-table' },
    el('thead', null, el('tr', null, ['pattern', 'table / index', 'entity', 'operation', 'rps declared', 'rps observed', 'requests',
      'latency budget ms', 'p50 ms', 'p99 ms', 'limit', 'consistency', 'items read', 'items returned', 'read units', 'write units'].map((h) => el('th', null, h)))),
    el('tbody', null, m.Patterns.map((p) => {
      const d = p.Declared || {}, o = p.Observed || {};
      const unexercised = m.UnexercisedPatterns.includes(p.Name);
      return el('tr', { class: unexercised ? 'unexercised' : '' },
        el('td', null, p.Name), el('td', null, p.Index ? `${p.Table} / ${p.Index}` : p.Table), el('td', null, p.Entity || ''),
        el('td', null, p.Operation || ''), el('td', null, num(d, 'Rps')), el('td', null, num(o, 'Rps')), el('td', null, num(o, 'Requests')),
        el('td', null, num(d, 'LatencyMs')), el('td', null, num(o, 'P50Ms', 2)), el('td', null, num(o, 'P99Ms', 2)),
        el('td', null, num(d, 'Limit')), el('td', null, d.Consistency || ''), el('td', null, num(o, 'ItemsRead')),
        el('td', null, num(o, 'ItemsReturned')), el('td', null, num(o, 'ReadUnits', 1)), el('td', null, num(o, 'WriteUnits', 1)));
    }))));
  section.appendChild(el('h3', null, `Findings (${m.Findings.length})`));
  if (!m.Findings.length) section.appendChild(el('p', { class: 'empty' }, 'no findings'));
  const list = el('div', { id: 'findings' });
  for (const f of m.Findings)
    list.appendChild(el('div', { class: 'finding-card', dataset: { kind: f.Kind || '' } },
      el('div', null, el('span', { class: 'kind' }, f.Kind), el('span', { class: 'fmessage' }, f.Message)),
      el('div', { class: 'note' }, `table ${f.Table}`, f.Index ? `, index ${f.Index}` : '', f.Pattern ? `, pattern ${f.Pattern}` : '',
        ` — seen ${fmt(f.Count)} time${f.Count === 1 ? '' : 's'}, first ${when(f.FirstSeen)}, last ${when(f.LastSeen)}`),
      f.Sample ? el('details', null, el('summary', null, 'sample request'), jsonBlock(f.Sample, 'json sample')) : null));
  section.appendChild(list);
  section.appendChild(el('h3', null, 'Indexes no traffic used'));
  section.appendChild(m.UnusedIndexes.length ? el('ul', { id: 'unused-indexes' }, m.UnusedIndexes.map((u) => el('li', null, `${u.Table} / ${u.Index}`)))
    : el('p', { class: 'empty' }, 'none'));
  section.appendChild(el('h3', null, 'Patterns no traffic exercised'));
  section.appendChild(m.UnexercisedPatterns.length ? el('ul', { id: 'unexercised' }, m.UnexercisedPatterns.map((n) => el('li', null, n)))
    : el('p', { class: 'empty' }, 'none'));
}

// ---- the heat of keys ----

const RULES = [
  ['-PKC-', 'most accessed partition keys'],
  ['-SKC-', 'most accessed keys (partition and sort)'],
  ['-PKT-', 'most throttled partition keys'],
  ['-SKT-', 'most throttled keys (partition and sort)'],
];

function latest(name, labels) {
  const s = state.samples[state.samples.length - 1];
  return s ? s.values.get(metricKey(name, labels)) : undefined;
}

async function heatTarget(index) {
  const box = el('div', { class: 'heat-target', dataset: { target: index || '' } });
  const req = { TableName: state.table };
  if (index) req.IndexName = index;
  const d = await api.call('DescribeContributorInsights', req);
  const on = d.ContributorInsightsStatus === 'ENABLED' || d.ContributorInsightsStatus === 'ENABLING';
  const parts = latest('quarry_partitions', index ? { table: state.table, index } : { table: state.table });
  box.appendChild(el('h3', null, index ? `index ${index}` : `table ${state.table}`,
    el('span', { class: 'note' }, ` — contributor insights ${d.ContributorInsightsStatus || 'DISABLED'}`,
      d.ContributorInsightsMode ? ` (${d.ContributorInsightsMode})` : '', parts !== undefined ? `, ${parts} partition${parts === 1 ? '' : 's'}` : '')));
  box.appendChild(el('button', {
    type: 'button', class: 'insights-toggle', onclick: async () => {
      await api.call('UpdateContributorInsights', { ...req, ContributorInsightsAction: on ? 'DISABLE' : 'ENABLE' });
      renderHeat($('tab-heat'));
    },
  }, on ? 'Disable contributor insights' : 'Enable contributor insights'));
  if (!on) {
    box.appendChild(el('p', { class: 'note' }, 'Enable contributor insights to count the hottest keys (as DynamoDB does; quarry keeps the counts in memory).'));
    return box;
  }
  const period = Math.max(5, Math.round(state.heatWindow / 30));
  for (const rule of d.ContributorInsightsRuleList || []) {
    const kind = RULES.find(([k]) => rule.includes(k));
    const r = await api.call('GetInsightRuleReport', { RuleName: rule, QuarryLastSeconds: state.heatWindow, Period: period, MaxContributorCount: 10 });
    const contributors = r.Contributors || [];
    const throttled = kind && kind[0].endsWith('T-');
    if (throttled && !contributors.length) {
      box.appendChild(el('p', { class: 'note' }, `${kind[1]}: none in the last ${state.heatWindow} s`));
      continue;
    }
    const start = Number(r.QuarryStartTime), end = Number(r.QuarryEndTime);
    const ncol = Math.max(1, Math.ceil((end - start) / period));
    const columns = Array.from({ length: ncol }, (_, i) => start + i * period);
    const rows = contributors.map((c) => {
      const values = new Array(ncol).fill(0);
      for (const p of c.Datapoints || []) {
        const i = Math.floor((Number(p.Timestamp) - start) / period);
        if (i >= 0 && i < ncol) values[i] += Number(p.ApproximateValue) || 0;
      }
      return { label: (c.Keys || []).join(' | '), values };
    });
    const title = `${kind ? kind[1] : rule} (${(r.KeyLabels || []).join(', ')})`;
    box.appendChild(rows.length ? heatMap(title, rows, columns) : el('p', { class: 'empty' }, `${title}: no accesses in the last ${state.heatWindow} s`));
    if (!rows.length) continue;
    const total = Number(r.AggregateValue) || 0;
    const span = Math.max(1, end - start);
    const ceil = r.QuarryPartitionCeiling || { ReadUnitsPerSecond: 3000, WriteUnitsPerSecond: 1000 };
    box.appendChild(el('table', { class: 'topkeys' },
      el('thead', null, el('tr', null, ['key', 'accesses', 'share', 'read units/s', 'write units/s', 'of a partition\'s ceiling'].map((h) => el('th', null, h)))),
      el('tbody', null, contributors.map((c) => {
        const v = Number(c.ApproximateAggregateValue) || 0;
        const rcu = (Number(c.QuarryReadUnits) || 0) / span, wcu = (Number(c.QuarryWriteUnits) || 0) / span;
        const of = 100 * Math.max(rcu / ceil.ReadUnitsPerSecond, wcu / ceil.WriteUnitsPerSecond);
        return el('tr', { class: 'topkey' }, el('td', { class: 'value' }, (c.Keys || []).join(' | ')), el('td', null, fmt(v, 0)),
          el('td', null, total ? `${(100 * v / total).toFixed(1)}%` : '–'), el('td', null, rcu.toFixed(2)), el('td', null, wcu.toFixed(2)),
          el('td', null, `${of.toFixed(2)}%`));
      }))));
  }
  return box;
}

async function renderHeat(section) {
  const windowSel = el('select', { id: 'heat-window', onchange: (e) => { state.heatWindow = Number(e.target.value); renderHeat(section); } },
    [60, 300, 900].map((s) => el('option', { value: s, selected: s === state.heatWindow }, `last ${s / 60} min`)));
  const holder = el('div', { id: 'heat-holder' }, el('p', { class: 'empty' }, 'reading…'));
  clear(section).append(el('p', null, 'The hottest keys by contributor insights, per period; ', windowSel, ' ',
    el('button', { type: 'button', id: 'heat-refresh', onclick: () => renderHeat(section) }, 'Refresh')), holder);
  if (!state.samples.length) await sample();
  const boxes = [];
  for (const ix of [null, ...indexesOf(state.desc).filter((i) => i.kind === 'global').map((i) => i.IndexName)])
    boxes.push(await heatTarget(ix));
  clear(holder).append(...boxes);
}

// ---- capacity and throttling over time ----

function metricKey(name, labels) {
  return name + JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
}

const SUMMED = new Set(['quarry_read_throttle_events_total', 'quarry_write_throttle_events_total']);
const KEPT = new Set(['quarry_consumed_read_capacity_units_total', 'quarry_consumed_write_capacity_units_total',
  'quarry_provisioned_read_capacity_units', 'quarry_provisioned_write_capacity_units', 'quarry_partitions', ...SUMMED]);
const MAX_SAMPLES = 300;

async function sample() {
  const all = await api.metrics();
  const values = new Map();
  for (const s of all) {
    if (!KEPT.has(s.name)) continue;
    const labels = { ...s.labels };
    delete labels.reason; // throttle events: every reason together
    const k = metricKey(s.name, labels);
    values.set(k, (SUMMED.has(s.name) ? values.get(k) || 0 : 0) + s.value);
  }
  state.samples.push({ t: Date.now() / 1000, values });
  if (state.samples.length > MAX_SAMPLES) state.samples.shift();
}

// Per second between samples of a counter.
function rate(name, labels) {
  const k = metricKey(name, labels);
  const pts = [];
  for (let i = 1; i < state.samples.length; i++) {
    const a = state.samples[i - 1], b = state.samples[i];
    const va = a.values.get(k), vb = b.values.get(k);
    if (va === undefined || vb === undefined || b.t <= a.t) continue;
    pts.push([b.t, Math.max(0, (vb - va) / (b.t - a.t))]);
  }
  return pts;
}

function gauge(name, labels) {
  const k = metricKey(name, labels);
  return state.samples.filter((s) => s.values.has(k)).map((s) => [s.t, s.values.get(k)]);
}

function renderCapacity(section) {
  clear(section);
  const targets = [{ name: `table ${state.table}`, labels: { table: state.table } },
    ...indexesOf(state.desc).filter((i) => i.kind === 'global').map((i) => ({ name: `index ${i.IndexName}`, labels: { table: state.table, index: i.IndexName } }))];
  section.appendChild(el('p', { class: 'note' }, `GET /metrics, read every ${POLL_MS / 1000} s while the console is open (${state.samples.length} samples): rates between samples.`));
  const charts = el('div', { class: 'charts', id: 'capacity-charts' });
  for (const [w, word] of [['read', 'Read'], ['write', 'Write']]) {
    const series = targets.map((t) => ({ name: t.name, points: rate(`quarry_consumed_${w}_capacity_units_total`, t.labels) }));
    const prov = gauge(`quarry_provisioned_${w}_capacity_units`, { table: state.table });
    if (prov.some((p) => p[1] > 0)) series.push({ name: 'provisioned', points: prov, dashed: true });
    charts.appendChild(lineChart(`${word} capacity units consumed per second`, 'units/s', series));
  }
  const throttles = [];
  for (const t of targets)
    for (const w of ['read', 'write'])
      throttles.push({ name: `${t.name} ${w}s`, points: rate(`quarry_${w}_throttle_events_total`, t.labels) });
  charts.appendChild(lineChart('Throttle events per second', 'events/s', throttles));
  section.appendChild(charts);
  const totals = el('table', { class: 'totals' }, el('thead', null, el('tr', null,
    ['', 'read units consumed', 'write units consumed', 'read throttle events', 'write throttle events', 'partitions'].map((h) => el('th', null, h)))),
  el('tbody', null, targets.map((t) => el('tr', null, el('td', null, t.name),
    ['quarry_consumed_read_capacity_units_total', 'quarry_consumed_write_capacity_units_total', 'quarry_read_throttle_events_total',
      'quarry_write_throttle_events_total', 'quarry_partitions'].map((n) => el('td', null, fmt(latest(n, t.labels), 1)))))));
  section.appendChild(totals);
}

// ---- polling ----

const POLL_MS = 2000;
let pollTimer = null;

function poll() {
  if (pollTimer) return;
  const tick = async () => {
    if (state.signedIn && !document.hidden) {
      try {
        await sample();
        if (state.tab === 'capacity' && state.desc) renderCapacity($('tab-capacity'));
      } catch (e) {
        void e; // an authentication failure is shown by the status line
      }
    }
    pollTimer = setTimeout(tick, POLL_MS);
  };
  tick();
}

// ---- start ----

document.addEventListener('DOMContentLoaded', () => {
  restoreKeys();
  $('signin').addEventListener('submit', (ev) => {
    ev.preventDefault();
    connect();
  });
  $('signout-button').addEventListener('click', () => {
    $('key-id').value = '';
    $('key-secret').value = '';
    connect();
  });
  $('refresh-tables').addEventListener('click', () => connect());
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  connect();
});
