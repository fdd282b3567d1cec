// model_watch.mjs — an application's mistakes made through @aws-sdk/client-dynamodb against
// `quarry serve --model tests/server/models/shop.yaml`: declared reads, a Scan with a
// filter, an undeclared Query and an unpadded sort key. Run by test_model_watch.py, which
// then reads the findings from QuarryDescribeModel; with QUARRY_STRICT set the server
// refuses the Scan and the undeclared Query, and this checks the refusals the SDK raises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, PutItemCommand, GetItemCommand, QueryCommand, ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { makeClient } from './common.mjs';

const client = makeClient();
const strict = !!process.env.QUARRY_STRICT;
const S = (s) => ({ S: s });

test('the shop table', async () => {
  const def = (n) => ({ AttributeName: n, AttributeType: 'S' });
  await client.send(new CreateTableCommand({
    TableName: 'Shop', BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [def('PK'), def('SK'), def('GSI1PK'), def('GSI1SK')],
    KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }, { AttributeName: 'SK', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: [{
      IndexName: 'GSI1', Projection: { ProjectionType: 'ALL' },
      KeySchema: [{ AttributeName: 'GSI1PK', KeyType: 'HASH' }, { AttributeName: 'GSI1SK', KeyType: 'RANGE' }],
    }],
  }));
  await client.send(new PutItemCommand({ TableName: 'Shop', Item: { PK: S('CUSTOMER#n1'), SK: S('PROFILE'), name: S('Nia') } }));
  for (let i = 0; i < 12; i++) {
    await client.send(new PutItemCommand({
      TableName: 'Shop',
      Item: { PK: S('CUSTOMER#n1'), SK: S(`ORDER#o1#ITEM#${i}`), sku: S('x') },
    }));
  }
});

test('declared reads', async () => {
  const got = await client.send(new GetItemCommand({ TableName: 'Shop', Key: { PK: S('CUSTOMER#n1'), SK: S('PROFILE') } }));
  assert.equal(got.Item.name.S, 'Nia');
  const lines = await client.send(new QueryCommand({
    TableName: 'Shop', KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
    ExpressionAttributeValues: { ':p': S('CUSTOMER#n1'), ':s': S('ORDER#o1#ITEM#') },
  }));
  assert.equal(lines.Count, 12);
});

test('a Scan with a filter', async () => {
  const scan = client.send(new ScanCommand({
    TableName: 'Shop', FilterExpression: '#n = :n',
    ExpressionAttributeNames: { '#n': 'name' }, ExpressionAttributeValues: { ':n': S('Nia') },
  }));
  if (strict) {
    await assert.rejects(scan, (e) => e.name === 'ValidationException' && /quarry --strict: Scan of table Shop/.test(e.message));
  } else {
    assert.equal((await scan).Count, 1);
  }
});

test('an undeclared query', async () => {
  const q = client.send(new QueryCommand({
    TableName: 'Shop', KeyConditionExpression: 'PK = :p',
    ExpressionAttributeValues: { ':p': S('CUSTOMER#n1') },
  }));
  if (strict) {
    await assert.rejects(q, (e) => e.name === 'ValidationException' && /nearest declared pattern/.test(e.message));
  } else {
    assert.equal((await q).Count, 13);
  }
});
