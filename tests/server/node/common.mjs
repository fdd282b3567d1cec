// common.mjs — the client configuration every Node test uses: quarry's endpoint and a key
// of its credentials file, both handed over by the pytest wrapper (test_node.py).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const endpoint = process.env.QUARRY_ENDPOINT;
if (!endpoint) throw new Error('QUARRY_ENDPOINT is not set (run through tests/server/test_node.py)');

export function makeClient(overrides = {}) {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: {
      accessKeyId: process.env.QUARRY_KEY_ID ?? 'local',
      secretAccessKey: process.env.QUARRY_SECRET ?? 'local',
    },
    maxAttempts: 1,
    ...overrides,
  });
}
