import { App, type AppProps, Duration, type Environment, Validations } from 'aws-cdk-lib';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { AuthSettings, ServiceSettings } from '#infra/environment.ts';
import { type PipelineSource, PipelineStack } from '#infra/pipeline/pipeline-stack.ts';
import type { ServiceStack } from '#infra/stacks/service-stack.ts';
import { createServiceStacks } from '#infra/stacks/service-stage.ts';
import type { StatefulStack } from '#infra/stacks/stateful-stack.ts';
import { isOrigin } from '#shared/http/cors.ts';

/** A stage name: it becomes part of stack, API, alarm and dashboard names, so it stays short and plain. */
const STAGE_NAME = /^[a-z][a-z0-9-]{0,19}$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Typed access to CDK context. Values come from cdk.json, or as strings from `-c key=value`, so
 * numbers and booleans are accepted in either form; a missing or malformed value throws, naming
 * the key, before anything is synthesized.
 *
 * Read for a stage, a key set in the stage's entry of the `stages` context object
 * (`stages.<stage>.<key>`) wins over the top-level key, which is the default for every stage.
 */
export class ContextReader {
  readonly #scope: IConstruct;
  readonly #stage: string | undefined;
  readonly #overrides: Readonly<Record<string, unknown>>;
  readonly #read = new Set<string>();

  /** @param stage the stage whose `stages.<stage>` overrides apply; none when omitted */
  constructor(scope: IConstruct, stage?: string) {
    this.#scope = scope;
    this.#stage = stage;
    this.#overrides = stage === undefined ? {} : this.#stageOverrides(stage);
  }

  /** A string, optionally matching `pattern`. */
  string(key: string, pattern?: RegExp): string {
    const { name, value } = this.#lookup(key);
    return this.#string(name, value, pattern);
  }

  /** Like {@link string}, but an empty string (the way cdk.json says "not set") gives `undefined`. */
  optionalString(key: string, pattern?: RegExp): string | undefined {
    const { name, value } = this.#lookup(key);
    return value === '' ? undefined : this.#string(name, value, pattern);
  }

  /** An absolute https URL. */
  httpsUrl(key: string): string {
    const { name, value } = this.#lookup(key);
    const url = this.#string(name, value);
    if (URL.parse(url)?.protocol !== 'https:') throw this.#malformed(name, value, 'an https URL');
    return url;
  }

  /** A finite number within the bounds; `integer` rejects fractions. */
  number(key: string, bounds: { min: number; max?: number; integer?: boolean }): number {
    const { name, value: raw } = this.#lookup(key);
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
    const kind = `${bounds.integer ? 'an integer' : 'a number'} in [${bounds.min}, ${max}]`;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.#malformed(name, raw, kind);
    if ((bounds.integer && !Number.isInteger(value)) || value < bounds.min || value > max) {
      throw this.#malformed(name, raw, kind);
    }
    return value;
  }

  /** `true` or `false`, as a boolean or a string. */
  boolean(key: string): boolean {
    const { name, value } = this.#lookup(key);
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw this.#malformed(name, value, 'true or false');
  }

  /** One of `allowed`; `why` tells whoever gets it wrong what the list is about. */
  oneOf<T extends string>(key: string, allowed: readonly T[], why = ''): T {
    const { name, value } = this.#lookup(key);
    const found = allowed.find((candidate) => candidate === value);
    if (found === undefined) throw this.#malformed(name, value, `one of ${allowed.join(', ')}${why}`);
    return found;
  }

  /** One of the retention periods CloudWatch Logs offers, in days. */
  retentionDays(key: string): RetentionDays {
    const days = this.number(key, { min: 1, integer: true });
    const allowed = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number');
    const retention = allowed.find((v) => v === days);
    if (retention === undefined)
      throw this.#malformed(this.#nameOf(key), days, `one of ${allowed.join(', ')}`);
    return retention;
  }

