import { describe, expect, it } from 'vitest';
import { httpHandler } from '#shared/http/handler.ts';
import { setOutcome } from '#shared/observability/telemetry.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { linesWrittenBy } from '../support/logs.ts';

/** The `outcome` of the one request line a call of `handler` writes. */
async function outcomeOf(handler: ReturnType<typeof httpHandler>): Promise<unknown> {
  const lines = await linesWrittenBy(() =>
    invoke(handler, apiEvent({ method: 'GET', path: '/api/v3/pet/1', scopes: ['read:pets'] })),
  );
  const requests = lines.filter((line) => line.message === 'request');
  expect(requests).toHaveLength(1);
  return requests[0]?.outcome;
}

describe('the request line outcome', () => {
  it('is the one the handler names while it runs', async () => {
    const handler = httpHandler({
      operationId: 'getPetById',
      run: async () => {
        setOutcome('idempotent-replay');
        return { statusCode: 200, body: {} };
      },
    });
    expect(await outcomeOf(handler)).toBe('idempotent-replay');
  });

  it('is ok when the handler names none', async () => {
    const handler = httpHandler({
      operationId: 'getPetById',
      run: async () => ({ statusCode: 200, body: {} }),
    });
    expect(await outcomeOf(handler)).toBe('ok');
  });
});
