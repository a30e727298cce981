/**
 * What API Gateway does with a TOKEN authorizer: no Authorization header is 401 without a call;
 * otherwise the authorizer's answer, cached by token for the cache TTL, must be a policy
 * allowing the request's method ARN. Failures are not cached, as in API Gateway. An error other
 * than `Unauthorized`, or an answer that is no policy, is API Gateway's
 * AuthorizerConfigurationException: the AUTHORIZER_CONFIGURATION_ERROR gateway response (503 with
 * Retry-After, `shared/http/gateway-responses.ts`), as the identity provider's outage is answered.
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { methodArnFor } from '#shared/auth/policy.ts';
import { LOCAL_DEPLOYMENT } from './deployment.ts';
import { GatewayError, logFunctionError } from './gateway-answer.ts';
import { lambdaContext } from './invoke.ts';
import { isAllowed } from './policy-evaluation.ts';

export type AuthorizerHandler = (
  event: APIGatewayTokenAuthorizerEvent,
  context: Context,
) => Promise<APIGatewayAuthorizerResult>;

interface CachedAuthorization {
  readonly expiresAt: number;
  readonly result: Promise<Authorization>;
}

export class AuthorizerEmulation {
  private readonly authorizations = new Map<string, CachedAuthorization>();
  private readonly ttlMs: number;
  /** The authorizer module's handler, once loaded; `undefined` while absent or when it failed to load. */
  handler: AuthorizerHandler | undefined;

  constructor(cacheTtlSeconds: number) {
    this.ttlMs = cacheTtlSeconds * 1000;
  }

  /** Authorizes a request; returns the authorizer context the function receives. */
  async authorize(
    token: string | undefined,
    method: string,
    path: string,
  ): Promise<Record<string, string | number>> {
    if (token === undefined || token.trim() === '') throw new GatewayError('UNAUTHORIZED', 'Unauthorized');
    const methodArn = methodArnFor({ ...LOCAL_DEPLOYMENT, method, path });
    const authorizeStarted = Date.now();
    let authorization: Authorization;
    try {
      authorization = await this.authorization(token, methodArn);
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') {
        throw new GatewayError('UNAUTHORIZED', 'Unauthorized');
      }
      if (error instanceof GatewayError) throw error;
      logFunctionError('authorizer', undefined, error);
      throw authorizerError();
    }
    if (!authorization.allows(methodArn)) {
      throw new GatewayError(
        'ACCESS_DENIED',
        'User is not authorized to access this resource with an explicit deny',
      );
    }
    return {
      principalId: authorization.result.principalId,
      ...authorization.context(),
      integrationLatency: Date.now() - authorizeStarted,
    };
  }

  /** The authorizer's answer for a token; concurrent requests with one token share one call. */
  private authorization(token: string, methodArn: string): Promise<Authorization> {
    const now = Date.now();
    const cached = this.authorizations.get(token);
    if (cached && cached.expiresAt > now) return cached.result;
    const handler = this.handler;
    if (!handler) return Promise.reject(authorizerError());
    const result = handler(
      { type: 'TOKEN', authorizationToken: token, methodArn },
      lambdaContext('local-authorizer'),
    ).then((answer) => new Authorization(checkAuthorizerResult(answer)));
    if (this.ttlMs > 0) {
      this.prune(now);
      this.authorizations.set(token, { expiresAt: now + this.ttlMs, result });
      // API Gateway caches policies, not failures: the next request with this token asks again.
      result.catch(() => this.authorizations.delete(token));
    }
    return result;
  }

  /** Keeps the cache bounded by the tokens of the last TTL, however many a long session sends. */
  private prune(now: number): void {
    if (this.authorizations.size < 1000) return;
    for (const [token, entry] of this.authorizations) {
      if (entry.expiresAt <= now) this.authorizations.delete(token);
    }
  }
}

/**
 * An authorizer's answer as it is cached for its token, with what every request derives from it
 * worked out once: whether the policy allows a method ARN, and the context functions receive.
 */
class Authorization {
  readonly result: APIGatewayAuthorizerResult;
  private readonly decisions = new Map<string, boolean>();
  private contextStrings: Record<string, string> | undefined;

  constructor(result: APIGatewayAuthorizerResult) {
    this.result = result;
  }

  allows(methodArn: string): boolean {
    let allowed = this.decisions.get(methodArn);
    if (allowed === undefined) {
      allowed = isAllowed(this.result.policyDocument, methodArn);
      // Method ARNs carry path parameter values: a token calling many ids must not grow this forever.
      if (this.decisions.size < 100) this.decisions.set(methodArn, allowed);
    }
    return allowed;
  }

  /** The context for one request; a context functions cannot receive fails every request again. */
  context(): Readonly<Record<string, string>> {
    this.contextStrings ??= authorizerContext(this.result.context);
    return this.contextStrings;
  }
}

/** How API Gateway answers an authorizer that threw other than `Unauthorized`, failed, or answered no policy. */
function authorizerError(): GatewayError {
  return new GatewayError('AUTHORIZER_CONFIGURATION_ERROR', 'AuthorizerConfigurationException');
}

/**
 * Only a policy and a principal make an authorizer answer; anything else is what API Gateway
 * reports as AuthorizerConfigurationException.
 */
function checkAuthorizerResult(result: unknown): APIGatewayAuthorizerResult {
  const candidate = result as Partial<APIGatewayAuthorizerResult> | null | undefined;
  if (
    typeof candidate?.principalId !== 'string' ||
    typeof candidate.policyDocument !== 'object' ||
    candidate.policyDocument === null ||
    candidate.policyDocument.Statement === undefined
  ) {
    throw authorizerError();
  }
  return candidate as APIGatewayAuthorizerResult;
}

/** The authorizer's context as functions receive it: scalars only, numbers and booleans as strings. */
function authorizerContext(context: APIGatewayAuthorizerResult['context']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(context ?? {})) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') throw authorizerError();
    out[key] = String(value);
  }
  return out;
}