  /**
   * Throws if the stage's overrides set a key that nothing has read: a misspelt key would
   * otherwise leave the default in force without a word.
   */
  assertOverridesRead(): void {
    const unread = Object.keys(this.#overrides).filter((key) => !this.#read.has(key));
    if (unread.length > 0) {
      throw new Error(
        `CDK context "stages.${this.#stage}" sets ${unread.map((key) => `"${key}"`).join(', ')}, which no setting reads`,
      );
    }
  }

  #stageOverrides(stage: string): Record<string, unknown> {
    let stages: unknown = this.#scope.node.tryGetContext('stages');
    if (stages === undefined) return {};
    // `-c stages='{...}'` arrives as a string.
    if (typeof stages === 'string') {
      try {
        stages = JSON.parse(stages);
      } catch {
        throw this.#malformed('stages', stages, 'an object (or its JSON) of per-stage objects');
      }
    }
    if (!isRecord(stages)) throw this.#malformed('stages', stages, 'an object of per-stage objects');
    const overrides = stages[stage];
    if (overrides === undefined) return {};
    if (!isRecord(overrides))
      throw this.#malformed(`stages.${stage}`, overrides, 'an object of context keys');
    return overrides;
  }

  #nameOf(key: string): string {
    return Object.hasOwn(this.#overrides, key) ? `stages.${this.#stage}.${key}` : key;
  }

  #lookup(key: string): { name: string; value: unknown } {
    this.#read.add(key);
    const name = this.#nameOf(key);
    if (name !== key) return { name, value: this.#overrides[key] };
    const value: unknown = this.#scope.node.tryGetContext(key);
    if (value === undefined) throw new Error(`CDK context "${key}" is missing (cdk.json sets every key)`);
    return { name, value };
  }

  #string(name: string, value: unknown, pattern?: RegExp): string {
    if (typeof value !== 'string' || value === '') throw this.#malformed(name, value, 'a non-empty string');
    if (pattern && !pattern.test(value)) throw this.#malformed(name, value, `a string matching ${pattern}`);
    return value;
  }

  #malformed(name: string, value: unknown, expected: string): Error {
    return new Error(`CDK context "${name}" must be ${expected}, got ${JSON.stringify(value)}`);
  }
}

/**
 * The application log levels a stage may run at. Lambda filters JSON lines on their `level`
 * field, the EMF lines the metrics come from included, and those are written at INFO: at WARN
 * or above the request metrics, and with them most alarms, would go silent.
 */
const LOG_LEVELS = [
  'TRACE',
  'DEBUG',
  'INFO',
] as const satisfies readonly (keyof typeof ApplicationLogLevel)[];

/** Everything the stacks of one stage take from context, read and checked in one place. */
export interface DeploymentConfig {
  /** Stage name, part of the stack, API, alarm and dashboard names and of the `stage` tag. */
  readonly stage: string;
  /** Account and region of the stage; `undefined` deploys wherever the credentials (or the pipeline) are. */
  readonly env: Environment | undefined;
  readonly auth: AuthSettings;
  readonly authorizerCacheTtl: Duration;
  readonly settings: ServiceSettings;
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly deletionProtection: boolean;
  readonly logRetention: RetentionDays;
  /** Application log level of every function. */
  readonly logLevel: ApplicationLogLevel;
  /** Address the alarm topic mails to; `undefined` leaves the topic without subscribers. */
  readonly alarmEmail: string | undefined;
}

/**
 * Reads the {@link DeploymentConfig} of `stage` (by default the one the `stage` context names):
 * each key from `stages.<stage>` where set there, from the top-level defaults otherwise.
 */
