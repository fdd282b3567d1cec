// electrodb_more.test.mjs — ElectroDB against quarry beyond electrodb.test.mjs's basics:
// paging (all pages, limit and cursor, count), chunked batch writes and reads, where clauses
// on queries, updates and deletes, patch and upsert operations, collections across entities
// (on the table and clustered on a GSI), a sparse KEYS_ONLY GSI read back with hydrate, and
// transactions, committed and cancelled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand, DescribeTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { Entity, Service } from 'electrodb';
import { eventually, makeClient } from './common.mjs';

const client = makeClient();
const table = 'electro_more';

// Every command ElectroDB sends through the client, with its input, to see how it chunks.
const sent = [];
client.middlewareStack.add((next, context) => async (args) => {
  sent.push({ name: context.commandName, input: args.input });
  return next(args);
}, { step: 'initialize', name: 'recordCommands' });
const sentSince = (mark, name) => sent.slice(mark).filter((c) => c.name === name);

const Customer = new Entity({
  model: { entity: 'customer', version: '1', service: 'store' },
  attributes: {
    customerId: { type: 'string', required: true },
    name: { type: 'string', required: true },
    email: { type: 'string' },
    credits: { type: 'number', default: 0 },
    roles: { type: 'set', items: 'string' },
    prefs: { type: 'map', properties: { theme: { type: 'string' }, size: { type: 'number' } } },
    history: { type: 'list', items: { type: 'string' } },
  },
  indexes: {
    account: { collection: 'account', pk: { field: 'pk', composite: ['customerId'] }, sk: { field: 'sk', composite: [] } },
    byEmail: { index: 'gsi1', pk: { field: 'gsi1pk', composite: ['email'] }, sk: { field: 'gsi1sk', composite: [] } },
  },
}, { table, client });

const Order = new Entity({
  model: { entity: 'order', version: '1', service: 'store' },
  attributes: {
    customerId: { type: 'string', required: true },
    orderId: { type: 'string', required: true },
    total: { type: 'number', required: true },
    status: { type: ['open', 'shipped', 'void'], default: 'open' },
    region: { type: 'string', default: 'south' },
    flagged: { type: 'boolean', default: false },
    lines: { type: 'list', items: { type: 'map', properties: { sku: { type: 'string' }, qty: { type: 'number' } } } },
  },
  indexes: {
    account: { collection: 'account', pk: { field: 'pk', composite: ['customerId'] }, sk: { field: 'sk', composite: ['orderId'] } },
    byRegion: {
      index: 'gsi1', collection: 'regional', type: 'clustered',
      pk: { field: 'gsi1pk', composite: ['region'] }, sk: { field: 'gsi1sk', composite: ['status'] },
    },
    // Sparse: only flagged orders get keys in gsi2, which projects keys only.
    flagged: {
      index: 'gsi2', condition: (attr) => attr.flagged === true,
      pk: { field: 'gsi2pk', composite: ['customerId'] }, sk: { field: 'gsi2sk', composite: ['orderId'] },
    },
  },
}, { table, client });

const Ticket = new Entity({
  model: { entity: 'ticket', version: '1', service: 'store' },
  attributes: {
    ticketId: { type: 'string', required: true },
    region: { type: 'string', required: true },
    status: { type: 'string', default: 'open' },
    subject: { type: 'string' },
  },
  indexes: {
    primary: { pk: { field: 'pk', composite: ['ticketId'] }, sk: { field: 'sk', composite: [] } },
    byRegion: {
      index: 'gsi1', collection: 'regional', type: 'clustered',
      pk: { field: 'gsi1pk', composite: ['region'] }, sk: { field: 'gsi1sk', composite: ['status'] },
    },
  },
}, { table, client });

const store = new Service({ customer: Customer, order: Order, ticket: Ticket });

const orderId = (i) => `o${String(i).padStart(3, '0')}`;
const ids = (items) => items.map((o) => o.orderId);
const range = (from, to) => Array.from({ length: to - from }, (_, k) => from + k);

