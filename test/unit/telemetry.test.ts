import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addMetric, requestTelemetry, setOutcome } from '#shared/observability/telemetry.ts';
import { linesWrittenBy, logLines, metricLines } from '../support/logs.ts';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

type Directive = { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
const DIMENSIONS = process.env.STAGE ? ['service', 'stage', 'route'] : ['service', 'route'];
const directiveOf = (line: Record<string, unknown> | undefined) =>
  (line?._aws as { CloudWatchMetrics: Directive } | undefined)?.CloudWatchMetrics[0];

describe('request telemetry', () => {
  it('writes one line per request: its log line naming the request and caller, carrying its metrics by route', async () => {
    const telemetry = requestTelemetry('sendMoney');
    const request = { requestId: 'req-"quoted"\n-é', sub: 'user "x"\u0001' };
    const lines = await linesWrittenBy(() =>
      telemetry(request, undefined, async () => {
        addMetric('Transfers', 1);
        addMetric('TransferVolumeMinor', 125, 'None');
        addMetric('Transfers', 1);
        setOutcome('temporarily-unavailable');
        return { statusCode: 503 };
      }),
    );
    expect(lines).toHaveLength(1);
    const [log] = logLines(lines);
    const [emf] = metricLines(lines);
    expect(emf).toBe(log);
    expect(log).toMatchObject({
      level: 'ERROR',
      message: 'request',
      service: 'wallet-catalog-api',
      correlation_id: request.requestId,
      route: 'sendMoney',
      sub: request.sub,
      status: 503,
      outcome: 'temporarily-unavailable',
    });
    expect(typeof log?.latencyMs).toBe('number');

    expect(emf).toMatchObject({
      route: 'sendMoney',
      Requests: 1,
      ServerErrors: 1,
      Transfers: 2,
      TransferVolumeMinor: 125,
    });
    expect(emf?.ClientErrors).toBeUndefined();
    expect(emf?.Latency).toBe(log?.latencyMs);
    const directive = directiveOf(emf);
    expect(directive?.Namespace).toBe('WalletCatalog');
    // The dimensions the alarms name (infra/constructs/service-monitoring.ts).
    expect(directive?.Dimensions).toEqual([DIMENSIONS]);
    const named = Object.fromEntries((directive?.Metrics ?? []).map((m) => [m.Name, m.Unit]));
    const valued = Object.keys(emf ?? {}).filter((key) => /^[A-Z]/.test(key));
    expect(Object.keys(named).sort()).toEqual(valued.sort());
    expect(named).toMatchObject({ Latency: 'Milliseconds', TransferVolumeMinor: 'None', Transfers: 'Count' });
  });

  it('counts a refusal as a client error, with the status as outcome when none was named', async () => {
    const lines = await linesWrittenBy(() =>
      requestTelemetry('getPetById')({ requestId: 'r1' }, undefined, async () => ({ statusCode: 404 })),
    );
    const [log] = logLines(lines);
    const [emf] = metricLines(lines);
    expect(log).toMatchObject({ level: 'INFO', status: 404, outcome: 'http-404' });
    expect(log).not.toHaveProperty('sub');
    expect(emf).toMatchObject({ ClientErrors: 1 });
    expect(directiveOf(emf)?.Metrics.map((m) => m.Name)).not.toContain('ServerErrors');
  });

  it('keeps the metrics of concurrent requests apart', async () => {
    const telemetry = requestTelemetry('sendMoney');
    const lines = await linesWrittenBy(() =>
      Promise.all(
        [1, 2, 3].map((n) =>
          telemetry({ requestId: `r${n}` }, undefined, async () => {
            await new Promise((resolve) => setTimeout(resolve, 5 * (4 - n)));
            addMetric('TransferVolumeMinor', n, 'None');
            return { statusCode: 200 };
          }),
        ),
      ),
    );
    const pairs = lines.map((line) => [line.correlation_id, line.TransferVolumeMinor]);
    expect(pairs.sort()).toEqual([
      ['r1', 1],
      ['r2', 2],
      ['r3', 3],
    ]);
  });

  it('counts the first request of an on-demand execution environment as its cold start, by route', async () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const telemetry = requestTelemetry('getBalance');
    const ok = async () => ({ statusCode: 200 });
    const first = metricLines(await linesWrittenBy(() => telemetry({ requestId: 'r1' }, undefined, ok)));
    const second = metricLines(await linesWrittenBy(() => telemetry({ requestId: 'r2' }, undefined, ok)));
    const coldStart = first.find((line) => 'ColdStart' in line);
    expect(coldStart).toMatchObject({ ColdStart: 1, service: 'wallet-catalog-api', route: 'getBalance' });
    expect(directiveOf(coldStart)?.Dimensions).toEqual([DIMENSIONS]);
    expect(second.some((line) => 'ColdStart' in line)).toBe(false);
  });
});