export function readConfig(scope: IConstruct, stage?: string): DeploymentConfig {
  const name = stage ?? new ContextReader(scope).string('stage', STAGE_NAME);
  if (!STAGE_NAME.test(name)) throw new Error(`Stage name "${name}" must match ${STAGE_NAME}`);
  const context = new ContextReader(scope, name);
  const config: DeploymentConfig = {
    stage: name,
    env: readEnvironment(context, 'env:account', 'env:region'),
    auth: {
      issuer: context.httpsUrl('auth:issuer'),
      audience: context.string('auth:audience'),
      jwksUrl: context.httpsUrl('auth:jwksUrl'),
      // Amazon Cognito's `<resource server id>/`; empty for providers that name scopes plainly.
      scopePrefix: context.optionalString('auth:scopePrefix', /^\S+$/),
      requireAtJwtTyp: context.boolean('auth:requireAtJwtTyp'),
      maxTokenLifetimeSeconds: context.number('auth:maxTokenLifetimeSeconds', { min: 60, integer: true }),
    },
    // API Gateway caches authorizer answers for at most an hour; 0 turns caching off.
    authorizerCacheTtl: Duration.seconds(
      context.number('auth:cacheTtlSeconds', { min: 0, max: 3600, integer: true }),
    ),
    settings: {
      currency: context.string('wallet:currency', /^[A-Z]{3}$/),
      // ISO 4217 currencies have at most 4 minor-unit digits.
      currencyDecimals: context.number('wallet:currencyDecimals', { min: 0, max: 4, integer: true }),
      maxTransferMinor: context.number('wallet:maxTransferMinor', { min: 1, integer: true }),
      idempotencyTtlSeconds: context.number('wallet:idempotencyTtlSeconds', { min: 86_400, integer: true }),
      corsAllowedOrigins: readOrigins(context, 'api:corsAllowedOrigins'),
    },
    throttling: {
      rateLimit: context.number('api:throttlingRateLimit', { min: 1 }),
      burstLimit: context.number('api:throttlingBurstLimit', { min: 1, integer: true }),
    },
    deletionProtection: context.boolean('data:deletionProtection'),
    logRetention: context.retentionDays('logs:retentionDays'),
    logLevel:
      ApplicationLogLevel[
        context.oneOf(
          'logs:level',
          LOG_LEVELS,
          ' (at WARN and above Lambda would drop the INFO lines metrics come from)',
        )
      ],
    alarmEmail: context.optionalString('alarms:email', /^[^@\s]+@[^@\s]+\.[^@\s]+$/),
  };
  context.assertOverridesRead();
  return config;
}

/** Space-separated origins (`https://app.example.com`); empty, the default, turns CORS off. */
function readOrigins(context: ContextReader, key: string): string[] {
  const origins = (context.optionalString(key) ?? '').split(/\s+/).filter((o) => o !== '');
  const bad = origins.find((origin) => !isOrigin(origin));
  if (bad !== undefined) {
    throw new Error(`CDK context "${key}" must list origins such as https://app.example.com, got "${bad}"`);
  }
  return origins;
}

/** An explicit environment when both keys are set, none when both are empty; anything else throws. */
function readEnvironment(
  context: ContextReader,
  accountKey: string,
  regionKey: string,
): Environment | undefined {
  const account = context.optionalString(accountKey, /^\d{12}$/);
  const region = context.optionalString(regionKey, /^[a-z]{2}(-[a-z]+)+-\d$/);
  if ((account === undefined) !== (region === undefined)) {
    throw new Error(`CDK context "${accountKey}" and "${regionKey}" must be set together or both left empty`);
  }
  return account === undefined ? undefined : { account, region };
}

/**
 * The stages the pipeline deploys, in order. Production waits for a manual approval; dev goes
 * out on every push to the branch.
 */
export const PIPELINE_STAGES = [
  { stage: 'dev', approval: false },
  { stage: 'prod', approval: true },
] as const;

/** Stack name of the pipeline. */
export const PIPELINE_STACK_NAME = 'wallet-catalog-pipeline';

