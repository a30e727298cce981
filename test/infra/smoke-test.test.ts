import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  examplePath,
  PATH_PARAMETER_EXAMPLE,
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
