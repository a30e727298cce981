/**
 * What AWS resolves at deploy time and a local run must supply instead: table names (the
 * template's `Fn::GetStackOutput` of the stateful stack), the DynamoDB endpoint, and the identity
 * provider the authorizer trusts, and the local S3 of the image functions. Taken from the stack `npm start` runs when there is one (same
 * data, same issuer as the local gateway); otherwise started here for the one invocation and
 * stopped after it: DynamoDB Local in memory with fresh tables, and the local issuer's JWKS
 * served on a free port.
 */

import { tables } from '#shared/dynamodb/tables.ts';
import { CORS_ORIGINS_ENV } from '#shared/http/cors.ts';
import { routes } from '#shared/routes.ts';
import { buckets, S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';
import { DESTINATION_MODE_ENV } from '#shared/webhooks/model/destination-mode.ts';
import { KMS_KEY_ENV, STATIC_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';
import { ensureTables, LOCAL_AWS_ENV, startDynamoDbLocal } from '../dynamodb-local.ts';
import { defaultPort, LOCAL_AUDIENCE, loadOrCreateLocalKeys } from '../issuer.ts';
import { startJwksServer } from '../jwks-server.ts';
import { ensureBuckets, startS3Local } from '../s3-local.ts';
import { chooseRunningStack, describeChoice } from '../stack-record.ts';
import { localWebhookEnvironment } from '../webhook-secrets-key.ts';
import type { TemplateFunction } from './template.ts';

/** The variables the local identity provider replaces: the template names the real one. */
const AUTH_VARIABLES = ['AUTH_ISSUER', 'AUTH_AUDIENCE', 'AUTH_JWKS_URL'] as const;
/**
 * What the local identity provider also says of its tokens, where the local values name it: it
 * signs ECDSA low-S only, so the local authorizer refuses the twin (a stack record of an older
 * `npm start` may lack it: the template's value stays then).
 */
const LOCAL_TOKEN_RULES = ['AUTH_REQUIRE_LOW_S'] as const;
const TABLE_VARIABLES = new Set(Object.values(tables).map((table) => table.envVar));

export interface LocalResources {
  /** Where the values come from, as a sentence for the CLI to print. */
  readonly source: string;
  /** Local values by variable name (tables, endpoint, AWS credentials, issuer). */
  readonly env: Readonly<Record<string, string>>;
  /** The port the issuer of local tokens is named after (`iss`). */
  readonly issuerPort: number;
  /** Stops whatever was started here. */
  close(): Promise<void>;
}

const needsTables = (fn: TemplateFunction): boolean =>
  Object.keys(fn.environment).some((name) => TABLE_VARIABLES.has(name));
const needsIssuer = (fn: TemplateFunction): boolean => 'AUTH_JWKS_URL' in fn.environment;
const needsImages = (fn: TemplateFunction): boolean => buckets.images.envVar in fn.environment;
const needsWebhookKey = (fn: TemplateFunction): boolean => KMS_KEY_ENV in fn.environment;

/**
 * The running `npm start` stack (on `port` when given, else the only one running), or what `fn`
 * needs started here. Throws when several run and no `port` says which.
 */
export async function localResources(
  fn: TemplateFunction,
  options: { port: number | undefined; stateDir: string },
): Promise<LocalResources> {
  const choice = await chooseRunningStack(options);
  if (choice.stack) {
    return {
      source: `It runs against ${describeChoice(choice)}: the same data and issuer as the API.`,
      env: choice.stack.env,
      issuerPort: choice.port,
      close: async () => {},
    };
  }
  if (choice.running.length > 1) throw new Error(choice.problem);
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const env: Record<string, string> = { ...LOCAL_AWS_ENV };
    const started: string[] = [];
    let issuerPort = options.port ?? defaultPort();
    if (needsTables(fn)) {
      const dynamo = await startDynamoDbLocal();
      closers.push(() => dynamo.stop());
      Object.assign(env, await ensureTables(dynamo.endpoint, 'invoke'), {
        DYNAMODB_ENDPOINT: dynamo.endpoint,
      });
      started.push(
        'a DynamoDB Local of its own, in memory with empty tables: it sees none of your data (fund with `wallet:fund` against a running stack instead)',
      );
    }
    if (needsWebhookKey(fn)) {
      Object.assign(env, await localWebhookEnvironment(options.stateDir));
      started.push("the local stack's key for webhook signing secrets (as `npm start` keeps it)");
    }
    if (needsImages(fn)) {
      const s3 = await startS3Local();
      closers.push(() => s3.stop());
      Object.assign(env, await ensureBuckets(s3.endpoint, 'invoke'));
      started.push('a local S3 of its own (s3rver), with an empty images bucket removed after the call');
    }
    if (needsIssuer(fn)) {
      const { publicJwks } = await loadOrCreateLocalKeys(options.stateDir);
      const issuer = await startJwksServer(publicJwks);
      closers.push(() => issuer.close());
      issuerPort = issuer.port;
      Object.assign(env, {
        AUTH_ISSUER: issuer.issuerUrl,
        AUTH_AUDIENCE: LOCAL_AUDIENCE,
        AUTH_JWKS_URL: issuer.jwksUrl,
        AUTH_REQUIRE_LOW_S: 'true',
      });
      started.push(`the local issuer's keys, served on port ${issuerPort} for this call`);
    }
    return {
      source:
        started.length === 0
          ? 'No local stack is running, and this function needs none.'
          : `No local stack is running (\`npm start\`), so this call gets ${started.join(', and ')}.`,
      env,
      issuerPort,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The function's environment as Lambda would see it in this local stack: the template's
 * variables, with each one AWS resolves at deploy time (a table name) and the identity
 * provider's settings taken from `local`, plus the DynamoDB endpoint and local credentials
 * (on Lambda the credentials are reserved variables too). Throws for a variable it cannot resolve.
 */
export function resolveEnvironment(
  fn: TemplateFunction,
  local: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    if (name === KMS_KEY_ENV) {
      // KMS has no local counterpart that installs from npm or Debian: the local stack seals webhook
      // secrets with a key of its own (../webhook-secrets-key.ts), and allows loopback endpoints.
      for (const localName of [STATIC_KEY_ENV, DESTINATION_MODE_ENV]) {
        const localValue = local[localName];
        if (localValue === undefined)
          throw new Error(`${fn.name}: no local ${localName} in place of ${name}`);
        env[localName] = localValue;
      }
      continue;
    }
    const fromLocal =
      (AUTH_VARIABLES as readonly string[]).includes(name) ||
      ((LOCAL_TOKEN_RULES as readonly string[]).includes(name) && local[name] !== undefined) ||
      typeof value !== 'string';
    const resolved = fromLocal ? local[name] : value;
    if (typeof resolved !== 'string') {
      throw new Error(`${fn.name}: cannot resolve ${name} (${JSON.stringify(value)}) locally`);
    }
    env[name] = resolved;
  }
  // The browser origins are the local gateway's, which answers the preflight requests: a stage's
  // list would make the function's CORS headers disagree with them.
  delete env[CORS_ORIGINS_ENV];
  const origins = local[CORS_ORIGINS_ENV];
  if (origins !== undefined && routes.some((route) => route.operationId === fn.name)) {
    env[CORS_ORIGINS_ENV] = origins;
  }
  if (needsTables(fn)) {
    const endpoint = local.DYNAMODB_ENDPOINT;
    if (endpoint === undefined) throw new Error(`${fn.name}: no local DynamoDB endpoint`);
    env.DYNAMODB_ENDPOINT = endpoint;
  }
  if (needsImages(fn)) {
    const endpoint = local[S3_ENDPOINT_ENV];
    if (endpoint === undefined)
      throw new Error(`${fn.name}: no local S3 endpoint (a stack started before images?)`);
    env[S3_ENDPOINT_ENV] = endpoint;
  }
  return {
    ...env,
    AWS_ACCESS_KEY_ID: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
  };
}
