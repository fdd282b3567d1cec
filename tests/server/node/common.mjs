// common.mjs — the client configuration every Node test uses: quarry's endpoint and a key
// of its credentials file, both handed over by the pytest wrapper (test_node.py).
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
