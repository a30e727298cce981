import type { TestProject } from 'vitest/node';
import { defaultServiceSettings, walletEnvironment } from '#infra/environment.ts';
import { ensureTables, LOCAL_AWS_ENV, startDynamoDbLocal } from '#infra/local/dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Environment every test worker runs with: DynamoDB Local endpoint, table names, settings. */
    env: Record<string, string>;
  }
}

/** One DynamoDB Local for the whole run; tests isolate their data by unique keys. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal();
  const tableEnv = await ensureTables(dynamo.endpoint, `test-${process.pid}`);
  const env: Record<string, string> = {
    ...LOCAL_AWS_ENV,
    ...tableEnv,
    ...walletEnvironment(defaultServiceSettings),
    DYNAMODB_ENDPOINT: dynamo.endpoint,
  };
  project.provide('env', env);
  return async () => {
    await dynamo.stop();
  };
}
