import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { handler as probeHandler } from '#functions/probe/handler.ts';
import {
  examplePath,
  PATH_PARAMETER_EXAMPLE,
  PROBE_RETRY,
  probeCommands,
  smokeChecks,
  smokeTestCommands,
} from '#infra/pipeline/smoke-test.ts';
import { type Route, routes } from '#shared/routes.ts';

const routeTable: readonly Route[] = routes;

describe('smoke checks', () => {
  it('expect 200 from the OpenAPI document and 401 from every route with scopes, all from the route table', () => {
    const checks = smokeChecks();
    expect(checks[0]).toEqual({ method: 'GET', path: '/api/openapi.json', status: 200 });
    const protectedRoutes = routeTable.filter((route) => route.scopes !== null);
    expect(checks.slice(1)).toEqual(
      protectedRoutes.map((route) => ({ method: route.method, path: examplePath(route.path), status: 401 })),
    );
    // Concrete facts, so a wrong route table fails here too.
    expect(checks).toContainEqual({ method: 'POST', path: '/api/wallet/send', status: 401 });
    expect(checks).toContainEqual({
      method: 'GET',
      path: `/api/v3/pet/${PATH_PARAMETER_EXAMPLE}`,
      status: 401,
    });
    expect(checks.map((check) => check.path).join(' ')).not.toMatch(/[{}]/);
  });

  it('substitutes every path parameter', () => {
    expect(examplePath('/a/{x}/b/{y}')).toBe(`/a/${PATH_PARAMETER_EXAMPLE}/b/${PATH_PARAMETER_EXAMPLE}`);
    expect(examplePath('/api/openapi.json')).toBe('/api/openapi.json');
  });
});

