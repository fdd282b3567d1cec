// electrodb_export.mjs — runs the ElectroDB entities `quarry model export --format electrodb`
// wrote (the module named by argv[2]) against quarry serve, for the cases in argv[3] (JSON,
// written by tests/server/test_model_exports.py from the model file, not from the export):
// each case puts its item through its entity, gets it back by its keys, reads the raw item
// to check every key attribute holds what the model's templates say (and that a sparse
// index's keys are absent while its condition does not hold), and queries each index the
// item is in. Prints one line per failure; exits 1 if there was any.
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

import { eventually, makeClient } from './common.mjs';

const mod = await import(pathToFileURL(process.argv[2]).href);
const cases = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const client = makeClient();
const doc = DynamoDBDocumentClient.from(client);
let failures = 0;
const fail = (c, msg) => {
  failures++;
  console.log(`${c.model} ${c.entity}: ${msg}`);
};

for (const c of cases) {
  const entity = mod.entities[c.entity];
  if (!entity) {
    fail(c, 'no entity of that name in the export');
    continue;
  }
  const e = entity(client, c.table);
  try {
    await e.put(c.item).go();
    const got = await e.get(c.primary).go();
    for (const [k, v] of Object.entries(c.item))
      if (JSON.stringify(got.data?.[k]) !== JSON.stringify(v))
        fail(c, `get: ${k} is ${JSON.stringify(got.data?.[k])}, put ${JSON.stringify(v)}`);
    const raw = (await doc.send(new GetCommand({ TableName: c.table, Key: c.key }))).Item;
    if (!raw) {
      fail(c, `no item at ${JSON.stringify(c.key)}: the primary key is not the model's`);
      continue;
    }
    for (const [field, v] of Object.entries(c.fields))
      if (raw[field] !== v) fail(c, `${field} is ${JSON.stringify(raw[field])}, the model says ${JSON.stringify(v)}`);
    for (const field of c.absent)
      if (field in raw) fail(c, `${field} is written though the sparse index's condition does not hold`);
    for (const q of c.queries) {
      const found = await eventually(
        // an index projecting less than ALL holds no entity markers: ElectroDB reads the
        // items themselves
        () => e.query[q.index](q.composite).go(q.partial ? { hydrate: true } : {}),
        (r) => r.data.some((d) => Object.entries(c.primary).every(([k, v]) => d[k] === v)));
      if (!found.data.some((d) => Object.entries(c.primary).every(([k, v]) => d[k] === v)))
        fail(c, `query ${q.index} ${JSON.stringify(q.composite)} does not return the item`);
    }
  } catch (err) {
    fail(c, `${err.name}: ${err.message}`);
  }
}
process.exit(failures ? 1 : 0);
