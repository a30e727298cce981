import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as send } from '#functions/send-money/handler.ts';
import { apiEvent, invoke, uniqueSub } from '../support/events.ts';
import { linesWrittenBy, metricLines } from '../support/logs.ts';
import { fund, open } from '../support/wallet.ts';

const SECRET_TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzZWNyZXQifQ.c2lnbmF0dXJlLXNlY3JldA';

afterEach(() => vi.restoreAllMocks());

describe('request logs', () => {
  it('write one line per request with correlation id, route, caller, outcome and latency, and its metrics, but no token or body', async () => {
    const [alice, bob] = [uniqueSub('alice'), uniqueSub('bob')];
    await Promise.all([fund(alice, 1_000), open(bob)]);
    const body = `{"toAddress":"${bob}","amount":1.25}`;
    const event = apiEvent({
      sub: alice,
      scopes: ['write:wallet'],
      method: 'POST',
      rawBody: body,
      headers: { Authorization: `Bearer ${SECRET_TOKEN}`, 'Content-Type': 'application/json' },
    });
    const lines = await linesWrittenBy(() => invoke(send, event));
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRET_TOKEN);
    expect(text).not.toContain(body);

    const requestLines = lines.filter((line) => line.message === 'request');
    expect(requestLines).toHaveLength(1);
    const [line] = requestLines;
    expect(line).toMatchObject({
      level: 'INFO',
      correlation_id: event.requestContext.requestId,
      route: 'sendMoney',
      sub: alice,
      status: 200,
      outcome: 'ok',
    });
    expect(typeof line?.latencyMs).toBe('number');
    const [metrics, ...others] = metricLines(lines);
    expect(others).toEqual([]);
    expect(metrics).toMatchObject({
      route: 'sendMoney',
      Requests: 1,
      Transfers: 1,
      TransferVolumeMinor: 125,
    });
    const emf = metrics?._aws as
      | { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string }[] }[] }
      | undefined;
    const directive = emf?.CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('WalletCatalog');
    expect(directive?.Metrics.map((m) => m.Name)).toEqual(
      expect.arrayContaining(['Requests', 'Latency', 'Transfers', 'TransferVolumeMinor']),
    );
  });

  it('name the problem type as the outcome of a refused request and count it as a client error', async () => {
    const lines = await linesWrittenBy(() =>
      invoke(
        send,
        apiEvent({ scopes: ['write:wallet'], method: 'POST', rawBody: '{"toAddress":"x","amount":"5"}' }),
      ),
    );
    expect(lines.find((line) => line.message === 'request')).toMatchObject({
      status: 422,
      outcome: 'validation-failed',
    });
    expect(metricLines(lines)).toEqual([expect.objectContaining({ ClientErrors: 1 })]);
  });
});
