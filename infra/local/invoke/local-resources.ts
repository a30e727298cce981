/**
 * What AWS resolves at deploy time and a local run must supply instead: table names (the
 * template's `Fn::GetStackOutput` of the stateful stack), the DynamoDB endpoint, and the identity
 * provider the authorizer trusts. Taken from the stack `npm start` runs when there is one (same
 * data, same issuer as the local gateway); otherwise started here for the one invocation and
 * stopped after it: DynamoDB Local in memory with fresh tables, and the local issuer's JWKS
 * served on a free port.
 */
import { tables } from '#shared/dynamodb/tables.ts';
import { CORS_ORIGINS_ENV } from '#shared/http/cors.ts';
import { routes } from '#shared/routes.ts';
import { ensureTables, LOCAL_AWS_ENV, startDynamoDbLocal } from '../dynamodb-local.ts';
import { LOCAL_AUDIENCE, loadOrCreateLocalKeys } from '../issuer.ts';
import { startJwksServer } from '../jwks-server.ts';
import { readRunningStack } from '../stack-record.ts';
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
  /** Where the values come from, for the CLI to say. */
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

/** The running `npm start` stack on `port`, or what `fn` needs started here. */
export async function localResources(
  fn: TemplateFunction,
  options: { port: number; stateDir: string },
): Promise<LocalResources> {
  const running = await readRunningStack(options.port, options.stateDir);
  if (running) {
    return {
      source: `the local stack of \`npm start\` at ${running.baseUrl}`,
      env: running.env,
      issuerPort: options.port,
      close: async () => {},
    };
  }
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const env: Record<string, string> = { ...LOCAL_AWS_ENV };
    const started: string[] = [];
    let issuerPort = options.port;
    if (needsTables(fn)) {
      const dynamo = await startDynamoDbLocal();
      closers.push(() => dynamo.stop());
      Object.assign(env, await ensureTables(dynamo.endpoint, 'invoke'), {
        DYNAMODB_ENDPOINT: dynamo.endpoint,
      });
      started.push('DynamoDB Local (in memory, empty tables)');
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
      started.push(`the local issuer's JWKS on port ${issuerPort}`);
    }
    return {
      source: started.length === 0 ? 'nothing local' : `started for this call: ${started.join(', ')}`,
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
  return {
    ...env,
    AWS_ACCESS_KEY_ID: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
  };
}
