import { tables } from '#shared/dynamodb/tables.ts';
import { CORS_ORIGINS_ENV } from '#shared/http/cors.ts';
import type { Route, TableName } from '#shared/routes.ts';
import { type BucketName, buckets } from '#shared/s3/buckets.ts';

/** Service settings a deployment (CDK context) or a local run chooses. */
export interface ServiceSettings {
  /** ISO 4217 code of the one currency of this deployment. */
  readonly currency: string;
  /** Decimals of that currency (minor units per major unit = 10^decimals). */
  readonly currencyDecimals: number;
  /** Largest amount one transfer may move, in minor units. */
  readonly maxTransferMinor: number;
  /** How long an Idempotency-Key is remembered, in seconds (at least a day). */
  readonly idempotencyTtlSeconds: number;
  /** Origins a browser app may call the API from (CORS); none, CORS off, by default. */
  readonly corsAllowedOrigins: readonly string[];
}

export const defaultServiceSettings: ServiceSettings = {
  currency: 'USD',
  currencyDecimals: 2,
  maxTransferMinor: 1_000_000_00,
  idempotencyTtlSeconds: 86_400,
  corsAllowedOrigins: [],
};

/**
 * The per-caller rate limit at the edge: an AWS WAF rate-based rule keyed on the bearer token in
 * the deployed stack, mirrored by the local gateway (429 problem+json with Retry-After).
 */
export interface CallerRateLimit {
  /** Requests one bearer token may make per window before it gets 429 (AWS WAF's minimum is 10). */
  readonly limit: number;
  /** The evaluation window in seconds; AWS WAF allows only these. */
  readonly windowSeconds: 60 | 120 | 300 | 600;
}

/** CDK context `api:callerRateLimit` and `api:callerRateWindowSeconds` override these per stage. */
export const defaultCallerRateLimit: CallerRateLimit = { limit: 300, windowSeconds: 60 };

/** Where the authorizer finds the identity provider. */
export interface AuthSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: string;
  /** Prefix of this API's scopes in tokens, e.g. Amazon Cognito's `<resource server id>/`; none by default. */
  readonly scopePrefix?: string;
  /** Refuse access tokens whose `typ` is not `at+jwt` (RFC 9068 §4); {@link defaultTokenRules} when absent. */
  readonly requireAtJwtTyp?: boolean;
  /**
   * Refuse ECDSA signatures in their high-S form: for providers that always sign low-S (the local
   * issuer); {@link defaultTokenRules} when absent.
   */
  readonly requireLowS?: boolean;
  /** Refuse tokens that live longer than this (`exp` − `iat`); {@link defaultTokenRules} when absent. */
  readonly maxTokenLifetimeSeconds?: number;
}

/**
 * What the authorizer demands of a token unless a stage says otherwise (CDK context
 * `auth:requireAtJwtTyp`, `auth:maxTokenLifetimeSeconds`): the local issuer, and most identity
 * providers, send `typ: at+jwt`; Amazon Cognito sends no `typ` and needs `false` (its ID tokens
 * are still refused, by `token_use`). A day bounds the lifetime of access tokens, which
 * providers issue for minutes to hours (Cognito: at most a day). The high-S form of an ECDSA
 * signature is accepted unless a stage says its provider signs low-S only (`auth:requireLowS`):
 * many ECDSA signers do not normalise, and Cognito signs with RS256, which has no twin.
 */
export const defaultTokenRules = {
  requireAtJwtTyp: true,
  requireLowS: false,
  maxTokenLifetimeSeconds: 86_400,
} as const;

/**
 * The environment of one route's function: its table's name, its bucket's for a route with an
 * images grant, the Idempotency-Keys' lifetime for a route that keeps them and, for the wallet, the money settings. CDK and the local gateway both build
 * function environments here.
 */
export function functionEnvironment(
  route: Route,
  settings: ServiceSettings,
  tableNames: Readonly<Record<TableName, string>>,
  bucketNames?: Readonly<Record<BucketName, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (route.data) env[tables[route.data.table].envVar] = tableNames[route.data.table];
  if (route.images) {
    if (bucketNames === undefined) throw new Error(`${route.operationId} needs the images bucket's name`);
    env[buckets.images.envVar] = bucketNames.images;
  }
  if (settings.corsAllowedOrigins.length > 0) env[CORS_ORIGINS_ENV] = settings.corsAllowedOrigins.join(' ');
  if (route.idempotencyKeys) env.IDEMPOTENCY_TTL_SECONDS = String(settings.idempotencyTtlSeconds);
  return route.data?.table === 'wallets' ? { ...env, ...walletEnvironment(settings) } : env;
}

/** The money settings as the wallet functions read them (`shared/wallet/model/settings.ts`). */
export function walletEnvironment(settings: ServiceSettings): Record<string, string> {
  return {
    CURRENCY: settings.currency,
    CURRENCY_DECIMALS: String(settings.currencyDecimals),
    MAX_TRANSFER_MINOR: String(settings.maxTransferMinor),
    IDEMPOTENCY_TTL_SECONDS: String(settings.idempotencyTtlSeconds),
  };
}

/** The environment of the authorizer function. */
export function authorizerEnvironment(auth: AuthSettings): Record<string, string> {
  return {
    AUTH_ISSUER: auth.issuer,
    AUTH_AUDIENCE: auth.audience,
    AUTH_JWKS_URL: auth.jwksUrl,
    ...(auth.scopePrefix ? { AUTH_SCOPE_PREFIX: auth.scopePrefix } : {}),
    AUTH_REQUIRE_AT_JWT_TYP: String(auth.requireAtJwtTyp ?? defaultTokenRules.requireAtJwtTyp),
    AUTH_REQUIRE_LOW_S: String(auth.requireLowS ?? defaultTokenRules.requireLowS),
    AUTH_MAX_TOKEN_LIFETIME_SECONDS: String(
      auth.maxTokenLifetimeSeconds ?? defaultTokenRules.maxTokenLifetimeSeconds,
    ),
  };
}
