import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGetBalanceHandler } from '#functions/get-balance/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';

/*
 * DynamoDB calls as X-Ray subsegments: a UDP socket stands in for the X-Ray daemon, and the
 * handler runs against DynamoDB Local inside a sampled trace, as Lambda would run it.
 */
const daemon = createSocket('udp4');
const received: string[] = [];
let handler: ReturnType<typeof createGetBalanceHandler>;

beforeAll(async () => {
  daemon.on('message', (message) => received.push(message.toString()));
  daemon.bind(0, '127.0.0.1');
  await once(daemon, 'listening');
  // Built as its composition root builds it on Lambda, from the daemon address Lambda sets.
  const tracing = await tracingFromEnvironment({
    AWS_XRAY_DAEMON_ADDRESS: `udp:127.0.0.1:${daemon.address().port} tcp:127.0.0.1:2000`,
  });
  handler = createGetBalanceHandler({
    client: createDocumentClient({ tracing }),
    tableName: process.env.WALLETS_TABLE_NAME as string,
    settings: loadWalletSettings(),
  });
});
afterAll(() => {
  daemon.close();
  delete process.env._X_AMZN_TRACE_ID;
});

async function nextDocument(): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  const packet = received.shift();
  if (!packet) throw new Error('No subsegment reached the daemon');
  const [header, body] = packet.split('\n');
  expect(JSON.parse(header as string)).toEqual({ format: 'json', version: 1 });
  return JSON.parse(body as string);
}

describe('X-Ray', () => {
  it('sends each DynamoDB call as a subsegment of the sampled invocation', async () => {
    process.env._X_AMZN_TRACE_ID =
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    const response = await invoke(handler, apiEvent({ sub: uniqueSub(), scopes: ['read:wallet'] }));
    expect(response.statusCode).toBe(200);
    const subsegment = await nextDocument();
    expect(subsegment).toMatchObject({
      type: 'subsegment',
      name: 'DynamoDB',
      namespace: 'aws',
      trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      parent_id: '53995c3f42cd8ad8',
      aws: { operation: 'BatchGetItem', table_name: process.env.WALLETS_TABLE_NAME },
      http: { response: { status: 200 } },
    });
    expect(subsegment.id).toMatch(/^[0-9a-f]{16}$/);
    expect(subsegment.end_time as number).toBeGreaterThanOrEqual(subsegment.start_time as number);
    // A new caller's first call also opens its wallet (the wallet and its address's skeleton
    // claim, one transaction): the second call, traced the same way.
    expect(await nextDocument()).toMatchObject({
      parent_id: '53995c3f42cd8ad8',
      aws: { operation: 'TransactWriteItems', table_name: process.env.WALLETS_TABLE_NAME },
    });
  });

  it('sends nothing for an invocation X-Ray did not sample', async () => {
    received.length = 0;
    process.env._X_AMZN_TRACE_ID =
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0';
    await invoke(handler, apiEvent({ sub: uniqueSub(), scopes: ['read:wallet'] }));
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual([]);
  });
});
