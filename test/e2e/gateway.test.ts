import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defaultCallerRateLimit } from '#infra/environment.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { routes, SCOPES } from '#shared/routes.ts';
import { uniqueSub } from '../support/events.ts';
import { call, expectProblem, gateway, tokenFor, uniquePetId } from './http.ts';

/** What the gateway answers itself, before or instead of a function, as API Gateway does. */

const invalidToken = 'Bearer error="invalid_token"';

describe('a protected route without a valid token', () => {
  // Every other token the authorizer refuses: test/unit/authorizer.test.ts; an expired one the
  // gateway has cached: test/e2e/token-lifetime.test.ts.
  it('answers 401 without a token, asking for one', async () => {
    for (const result of [
      await call('POST', '/api/v3/pet', { json: { name: 'doggie', photoUrls: [] } }),
      await call('GET', `/api/v3/pet/${uniquePetId()}`),
      await call('GET', `/api/v3/pet/${uniquePetId()}`, { headers: { authorization: '' } }),
    ]) {
      expectProblem(result, 401);
      expect(result.headers.get('www-authenticate')).toBe(invalidToken);
    }
  });

  it('answers 403 for a valid token without the scope the route needs', async () => {
    const readOnly = await tokenFor('read:pets');
    const result = await call('POST', '/api/v3/pet', {
      token: readOnly,
      json: { name: 'doggie', photoUrls: [] },
    });
    expectProblem(result, 403);
    expect(result.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);

    // The same token, answered from the authorizer cache, still opens the route its scope grants.
    expectProblem(await call('GET', `/api/v3/pet/${uniquePetId()}`, { token: readOnly }), 404);
  });

  it('answers 403 for a token with no scope at all', async () => {
    const result = await call('GET', `/api/v3/pet/${uniquePetId()}`, { token: await tokenFor('') });
    expectProblem(result, 403);
    expect(result.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
  });
});

describe('a request no route serves', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/api/v3/pets'],
    ['DELETE', '/api/v3'],
    ['GET', '/api/v3/pet/1/photos'],
    ['GET', '/api/v3/pet//'],
  ])('answers 404 for %s %s, token or not', async (method, path) => {
    const problem = expectProblem(await call(method, path), 404);
    expect(problem.type).toBe('urn:problem-type:wallet-catalog:no-such-route');
    expectProblem(await call(method, path, { token: await tokenFor('read:pets write:pets') }), 404);
  });
});

describe('a method a known path is not served with', () => {
  it.each([
    ['PUT', '/api/v3/pet/1', 'GET, POST, DELETE'],
    ['DELETE', '/api/v3/pet', 'POST, PUT'],
    ['GET', '/api/v3/pet', 'POST, PUT'],
    // A literal resource beside /pet/{petId}: its own methods, not the parameter's (the form update).
    ['POST', '/api/v3/pet/findByStatus', 'GET'],
    ['DELETE', '/api/v3/pet/findByTags', 'GET'],
    ['POST', '/api/wallet/balance', 'GET'],
    ['PATCH', '/api/docs/anything.css', 'GET'],
  ])('answers %s %s with 405 and Allow: %s, token or not', async (method, path, served) => {
    // The e2e gateway answers CORS preflight, so OPTIONS is allowed too (a stage without CORS: `served` alone).
    const allow = `${served}, OPTIONS`;
    const problem = expectProblem(await call(method, path), 405);
    expect(problem.type).toBe('urn:problem-type:wallet-catalog:method-not-allowed');
    const withToken = await call(method, path, { token: await tokenFor('read:pets write:pets') });
    expectProblem(withToken, 405);
    expect(withToken.headers.get('allow')).toBe(allow);
  });

  it('answers HEAD with 405 where GET is served: API Gateway REST APIs give no implicit HEAD', async () => {
    const result = await call('HEAD', '/api/openapi.json');
    expect(result.status).toBe(405);
    expect(result.headers.get('allow')).toBe('GET, OPTIONS');
  });
});

