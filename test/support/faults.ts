import { DynamoDBClient, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach } from 'vitest';

/*
 * Faults DynamoDB Local cannot produce (conflicts, throttling, answers lost after a write was
 * applied) are injected by aws-sdk-client-mock in front of the functions' DocumentClient;
 * everything else still reaches the real DynamoDB Local through an unmocked low-level client, so
 * what is stored is real.
 */
const real = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });

/** Sends a command to the real DynamoDB Local, past the mock. */
export const forward = <T>(command: T) => real.send(command as never);

/**
 * Mocks every DocumentClient of the test file: before each test, the commands the functions send
 * go through to DynamoDB Local until a test says otherwise with `on(...)`.
 */
export function mockDocumentClients() {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    ddb.reset();
    ddb.on(GetCommand).callsFake((input) => forward(new GetCommand(input)));
    ddb.on(PutCommand).callsFake((input) => forward(new PutCommand(input)));
    ddb.on(TransactWriteCommand).callsFake((input) => forward(new TransactWriteCommand(input)));
  });
  afterAll(() => ddb.restore());
  return ddb;
}

/** DynamoDB's answer to a request over the table's throughput. */
export const throttled = () =>
  new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput', $metadata: {} });

/** The SDK's error when DynamoDB's answer did not arrive in time (the write may have been applied). */
export const timeout = () =>
  Object.assign(new Error('Connection timed out after 3000 ms'), { name: 'TimeoutError' });
