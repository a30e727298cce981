import { App, type AppProps, Duration, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { AuthSettings, ServiceSettings } from '#infra/environment.ts';
import { ServiceStack } from '#infra/stacks/service-stack.ts';
import { StatefulStack } from '#infra/stacks/stateful-stack.ts';

/**
 * Typed access to CDK context. Values come from cdk.json, or as strings from `-c key=value`, so
 * numbers and booleans are accepted in either form; a missing or malformed value throws, naming
 * the key, before anything is synthesized.
 */
export class ContextReader {
  readonly #scope: IConstruct;

  constructor(scope: IConstruct) {
    this.#scope = scope;
  }

  /** A string, optionally matching `pattern`. */
  string(key: string, pattern?: RegExp): string {
    const value = this.#raw(key);
    if (typeof value !== 'string' || value === '') throw this.#malformed(key, value, 'a non-empty string');
    if (pattern && !pattern.test(value)) throw this.#malformed(key, value, `a string matching ${pattern}`);
    return value;
  }

  /** An absolute https URL. */
  httpsUrl(key: string): string {
    const value = this.string(key);
    if (URL.parse(value)?.protocol !== 'https:') throw this.#malformed(key, value, 'an https URL');
    return value;
  }

  /** A finite number within the bounds; `integer` rejects fractions. */
  number(key: string, bounds: { min: number; max?: number; integer?: boolean }): number {
    const raw = this.#raw(key);
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
    const kind = `${bounds.integer ? 'an integer' : 'a number'} in [${bounds.min}, ${max}]`;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.#malformed(key, raw, kind);
    if ((bounds.integer && !Number.isInteger(value)) || value < bounds.min || value > max) {
      throw this.#malformed(key, raw, kind);
    }
    return value;
  }

  /** `true` or `false`, as a boolean or a string. */
  boolean(key: string): boolean {
    const value = this.#raw(key);
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw this.#malformed(key, value, 'true or false');
  }

  /** One of the retention periods CloudWatch Logs offers, in days. */
  retentionDays(key: string): RetentionDays {
    const days = this.number(key, { min: 1, integer: true });
    const allowed = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number');
    const retention = allowed.find((v) => v === days);
    if (retention === undefined) throw this.#malformed(key, days, `one of ${allowed.join(', ')}`);
    return retention;
  }

  #raw(key: string): unknown {
    const value: unknown = this.#scope.node.tryGetContext(key);
    if (value === undefined) throw new Error(`CDK context "${key}" is missing (cdk.json sets every key)`);
    return value;
  }

  #malformed(key: string, value: unknown, expected: string): Error {
    return new Error(`CDK context "${key}" must be ${expected}, got ${JSON.stringify(value)}`);
  }
}

/** Everything the stacks take from context, read and checked in one place. */
export interface DeploymentConfig {
  /** Stage name, part of both stack names and the API stage. */
  readonly stage: string;
  readonly auth: AuthSettings;
  readonly authorizerCacheTtl: Duration;
  readonly settings: ServiceSettings;
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly deletionProtection: boolean;
  readonly logRetention: RetentionDays;
}

/** Reads the {@link DeploymentConfig} from the context of `scope`. */
export function readConfig(scope: IConstruct): DeploymentConfig {
  const context = new ContextReader(scope);
  return {
    stage: context.string('stage', /^[a-z][a-z0-9-]{0,19}$/),
    auth: {
      issuer: context.httpsUrl('auth:issuer'),
      audience: context.string('auth:audience'),
      jwksUrl: context.httpsUrl('auth:jwksUrl'),
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
    },
    throttling: {
      rateLimit: context.number('api:throttlingRateLimit', { min: 1 }),
      burstLimit: context.number('api:throttlingBurstLimit', { min: 1, integer: true }),
    },
    deletionProtection: context.boolean('data:deletionProtection'),
    logRetention: context.retentionDays('logs:retentionDays'),
  };
}

/** The stacks of one stage. */
export interface ServiceApp {
  readonly app: App;
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;
}

/**
 * Builds the app: the stateful stack (tables) handed to the stateless service stack as props,
 * both environment-agnostic so that synth needs neither credentials nor lookups, and both checked
 * by cdk-nag's AWS Solutions rules, whose unavoidable findings are acknowledged where they arise.
 */
export function createApp(props: AppProps = {}): ServiceApp {
  const app = new App(props);
  const config = readConfig(app);
  const tags = { project: 'wallet-catalog', stage: config.stage };
  const stateful = new StatefulStack(app, `wallet-catalog-${config.stage}-stateful`, {
    description: `Wallet catalog (${config.stage}): DynamoDB tables`,
    tags,
    deletionProtection: config.deletionProtection,
  });
  const service = new ServiceStack(app, `wallet-catalog-${config.stage}-service`, {
    description: `Wallet catalog (${config.stage}): REST API, authorizer and functions`,
    tags,
    tables: stateful.tables,
    auth: config.auth,
    authorizerCacheTtl: config.authorizerCacheTtl,
    settings: config.settings,
    throttling: config.throttling,
    logRetention: config.logRetention,
    stageName: config.stage,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stateful, service };
}

if (import.meta.main) {
  createApp().app.synth();
}
