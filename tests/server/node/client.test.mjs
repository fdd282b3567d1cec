// client.test.mjs — @aws-sdk/client-dynamodb against quarry: tables, items, conditions,
// queries, paginators and the errors the SDK surfaces, all SigV4-signed by the SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, DescribeTableCommand, ListTablesCommand, PutItemCommand, GetItemCommand,
  UpdateItemCommand, DeleteItemCommand, QueryCommand, BatchWriteItemCommand, paginateQuery,
  paginateScan, waitUntilTableExists, ConditionalCheckFailedException, DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { makeClient, endpoint } from './common.mjs';

const client = makeClient();
const TableName = 'node_client';

test('create a table and wait for it', async () => {
  await client.send(new CreateTableCommand({
    TableName,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName });
  const d = await client.send(new DescribeTableCommand({ TableName }));
  assert.equal(d.Table.TableName, TableName);
  assert.equal(d.Table.TableStatus, 'ACTIVE');
  const l = await client.send(new ListTablesCommand({}));
  assert.ok(l.TableNames.includes(TableName));
});

test('put, get, update, condition, delete', async () => {
  await client.send(new PutItemCommand({
    TableName,
    Item: { pk: { S: 'u1' }, sk: { S: 'profile' }, n: { N: '1.50' }, tags: { SS: ['a', 'b'] },
            raw: { B: new Uint8Array([0, 1, 2, 255]) } },
  }));
  const g = await client.send(new GetItemCommand({ TableName, Key: { pk: { S: 'u1' }, sk: { S: 'profile' } } }));
  assert.equal(g.Item.n.N, '1.5');
  assert.deepEqual([...g.Item.raw.B], [0, 1, 2, 255]);
  assert.deepEqual(new Set(g.Item.tags.SS), new Set(['a', 'b']));

  const u = await client.send(new UpdateItemCommand({
    TableName, Key: { pk: { S: 'u1' }, sk: { S: 'profile' } },
    UpdateExpression: 'SET n = n + :d', ExpressionAttributeValues: { ':d': { N: '2' } },
    ReturnValues: 'ALL_NEW',
  }));
  assert.equal(u.Attributes.n.N, '3.5');

  await assert.rejects(
    client.send(new PutItemCommand({
      TableName, Item: { pk: { S: 'u1' }, sk: { S: 'profile' } },
      ConditionExpression: 'attribute_not_exists(pk)',
    })),
    (err) => err instanceof ConditionalCheckFailedException && err.$metadata.httpStatusCode === 400,
  );
  await client.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'u1' }, sk: { S: 'profile' } } }));
  const gone = await client.send(new GetItemCommand({ TableName, Key: { pk: { S: 'u1' }, sk: { S: 'profile' } } }));
  assert.equal(gone.Item, undefined);
});

test('batch write, then query and scan through paginators', async () => {
  const items = [];
  for (let i = 0; i < 45; i++) {
    items.push({ PutRequest: { Item: { pk: { S: 'p' }, sk: { S: `item#${String(i).padStart(3, '0')}` }, i: { N: String(i) } } } });
  }
  for (let i = 0; i < items.length; i += 25) {
    const r = await client.send(new BatchWriteItemCommand({ RequestItems: { [TableName]: items.slice(i, i + 25) } }));
    assert.deepEqual(r.UnprocessedItems ?? {}, {});
  }
  const q = await client.send(new QueryCommand({
    TableName, KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
    ExpressionAttributeValues: { ':p': { S: 'p' }, ':s': { S: 'item#01' } },
  }));
  assert.equal(q.Count, 10);
  let pages = 0, seen = [];
  for await (const page of paginateQuery({ client, pageSize: 10 }, {
    TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'p' } },
    ScanIndexForward: false,
  })) {
    pages++;
    seen.push(...page.Items.map((it) => Number(it.i.N)));
  }
  assert.ok(pages >= 5);
  assert.deepEqual(seen, [...Array(45).keys()].reverse());
  let scanned = 0;
  for await (const page of paginateScan({ client, pageSize: 7 }, { TableName })) scanned += page.Count;
  assert.equal(scanned, 45);
});

test('errors: missing table and a wrong secret', async () => {
  await assert.rejects(
    client.send(new GetItemCommand({ TableName: 'no_such_table', Key: { pk: { S: 'x' } } })),
    (err) => err.name === 'ResourceNotFoundException',
  );
  if (process.env.QUARRY_KEY_ID) {
    const bad = new DynamoDBClient({
      endpoint, region: 'us-east-1', maxAttempts: 1,
      credentials: { accessKeyId: process.env.QUARRY_KEY_ID, secretAccessKey: 'wrong' },
    });
    await assert.rejects(bad.send(new ListTablesCommand({})),
      (err) => err.name === 'InvalidSignatureException');
  }
});
