// dynamoose.test.mjs — dynamoose (a Mongoose-like modeller on the AWS SDK v3) against quarry:
// a table that dynamoose creates itself from a schema (a GSI, an LSI, TTL and tags), items
// through models (create, get, query, scan, update, save, batches, transactions), and a
// second initialize with update:true that must find nothing to change in DescribeTable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import dynamoose from 'dynamoose';
import { clientConfig, eventually, makeClient } from './common.mjs';

// dynamoose calls the aggregated DynamoDB class (ddb.describeTable(...)), so it gets its own
// client, with the settings of common.mjs's.
const ddb = new dynamoose.aws.ddb.DynamoDB(clientConfig());
dynamoose.aws.ddb.set(ddb);
const raw = makeClient();

// Every command dynamoose sends, with its input and answer, so tests can see what went over
// the wire.
const sent = [];
ddb.middlewareStack.add((next, context) => async (args) => {
  const call = { name: context.commandName, input: args.input };
  sent.push(call);
  const result = await next(args);
  call.output = result.output;
  return result;
}, { step: 'initialize', name: 'recordCommands' });
const lastSent = (name) => sent.findLast((c) => c.name === name);
const sentSince = (mark) => sent.slice(mark).map((c) => c.name);

const TableName = 'dynamoose_cats';
const TTL_MS = 3600 * 1000;
const tableOptions = {
  initialize: false,
  throughput: 'ON_DEMAND',
  waitForActive: { enabled: true, check: { timeout: 30000, frequency: 100 } },
  expires: { ttl: TTL_MS, attribute: 'ttl' },
  tags: { suite: 'quarry', client: 'dynamoose' },
};

const catSchema = new dynamoose.Schema({
  owner: { type: String, hashKey: true },
  catId: { type: Number, rangeKey: true },
  name: { type: String, index: { name: 'byName', type: 'global', rangeKey: 'age' } },
  color: { type: String, index: { name: 'byColor', type: 'local' } },
  age: Number,
  lives: { type: Number, default: 9 },
  toys: { type: Set, schema: [String] },
  vet: { type: Object, schema: { name: String, visits: Number } },
  photo: Buffer,
  born: Date,
  indoor: Boolean,
}, { timestamps: true, saveUnknown: false });

const Cat = dynamoose.model('Cat', catSchema);
const table = new dynamoose.Table(TableName, [Cat], { ...tableOptions, create: true });

const keysOf = (items) => items.map((c) => `${c.owner}/${c.catId}`);

test('initialize creates the table with its indexes, TTL and tags', async () => {
  const mark = sent.length;
  await table.initialize();
  const names = sentSince(mark);
  assert.equal(names.filter((n) => n === 'CreateTableCommand').length, 1);
  assert.equal(names.filter((n) => n === 'UpdateTimeToLiveCommand').length, 1);
  const create = sent.find((c) => c.name === 'CreateTableCommand').input;
  assert.equal(create.BillingMode, 'PAY_PER_REQUEST');

  const { Table: d } = await ddb.describeTable({ TableName });
  assert.equal(d.TableStatus, 'ACTIVE');
  assert.deepEqual(d.KeySchema, [{ AttributeName: 'owner', KeyType: 'HASH' },
    { AttributeName: 'catId', KeyType: 'RANGE' }]);
  assert.deepEqual(d.GlobalSecondaryIndexes.map((i) => [i.IndexName, i.IndexStatus, i.KeySchema.map((k) => k.AttributeName)]),
    [['byName', 'ACTIVE', ['name', 'age']]]);
  assert.deepEqual(d.LocalSecondaryIndexes.map((i) => [i.IndexName, i.KeySchema.map((k) => k.AttributeName)]),
    [['byColor', ['owner', 'color']]]);
  assert.equal(d.BillingModeSummary.BillingMode, 'PAY_PER_REQUEST');

  const { TimeToLiveDescription: ttl } = await ddb.describeTimeToLive({ TableName });
  assert.equal(ttl.AttributeName, 'ttl');
  assert.equal(ttl.TimeToLiveStatus, 'ENABLED');
  const { Tags } = await ddb.listTagsOfResource({ ResourceArn: d.TableArn });
  assert.deepEqual(Object.fromEntries(Tags.map((t) => [t.Key, t.Value])), tableOptions.tags);
});

