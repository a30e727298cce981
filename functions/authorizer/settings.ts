import { type Environment, optionalEnv, requireEnv, requireIntegerEnv } from '#shared/config.ts';

/** What the authorizer trusts and checks, read once at cold start (`infra/environment.ts` sets it). */
export interface AuthorizerSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUri: string;
  /** Amazon Cognito prefixes custom scopes with the resource server id; other providers need none. */
  readonly scopePrefix: string;
  /** RFC 9068 §4: off only for identity providers that send access tokens without `typ` (Amazon Cognito). */
  readonly requireAtJwtTyp: boolean;
  /**
   * Refuse an ECDSA signature whose `s` is the high one of its pair (`s > n/2`): only for identity
   * providers that always sign with the low one, as the local issuer does
   * (docs/decisions/one-token-one-bucket.md).
   */
  readonly requireLowS: boolean;
  /** The longest lifetime (`exp` − `iat`) accepted: a token minted for longer is refused outright. */
  readonly maxLifetimeSeconds: number;
}

/** The settings from the `AUTH_*` variables; throws on a missing or malformed one. */
export function loadAuthorizerSettings(env: Environment = process.env): AuthorizerSettings {
  return {
    issuer: requireEnv('AUTH_ISSUER', env),
    audience: requireEnv('AUTH_AUDIENCE', env),
    jwksUri: requireEnv('AUTH_JWKS_URL', env),
    scopePrefix: optionalEnv('AUTH_SCOPE_PREFIX', env) ?? '',
    requireAtJwtTyp: booleanEnv('AUTH_REQUIRE_AT_JWT_TYP', env),
    requireLowS: booleanEnv('AUTH_REQUIRE_LOW_S', env),
    maxLifetimeSeconds: requireIntegerEnv('AUTH_MAX_TOKEN_LIFETIME_SECONDS', env),
  };
}

function booleanEnv(name: string, env: Environment): boolean {
  const raw = requireEnv(name, env);
  if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}
