/**
 * Execution environments for one function's bundle, kept warm the way Lambda keeps them: each is
 * a child process (`bootstrap.ts`) that serves one invocation at a time; an invocation that finds
 * every environment busy starts another one (a cold start, counted); an environment whose
 * invocation timed out or crashed is killed and replaced by a fresh one on the next call.
 *
 * `npm run invoke` uses a pool of one call; a bundled mode of the local gateway can keep one pool
 * per function for the life of the stack.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type FunctionSettings, functionArn, lambdaEnvironment, nodeOptionsFor } from './lambda-env.ts';
import {
  type EnvironmentMessage,
  type InvokeMessage,
  type LambdaError,
  MAX_REQUEST_BYTES,
  MAX_RESPONSE_BYTES,
} from './protocol.ts';

const BOOTSTRAP = fileURLToPath(new URL('./bootstrap.ts', import.meta.url));

/** The figures of Lambda's REPORT line for one invocation. */
export interface InvocationReport {
  readonly durationMs: number;
  readonly billedDurationMs: number;
  readonly memorySizeMb: number;
  readonly maxMemoryUsedMb: number;
  /** Only on the invocation that started its environment (a cold start). */
  readonly initDurationMs?: number;
}

export type Invocation =
  | {
      readonly requestId: string;
      readonly ok: true;
      readonly payload: string;
      readonly report: InvocationReport;
    }
  | {
      readonly requestId: string;
      readonly ok: false;
      readonly error: LambdaError;
      readonly report: InvocationReport;
    };

export interface InvokeOptions {
  /** The request id (`context.awsRequestId`); a new UUID when absent. */
  readonly requestId?: string;
  /** An X-Ray trace header, passed as `_X_AMZN_TRACE_ID`. */
  readonly traceId?: string;
}

export interface PoolOptions {
  /** Receives the function's stdout and stderr, line by line; the parent's stderr when absent. */
  readonly onLog?: (line: string) => void;
  /** Node.js options put before the memory settings, e.g. for profiling. */
  readonly execArgv?: readonly string[];
}

export interface PoolStats {
  /** Environments started so far, each a cold start. */
  readonly coldStarts: number;
  /** Environments alive now. */
  readonly environments: number;
}

export interface BundlePool {
  /** Runs one invocation with `event` (any JSON value) in an idle environment, or a new one. */
  invoke(event: unknown, options?: InvokeOptions): Promise<Invocation>;
  stats(): PoolStats;
  /** Kills every environment; invocations in flight fail with `Runtime.ExitError`. */
  close(): Promise<void>;
}

interface Environment {
  readonly child: ChildProcess;
  readonly started: Promise<{ initDurationMs: number } | { error: LambdaError; initDurationMs: number }>;
  /** Set until the first invocation has reported the Init Duration. */
  cold: boolean;
  busy: boolean;
  dead: boolean;
  /** The invocation in flight, resolved by the child's answer or its exit. */
  pending?: (
    message: EnvironmentMessage | { type: 'exit'; code: number | null; signal: string | null },
  ) => void;
}

/** Lambda's REPORT line. */
export function formatReport(requestId: string, report: InvocationReport, status?: LambdaError): string {
  const parts = [
    `REPORT RequestId: ${requestId}`,
    `Duration: ${report.durationMs.toFixed(2)} ms`,
    `Billed Duration: ${report.billedDurationMs} ms`,
    `Memory Size: ${report.memorySizeMb} MB`,
    `Max Memory Used: ${report.maxMemoryUsedMb} MB`,
  ];
  if (report.initDurationMs !== undefined)
    parts.push(`Init Duration: ${report.initDurationMs.toFixed(2)} ms`);
  if (status !== undefined)
    parts.push(`Status: ${status.errorType === 'Sandbox.Timedout' ? 'timeout' : 'error'}`);
  if (status !== undefined && status.errorType !== 'Sandbox.Timedout')
    parts.push(`Error Type: ${status.errorType}`);
  return parts.join('\t');
}