test('create, and a second create of the same key fails its condition', async () => {
  const before = Date.now();
  const tom = await Cat.create({
    owner: 'ann', catId: 1, name: 'Tom', color: 'grey', age: 3, toys: new Set(['ball']),
    vet: { name: 'Dr Ek', visits: 1 }, photo: Buffer.from([0, 1, 255]), born: new Date(86400000), indoor: true,
  });
  assert.equal(tom.lives, 9);
  await Cat.create({ owner: 'ann', catId: 2, name: 'Kit', color: 'black', age: 1 });
  await Cat.create({ owner: 'ann', catId: 3, name: 'Bella', color: 'orange', age: 5 });
  await Cat.create({ owner: 'bob', catId: 1, name: 'Tom', color: 'white', age: 7 });
  await Cat.create({ owner: 'bob', catId: 2, name: 'Luna', color: 'black', age: 2 });

  const put = lastSent('PutItemCommand').input;
  assert.match(put.ConditionExpression, /attribute_not_exists/);
  await assert.rejects(Cat.create({ owner: 'ann', catId: 1, name: 'Impostor', age: 1 }),
    (err) => err.name === 'ConditionalCheckFailedException');

  // The expiry dynamoose adds is stored as epoch seconds, the form DynamoDB's TTL reads.
  const { Item } = await raw.send(new GetItemCommand({ TableName, Key: { owner: { S: 'ann' }, catId: { N: '1' } } }));
  const expires = Number(Item.ttl.N);
  assert.ok(Number.isInteger(expires));
  assert.ok(expires >= Math.floor((before + TTL_MS) / 1000) && expires <= Math.ceil((Date.now() + TTL_MS) / 1000));
  assert.equal(Item.name.S, 'Tom');
});

test('get: whole item, consistent with chosen attributes, a missing key', async () => {
  const c = await Cat.get({ owner: 'ann', catId: 1 });
  assert.equal(c.name, 'Tom');
  assert.equal(c.lives, 9);
  assert.deepEqual([...c.toys], ['ball']);
  assert.deepEqual(c.vet, { name: 'Dr Ek', visits: 1 });
  assert.deepEqual([...c.photo], [0, 1, 255]);
  assert.equal(c.born.getTime(), 86400000);
  assert.equal(c.indoor, true);
  assert.ok(c.createdAt instanceof Date);
  assert.equal(c.createdAt.getTime(), c.updatedAt.getTime());

  const some = await Cat.get({ owner: 'ann', catId: 1 }, { consistent: true, attributes: ['name', 'age'] });
  assert.deepEqual(some.toJSON(), { name: 'Tom', age: 3 });
  assert.equal(lastSent('GetItemCommand').input.ConsistentRead, true);

  assert.equal(await Cat.get({ owner: 'zoe', catId: 1 }), undefined);
});

test('query: the GSI and the LSI, sort, limit and startAt, all, count, filter', async () => {
  const toms = await eventually(() => Cat.query('name').eq('Tom').using('byName').exec(), (r) => r.length === 2);
  assert.deepEqual(keysOf(toms), ['ann/1', 'bob/1']); // in order of the index's range key, age
  assert.equal(toms.count, 2);
  const oldToms = await Cat.query('name').eq('Tom').where('age').gt(5).using('byName').exec();
  assert.deepEqual(keysOf(oldToms), ['bob/1']);
  const tomsDown = await Cat.query('name').eq('Tom').using('byName').sort('descending').exec();
  assert.deepEqual(keysOf(tomsDown), ['bob/1', 'ann/1']);

  const byColor = await Cat.query('owner').eq('ann').using('byColor').exec();
  assert.deepEqual(byColor.map((c) => c.color), ['black', 'grey', 'orange']);
  const black = await Cat.query('owner').eq('ann').where('color').eq('black').using('byColor').exec();
  assert.deepEqual(keysOf(black), ['ann/2']);

  const first = await Cat.query('owner').eq('ann').sort('descending').limit(1).exec();
  assert.deepEqual(keysOf(first), ['ann/3']);
  assert.deepEqual(first.lastKey, { owner: 'ann', catId: 3 });
  const second = await Cat.query('owner').eq('ann').sort('descending').limit(1).startAt(first.lastKey).exec();
  assert.deepEqual(keysOf(second), ['ann/2']);

  const all = await Cat.query('owner').eq('ann').limit(1).all(0).exec();
  assert.deepEqual(keysOf(all), ['ann/1', 'ann/2', 'ann/3']);
  // A page that fills its Limit carries a LastEvaluatedKey, so the fourth page is the empty last one.
  assert.equal(all.timesQueried, 4);

  // dynamoose's count() of a query reports only Count (it looks for a "QueriedCount"), so
  // ScannedCount is read from the answer itself.
  const counted = await Cat.query('owner').eq('ann').count().exec();
  assert.equal(counted.count, 3);
  assert.equal(lastSent('QueryCommand').input.Select, 'COUNT');
  assert.equal(lastSent('QueryCommand').output.Items, undefined);
  const olderCounted = await Cat.query('owner').eq('ann').filter('age').gt(2).count().exec();
  assert.equal(olderCounted.count, 2);
  assert.equal(lastSent('QueryCommand').output.ScannedCount, 3);

  const withBall = await Cat.query('owner').eq('ann').filter('toys').contains('ball').exec();
  assert.deepEqual(keysOf(withBall), ['ann/1']);
  assert.equal(lastSent('QueryCommand').output.ScannedCount, 3);
});

