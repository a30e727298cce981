import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createGetBalanceHandler } from '#functions/get-balance/handler.ts';
import { createSendMoneyHandler } from '#functions/send-money/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke, sendEvent, uniqueSub } from '../support/events.ts';

/*
 * DynamoDB down: nothing listens at the endpoint, or its name does not resolve. The SDK gets a
 * network error with no HTTP status, which must end in a 503 with Retry-After like any passing
 * fault, never a 500.
 */

/** An endpoint where connections are refused: a port just freed. */
async function refusingEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** The functions, built through their composition roots on a client of `endpoint`. */
function handlersAt(endpoint: string) {
  const dependencies = {
    client: createDocumentClient({ endpoint }),
    tableName: process.env.WALLETS_TABLE_NAME as string,
    settings: loadWalletSettings(),
  };
  return { send: createSendMoneyHandler(dependencies), balance: createGetBalanceHandler(dependencies) };
}

describe('DynamoDB unreachable', () => {
  it.each([
    ['refuses connections', refusingEndpoint],
    ['has a name that does not resolve', async () => 'http://dynamodb.invalid:8000'],
  ])('answers 503 problem+json with Retry-After, not 500, when DynamoDB %s', async (_name, endpoint) => {
    const { send, balance } = handlersAt(await endpoint());
    const sub = uniqueSub();
    const responses = [
      await invoke(
        balance,
        apiEvent({ sub, scopes: ['read:wallet'], method: 'GET', path: '/api/wallet/balance' }),
      ),
      await invoke(send, sendEvent(sub, { toAddress: uniqueSub(), amount: 1 })),
    ];
    for (const response of responses) {
      expect(response.statusCode).toBe(503);
      expect(response.contentType).toBe('application/problem+json');
      expect(response.headers?.['retry-after']).toMatch(/^\d+$/);
      expect(response.body).not.toMatch(/ECONN|ENOTFOUND|EAI_AGAIN|socket|invalid|127\.0\.0\.1|at /i);
    }
  });
});