/** Splits a stream into lines for `onLog`. */
function forwardLines(stream: NodeJS.ReadableStream | null, onLog: (line: string) => void): void {
  let rest = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) onLog(line);
  });
  stream?.on('end', () => {
    if (rest !== '') onLog(rest);
  });
}

/** A pool of execution environments for the function `fn`. */
export function createBundlePool(fn: FunctionSettings, options: PoolOptions = {}): BundlePool {
  const onLog = options.onLog ?? ((line: string) => process.stderr.write(`${line}\n`));
  const environments = new Set<Environment>();
  let coldStarts = 0;
  let closed = false;
  const timeoutMs = fn.timeoutSeconds * 1000;
  const arn = functionArn(fn);

  const start = (): Environment => {
    coldStarts++;
    const logStream = `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`;
    const child = fork(BOOTSTRAP, [], {
      cwd: fn.taskRoot,
      env: lambdaEnvironment(fn, logStream),
      execPath: process.execPath,
      execArgv: [...(options.execArgv ?? []), ...nodeOptionsFor(fn.memorySizeMb)],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    // A failed send or kill is followed by 'exit', which is where a dead environment is handled.
    child.on('error', () => {});
    forwardLines(child.stdout, onLog);
    forwardLines(child.stderr, onLog);
    const { promise: started, resolve: settleStart } = Promise.withResolvers<
      { initDurationMs: number } | { error: LambdaError; initDurationMs: number }
    >();
    const env: Environment = { child, started, cold: true, busy: false, dead: false };
    child.on('message', (message: EnvironmentMessage) => {
      if (message.type === 'ready') settleStart({ initDurationMs: message.initDurationMs });
      else if (message.type === 'init-error') {
        settleStart({ error: message.error, initDurationMs: message.initDurationMs });
        discard(env);
      } else env.pending?.(message);
    });
    child.on('exit', (code, signal) => {
      env.dead = true;
      environments.delete(env);
      settleStart({
        error: {
          errorType: 'Runtime.ExitError',
          errorMessage: `RequestId: ? Error: Runtime exited ${signal ? `with signal: ${signal}` : `with error: exit status ${code}`}`,
        },
        initDurationMs: performance.now(),
      });
      env.pending?.({ type: 'exit', code, signal });
    });
    environments.add(env);
    return env;
  };

  const discard = (env: Environment): void => {
    env.dead = true;
    environments.delete(env);
    if (env.child.exitCode === null && env.child.signalCode === null) env.child.kill('SIGKILL');
  };

  const acquire = (): Environment => {
    for (const env of environments) {
      if (!env.busy && !env.dead) return env;
    }
    return start();
  };

  const report = (
    durationMs: number,
    maxRssKb: number,
    initDurationMs: number | undefined,
  ): InvocationReport => {
    const init = initDurationMs ?? 0;
    return {
      durationMs,
      // Lambda bills in 1 ms steps and, since August 2025, the init phase of on-demand functions too.
      billedDurationMs: Math.ceil(durationMs) + Math.ceil(init),
      memorySizeMb: fn.memorySizeMb,
      maxMemoryUsedMb: Math.ceil(maxRssKb / 1024),
      ...(initDurationMs === undefined ? {} : { initDurationMs }),
    };
  };

  const invoke = async (event: unknown, invokeOptions: InvokeOptions = {}): Promise<Invocation> => {
    if (closed) throw new Error(`The pool of ${fn.functionName} is closed`);
    const requestId = invokeOptions.requestId ?? randomUUID();
    const eventText = JSON.stringify(event) ?? 'null';
    if (Buffer.byteLength(eventText) > MAX_REQUEST_BYTES) {
      // Refused by the Invoke API: no environment is touched, nothing is billed.
      return {
        requestId,
        ok: false,
        error: {
          errorType: 'RequestEntityTooLargeException',
          errorMessage: `Request must be smaller than ${MAX_REQUEST_BYTES} bytes for the InvokeFunction operation`,
        },
        report: { durationMs: 0, billedDurationMs: 0, memorySizeMb: fn.memorySizeMb, maxMemoryUsedMb: 0 },
      };
    }
    const env = acquire();
    env.busy = true;
    try {
      const init = await env.started;
      const initDurationMs = env.cold ? init.initDurationMs : undefined;
      env.cold = false;
      if ('error' in init) {
        const error =
          init.error.errorType === 'Runtime.ExitError'
            ? {
                ...init.error,
                errorMessage: init.error.errorMessage.replace('RequestId: ?', `RequestId: ${requestId}`),
              }
            : init.error;
        return { requestId, ok: false, error, report: report(0, 0, initDurationMs) };
      }
      return await run(env, requestId, eventText, invokeOptions.traceId, initDurationMs);
    } finally {
      env.busy = false;
      env.pending = undefined;
    }
  };

  const run = (
    env: Environment,
    requestId: string,
    eventText: string,
    traceId: string | undefined,
    initDurationMs: number | undefined,
  ): Promise<Invocation> => {
    const startedAt = performance.now();
    const deadlineMs = Date.now() + timeoutMs;
    return new Promise<Invocation>((resolve) => {
      const timer = setTimeout(() => {
        // Lambda ends the environment of a timed-out invocation; the next call starts a fresh one.
        discard(env);
        onLog(
          `${new Date().toISOString()} ${requestId} Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
        );
        resolve({
          requestId,
          ok: false,
          error: {
            errorType: 'Sandbox.Timedout',
            errorMessage: `RequestId: ${requestId} Error: Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
          },
          report: report(timeoutMs, 0, initDurationMs),
        });
      }, timeoutMs);
      env.pending = (message) => {
        clearTimeout(timer);
        const durationMs = performance.now() - startedAt;
        if (message.type === 'exit') {
          const how = message.signal
            ? `with signal: ${message.signal}`
            : `with error: exit status ${message.code}`;
          resolve({
            requestId,
            ok: false,
            error: {
              errorType: 'Runtime.ExitError',
              errorMessage: `RequestId: ${requestId} Error: Runtime exited ${how}`,
            },
            report: report(durationMs, 0, initDurationMs),
          });
          return;
        }
        if (message.type !== 'result' && message.type !== 'error') return;
        const figures = report(durationMs, message.maxRssKb, initDurationMs);
        if (message.type === 'error') {
          if (message.fatal) discard(env);
          resolve({ requestId, ok: false, error: message.error, report: figures });
        } else if (Buffer.byteLength(message.payload) > MAX_RESPONSE_BYTES) {
          resolve({
            requestId,
            ok: false,
            error: {
              errorType: 'Function.ResponseSizeTooLarge',
              errorMessage: `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
            },
            report: figures,
          });
        } else {
          resolve({ requestId, ok: true, payload: message.payload, report: figures });
        }
      };
      const message: InvokeMessage = {
        type: 'invoke',
        requestId,
        event: eventText,
        deadlineMs,
        invokedFunctionArn: arn,
        ...(traceId === undefined ? {} : { traceId }),
      };
      try {
        env.child.send(message);
      } catch {
        // The channel closed between acquiring the environment and now: it is dying.
        env.pending({ type: 'exit', code: env.child.exitCode, signal: env.child.signalCode });
        discard(env);
      }
    });
  };

  return {
    invoke,
    stats: () => ({ coldStarts, environments: environments.size }),
    close: async () => {
      closed = true;
      const exits = [...environments].map(
        (env) =>
          new Promise<void>((resolve) => {
            if (env.child.exitCode !== null || env.child.signalCode !== null) resolve();
            else env.child.once('exit', () => resolve());
          }),
      );
      for (const env of [...environments]) discard(env);
      await Promise.all(exits);
    },
  };
}
