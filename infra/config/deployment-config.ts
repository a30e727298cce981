import { Duration, type Environment } from 'aws-cdk-lib';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { ContextReader } from '#infra/config/context-reader.ts';
import type { AuthSettings, CallerRateLimit, ServiceSettings } from '#infra/environment.ts';
import { isOrigin } from '#shared/http/cors.ts';

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
  /**
   * Whether the stage must have someone to notify (production: nobody would hear its alarms): one
   * without `alarmEmail` fails synthesis unless `alarmNoSubscriberReason` says where they go.
   */
  readonly alarmSubscriberRequired: boolean;
  /** Why a stage that requires a subscriber has no `alarmEmail` (a paging integration subscribed by hand). */
  readonly alarmNoSubscriberReason: string | undefined;
  /** The per-caller limit of the WAF rate-based rule keyed on the bearer token. */
  readonly callerRateLimit: CallerRateLimit;
  /** Whether the console's test-invoke (which skips the authorizer) may call the methods. */
  readonly allowTestInvoke: boolean;
  /** Reserved (and maximum) concurrency of each function; `undefined` reserves none. */
  readonly reservedConcurrency: number | undefined;
  /** The account's Lambda concurrent executions quota (Service Quotas), which the reservations must fit. */
  readonly accountConcurrency: number;
  /**
   * Whether this stage declares the account-wide API Gateway CloudWatch Logs role. One stage per
   * account and region does: two would each set the account to their own role on every deploy.
   */
  readonly declaresAccountLogRole: boolean;
  /** The AWS Backup plan of the wallet table; `undefined` leaves it to point-in-time recovery alone. */
  readonly backup: BackupSettings | undefined;
  readonly probe: ProbeSettings;
  /**
   * The ADOT Node.js Lambda layer every function runs under, its DynamoDB calls then traced as
   * OpenTelemetry spans (docs/decisions/tracing.md); `undefined`, the default, keeps the X-Ray
   * subsegments.
   */
  readonly adotLayerArn: string | undefined;
}

/** The AWS Backup plan of the ledger (docs/decisions/ and the runbook in docs/operations.md say how to restore). */
export interface BackupSettings {
  /** How long each daily recovery point is kept. */
  readonly retentionDays: number;
  /** A vault in another region or account each recovery point is copied to; none when `undefined`. */
  readonly copyVaultArn: string | undefined;
}

/** The synthetic probe: an OAuth client of its own, whose secret lives in Secrets Manager. */
export interface ProbeSettings {
  /** The identity provider's OAuth 2.0 token endpoint (client-credentials grant). */
  readonly tokenUrl: string;
  /** Name of the Secrets Manager secret holding `{"clientId": ..., "clientSecret": ...}`. */
  readonly credentialsSecretName: string;
}

/**
 * Reads the {@link DeploymentConfig} of `stage` (by default the one the `stage` context names):
 * each key from `stages.<stage>` where set there, from the top-level defaults otherwise.
 */
export function readConfig(scope: IConstruct, stage?: string): DeploymentConfig {
  const name = stage ?? new ContextReader(scope).string('stage', STAGE_NAME);
  if (!STAGE_NAME.test(name)) throw new Error(`Stage name "${name}" must match ${STAGE_NAME}`);
  const context = new ContextReader(scope, name);
  const alarmEmail = context.optionalString('alarms:email', EMAIL);
  const alarmSubscriberRequired = context.boolean('alarms:requireSubscriber');
  const alarmNoSubscriberReason = context.optionalString('alarms:noSubscriberReason');
  // A warning scrolls past in a pipeline's synth log, and the stage would deploy alarms that page nobody.
  if (alarmSubscriberRequired && alarmEmail === undefined && alarmNoSubscriberReason === undefined) {
    throw new Error(
      `Stage "${name}" requires an alarm subscriber (CDK context "alarms:requireSubscriber") and has none: set "alarms:email" (stages.${name}), or, if a chat or paging integration is subscribed to the AlarmTopicArn output by other means, say which in "alarms:noSubscriberReason" (docs/operations.md)`,
    );
  }
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
      requireLowS: context.boolean('auth:requireLowS'),
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
    alarmEmail,
    alarmSubscriberRequired,
    alarmNoSubscriberReason,
    callerRateLimit: {
      // AWS WAF's bounds for a rate-based rule.
      limit: context.number('api:callerRateLimit', { min: 10, max: 2_000_000_000, integer: true }),
      windowSeconds: wafWindow(context, 'api:callerRateWindowSeconds'),
    },
    allowTestInvoke: context.boolean('api:allowTestInvoke'),
    reservedConcurrency: positiveOrNone(
      context.number('lambda:reservedConcurrency', { min: 0, max: 1000, integer: true }),
    ),
    accountConcurrency: context.number('lambda:accountConcurrency', {
      min: 10,
      max: 1_000_000,
      integer: true,
    }),
    declaresAccountLogRole: true,
    backup: readBackup(context),
    probe: {
      tokenUrl: context.httpsUrl('probe:tokenUrl'),
      credentialsSecretName:
        context.optionalString('probe:credentialsSecret', /^[\w/+=.@-]{1,512}$/) ??
        `wallet-catalog/${name}/probe-client`,
    },
    adotLayerArn: context.optionalString('tracing:adotLayerArn', LAYER_VERSION_ARN),
  };
  context.assertOverridesRead();
  return config;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** A layer version's ARN, version included: a function pins the layer it was tested with. */
const LAYER_VERSION_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[\w-]+:\d+$/;

const positiveOrNone = (value: number): number | undefined => (value === 0 ? undefined : value);

const WAF_WINDOWS = [60, 120, 300, 600] as const;

/** One of the evaluation windows AWS WAF's rate-based rules allow, in seconds. */
function wafWindow(context: ContextReader, key: string): CallerRateLimit['windowSeconds'] {
  const seconds = context.number(key, { min: 60, max: 600, integer: true });
  const window = WAF_WINDOWS.find((allowed) => allowed === seconds);
  if (window === undefined)
    throw new Error(`CDK context "${key}" must be one of ${WAF_WINDOWS.join(', ')}, got ${seconds}`);
  return window;
}

/** The backup settings, read (and so checked) whether or not `backup:enabled` turns them on. */
function readBackup(context: ContextReader): BackupSettings | undefined {
  const enabled = context.boolean('backup:enabled');
  const settings: BackupSettings = {
    retentionDays: context.number('backup:retentionDays', { min: 1, max: 36_500, integer: true }),
    copyVaultArn: context.optionalString(
      'backup:copyVaultArn',
      /^arn:aws[a-z-]*:backup:[a-z0-9-]+:\d{12}:backup-vault:[\w.-]+$/,
    ),
  };
  return enabled ? settings : undefined;
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