test('scan: a filter, parallel segments, count', async () => {
  const older = await Cat.scan('age').gt(2).exec();
  assert.deepEqual(keysOf(older).sort(), ['ann/1', 'ann/3', 'bob/1']);
  const blackOrIndoor = await Cat.scan('color').eq('black').or().where('indoor').eq(true).exec();
  assert.deepEqual(keysOf(blackOrIndoor).sort(), ['ann/1', 'ann/2', 'bob/2']);

  const mark = sent.length;
  const everyone = await Cat.scan().parallel(3).exec();
  assert.deepEqual(keysOf(everyone).sort(), ['ann/1', 'ann/2', 'ann/3', 'bob/1', 'bob/2']);
  const segments = sent.slice(mark).filter((c) => c.name === 'ScanCommand').map((c) => [c.input.Segment, c.input.TotalSegments]);
  assert.deepEqual(segments.sort(), [[0, 3], [1, 3], [2, 3]]);

  const paged = await Cat.scan().limit(2).all(0).exec();
  assert.equal(paged.length, 5);
  const counted = await Cat.scan('color').eq('black').count().exec();
  assert.deepEqual({ ...counted }, { count: 2, scannedCount: 5 });
});

test('update: $SET, $ADD, $REMOVE, $DELETE, a condition, and save()', async () => {
  const u = await Cat.update({ owner: 'ann', catId: 1 }, {
    $SET: { name: 'Thomas', vet: { name: 'Dr Yu', visits: 2 } },
    $ADD: { age: 1, toys: ['mouse'], lives: -1 },
    $REMOVE: ['indoor'],
  });
  assert.equal(u.name, 'Thomas');
  assert.equal(u.age, 4);
  assert.equal(u.lives, 8);
  assert.deepEqual([...u.toys].sort(), ['ball', 'mouse']);
  assert.deepEqual(u.vet, { name: 'Dr Yu', visits: 2 });
  assert.equal(u.indoor, undefined);
  assert.ok(u.updatedAt.getTime() > u.createdAt.getTime());

  const u2 = await Cat.update({ owner: 'ann', catId: 1 }, { $DELETE: { toys: ['ball'] } });
  assert.deepEqual([...u2.toys], ['mouse']);

  const u3 = await Cat.update({ owner: 'ann', catId: 1 }, { age: 10 }, { condition: new dynamoose.Condition('age').eq(4) });
  assert.equal(u3.age, 10);
  await assert.rejects(
    Cat.update({ owner: 'ann', catId: 1 }, { age: 11 }, { condition: new dynamoose.Condition('age').eq(4) }),
    (err) => err.name === 'ConditionalCheckFailedException');
  assert.equal((await Cat.get({ owner: 'ann', catId: 1 })).age, 10);

  const kit = await Cat.get({ owner: 'ann', catId: 2 });
  kit.age = 2;
  kit.toys = new Set(['string']);
  await kit.save();
  const saved = await Cat.get({ owner: 'ann', catId: 2 });
  assert.equal(saved.age, 2);
  assert.deepEqual([...saved.toys], ['string']);

  await new Cat({ owner: 'bob', catId: 3, name: 'Milo', age: 4 }).save();
  assert.equal((await Cat.get({ owner: 'bob', catId: 3 })).name, 'Milo');
  await assert.rejects(new Cat({ owner: 'bob', catId: 3, name: 'Other' }).save({ overwrite: false }),
    (err) => err.name === 'ConditionalCheckFailedException');
});