// The generated commands run here as CodeBuild runs them: in one POSIX shell, against a stand-in
// for the API that answers as a correct (or a broken) deployment would.
describe('smoke test commands', () => {
  let server: Server;
  let baseUrl: string;
  let workdir: string;
  /** Status by "METHOD path"; anything else is a 401, as API Gateway answers without a token. */
  let overrides: Record<string, number> = {};
  const seen: string[] = [];

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'smoke-test-'));
    server = createServer((request, response) => {
      const key = `${request.method} ${request.url}`;
      seen.push(key);
      const status = overrides[key] ?? (key === 'GET /dev/api/openapi.json' ? 200 : 401);
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dev/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(workdir, { recursive: true, force: true });
  });

  function run(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        'sh',
        ['-c', smokeTestCommands().join('\n')],
        { cwd: workdir, env: { PATH: process.env.PATH ?? '', ...env } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it('passes against a stage that answers as deployed, calling every checked route below the stage URL', async () => {
    overrides = {};
    seen.length = 0;
    const result = await run({ API_URL: baseUrl });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Smoke test passed: ${smokeChecks().length} checks`);
    expect(seen).toEqual(smokeChecks().map((check) => `${check.method} /dev${check.path}`));
  });

  it('fails, listing every mismatch, when a protected route answers without a token', async () => {
    overrides = { 'GET /dev/api/wallet/balance': 200, 'POST /dev/api/wallet/send': 403 };
    const result = await run({ API_URL: baseUrl });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('GET /api/wallet/balance answered 200, expected 401');
    expect(result.stderr).toContain('POST /api/wallet/send answered 403, expected 401');
  });

  it('fails when the OpenAPI document is not served', async () => {
    overrides = { 'GET /dev/api/openapi.json': 404 };
    const result = await run({ API_URL: baseUrl });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('GET /api/openapi.json answered 404, expected 200');
  });

  it('fails at once without an API URL', async () => {
    const result = await run({});
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('API_URL is not set');
  });
});

/** What the probe function returns (functions/probe/handler.ts), as `aws lambda invoke` writes it. */
type ProbeAnswer = Awaited<ReturnType<typeof probeHandler>>;
/** One invocation as the stand-in `aws` answers it: the function's payload, or a failure of the CLI. */
type Invocation = { payload: string; functionError?: string } | { cliExit: number };

const PROBE_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:wallet-catalog-dev-probe';
const passed: ProbeAnswer = {
  ok: true,
  checks: [
    { check: 'openapi', ok: true, status: 200 },
    { check: 'token', ok: true, status: 200 },
    { check: 'authorized-read', ok: true, status: 200 },
  ],
};
const failed: ProbeAnswer = {
  ok: false,
  checks: [
    { check: 'openapi', ok: true, status: 200 },
    { check: 'token', ok: true, status: 200 },
    { check: 'authorized-read', ok: false, status: 403 },
  ],
};

/**
 * Stands in for the AWS CLI, which CodeBuild has and this machine need not: it records its
 * arguments and answers each `aws lambda invoke` as the next of FAKE_AWS_ANSWERS (the last one
 * repeating), writing the payload to the output file and the invocation's metadata to stdout.
 */
const FAKE_AWS = `#!/usr/bin/env node
const fs = require('node:fs');
fs.appendFileSync(process.env.FAKE_AWS_LOG, JSON.stringify(process.argv.slice(2)) + '\\n');
const calls = fs.readFileSync(process.env.FAKE_AWS_LOG, 'utf8').trim().split('\\n').length;
const answers = JSON.parse(process.env.FAKE_AWS_ANSWERS);
const answer = answers[Math.min(calls, answers.length) - 1];
if (answer.cliExit) {
  console.error('An error occurred (AccessDeniedException) when calling the Invoke operation');
  process.exit(answer.cliExit);
}
fs.writeFileSync(process.argv.at(-1), answer.payload);
const error = answer.functionError ? { FunctionError: answer.functionError } : {};
console.log(JSON.stringify({ StatusCode: 200, ...error, ExecutedVersion: '$LATEST' }));
`;

// The generated commands run in one POSIX shell, as CodeBuild runs them, with the CLI stood in for.
describe('probe commands', () => {
  let workdir: string;
  let bin: string;
  let log: string;

  beforeAll(() => {
    workdir = mkdtempSync(join(tmpdir(), 'probe-step-'));
    bin = join(workdir, 'bin');
    log = join(workdir, 'aws-calls.jsonl');
    mkdirSync(bin);
    writeFileSync(join(bin, 'aws'), FAKE_AWS);
    chmodSync(join(bin, 'aws'), 0o755);
  });

  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  function run(
    answers: Invocation[],
    env: Record<string, string> = { PROBE_FUNCTION_ARN: PROBE_ARN },
  ): Promise<{ code: number; stdout: string; stderr: string; calls: string[][] }> {
    rmSync(log, { force: true });
    // No delay between attempts here; the step's own is PROBE_RETRY's.
    const commands = probeCommands({ attempts: PROBE_RETRY.attempts, delaySeconds: 0 });
    return new Promise((resolve) => {
      execFile(
        'sh',
        ['-c', commands.join('\n')],
        {
          cwd: workdir,
          env: {
            PATH: `${bin}:${process.env.PATH ?? ''}`,
            FAKE_AWS_LOG: log,
            FAKE_AWS_ANSWERS: JSON.stringify(answers),
            ...env,
          },
        },
        (error, stdout, stderr) => {
          let calls: string[][] = [];
          try {
            calls = readFileSync(log, 'utf8')
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as string[]);
          } catch {
            // No call was made.
          }
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr, calls });
        },
      );
    });
  }

  it('invokes the function its ARN names, in the region the ARN names, once when it passes', async () => {
    const result = await run([{ payload: JSON.stringify(passed) }]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([
      [
        'lambda',
        'invoke',
        '--region',
        'eu-west-1',
        '--function-name',
        PROBE_ARN,
        '--cli-read-timeout',
        '60',
        'probe-result.json',
      ],
    ]);
    expect(result.stdout).toContain('Probe passed: openapi 200, token 200, authorized-read 200');
  });

  it('fails the stage when every run reports a failure, saying which check failed', async () => {
    const result = await run([{ payload: JSON.stringify(failed) }]);
    expect(result.code).not.toBe(0);
    expect(result.calls).toHaveLength(PROBE_RETRY.attempts);
    expect(result.stderr).toContain(`Probe failed: ${JSON.stringify(failed)}`);
    expect(result.stderr).toContain(`Probe failed ${PROBE_RETRY.attempts} times`);
  });

  it('passes when a later run passes, as after a cold start', async () => {
    const result = await run([{ payload: JSON.stringify(failed) }, { payload: JSON.stringify(passed) }]);
    expect(result.code).toBe(0);
    expect(result.calls).toHaveLength(2);
    expect(result.stdout).toContain('Probe passed');
  });

  it('fails the stage when the function raises rather than answering', async () => {
    const payload = JSON.stringify({ errorType: 'Error', errorMessage: 'PROBE_TOKEN_URL is not set' });
    const result = await run([{ payload, functionError: 'Unhandled' }]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`the function raised (Unhandled): ${payload}`);
  });

  it('fails the stage on an answer that is not the verdict, or no answer at all', async () => {
    for (const payload of ['null', '{"ok":"true"}', '']) {
      const result = await run([{ payload }]);
      expect(result.code, payload).not.toBe(0);
    }
  });

  it('fails the stage when the function cannot be invoked', async () => {
    const result = await run([{ cliExit: 254 }]);
    expect(result.code).not.toBe(0);
    expect(result.calls).toHaveLength(PROBE_RETRY.attempts);
    expect(result.stderr).toContain('AccessDeniedException');
  });

  it('fails at once without the function ARN', async () => {
    const result = await run([{ payload: JSON.stringify(passed) }], {});
    expect(result.code).not.toBe(0);
    expect(result.calls).toEqual([]);
    expect(result.stderr).toContain('PROBE_FUNCTION_ARN is not set');
  });
});