describe('a trailing slash', () => {
  it('is refused on a public route (404), where API Gateway would call the function', async () => {
    expect((await call('GET', '/api/openapi.json')).status).toBe(200);
    const problem = expectProblem(await call('GET', '/api/openapi.json/'), 404);
    expect(problem.detail).toMatch(/without the slash/);
    expectProblem(await call('GET', '/api/docs/'), 404);
  });

  it('answers the same 404 on every route, before the scopes are judged', async () => {
    const all = await tokenFor(Object.keys(SCOPES).join(' '));
    const none = await tokenFor('');
    for (const route of routes) {
      const path = `${route.path.replace(/\{[^}]+\}/g, '1')}/`;
      for (const token of [all, none]) {
        const problem = expectProblem(await call(route.method, path, { token }), 404);
        expect(problem.detail, `${route.method} ${path}`).toMatch(/without the slash/);
      }
    }
  });
});

/** Sends `request` as raw bytes and returns the raw answer, read until the server closes. */
async function rawExchange(request: string): Promise<{ status: number; headers: string; body: string }> {
  const socket = connect(gateway.port, '127.0.0.1');
  socket.end(request);
  let raw = '';
  for await (const chunk of socket) raw += (chunk as Buffer).toString();
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body };
}

describe('a request Node itself refuses', () => {
  it.each([
    [
      'headers over Node’s limit',
      431,
      `GET /api/openapi.json HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ],
    ['a malformed request line', 400, 'NOT A REQUEST\r\n\r\n'],
    [
      'a Content-Length that is not a number',
      400,
      'POST /api/v3/pet HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
    ],
    [
      'an expectation other than 100-continue',
      417,
      'GET /api/openapi.json HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n',
    ],
    ['an HTTP/1.1 request without Host', 400, 'GET /api/openapi.json HTTP/1.1\r\n\r\n'],
    [
      'chunk extensions over Node’s limit',
      413,
      `POST /api/v3/pet HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'a'.repeat(20_000)}\r\nx\r\n0\r\n\r\n`,
    ],
  ])('answers %s with problem+json (%i)', async (_, status, request) => {
    const answer = await rawExchange(request);
    expect(answer.status).toBe(status);
    expect(answer.headers).toContain('content-type: application/problem+json');
    const problem = JSON.parse(answer.body);
    expect(problem).toMatchObject({
      type: expect.stringMatching(/^urn:problem-type:wallet-catalog:/),
      status,
      detail: expect.any(String),
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(answer.headers).toContain(`x-amzn-requestid: ${problem.requestId}`);
  });
});

describe('one caller flooding the API', () => {
  const limit = 3;
  let own: { child: ChildProcess; baseUrl: string; stateDir: string } | undefined;

  // A gateway of its own with a small limit, on the run's DynamoDB Local: the shared one keeps the default.
  beforeAll(async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'rate-limit-'));
    const child = spawn(
      process.execPath,
      [
        'infra/local/start.ts',
        '--quiet',
        '--caller-rate-limit',
        String(limit),
        '--dynamodb-endpoint',
        inject('env').DYNAMODB_ENDPOINT as string,
      ],
      {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: {
          ...process.env,
          // Any free port, named in the banner: one found free here could be taken before it binds.
          PORT: '0',
          LOCAL_STATE_DIR: stateDir,
          LOG_LEVEL: 'SILENT',
          METRICS_DISABLED: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const baseUrl = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /Local API ready at (http:\/\/\S+)/.exec(output)?.[1];
        if (url) resolve(url);
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}:\n${output}`)));
    });
    own = { child, baseUrl, stateDir };
  }, 60_000);

  afterAll(async () => {
    if (own?.child.exitCode === null) {
      const exited = once(own.child, 'exit');
      own.child.kill('SIGTERM');
      await exited;
    }
    if (own) await rm(own.stateDir, { recursive: true, force: true });
  });

  const get = (authorization?: string) =>
    fetch(`${own?.baseUrl}/api/openapi.json`, {
      headers: authorization === undefined ? {} : { authorization },
    });

  it('answers 429 problem+json with Retry-After past the limit, per Authorization header', async () => {
    const flooder = `Bearer ${uniqueSub('flooder')}`;
    for (let i = 0; i < limit; i++) expect((await get(flooder)).status).toBe(200);

    const refused = await get(flooder);
    const text = await refused.text();
    expectProblem({ status: refused.status, headers: refused.headers, text, json: JSON.parse(text) }, 429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);

    // Other callers, and requests without the header (which WAF does not count), go on.
    expect((await get(`Bearer ${uniqueSub('other')}`)).status).toBe(200);
    for (let i = 0; i <= limit; i++) expect((await get()).status).toBe(200);
  });

  it('refuses before the authorizer runs: a flood of bad tokens is throttled too', async () => {
    const bad = `Bearer ${uniqueSub('not-a-jwt')}`;
    const statuses: number[] = [];
    for (let i = 0; i <= limit; i++) {
      const response = await fetch(`${own?.baseUrl}/api/wallet/balance`, { headers: { authorization: bad } });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array(limit).fill(401), 429]);
  });
});

