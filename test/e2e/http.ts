/**
 * What the end-to-end tests share: the local gateway started by the global setup, tokens of its
 * issuer, HTTP calls with fetch, and the problem+json every error must be.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { expect, inject } from 'vitest';
import { signLocalToken } from '#infra/local/issuer.ts';
import { uniqueSub } from '../support/events.ts';
import { expectAsDocumented } from './contract.ts';

export const gateway = inject('gateway');

export { uniquePetId } from '../support/pets.ts';

/** A token of the gateway's own issuer for a new caller, as `npm run token` makes them. */
export function tokenFor(
  scope: string,
  options: { ttlSeconds?: number; sub?: string } = {},
): Promise<string> {
  return signLocalToken({
    sub: options.sub ?? uniqueSub(),
    scope,
    port: gateway.port,
    stateDir: gateway.stateDir,
    ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }),
  });
}

export interface CallOptions {
  readonly token?: string;
  /** JSON-encoded and sent as application/json. */
  readonly json?: unknown;
  /** Sent as is. */
  readonly body?: RequestInit['body'];
  readonly headers?: Record<string, string>;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body's bytes (an image), of which `text` is the UTF-8 reading. */
  readonly bytes: Uint8Array;
  /** The parsed body when it is JSON of any kind, otherwise `undefined`. */
  readonly json: unknown;
}

/** The parsed body when it is JSON of any kind, otherwise `undefined`. */
function jsonOf(headers: Headers, text: string): unknown {
  const isJson = /^application\/([\w.-]+\+)?json/.test(headers.get('content-type') ?? '');
  return isJson && text !== '' ? JSON.parse(text) : undefined;
}

/** Calls the gateway; every answer is checked against the OpenAPI document (`contract.ts`). */
export async function call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = {
    ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...options.headers,
  };
  const body = options.json === undefined ? options.body : JSON.stringify(options.json);
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  const result = {
    status: response.status,
    headers: response.headers,
    text,
    bytes,
    json: jsonOf(response.headers, text),
  };
  expectAsDocumented(method, path, result);
  return result;
}

/**
 * Calls the gateway with header lines exactly as given, repeats kept: fetch would join two lines of
 * one name into one. The answer is checked against the OpenAPI document, as {@link call}'s.
 */
export function callWithLines(
  method: string,
  path: string,
  lines: readonly (readonly [string, string])[],
  body?: string | Uint8Array,
): Promise<CallResult> {
  const length = body === undefined ? [] : ['Content-Length', String(Buffer.byteLength(body))];
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: gateway.port,
        method,
        path,
        // An array of lines: Node adds no Host or Content-Length of its own then, and joins nothing.
        headers: ['Host', `127.0.0.1:${gateway.port}`, ...length, ...lines.flat()],
      },
      async (response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        const bytes = new Uint8Array(Buffer.concat(chunks));
        const text = new TextDecoder().decode(bytes);
        const headers = new Headers();
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
          headers.append(response.rawHeaders[i] as string, response.rawHeaders[i + 1] as string);
        }
        const result = {
          status: response.statusCode ?? 0,
          headers,
          text,
          bytes,
          json: jsonOf(headers, text),
        };
        try {
          expectAsDocumented(method, path, result);
          resolve(result);
        } catch (error) {
          reject(error);
        }
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

/**
 * Asserts an RFC 9457 problem: the status, the media type, every member the API promises, and
 * the request id the gateway also sends as a header (what a client quotes to support).
 */
export function expectProblem(result: Omit<CallResult, 'bytes'>, status: number): Record<string, unknown> {
  expect(result.status, result.text).toBe(status);
  expect(result.headers.get('content-type')).toBe('application/problem+json');
  const problem = result.json as Record<string, unknown>;
  expect(problem).toMatchObject({
    type: expect.stringMatching(/^urn:problem-type:wallet-catalog:[a-z-]+$/),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    requestId: result.headers.get('x-amzn-requestid'),
  });
  expect(problem.requestId).toMatch(/^[0-9a-f-]{36}$/);
  return problem;
}

/** What a run of `npm run wallet:fund` printed, and its exit code. */
export interface FundRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `npm run wallet:fund` command against the gateway's stack, which it finds
 * through its record, as it does after `npm start`.
 */
export function runFundCli(args: readonly string[]): Promise<FundRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/wallet-fund.ts', ...args],
      { env: { ...process.env, PORT: String(gateway.port), LOCAL_STATE_DIR: gateway.stateDir } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Funds a wallet of the gateway's stack with `npm run wallet:fund` (which opens it). */
export async function fundViaCli(address: string, amount: string): Promise<{ balance: number }> {
  const run = await runFundCli(['--address', address, '--amount', amount]);
  if (run.code !== 0) throw new Error(`wallet:fund exited with ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { balance: number };
}

/** Opens an empty wallet the way its owner does: by a first call of a wallet route. */
export async function openWallet(address: string): Promise<void> {
  const token = await tokenFor('read:wallet', { sub: address });
  const response = await call('GET', '/api/wallet/balance', { token });
  expect(response.status).toBe(200);
}
