/**
 * The bundled mode of the local gateway (`npm start -- --bundled`): every route, the authorizer
 * and the credit poster run from their bundle in the synthesized `cdk.out`, each in execution
 * environments of its own (`pool.ts`: a process per environment, kept warm, one request at a time,
 * a second concurrent request a second environment and so a counted cold start). Each gets its
 * template's environment with the table names and issuer taken from the local stack, plus the
 * DynamoDB endpoint, local credentials and, for routes, the gateway's CORS origins
 * (`local-resources.ts`): as deployed, it would reach AWS, or answer CORS unlike the gateway.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context, DynamoDBStreamEvent } from 'aws-lambda';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { CREDIT_POSTER_NAME } from '#infra/credit-poster-settings.ts';
import type { Route } from '#shared/routes.ts';
import cdkJson from '../../../cdk.json' with { type: 'json' };
import type { AuthorizerHandler } from '../authorizer-emulation.ts';
import { LOCAL_DEPLOYMENT } from '../deployment.ts';
import { GatewayError } from '../gateway-answer.ts';
import type { Invoker } from '../invoke.ts';
import { resolveEnvironment } from './local-resources.ts';
import { type BundlePool, createBundlePool } from './pool.ts';
import type { LambdaError } from './protocol.ts';
import {
  findFunction,
  isFresh,
  readFunctions,
  serviceStackName,
  synthesizeAsync,
  type TemplateFunction,
} from './template.ts';

export interface BundledOptions {
  /** The stage whose service template is run; cdk.json's `stage` when absent. */
  readonly stage?: string;
  /** Where the synthesized app is (and is synthesized to); `<repo>/cdk.out` when absent. */
  readonly cdkOut?: string;
  /** `always` synthesizes even when `cdk.out` looks fresh; `never` uses it as it is (tests' hand-made ones). */
  readonly synth?: 'if-stale' | 'always' | 'never';
  /** Each line a function writes, with the function's name; dropped when absent. */
  readonly onLog?: (functionName: string, line: string) => void;
}

/** Counters of one function's environments. */
export interface FunctionStats {
  readonly invocations: number;
  readonly coldStarts: number;
  /** Environments alive now. */
  readonly environments: number;
}

/**
 * The functions that started an environment while serving the current request, collected for
 * its access-log line: the gateway runs each request in a scope of its own.
 */
export const coldStartScope = new AsyncLocalStorage<string[]>();

/** How a template function runs locally as a bundle: its name, code, runtime and environment. */
export function bundleOf(fn: TemplateFunction, stage: string, localEnv: Readonly<Record<string, string>>) {
  return {
    functionName: `${serviceStackName(stage)}-${fn.logicalId}`,
    taskRoot: fn.assetDir,
    handler: fn.handler,
    runtime: fn.runtime,
    memorySizeMb: fn.memorySizeMb,
    timeoutSeconds: fn.timeoutSeconds,
    environment: resolveEnvironment(fn, localEnv),
    region: LOCAL_DEPLOYMENT.region,
    accountId: LOCAL_DEPLOYMENT.accountId,
  };
}

/** A function's failure as its invocation returned it; the gateway answers it 502 (500 for the authorizer). */
export class FunctionError extends Error {
  readonly errorType: string;
  constructor(error: LambdaError) {
    super(error.errorMessage);
    this.name = error.errorType;
    this.errorType = error.errorType;
    // The function's own trace (source-mapped), not the gateway's.
    this.stack = error.trace?.length ? error.trace.join('\n') : `${error.errorType}: ${error.errorMessage}`;
  }
}

interface Entry {
  readonly name: string;
  readonly pool: BundlePool;
  invocations: number;
}

/** The bundled functions of one local stack; {@link close} ends their environments. */
export class BundledFunctions implements Invoker {
  /** Functions that cannot run (not in the template, an environment variable that cannot be resolved), by name. */
  readonly loadErrors: Record<string, string> = {};
  /** Where the template came from, for `npm start` to say. */
  readonly source: string;
  private readonly byOperation = new Map<string, Entry>();
  private readonly authorizerEntry: Entry | undefined;
  private readonly posterEntry: Entry | undefined;

