// electrodb.test.mjs — ElectroDB against quarry: one table holding two entities (users
// and their orders), a collection query that returns both, a query on a GSI, filtered and
// ranged queries, batch puts, patches and conditional creates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { Entity, Service } from 'electrodb';
import { eventually, makeClient } from './common.mjs';

const client = makeClient();
const table = 'electro_shop';

const User = new Entity({
  model: { entity: 'user', version: '1', service: 'shop' },
  attributes: {
    userId: { type: 'string', required: true },
    name: { type: 'string', required: true },
    email: { type: 'string' },
  },
  indexes: {
    account: {
      collection: 'account',
      pk: { field: 'pk', composite: ['userId'] },
      sk: { field: 'sk', composite: [] },
    },
  },
}, { table, client });

const Order = new Entity({
  model: { entity: 'order', version: '1', service: 'shop' },
  attributes: {
    userId: { type: 'string', required: true },
    orderId: { type: 'string', required: true },
    total: { type: 'number', required: true },
    status: { type: ['open', 'shipped'], default: 'open' },
  },
  indexes: {
    account: {
      collection: 'account',
      pk: { field: 'pk', composite: ['userId'] },
      sk: { field: 'sk', composite: ['orderId'] },
    },
    byStatus: {
      index: 'gsi1',
      pk: { field: 'gsi1pk', composite: ['status'] },
      sk: { field: 'gsi1sk', composite: ['orderId'] },
    },
  },
}, { table, client });

const shop = new Service({ user: User, order: Order });

test('create the single table', async () => {
  await client.send(new CreateTableCommand({
    TableName: table,
    AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((n) => ({ AttributeName: n, AttributeType: 'S' })),
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: [{
      IndexName: 'gsi1',
      KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi1sk', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'ALL' },
    }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table });
});

test('entities, a collection, a GSI, filters and ranges', async () => {
  await User.create({ userId: 'u1', name: 'Ada', email: 'ada@example.com' }).go();
  await User.create({ userId: 'u2', name: 'Grace' }).go();
  await Order.put([
    { userId: 'u1', orderId: 'o1', total: 10 },
    { userId: 'u1', orderId: 'o2', total: 25.5, status: 'shipped' },
    { userId: 'u1', orderId: 'o3', total: 7 },
    { userId: 'u2', orderId: 'o4', total: 99 },
  ]).go();

  const { data: ada } = await User.get({ userId: 'u1' }).go();
  assert.equal(ada.name, 'Ada');

  const { data } = await shop.collections.account({ userId: 'u1' }).go();
  assert.deepEqual(data.user.map((u) => u.name), ['Ada']);
  assert.deepEqual(data.order.map((o) => o.orderId), ['o1', 'o2', 'o3']);

  const { data: open } = await Order.query.account({ userId: 'u1' })
    .where(({ status }, { eq }) => eq(status, 'open')).go();
  assert.deepEqual(open.map((o) => o.orderId), ['o1', 'o3']);

  // Global indexes are eventually consistent, as in DynamoDB: poll until they catch up.
  const { data: openEverywhere } = await eventually(() => Order.query.byStatus({ status: 'open' }).go(),
    (r) => r.data.length >= 3);
  assert.deepEqual(openEverywhere.map((o) => o.orderId), ['o1', 'o3', 'o4']);

  const { data: someOrders } = await Order.query.account({ userId: 'u1' }).gte({ orderId: 'o2' }).go();
  assert.deepEqual(someOrders.map((o) => o.orderId), ['o2', 'o3']);

  await Order.patch({ userId: 'u1', orderId: 'o1' }).set({ status: 'shipped' }).add({ total: 5 }).go();
  const { data: o1 } = await Order.get({ userId: 'u1', orderId: 'o1' }).go();
  assert.equal(o1.status, 'shipped');
  assert.equal(o1.total, 15);

  await assert.rejects(User.create({ userId: 'u1', name: 'Again' }).go(),
    (err) => /conditional request failed|ConditionalCheckFailed/i.test(String(err.message) + String(err.cause?.name)));
  await Order.delete({ userId: 'u1', orderId: 'o3' }).go();
  const { data: after } = await shop.collections.account({ userId: 'u1' }).go();
  assert.equal(after.order.length, 2);
});
