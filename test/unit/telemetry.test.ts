import { afterEach, describe, expect, it, vi } from 'vitest';
import { addMetric, jsonString, setOutcome, withRequestTelemetry } from '#shared/observability/telemetry.ts';
import { linesWrittenBy } from '../support/logs.ts';

afterEach(() => vi.restoreAllMocks());

type Directive = { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];

describe('jsonString', () => {
  const awkward = [
    '',
    'plain',
    'a"b',
    'a\\b',
    'line\nbreak',
    '\u0000',
    '\u001f',
    '\u007f',
    'é',
    '😀',
    '\ud800',
    'x\udc00',
  ];

  it.each(awkward)('writes %j as JSON.stringify does', (text) => {
    expect(jsonString(text)).toBe(JSON.stringify(text));
  });

  it('writes any string as JSON.stringify does', () => {
    for (let i = 0; i < 2_000; i++) {
      const length = Math.floor(Math.random() * 12);
      const text = String.fromCharCode(...Array.from({ length }, () => Math.floor(Math.random() * 0x10000)));
      expect(jsonString(text)).toBe(JSON.stringify(text));
    }
  });
});

describe('request lines', () => {
  it('carry the request, the caller and every metric, each named in the EMF directive', async () => {
    const request = { route: 'sendMoney', requestId: 'req-"quoted"\n-é', sub: 'user "x"\u0001' };
    const [line, ...others] = await linesWrittenBy(() =>
      withRequestTelemetry(request, async () => {
        addMetric('Transfers', 1);
        addMetric('TransferVolumeMinor', 125, 'None');
        addMetric('Transfers', 1);
        setOutcome('temporarily-unavailable');
        return { statusCode: 503 };
      }),
    );
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      level: 'ERROR',
      message: 'request',
      requestId: request.requestId,
      route: 'sendMoney',
      sub: request.sub,
      status: 503,
      outcome: 'temporarily-unavailable',
      Requests: 1,
      ServerErrors: 1,
      Transfers: 2,
      TransferVolumeMinor: 125,
    });
    expect(line?.ClientErrors).toBeUndefined();
    expect(typeof line?.latencyMs).toBe('number');

    const aws = line?._aws as { Timestamp: number; CloudWatchMetrics: Directive };
    expect(aws.Timestamp).toBe(Date.parse(line?.timestamp as string));
    const [directive] = aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('WalletCatalog');
    const named = Object.fromEntries((directive?.Metrics ?? []).map((m) => [m.Name, m.Unit]));
    const valued = Object.keys(line ?? {}).filter((key) => /^[A-Z]/.test(key));
    expect(Object.keys(named).sort()).toEqual(valued.sort());
    expect(named).toMatchObject({ Latency: 'Milliseconds', TransferVolumeMinor: 'None', Transfers: 'Count' });
  });

  it('count a refusal as a client error, with the status as outcome when none was named', async () => {
    const [line] = await linesWrittenBy(() =>
      withRequestTelemetry({ route: 'getPetById', requestId: 'r1' }, async () => ({ statusCode: 404 })),
    );
    expect(line).toMatchObject({ level: 'INFO', status: 404, outcome: 'http-404', ClientErrors: 1 });
    expect(line).not.toHaveProperty('sub');
    const [directive] = (line?._aws as { CloudWatchMetrics: Directive } | undefined)?.CloudWatchMetrics ?? [];
    expect(directive?.Metrics.map((m) => m.Name)).toContain('ClientErrors');
    expect(directive?.Metrics.map((m) => m.Name)).not.toContain('ServerErrors');
  });

  it('keep the metrics of concurrent requests apart', async () => {
    const lines = await linesWrittenBy(() =>
      Promise.all(
        [1, 2, 3].map((n) =>
          withRequestTelemetry({ route: 'sendMoney', requestId: `r${n}` }, async () => {
            await new Promise((resolve) => setTimeout(resolve, 5 * (4 - n)));
            addMetric('TransferVolumeMinor', n, 'None');
            return { statusCode: 200 };
          }),
        ),
      ),
    );
    expect(lines.map((line) => [line.requestId, line.TransferVolumeMinor]).sort()).toEqual([
      ['r1', 1],
      ['r2', 2],
      ['r3', 3],
    ]);
  });
});
