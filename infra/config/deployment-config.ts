import { Duration, type Environment } from 'aws-cdk-lib';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { ContextReader } from '#infra/config/context-reader.ts';
import type { AuthSettings, ServiceSettings } from '#infra/environment.ts';

/** A stage name: it becomes part of stack, API, alarm and dashboard names, so it stays short and plain. */
const STAGE_NAME = /^[a-z][a-z0-9-]{0,19}$/;

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

/** An explicit environment when both keys are set, none when both are empty; anything else throws. */
export function readEnvironment(
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
