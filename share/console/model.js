// model.js — what the console knows of the model the server runs with: the answer of
// QuarryDescribeModel (Models, Patterns, Findings, UnusedIndexes, UnexercisedPatterns),
// read as the contract between the server and the console fixes it; which entity an item
// is (by the entities' key templates); which declared pattern a query is, guessed from
// its key condition before it runs and read from the server's own counts after. A server
// without the operation, or without a model, is "no model loaded". It draws nothing.

import { ApiError } from './api.js';

const EMPTY = { Models: [], Patterns: [], Findings: [], UnusedIndexes: [], UnexercisedPatterns: [] };

// The server's model, or {loaded: false, reason} when it has none or cannot say.
export async function describeModel(api, table) {
  let doc;
  try {
    doc = await api.call('QuarryDescribeModel', table ? { TableName: table } : {});
  } catch (e) {
    if (e instanceof ApiError && /UnknownOperation/.test(e.type))
      return { ...EMPTY, loaded: false, reason: 'this server has no QuarryDescribeModel operation: no model loaded' };
    throw e;
  }
  const m = { loaded: false, reason: '' };
  for (const k of Object.keys(EMPTY)) m[k] = Array.isArray(doc[k]) ? doc[k] : [];
  m.loaded = m.Models.length > 0;
  if (!m.loaded) m.reason = 'no model loaded: start the server with quarry serve --model FILE';
  return m;
}

// ---- entities by key template ----

// The entities the model describes with their key templates. The contract names each
// pattern's entity; the templates come with a model entry's Entities, each
// {Name, Table, PartitionKey, SortKey, Indexes: {name: {PartitionKey, SortKey}}}.
export function entities(model) {
  const out = [];
  const seen = new Set();
  const add = (e, table) => {
    if (!e || typeof e.Name !== 'string') return;
    const t = e.Table || table;
    const id = `${t}\u0000${e.Name}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ name: e.Name, table: t, pk: e.PartitionKey, sk: e.SortKey, indexes: e.Indexes || {} });
  };
  for (const m of model.Models || [])
    for (const e of Array.isArray(m.Entities) ? m.Entities : [])
      add(e, (m.Tables || [])[0]);
  return out;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// A key template ("ORDER#{orderId}#ITEM#{line}") as two regular expressions: strict,
// where a placeholder holds no '#' when the template separates its parts with '#', and
// loose, where it holds anything.
export function compileTemplate(t) {
  if (typeof t !== 'string') return null;
  const parts = t.split(/\{[^}]*\}/);
  const literal = parts.join('');
  const strictVar = literal.includes('#') ? '([^#]+)' : '(.+?)';
  const build = (v) => new RegExp('^' + parts.map(escapeRe).join(v) + '$', 's');
  return { strict: build(strictVar), loose: build('(.+?)'), literal: literal.length, head: parts[0] };
}

// The text of a key value as a template sees it.
function keyText(av) {
  if (!av) return null;
  if ('S' in av) return av.S;
  if ('N' in av) return av.N;
  if ('B' in av) return av.B;
  return null;
}

// A function item -> entity name (or null), for table's items as index (or the table,
// when index is null) holds them; colours: entity name -> palette slot.
export function entityMatcher(model, table, keys) {
  const mine = entities(model).filter((e) => e.table === table);
  const compiled = mine.map((e) => ({
    name: e.name,
    pk: compileTemplate(e.pk),
    sk: compileTemplate(e.sk),
  }));
  const colours = new Map(mine.map((e, i) => [e.name, i]));
  const match = (item) => {
    if (!compiled.length || !item) return null;
    const pkv = keyText(item[keys.pk]);
    const skv = keys.sk ? keyText(item[keys.sk]) : null;
    if (pkv === null) return null;
    for (const mode of ['strict', 'loose']) {
      let best = null;
      for (const c of compiled) {
        if (!c.pk || !c.pk[mode].test(pkv)) continue;
        if (keys.sk) {
          if (!c.sk || skv === null || !c.sk[mode].test(skv)) continue;
        } else if (c.sk) continue;
        const score = c.pk.literal + (c.sk ? c.sk.literal : 0);
        if (!best || score > best.score) best = { name: c.name, score };
      }
      if (best) return best.name;
    }
    return null;
  };
  return { match, colours, count: mine.length };
}

// ---- which pattern a query is ----

// The declared patterns a request could be, from its table, index, operation and key
// condition (q: {table, index, op, pk, skOp, sk, limit, consistent}): {text, names}.
export function guessPattern(model, q) {
  if (!model.loaded) return { text: model.reason, names: [] };
  if (q.op === 'Scan')
    return { text: 'a Scan: no declared access pattern is one, so the server counts it as a finding', names: [] };
  let cands = model.Patterns.filter((p) => p.Table === q.table && (p.Index || null) === (q.index || null)
    && (p.Operation || 'Query') === q.op);
  if (!cands.length) {
    const where = q.index ? `index ${q.index} of ${q.table}` : `table ${q.table}`;
    return { text: `no declared pattern is a ${q.op} of ${where}: an undeclared pattern`, names: [] };
  }
  const ents = entities(model).filter((e) => e.table === q.table);
  if (ents.length && q.pk !== '') {
    const keyOf = (e) => (q.index ? e.indexes[q.index] || {} : { PartitionKey: e.pk, SortKey: e.sk });
    const fits = ents.filter((e) => {
      const k = keyOf(e);
      const pk = compileTemplate(k.PartitionKey);
      if (!pk || !pk.loose.test(q.pk)) return false;
      if (!q.skOp || q.sk === '') return true;
      const sk = compileTemplate(k.SortKey);
      if (!sk) return false;
      if (q.skOp === '=') return sk.loose.test(q.sk);
      return q.sk.startsWith(sk.head) || sk.head.startsWith(q.sk);
    }).map((e) => e.name);
    const byEntity = cands.filter((p) => fits.includes(p.Entity));
    if (byEntity.length) cands = byEntity;
    else if (fits.length === 0)
      return { text: 'the key condition fits no entity\'s key template: an undeclared pattern', names: [] };
  }
  const exact = cands.filter((p) => {
    const d = p.Declared || {};
    if (q.limit && d.Limit && Number(q.limit) !== Number(d.Limit)) return false;
    if (d.Consistency && (d.Consistency === 'strong') !== !!q.consistent) return false;
    return true;
  });
  if (exact.length) cands = exact;
  const names = cands.map((p) => p.Name);
  return { text: names.length === 1 ? `declared pattern ${names[0]}` : `one of the declared patterns ${names.join(', ')}`, names };
}

function findingKey(f) {
  return [f.Kind, f.Table, f.Index || '', f.Pattern || '', f.Message].join('\u0000');
}

// What the server counted between two answers of describeModel: the patterns whose
// Observed.Requests grew and the findings that are new or counted again.
export function countedBetween(before, after) {
  const req = new Map(before.Patterns.map((p) => [p.Name + '\u0000' + p.Table, (p.Observed || {}).Requests || 0]));
  const patterns = after.Patterns.filter((p) => ((p.Observed || {}).Requests || 0) > (req.get(p.Name + '\u0000' + p.Table) || 0))
    .map((p) => p.Name);
  const counts = new Map(before.Findings.map((f) => [findingKey(f), f.Count || 0]));
  const findings = after.Findings.filter((f) => (f.Count || 0) > (counts.get(findingKey(f)) || 0));
  return { patterns, findings };
}