// ElectroDB wraps what the SDK throws; the SDK's own error is its cause.
const sdkError = (name) => (err) => {
  assert.equal(err.cause?.name, name, String(err.message));
  return true;
};


test('create the table: an ALL GSI and a KEYS_ONLY GSI', async () => {
  await client.send(new CreateTableCommand({
    TableName: table,
    AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((n) => ({ AttributeName: n, AttributeType: 'S' })),
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: ['gsi1', 'gsi2'].map((name) => ({
      IndexName: name,
      KeySchema: [{ AttributeName: `${name}pk`, KeyType: 'HASH' }, { AttributeName: `${name}sk`, KeyType: 'RANGE' }],
      Projection: { ProjectionType: name === 'gsi1' ? 'ALL' : 'KEYS_ONLY' },
    })),
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table });
  const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
  assert.deepEqual(Table.GlobalSecondaryIndexes.map((i) => [i.IndexName, i.Projection.ProjectionType]).sort(),
    [['gsi1', 'ALL'], ['gsi2', 'KEYS_ONLY']]);
});

test('batch put of 60 items goes out in chunks of 25', async () => {
  await Customer.create({ customerId: 'c1', name: 'Ada', email: 'ada@example.com', roles: ['admin'],
    prefs: { theme: 'dark', size: 2 }, history: ['signup'] }).go();
  const orders = range(0, 60).map((i) => ({
    customerId: 'c1', orderId: orderId(i), total: i, status: i % 3 === 0 ? 'shipped' : 'open',
    region: i % 2 ? 'north' : 'south', flagged: i % 10 === 0, lines: [{ sku: `s${i}`, qty: 1 + (i % 4) }],
  }));
  const mark = sent.length;
  const put = await Order.put(orders).go();
  assert.deepEqual(put.unprocessed, []);
  assert.deepEqual(sentSince(mark, 'BatchWriteItemCommand').map((c) => c.input.RequestItems[table].length), [25, 25, 10]);
  await Ticket.put([
    { ticketId: 't1', region: 'north', subject: 'late parcel' },
    { ticketId: 't2', region: 'north', status: 'closed', subject: 'refund' },
    { ticketId: 't3', region: 'south', subject: 'wrong size' },
  ]).go();
});

test('batch get of 111 keys, in chunks, in order, with the missing ones null', async () => {
  const keys = range(0, 60).map((i) => ({ customerId: 'c1', orderId: orderId(i) }));
  keys.push({ customerId: 'c1', orderId: 'nope' });
  for (let i = 0; i < 50; i++) keys.push({ customerId: 'c9', orderId: orderId(i) });
  const mark = sent.length;
  const got = await Order.get(keys).go({ preserveBatchOrder: true });
  const chunks = sentSince(mark, 'BatchGetItemCommand').map((c) => c.input.RequestItems[table].Keys.length);
  assert.deepEqual(chunks, [100, 11]);
  assert.deepEqual(got.unprocessed, []);
  assert.equal(got.data.length, 111);
  assert.deepEqual(got.data.slice(0, 60).map((o) => o.total), range(0, 60));
  assert.deepEqual(got.data.slice(0, 60).map((o) => o.orderId), range(0, 60).map(orderId));
  assert.ok(got.data.slice(60).every((o) => o === null));
  assert.deepEqual(got.data[7].lines, [{ sku: 's7', qty: 4 }]);
});

test('paging: all pages, limit with a cursor, count', async () => {
  const all = await Order.query.account({ customerId: 'c1' }).go({ pages: 'all' });
  assert.deepEqual(ids(all.data), range(0, 60).map(orderId));
  assert.equal(all.cursor, null);

  const pages = [];
  let cursor = null;
  do {
    const page = await Order.query.account({ customerId: 'c1' }).go({ limit: 25, cursor });
    pages.push(ids(page.data));
    cursor = page.cursor;
  } while (cursor);
  assert.deepEqual(pages.map((p) => p.length), [25, 25, 10]);
  assert.deepEqual(pages.flat(), range(0, 60).map(orderId));

  const last = await Order.query.account({ customerId: 'c1' }).go({ order: 'desc', limit: 2 });
  assert.deepEqual(ids(last.data), ['o059', 'o058']);
  const firstSeven = await Order.query.account({ customerId: 'c1' }).go({ count: 7 });
  assert.deepEqual(ids(firstSeven.data), range(0, 7).map(orderId));
  assert.ok(firstSeven.cursor);
  const nextSeven = await Order.query.account({ customerId: 'c1' }).go({ count: 7, cursor: firstSeven.cursor });
  assert.deepEqual(ids(nextSeven.data), range(7, 14).map(orderId));

  const fifties = await Order.query.account({ customerId: 'c1' }).begins({ orderId: 'o05' }).go();
  assert.deepEqual(ids(fifties.data), range(50, 60).map(orderId));
  const between = await Order.query.account({ customerId: 'c1' }).between({ orderId: 'o010' }, { orderId: 'o012' }).go();
  assert.deepEqual(ids(between.data), ['o010', 'o011', 'o012']);
});

test('where on a query, an update and a delete', async () => {
  const q = await Order.query.account({ customerId: 'c1' })
    .where(({ total, status }, { gt, eq }) => `${gt(total, 50)} AND ${eq(status, 'open')}`).go({ pages: 'all' });
  assert.deepEqual(q.data.map((o) => o.total), [52, 53, 55, 56, 58, 59]);
  const nested = await Order.query.account({ customerId: 'c1' })
    .where(({ lines }, { eq }) => eq(lines[0].sku, 's42')).go({ pages: 'all' });
  assert.deepEqual(ids(nested.data), ['o042']);

  await Order.update({ customerId: 'c1', orderId: 'o001' }).set({ status: 'void' })
    .where(({ status }, { eq }) => eq(status, 'open')).go();
  await assert.rejects(Order.update({ customerId: 'c1', orderId: 'o001' }).set({ status: 'shipped' })
    .where(({ status }, { eq }) => eq(status, 'open')).go(), sdkError('ConditionalCheckFailedException'));
  assert.equal((await Order.get({ customerId: 'c1', orderId: 'o001' }).go()).data.status, 'void');

  await assert.rejects(Order.delete({ customerId: 'c1', orderId: 'o001' })
    .where(({ total }, { lt }) => lt(total, 0)).go(), sdkError('ConditionalCheckFailedException'));
  const gone = await Order.delete({ customerId: 'c1', orderId: 'o001' })
    .where(({ lines }, { exists }) => exists(lines)).go({ response: 'all_old' });
  assert.equal(gone.data.status, 'void');
  assert.equal(gone.data.total, 1);
  assert.equal((await Order.get({ customerId: 'c1', orderId: 'o001' }).go()).data, null);
});

test('patch: add, subtract, append, delete, remove, data; a missing item fails', async () => {
  const p1 = await Customer.patch({ customerId: 'c1' })
    .add({ credits: 5, roles: ['buyer'] })
    .append({ history: ['order', 'review'] })
    .set({ prefs: { theme: 'light', size: 3 } })
    .go({ response: 'all_new' });
  assert.equal(p1.data.credits, 5);
  assert.deepEqual(p1.data.roles.sort(), ['admin', 'buyer']);
  assert.deepEqual(p1.data.history, ['signup', 'order', 'review']);
  assert.deepEqual(p1.data.prefs, { theme: 'light', size: 3 });

  const p2 = await Customer.patch({ customerId: 'c1' })
    .subtract({ credits: 2 })
    .delete({ roles: ['admin'] })
    .remove(['email'])
    .go({ response: 'all_new' });
  assert.equal(p2.data.credits, 3);
  assert.deepEqual(p2.data.roles, ['buyer']);
  assert.equal(p2.data.email, undefined);

  const p3 = await Customer.patch({ customerId: 'c1' })
    .data(({ prefs, history }, { set, remove }) => { set(prefs.size, 10); remove(history[0]); })
    .go({ response: 'all_new' });
  assert.deepEqual(p3.data.prefs, { theme: 'light', size: 10 });
  assert.deepEqual(p3.data.history, ['order', 'review']);

  await assert.rejects(Customer.patch({ customerId: 'nobody' }).set({ name: 'Ghost' }).go(),
    sdkError('ConditionalCheckFailedException'));
  assert.equal((await Customer.get({ customerId: 'nobody' }).go()).data, null);

  // ElectroDB's update also sets the key's composite attributes, so UPDATED_OLD holds those too.
  const mark = sent.length;
  const old = await Customer.update({ customerId: 'c1' }).set({ name: 'Ada L.' }).go({ response: 'updated_old' });
  assert.deepEqual(old.data, { name: 'Ada', customerId: 'c1' });
  const update = sentSince(mark, 'UpdateItemCommand')[0].input;
  assert.equal(update.ReturnValues, 'UPDATED_OLD');
  assert.match(update.UpdateExpression, /^SET /);
});

test('upsert: a new item, then an existing one with add and ifNotExists', async () => {
  const created = await Customer.upsert({ customerId: 'c2', name: 'Grace', email: 'grace@example.com', credits: 1 })
    .go({ response: 'all_new' });
  assert.equal(created.data.credits, 1);
  const again = await Customer.upsert({ customerId: 'c2', name: 'Grace H.' })
    .add({ credits: 4 })
    .ifNotExists({ roles: ['new'], email: 'other@example.com' })
    .go({ response: 'all_new' });
  assert.equal(again.data.name, 'Grace H.');
  assert.equal(again.data.credits, 5);
  assert.deepEqual(again.data.roles, ['new']);
  assert.equal(again.data.email, 'grace@example.com');

  const byEmail = await eventually(() => Customer.query.byEmail({ email: 'grace@example.com' }).go(),
    (r) => r.data.length === 1 && r.data[0].credits === 5);
  assert.deepEqual(byEmail.data.map((c) => [c.customerId, c.name, c.credits]), [['c2', 'Grace H.', 5]]);
});

test('a collection across two entities, with where and a cursor', async () => {
  const all = await store.collections.account({ customerId: 'c1' }).go({ pages: 'all' });
  assert.deepEqual(all.data.customer.map((c) => c.name), ['Ada L.']);
  assert.equal(all.data.order.length, 59);
  assert.deepEqual(Object.keys(all.data).sort(), ['customer', 'order']);

  const big = await store.collections.account({ customerId: 'c1' })
    .where(({ total }, { gt }) => gt(total, 56)).go({ pages: 'all' });
  assert.deepEqual(big.data.customer, []);
  assert.deepEqual(ids(big.data.order), ['o057', 'o058', 'o059']);

  let cursor = null;
  const seen = { customer: [], order: [] };
  const sizes = [];
  do {
    const page = await store.collections.account({ customerId: 'c1' }).go({ limit: 20, cursor });
    seen.customer.push(...page.data.customer.map((c) => c.customerId));
    seen.order.push(...ids(page.data.order));
    sizes.push(page.data.customer.length + page.data.order.length);
    cursor = page.cursor;
  } while (cursor);
  assert.deepEqual(seen.customer, ['c1']);
  assert.deepEqual(seen.order, ids(all.data.order));
  // The third page fills its Limit, so it still carries a cursor; the fourth is empty.
  assert.deepEqual(sizes, [20, 20, 20, 0]);
});

test('a clustered collection on a GSI, whole and narrowed by the sort key', async () => {
  // North: the 30 odd orders (o001 deleted), of which o003, o009, ... are shipped; tickets t1, t2.
  const north = await eventually(() => store.collections.regional({ region: 'north' }).go({ pages: 'all' }),
    (r) => r.data.order.length === 29 && r.data.ticket.length === 2);
  assert.equal(north.data.order.length, 29);
  assert.deepEqual(north.data.ticket.map((t) => t.ticketId).sort(), ['t1', 't2']);
  assert.deepEqual(Object.keys(north.data).sort(), ['order', 'ticket']);

  const open = await store.collections.regional({ region: 'north', status: 'open' }).go({ pages: 'all' });
  const northOpen = range(2, 60).filter((i) => i % 2 === 1 && i % 3 !== 0).map(orderId);
  assert.deepEqual(ids(open.data.order).sort(), northOpen);
  assert.deepEqual(open.data.ticket.map((t) => t.ticketId), ['t1']);

  const shipped = await eventually(() => Order.query.byRegion({ region: 'south', status: 'shipped' }).go({ pages: 'all' }),
    (r) => r.data.length === 10);
  assert.deepEqual(ids(shipped.data).sort(), range(0, 60).filter((i) => i % 6 === 0).map(orderId));
});

test('a sparse KEYS_ONLY GSI read back whole with hydrate', async () => {
  const flagged = await eventually(() => Order.query.flagged({ customerId: 'c1' }).go({ hydrate: true, pages: 'all' }),
    (r) => r.data.length === 6);
  assert.deepEqual(flagged.data.map((o) => o.total), [0, 10, 20, 30, 40, 50]);
  assert.deepEqual(flagged.data[2].lines, [{ sku: 's20', qty: 1 }]);
  assert.equal(flagged.data[2].region, 'south');

  await Order.patch({ customerId: 'c1', orderId: 'o010' }).set({ flagged: false }).go();
  const fewer = await eventually(() => Order.query.flagged({ customerId: 'c1' }).go({ hydrate: true, pages: 'all' }),
    (r) => r.data.length === 5);
  assert.deepEqual(fewer.data.map((o) => o.total), [0, 20, 30, 40, 50]);
});

test('transaction.write commits, transaction.get reads', async () => {
  const mark = sent.length;
  const t = await store.transaction.write(({ customer, order }) => [
    order.create({ customerId: 'c2', orderId: 'x1', total: 10 }).commit(),
    customer.patch({ customerId: 'c2' }).subtract({ credits: 1 }).commit(),
    order.delete({ customerId: 'c1', orderId: 'o002' }).commit(),
    customer.check({ customerId: 'c1' }).where(({ credits }, { eq }) => eq(credits, 3)).commit(),
  ]).go();
  assert.equal(t.canceled, false);
  assert.equal(sentSince(mark, 'TransactWriteItemsCommand')[0].input.TransactItems.length, 4);

  const g = await store.transaction.get(({ customer, order }) => [
    customer.get({ customerId: 'c2' }).commit(),
    order.get({ customerId: 'c2', orderId: 'x1' }).commit(),
    order.get({ customerId: 'c1', orderId: 'o002' }).commit(),
  ]).go();
  assert.equal(g.canceled, false);
  assert.equal(g.data[0].item.credits, 4);
  assert.equal(g.data[1].item.total, 10);
  assert.equal(g.data[2].item, null);
});

test('transaction.write cancelled: canceled true, the reason and the old item', async () => {
  const t = await store.transaction.write(({ customer, order }) => [
    order.create({ customerId: 'c2', orderId: 'x1', total: 99 }).commit({ response: 'all_old' }),
    customer.patch({ customerId: 'c2' }).subtract({ credits: 1 }).commit(),
  ]).go();
  assert.equal(t.canceled, true);
  assert.deepEqual(t.data.map((r) => [r.rejected, r.code]), [[true, 'ConditionalCheckFailed'], [false, 'None']]);
  assert.equal(t.data[0].item.total, 10);
  assert.equal((await Customer.get({ customerId: 'c2' }).go()).data.credits, 4);
  assert.equal((await Order.get({ customerId: 'c2', orderId: 'x1' }).go()).data.total, 10);
});
