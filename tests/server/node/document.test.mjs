// document.test.mjs — @aws-sdk/lib-dynamodb's DocumentClient against quarry: native
// JavaScript values in and out, begins_with queries, batch writes, paginators, conditional
// updates and transactions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient, PutCommand, GetCommand, UpdateCommand, QueryCommand, BatchWriteCommand,
  BatchGetCommand, TransactWriteCommand, paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import { makeClient } from './common.mjs';

const client = makeClient();
const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const TableName = 'node_document';

test('create table', async () => {
  await client.send(new CreateTableCommand({
    TableName,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'N' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName });
});

test('native values round-trip', async () => {
  const item = {
    pk: 'user#1', sk: 0, name: 'Ada', age: 36, admin: true, nothing: null,
    address: { city: 'London', lines: ['1 Street', 'Flat 2'] }, scores: new Set([1, 2, 3]),
  };
  await doc.send(new PutCommand({ TableName, Item: item }));
  const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: 'user#1', sk: 0 } }));
  assert.deepEqual(Item, item);
  const { Attributes } = await doc.send(new UpdateCommand({
    TableName, Key: { pk: 'user#1', sk: 0 },
    UpdateExpression: 'SET #a = #a + :one, address.city = :c REMOVE nothing',
    ExpressionAttributeNames: { '#a': 'age' },
    ExpressionAttributeValues: { ':one': 1, ':c': 'Paris' }, ReturnValues: 'ALL_NEW',
  }));
  assert.equal(Attributes.age, 37);
  assert.equal(Attributes.address.city, 'Paris');
  assert.equal('nothing' in Attributes, false);
});

test('batch write, batch get, query with begins_with and a paginator', async () => {
  const puts = [];
  for (let i = 1; i <= 30; i++) puts.push({ PutRequest: { Item: { pk: 'log', sk: i, msg: i % 2 ? 'odd' : 'even' } } });
  for (let i = 0; i < puts.length; i += 25) {
    await doc.send(new BatchWriteCommand({ RequestItems: { [TableName]: puts.slice(i, i + 25) } }));
  }
  const got = await doc.send(new BatchGetCommand({
    RequestItems: { [TableName]: { Keys: [{ pk: 'log', sk: 3 }, { pk: 'log', sk: 4 }, { pk: 'log', sk: 99 }] } },
  }));
  assert.deepEqual(got.Responses[TableName].map((x) => x.sk).sort(), [3, 4]);
  const q = await doc.send(new QueryCommand({
    TableName, KeyConditionExpression: 'pk = :p AND sk BETWEEN :a AND :b',
    FilterExpression: 'msg = :m', ExpressionAttributeValues: { ':p': 'log', ':a': 10, ':b': 19, ':m': 'odd' },
  }));
  assert.deepEqual(q.Items.map((x) => x.sk), [11, 13, 15, 17, 19]);
  const all = [];
  for await (const page of paginateQuery({ client: doc, pageSize: 8 }, {
    TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'log' },
  })) all.push(...page.Items);
  assert.equal(all.length, 30);
});

test('conditional update', async () => {
  await doc.send(new PutCommand({ TableName, Item: { pk: 'acct', sk: 1, balance: 100 } }));
  await assert.rejects(doc.send(new UpdateCommand({
    TableName, Key: { pk: 'acct', sk: 1 }, UpdateExpression: 'SET balance = balance - :x',
    ConditionExpression: 'balance >= :x', ExpressionAttributeValues: { ':x': 500 },
  })), (err) => err.name === 'ConditionalCheckFailedException');
  await doc.send(new UpdateCommand({
    TableName, Key: { pk: 'acct', sk: 1 }, UpdateExpression: 'SET balance = balance - :x',
    ConditionExpression: 'balance >= :x', ExpressionAttributeValues: { ':x': 40 },
  }));
  const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: 'acct', sk: 1 } }));
  assert.equal(Item.balance, 60);
});

test('transaction', async () => {
  await doc.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName, Item: { pk: 'acct', sk: 2, balance: 100 } } },
      { Put: { TableName, Item: { pk: 'acct', sk: 3, balance: 0 } } },
    ],
  }));
  await assert.rejects(doc.send(new TransactWriteCommand({
    TransactItems: [
      { Update: { TableName, Key: { pk: 'acct', sk: 2 }, UpdateExpression: 'SET balance = balance - :x',
                  ConditionExpression: 'balance >= :x', ExpressionAttributeValues: { ':x': 500 } } },
      { Update: { TableName, Key: { pk: 'acct', sk: 3 }, UpdateExpression: 'SET balance = balance + :x',
                  ExpressionAttributeValues: { ':x': 500 } } },
    ],
  })), (err) => err.name === 'TransactionCanceledException');
  const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: 'acct', sk: 3 } }));
  assert.equal(Item.balance, 0);
});