describe('one token spelt many ways', () => {
  it('counts every spelling of the token against one bucket: the request past the limit gets 429', async () => {
    const { limit } = defaultCallerRateLimit;
    const token = uniqueSub('respelt');
    const spellings = ['Bearer', 'bearer', 'BEARER', 'bEARER'].flatMap((scheme) =>
      [' ', '  ', '   '].map((spaces) => `${scheme}${spaces}${token}`),
    );
    // WAF counts every request with the header, routed or not: a path no route serves is the cheapest.
    const get = (authorization: string) =>
      fetch(`${gateway.baseUrl}/api/rate-limit-probe`, { headers: { authorization } });
    const statuses: number[] = [];
    for (let sent = 0; sent < limit; sent += 25) {
      const batch = Array.from({ length: Math.min(25, limit - sent) }, (_, i) =>
        get(spellings[(sent + i) % spellings.length] as string).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        }),
      );
      statuses.push(...(await Promise.all(batch)));
    }
    expect(statuses).toEqual(Array(limit).fill(404));
    const refused = await get(`BeArEr    ${token}`);
    const text = await refused.text();
    expectProblem({ status: refused.status, headers: refused.headers, text, json: JSON.parse(text) }, 429);
  });
});

describe('the local identity provider', () => {
  it("serves the issuer's public keys, which verify its tokens", async () => {
    const result = await call('GET', '/.well-known/jwks.json');
    expect(result.status).toBe(200);
    const { keys } = result.json as { keys: Array<Record<string, unknown>> };
    expect(keys).toEqual([expect.objectContaining({ kty: 'EC', alg: 'ES256', use: 'sig' })]);
    expect(keys[0]).not.toHaveProperty('d');
  });
});

describe("the suite's stack", () => {
  it('keeps its tables on a DynamoDB Local of its own, apart from the load of the integration tests', async () => {
    // One DynamoDB Local serves every request through one SQLite thread: shared, the stack's
    // payments waited behind the integration tests' requests and ran out of time (503).
    const stack = await readRunningStack(gateway.port, gateway.stateDir);
    if (!stack) throw new Error('The e2e stack is not running');
    const workers = inject('env').DYNAMODB_ENDPOINT as string;
    expect(stack.dynamodbLocalEndpoint).not.toBe(workers);
    const tableAt = async (endpoint: string) => {
      const client = createDocumentClient({ endpoint });
      try {
        const { Table } = await client.send(
          new DescribeTableCommand({ TableName: stack.env.WALLETS_TABLE_NAME }),
        );
        return Table?.TableName;
      } catch (error) {
        if ((error as Error).name === 'ResourceNotFoundException') return undefined;
        throw error;
      } finally {
        client.destroy();
      }
    };
    expect(await tableAt(stack.dynamodbLocalEndpoint)).toBe(stack.env.WALLETS_TABLE_NAME);
    expect(await tableAt(workers)).toBeUndefined();
  });
});