describe('log lines', () => {
  const context = {
    functionName: 'wallet-send',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:wallet-send',
    memoryLimitInMB: '1024',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  } as Context;

  it("carry Powertools' keys, the invocation's from its context, cold only on the first", async () => {
    vi.stubEnv(
      '_X_AMZN_TRACE_ID',
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    );
    const { logger } = await freshTelemetry();
    const lines = await linesWrittenBy(async () => {
      logger.addContext(context);
      logger.info('first', { n: 1 });
      logger.addContext({ ...context, awsRequestId: 'second-request' });
      logger.warn('second');
    });
    expect(lines).toEqual([
      {
        level: 'INFO',
        message: 'first',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        service: 'wallet-catalog-api',
        ...(process.env.STAGE ? { stage: process.env.STAGE } : {}),
        cold_start: true,
        function_arn: context.invokedFunctionArn,
        function_memory_size: 1024,
        function_name: 'wallet-send',
        function_request_id: context.awsRequestId,
        xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
        n: 1,
      },
      expect.objectContaining({ level: 'WARN', cold_start: false, function_request_id: 'second-request' }),
    ]);
  });

  it("carry their own request's function, however requests of several functions interleave, and a line outside a request none of theirs", async () => {
    const telemetry = await freshTelemetry();
    const contextOf = (functionName: string) => ({ ...context, functionName, awsRequestId: functionName });
    const inside = (functionName: string, pause: number) =>
      telemetry.requestTelemetry(functionName)(
        { requestId: functionName },
        contextOf(functionName),
        async () => {
          await new Promise((resolve) => setTimeout(resolve, pause));
          telemetry.logger.warn(`from ${functionName}`);
          return { statusCode: 200 };
        },
      );
    const lines = await linesWrittenBy(async () => {
      await Promise.all([inside('send-money', 20), inside('get-balance', 5)]);
      // As the authorizer or the dispatcher logs, in the same process under `npm start`.
      telemetry.logger.warn('outside');
    });
    const names = Object.fromEntries(
      logLines(lines).map((line) => [`${line.message}:${line.route ?? ''}`, line.function_name]),
    );
    expect(names).toEqual({
      'from send-money:': 'send-money',
      'from get-balance:': 'get-balance',
      'request:send-money': 'send-money',
      'request:get-balance': 'get-balance',
      'outside:': undefined,
    });
  });

  it("are written from the level Lambda's log controls set, over LOG_LEVEL", async () => {
    vi.stubEnv('LOG_LEVEL', 'DEBUG');
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'WARN');
    const { logger } = await freshTelemetry();
    const lines = await linesWrittenBy(async () => {
      for (const level of ['debug', 'info', 'warn', 'error'] as const) logger[level](level);
    });
    expect(lines.map((line) => line.level)).toEqual(['WARN', 'ERROR']);
  });

  it("leave a request's metrics on a line of their own when the level drops the request line", async () => {
    vi.stubEnv('LOG_LEVEL', 'WARN');
    const telemetry = await freshTelemetry();
    const lines = await linesWrittenBy(() =>
      telemetry.requestTelemetry('getBalance')({ requestId: 'r' }, undefined, async () => ({
        statusCode: 200,
      })),
    );
    expect(logLines(lines)).toEqual([]);
    expect(metricLines(lines)).toEqual([expect.objectContaining({ route: 'getBalance', Requests: 1 })]);
  });

  it('are not written at SILENT, and metrics not when disabled', async () => {
    vi.stubEnv('LOG_LEVEL', 'SILENT');
    vi.stubEnv('METRICS_DISABLED', 'true');
    const telemetry = await freshTelemetry();
    const lines = await linesWrittenBy(async () => {
      telemetry.logger.error('never');
      await telemetry.requestTelemetry('getBalance')({ requestId: 'r' }, undefined, async () => ({
        statusCode: 500,
      }));
    });
    expect(lines).toEqual([]);
  });
});

/** The module as a cold start loads it, reading the environment stubbed before. */
async function freshTelemetry(): Promise<typeof import('#shared/observability/telemetry.ts')> {
  vi.resetModules();
  return import('#shared/observability/telemetry.ts');
}