test('batchPut, batchGet with a missing key, batchDelete', async () => {
  const put = await Cat.batchPut([
    { owner: 'cy', catId: 1, name: 'Ash', age: 1 },
    { owner: 'cy', catId: 2, name: 'Birch', age: 2 },
    { owner: 'cy', catId: 3, name: 'Cedar', age: 3 },
  ]);
  assert.deepEqual(put.unprocessedItems, []);
  const got = await Cat.batchGet([{ owner: 'cy', catId: 1 }, { owner: 'cy', catId: 2 }, { owner: 'cy', catId: 9 }, { owner: 'cy', catId: 3 }]);
  assert.deepEqual(got.map((c) => c.name).sort(), ['Ash', 'Birch', 'Cedar']);
  assert.deepEqual(got.unprocessedKeys, []);

  const deleted = await Cat.batchDelete([{ owner: 'cy', catId: 1 }, { owner: 'cy', catId: 2 }]);
  assert.deepEqual(deleted.unprocessedItems, []);
  const left = await Cat.query('owner').eq('cy').exec();
  assert.deepEqual(left.map((c) => c.name), ['Cedar']);
});

test('transactions: a committed write, a read, a cancelled write with its reasons', async () => {
  await dynamoose.transaction([
    Cat.transaction.create({ owner: 'dee', catId: 1, name: 'Pip', age: 1 }),
    Cat.transaction.update({ owner: 'bob', catId: 1 }, { $ADD: { age: 1 } }),
    Cat.transaction.delete({ owner: 'cy', catId: 3 }),
    Cat.transaction.condition({ owner: 'ann', catId: 2 }, new dynamoose.Condition('age').eq(2)),
  ]);
  const [pip, bobTom] = await dynamoose.transaction([
    Cat.transaction.get({ owner: 'dee', catId: 1 }),
    Cat.transaction.get({ owner: 'bob', catId: 1 }),
  ]);
  assert.equal(pip.name, 'Pip');
  assert.equal(bobTom.age, 8);
  assert.equal(lastSent('TransactGetItemsCommand').input.TransactItems.length, 2);
  assert.equal(await Cat.get({ owner: 'cy', catId: 3 }), undefined);

  await assert.rejects(dynamoose.transaction([
    Cat.transaction.update({ owner: 'bob', catId: 1 }, { $ADD: { age: 1 } }),
    Cat.transaction.create({ owner: 'dee', catId: 1, name: 'Pip again' }),
    Cat.transaction.condition({ owner: 'ann', catId: 2 }, new dynamoose.Condition('age').eq(2)),
  ]), (err) => {
    assert.equal(err.name, 'TransactionCanceledException');
    assert.deepEqual(err.CancellationReasons.map((r) => r.Code), ['None', 'ConditionalCheckFailed', 'None']);
    return true;
  });
  assert.equal((await Cat.get({ owner: 'bob', catId: 1 })).age, 8);
  assert.equal((await Cat.get({ owner: 'dee', catId: 1 })).name, 'Pip');
});

test('a second model initialized with update:true finds the table as declared and changes nothing', async () => {
  const Kitten = dynamoose.model('Kitten', catSchema);
  const again = new dynamoose.Table(TableName, [Kitten], { ...tableOptions, create: false, update: true });
  const mark = sent.length;
  await again.initialize();
  const names = sentSince(mark);
  // dynamoose compared the billing mode, the indexes, the table class and the streams with
  // DescribeTable's answer, the tags with ListTagsOfResource's and TTL with DescribeTimeToLive's.
  assert.ok(names.includes('DescribeTableCommand'));
  assert.ok(names.includes('ListTagsOfResourceCommand'));
  assert.ok(names.includes('DescribeTimeToLiveCommand'));
  for (const change of ['CreateTableCommand', 'UpdateTableCommand', 'UpdateTimeToLiveCommand',
    'TagResourceCommand', 'UntagResourceCommand']) {
    assert.ok(!names.includes(change), `${change} was sent: ${names.join(', ')}`);
  }
  const luna = await Kitten.get({ owner: 'bob', catId: 2 });
  assert.equal(luna.name, 'Luna');
  await Kitten.delete({ owner: 'bob', catId: 2 });
  assert.equal(await Cat.get({ owner: 'bob', catId: 2 }), undefined);
});