/** What the pipeline stack takes from context. */
export interface PipelineConfig {
  readonly source: PipelineSource;
  /** Where the pipeline itself runs; required once a stage names its own account. */
  readonly env: Environment | undefined;
  readonly stages: readonly { readonly config: DeploymentConfig; readonly approval: boolean }[];
}

/**
 * Reads the {@link PipelineConfig}, or `undefined` when `pipeline:connectionArn` is empty: no
 * connection, no pipeline.
 */
export function readPipelineConfig(scope: IConstruct): PipelineConfig | undefined {
  const context = new ContextReader(scope);
  const connectionArn = context.optionalString(
    'pipeline:connectionArn',
    /^arn:aws[a-z-]*:(codestar-connections|codeconnections):[a-z0-9-]+:\d{12}:connection\/[0-9a-f-]+$/,
  );
  if (connectionArn === undefined) return undefined;
  const env = readEnvironment(context, 'pipeline:account', 'pipeline:region');
  const stages = PIPELINE_STAGES.map(({ stage, approval }) => ({
    config: readConfig(scope, stage),
    approval,
  }));
  if (env === undefined && stages.some(({ config }) => config.env !== undefined)) {
    throw new Error(
      'CDK context "pipeline:account" and "pipeline:region" must be set when a stage sets "env:account": a pipeline deploying across environments needs to know its own',
    );
  }
  return {
    source: {
      connectionArn,
      // owner/name on GitHub and Bitbucket; GitLab groups may nest.
      repository: context.string('pipeline:repository', /^[\w.-]+(\/[\w.-]+)+$/),
      branch: context.string('pipeline:branch', /^\S+$/),
    },
    env,
    stages,
  };
}

/** Checks every stack of the app, in every stage, with cdk-nag's AWS Solutions rules during synth. */
function addChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

/** The stacks of one stage, synthesized on their own. */
export interface ServiceApp {
  readonly app: App;
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;
}

/** The pipeline, which holds the stages it deploys. */
export interface PipelineApp {
  readonly app: App;
  readonly pipeline: PipelineStack;
}

function buildServiceApp(app: App): ServiceApp {
  const stacks = createServiceStacks(app, readConfig(app));
  addChecks(app);
  return { app, ...stacks };
}

function buildPipelineApp(app: App): PipelineApp {
  const config = readPipelineConfig(app);
  if (!config)
    throw new Error('CDK context "pipeline:connectionArn" is empty: there is no pipeline to build');
  const pipeline = new PipelineStack(app, PIPELINE_STACK_NAME, {
    description: 'Wallet catalog: CI/CD pipeline (CodePipeline) deploying dev, then prod after approval',
    tags: { project: 'wallet-catalog' },
    env: config.env,
    source: config.source,
    stages: config.stages,
  });
  addChecks(app);
  return { app, pipeline };
}

/**
 * The stacks of the stage the `stage` context names (stateful and service), environment-agnostic
 * unless the stage sets an account, so that synth needs neither credentials nor lookups. For
 * sandboxes and for a first look: `cdk deploy -c stage=alice --all`.
 */
export function createServiceApp(props: AppProps = {}): ServiceApp {
  return buildServiceApp(new App(props));
}

/** The pipeline stack, with the stages it deploys inside it. */
export function createPipelineApp(props: AppProps = {}): PipelineApp {
  return buildPipelineApp(new App(props));
}

/**
 * What `cdk synth` builds. With `pipeline:connectionArn` set, only the pipeline: the stages'
 * stacks exist inside it and are deployed by it, and a second, top-level copy of them would fight
 * it for the same stack names. Without, the stacks of the `stage` context, so the app works
 * before any pipeline exists and for sandboxes (`-c pipeline:connectionArn=` switches back).
 */
export function createApp(props: AppProps = {}): ServiceApp | PipelineApp {
  const app = new App(props);
  return readPipelineConfig(app) ? buildPipelineApp(app) : buildServiceApp(app);
}

if (import.meta.main) {
  createApp().app.synth();
}
