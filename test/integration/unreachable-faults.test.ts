import dns from 'node:dns';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
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

/**
 * An endpoint whose name does not resolve, answered by an injected resolver: `.invalid` is not
 * special to glibc, which would ask the machine's name server, and tests send nothing off loopback.
 */
const askedOfTheResolver: string[] = [];
async function unresolvableEndpoint(): Promise<string> {
  const lookup = dns.lookup;
  vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, ...rest: unknown[]) => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException) => void;
    if (hostname !== 'dynamodb.invalid') return (lookup as (...args: unknown[]) => void)(hostname, ...rest);
    askedOfTheResolver.push(hostname);
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    error.code = 'ENOTFOUND';
    process.nextTick(callback, error);
  }) as typeof dns.lookup);
  return 'http://dynamodb.invalid:8000';
}

afterEach(() => {
  vi.restoreAllMocks();
  askedOfTheResolver.length = 0;
});

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
    ['has a name that does not resolve', unresolvableEndpoint],
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
    // The name was answered here, not by the machine's name server.
    expect(askedOfTheResolver.length > 0).toBe(endpoint === unresolvableEndpoint);
  });
});
