/**
 * Warm overhead of one function: `node bench/warm-child.ts <name> <function bundle URL>
 * <baseline bundle URL> <batches> <batch size>`, with the function's environment and, for the caller,
 * BENCH_SUB and BENCH_TOKEN (and BENCH_PUBLIC_JWK, the key that signed it). Loads both
 * instrumented bundles, stubs the SDK's `send`, then times batches of invocations of the function
 * and of the baseline, alternately, on identical events. The authorizer is also timed against its
 * floor: the baseline plus one check of the token's signature with node:crypto, which is what any
 * JWT authorizer must do for a token it has not seen and no code of ours can make cheaper.
 */
import { createPublicKey, verify } from 'node:crypto';
import { fstatSync } from 'node:fs';
import type { Context } from 'aws-lambda';
import { reportResult } from './child.ts';
import { authorizerEvent, proxyEvent } from './lambda-events.ts';
import { stubCalls, stubSdkSend } from './stub.ts';
import { routeRequest, successStatus } from './workload.ts';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

const [name, functionUrl, baselineUrl, batchesArg, sizeArg] = process.argv.slice(2);
const sub = process.env.BENCH_SUB;
const token = process.env.BENCH_TOKEN;
if (!name || !functionUrl || !baselineUrl || !sub || !token) {
  throw new Error('usage: node warm-child.ts <name> <fn URL> <baseline URL> <batches> <size>');
}
const batches = Number(batchesArg ?? 15);
const batchSize = Number(sizeArg ?? 1000);

const baseline = ((await import(baselineUrl)) as { handler: Handler }).handler;
const fn = ((await import(functionUrl)) as { handler: Handler }).handler;
const stubbedClasses = stubSdkSend();

/** Verifies the signature of the caller's token, as parsed from the event, and returns. */
function signatureFloor(): Handler {
  const jwk = JSON.parse(process.env.BENCH_PUBLIC_JWK ?? 'null') as { kty?: string; crv?: string } | null;
  if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256')
    throw new Error('BENCH_PUBLIC_JWK must be the P-256 key (ES256)');
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  return async (event) => {
    const authorization = (event as { authorizationToken: string }).authorizationToken;
    const jws = authorization.slice(authorization.indexOf(' ') + 1);
    const dot = jws.lastIndexOf('.');
    const signed = Buffer.from(jws.slice(0, dot));
    const signature = Buffer.from(jws.slice(dot + 1), 'base64url');
    if (!verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature)) {
      throw new Error('The floor could not verify the token');
    }
    return { statusCode: 200, body: '' };
  };
}
const floor = name === 'authorizer' ? signatureFloor() : undefined;

const makeEvent: () => unknown =
  name === 'authorizer' ? () => authorizerEvent(token) : () => proxyEvent(routeRequest(name, sub, token));

/** The status the route answers success with (its OpenAPI contract): 200, 201, 202 or 204. */
const expectedStatus = name === 'authorizer' ? undefined : successStatus(name);

/** Whether a result is the success this request should get. */
function succeeded(result: unknown): boolean {
  if (name === 'authorizer') {
    const statement = (result as { policyDocument?: { Statement?: { Effect?: string }[] } })?.policyDocument
      ?.Statement?.[0];
    return statement?.Effect === 'Allow';
  }
  return (result as { statusCode?: number })?.statusCode === expectedStatus;
}

const context: Context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: `wallet-catalog-bench-${name}`,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:wallet-catalog-bench-${name}`,
  memoryLimitInMB: '1024',
  awsRequestId: 'bench',
  logGroupName: `/aws/lambda/wallet-catalog-bench-${name}`,
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

/**
 * The median microseconds of one invocation over a batch of fresh events (handlers mutate their
 * event, so none is reused), built before the clock starts. Each invocation is timed on its own:
 * a process that loses its core (the machine is shared) loses it for milliseconds, which lands on
 * a few invocations of the batch and is left out by the median, where it would have inflated the
 * batch's total. The same goes for a young-generation collection, whose cost spread over the
 * invocations that caused it is far below the budget's resolution. No GC is forced between
 * batches: after a full GC V8 shrinks the young generation, and the next batch would pay for
 * scavenges a warm Lambda does not.
 */
async function timeBatch(handler: Handler, size: number): Promise<{ us: number; last: unknown }> {
  const events: unknown[] = Array.from({ length: size }, makeEvent);
  const durations = new Float64Array(size);
  let last: unknown;
  for (let i = 0; i < size; i++) {
    const event = events[i];
    // Dropped as it is used: on Lambda an event, and all a handler hangs on it (a parsed body),
    // is garbage once answered; kept here, it would be copied by every later scavenge of the batch.
    events[i] = undefined;
    const started = performance.now();
    last = await handler(event, context);
    durations[i] = performance.now() - started;
  }
  durations.sort();
  return { us: (durations[size >> 1] as number) * 1000, last };
}

// The first call fetches the authorizer's JWKS; every later one must find it cached.
const first = await fn(makeEvent(), context);
if (!succeeded(first)) throw new Error(`${name} did not succeed: ${JSON.stringify(first)}`);

/**
 * What one warm invocation of the function writes to stdout (its request line), read from the
 * size of the file stdout is (see ./child.ts) around a few invocations of the function alone:
 * the baseline writes its own line to the same file during the timed batches.
 */
const LOG_SAMPLE = 100;
const logBytesBefore = fstatSync(1).size;
await timeBatch(fn, LOG_SAMPLE);
const logBytesPerInvocation = (fstatSync(1).size - logBytesBefore) / LOG_SAMPLE;

const WARM_UP_CPU_MS = 1_500;
// Warmed for a span of this process's CPU time, not of wall time: on a shared machine the same wall
// time gives it a fraction of the invocations, and the optimising compiler's threads a fraction of
// their time, and the timed batches would catch the code before it is optimised.
const warmUpCpu = process.cpuUsage();
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};
while (cpuMsSince(warmUpCpu) < WARM_UP_CPU_MS) {
  await timeBatch(fn, 500);
  await timeBatch(baseline, 500);
  if (floor) await timeBatch(floor, 500);
}

const functionUs: number[] = [];
const baselineUs: number[] = [];
const floorUs: number[] = [];
stubCalls.count = 0;
for (let batch = 0; batch < batches; batch++) {
  // Alternating the order cancels whatever the order itself costs.
  const round = floor ? [fn, baseline, floor] : [fn, baseline];
  if (batch % 2 === 1) round.reverse();
  for (const handler of round) {
    const { us, last } = await timeBatch(handler, batchSize);
    if (handler === fn) {
      if (!succeeded(last)) throw new Error(`${name} stopped succeeding: ${JSON.stringify(last)}`);
      functionUs.push(us);
    } else if (handler === baseline) {
      baselineUs.push(us);
    } else {
      floorUs.push(us);
    }
  }
}

reportResult({
  functionUs,
  baselineUs,
  ...(floor ? { floorUs } : {}),
  stubbedClasses,
  sendsPerInvocation: stubCalls.count / (batches * batchSize),
  logBytesPerInvocation,
});
process.stdout.write('', () => process.exit(0));