  constructor(
    functions: readonly TemplateFunction[],
    routes: readonly Route[],
    localEnvOf: (id: string) => Readonly<Record<string, string>>,
    settings: { stage: string; source: string; onLog?: BundledOptions['onLog'] },
  ) {
    this.source = settings.source;
    const entry = (id: string): Entry | undefined => {
      try {
        const fn = findFunction(functions, id);
        const pool = createBundlePool(bundleOf(fn, settings.stage, localEnvOf(id)), {
          onLog: (line) => settings.onLog?.(id, line),
        });
        return { name: id, pool, invocations: 0 };
      } catch (error) {
        this.loadErrors[id] = error instanceof Error ? error.message : String(error);
        return undefined;
      }
    };
    for (const route of routes) {
      const found = entry(route.operationId);
      if (found) this.byOperation.set(route.operationId, found);
    }
    this.authorizerEntry = entry('authorizer');
    this.posterEntry = entry(CREDIT_POSTER_NAME);
  }

  invoke(route: Route, event: APIGatewayProxyEvent, context: Context): Promise<unknown> {
    const entry = this.byOperation.get(route.operationId);
    if (!entry) {
      return Promise.reject(new GatewayError('DEFAULT_5XX', `${route.operationId} cannot run`, 502));
    }
    return this.run(entry, event, context);
  }

  /** The authorizer's bundle as the handler the authorizer emulation calls; absent when it cannot run. */
  authorizer(): AuthorizerHandler | undefined {
    const entry = this.authorizerEntry;
    if (!entry) return undefined;
    return (event, context) => this.run(entry, event, context) as ReturnType<AuthorizerHandler>;
  }

  /**
   * The credit poster's bundle as the stream poller invokes it (infra/local/stream-poller.ts);
   * absent when it cannot run.
   */
  poster(): ((event: DynamoDBStreamEvent) => Promise<unknown>) | undefined {
    const entry = this.posterEntry;
    if (!entry) return undefined;
    return (event) => this.run(entry, event, { awsRequestId: randomUUID() } as Context);
  }

  stats(): Record<string, FunctionStats> {
    const entries = [...this.byOperation.values(), this.authorizerEntry, this.posterEntry].filter(
      (entry): entry is Entry => entry !== undefined,
    );
    return Object.fromEntries(
      entries.map((entry) => [entry.name, { invocations: entry.invocations, ...entry.pool.stats() }]),
    );
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.byOperation.values(), this.authorizerEntry, this.posterEntry].map((entry) =>
        entry?.pool.close(),
      ),
    );
  }

  private async run(entry: Entry, event: unknown, context: Context): Promise<unknown> {
    entry.invocations++;
    const result = await entry.pool.invoke(event, { requestId: context.awsRequestId });
    if (result.report.initDurationMs !== undefined) coldStartScope.getStore()?.push(entry.name);
    if (!result.ok) throw new FunctionError(result.error);
    return JSON.parse(result.payload) as unknown;
  }
}

/**
 * The stage's functions from `cdk.out`, synthesized first when it is older than the sources
 * (the freshness rule of `npm run invoke`), each ready to run with the local stack's
 * `localEnvOf(id)`, `id` being its operation id or construct id.
 */
export async function loadBundledFunctions(
  options: BundledOptions,
  routes: readonly Route[],
  localEnvOf: (id: string) => Readonly<Record<string, string>>,
): Promise<BundledFunctions> {
  const stage = options.stage ?? cdkJson.context.stage;
  const cdkOut = options.cdkOut ?? join(PROJECT_ROOT, 'cdk.out');
  const synth = options.synth ?? 'if-stale';
  const synthesized = synth === 'always' || (synth === 'if-stale' && !isFresh(cdkOut, stage));
  if (synthesized) await synthesizeAsync(cdkOut, stage);
  const functions = readFunctions(cdkOut, stage);
  return new BundledFunctions(functions, routes, localEnvOf, {
    stage,
    source: `${serviceStackName(stage)} in ${cdkOut}${synthesized ? ' (synthesized now)' : ''}`,
    ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
  });
}
