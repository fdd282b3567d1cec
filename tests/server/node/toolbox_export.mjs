// toolbox_export.mjs — runs the dynamodb-toolbox tables and entities `quarry model export
// --format dynamodb-toolbox` wrote (the module named by argv[2]) against quarry serve, for
// the cases in argv[3] (JSON, written by tests/server/test_model_exports.py from the model
// file and the plans of `model check --json`, not from the export). Each entity's item is
// put through its entity and got back by its keys; the raw item must hold the key
// attributes the model's templates say (a sparse index's absent while its condition does
// not hold). Then each get and query pattern runs as dynamodb-toolbox's GetItemCommand or
// QueryCommand and must return the items of its entities, and each update pattern as an
// UpdateItemCommand of the key and the attributes it sets (moved to another value) must
// leave the item and its index keys as the model says; a transaction puts its entities'
// items in one TransactWriteItems. Prints one line per failure; exits 1
// if there was any.
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  GetItemCommand,
  PutItemCommand,
  PutTransaction,
  QueryCommand,
  UpdateItemCommand,
  executeTransactWrite,
} from 'dynamodb-toolbox';

import { eventually, makeClient } from './common.mjs';

const mod = await import(pathToFileURL(process.argv[2]).href);
const { cases, patterns } = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const doc = DynamoDBDocumentClient.from(makeClient());
let failures = 0;
const fail = (what, msg) => {
  failures++;
  console.log(`${what}: ${msg}`);
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const tables = {};
const entities = {};
for (const [name, make] of Object.entries(mod.entities)) {
  const tname = mod.tableOf[name];
  tables[tname] ??= mod.tables[tname](doc);
  entities[name] = make(tables[tname]);
}
const byEntity = Object.fromEntries(cases.map((c) => [c.entity, c]));

// The raw item at the case's key: every key attribute as the model's templates say.
async function checkRaw(c, what) {
  const raw = (await doc.send(new GetCommand({ TableName: c.table, Key: c.key }))).Item;
  if (!raw) return fail(what, `no item at ${JSON.stringify(c.key)}: the primary key is not the model's`);
  for (const [field, v] of Object.entries(c.fields))
    if (!same(raw[field], v)) fail(what, `${field} is ${JSON.stringify(raw[field])}, the model says ${JSON.stringify(v)}`);
  for (const field of c.absent)
    if (field in raw) fail(what, `${field} is written though the sparse index's condition does not hold`);
}

for (const c of cases) {
  const what = `${c.model} ${c.entity}`;
  const entity = entities[c.entity];
  if (!entity) {
    fail(what, 'no entity of that name in the export');
    continue;
  }
  try {
    await entity.build(PutItemCommand).item(c.item).send();
    const got = (await entity.build(GetItemCommand).key(c.primary).send()).Item;
    if (!same(got, c.item)) fail(what, `get returns ${JSON.stringify(got)}, put ${JSON.stringify(c.item)}`);
    await checkRaw(c, what);
  } catch (err) {
    fail(what, `${err.name}: ${err.message}`);
  }
}

// An item a query returned is the case's: a whole one equals the item put, one from a
// KEYS_ONLY or INCLUDE index holds its table key.
const isCase = (got, c, partial) =>
  partial ? Object.entries(c.key).every(([k, v]) => same(got[k], v)) : same(got, c.item);

for (const p of patterns) {
  const what = `${p.model} pattern ${p.name}`;
  const own = Object.fromEntries(p.items.map((c) => [c.entity, c]));
  const caseOf = (name) => own[name] ?? byEntity[name];
  try {
    for (const c of p.items) await entities[c.entity].build(PutItemCommand).item(c.item).send();
    if (p.kind === 'get') {
      const c = caseOf(p.entities[0]);
      const got = (await entities[c.entity].build(GetItemCommand).key(c.primary).send()).Item;
      if (!same(got, c.item)) fail(what, `returns ${JSON.stringify(got)}, not the item put`);
    } else if (p.kind === 'query') {
      const table = tables[p.table];
      const query = { partition: p.partition };
      if (p.index) query.index = p.index;
      if (p.range !== null) query.range = p.range;
      const read = () => {
        let cmd = table.build(QueryCommand);
        // items of a partial index hold no entity attribute to tell their entity by
        if (!p.partial) cmd = cmd.entities(...p.entities.map((n) => entities[n]));
        return cmd.query(query).send();
      };
      const wanted = p.entities.map(caseOf);
      const found = await eventually(read, (r) =>
        wanted.every((c) => (r.Items ?? []).some((got) => isCase(got, c, p.partial))));
      for (const c of wanted)
        if (!(found.Items ?? []).some((got) => isCase(got, c, p.partial)))
          fail(what, `${JSON.stringify(query)} does not return the ${c.entity} put (got ${JSON.stringify(found.Items)})`);
    } else if (p.kind === 'transaction') {
      // the items of its entities written together, each then where the model says
      const wanted = p.entities.map(caseOf);
      await executeTransactWrite(...wanted.map((c) => entities[c.entity].build(PutTransaction).item(c.item)));
      for (const c of wanted) await checkRaw(c, what);
    } else if (p.kind === 'update') {
      // the key and the attributes it sets: index keys follow the attributes given
      await entities[p.entities[0]].build(UpdateItemCommand).item(p.input).send();
      await checkRaw(p.after, what);
      const got = (await entities[p.entities[0]].build(GetItemCommand).key(p.after.primary).send()).Item;
      if (!same(got, p.after.item)) fail(what, `leaves ${JSON.stringify(got)}, not ${JSON.stringify(p.after.item)}`);
      await entities[p.entities[0]].build(PutItemCommand).item(byEntity[p.entities[0]].item).send();
    }
    for (const c of p.items) {
      const usual = byEntity[c.entity];
      await entities[c.entity].build(PutItemCommand).item(usual.item).send();
    }
  } catch (err) {
    fail(what, `${err.name}: ${err.message}`);
  }
}
process.exit(failures ? 1 : 0);
