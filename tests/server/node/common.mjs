// common.mjs — what every Node test shares: the client configuration (quarry's endpoint and
// a key of its credentials file, both handed over by the pytest wrapper, test_node.py) and
// a poll for reads of global indexes.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const endpoint = process.env.QUARRY_ENDPOINT;
if (!endpoint) throw new Error('QUARRY_ENDPOINT is not set (run through tests/server/test_node.py)');

// The settings of every client the tests make: quarry's endpoint and the test's keys.
export function clientConfig(overrides = {}) {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: {
      accessKeyId: process.env.QUARRY_KEY_ID ?? 'local',
      secretAccessKey: process.env.QUARRY_SECRET ?? 'local',
    },
    maxAttempts: 1,
    ...overrides,
  };
}

export function makeClient(overrides = {}) {
  return new DynamoDBClient(clientConfig(overrides));
}

// Global indexes are eventually consistent, as in DynamoDB: reads read() every 100 ms, up
// to 100 times, until done(result) holds, and returns the last result.
export async function eventually(read, done) {
  let got;
  for (let i = 0; i < 100; i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    got = await read();
    if (done(got)) break;
  }
  return got;
}
