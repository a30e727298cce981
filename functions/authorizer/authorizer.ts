import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { policyFor } from '#shared/auth/policy.ts';
import type { AccessTokenVerifier, Verified } from './access-token.ts';
import { isProviderOutage, logRejection } from './rejections.ts';

export type AuthorizerHandler = (
  event: APIGatewayTokenAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;

/**
 * What the authorizer throws when the identity provider is failing: any message but `Unauthorized`
 * is an authorizer error to API Gateway, answered 503 with Retry-After
 * (`shared/http/gateway-responses.ts`) and, unlike a policy, not cached for the token.
 */
export const PROVIDER_UNAVAILABLE = 'Identity provider unavailable';

/**
 * The Lambda TOKEN authorizer of the REST API: verifies the OAuth 2.0
 * JWT access token of the `Authorization: Bearer` header with `verify` and answers with a policy
 * allowing every route the token's scopes open (see {@link policyFor}). A bad token throws
 * `Error('Unauthorized')`, the one message API Gateway turns into its 401 gateway response; a
 * token that could not be checked because the identity provider fails throws
 * {@link PROVIDER_UNAVAILABLE}, a 503.
 */
export function createAuthorizer({ verify }: { readonly verify: AccessTokenVerifier }): AuthorizerHandler {
  return async (event) => {
    let verified: Verified;
    try {
      verified = await verify(event.authorizationToken);
    } catch (error) {
      logRejection(error);
      // A 401 tells an RFC 6750 client its token is dead: it would sign in again at the provider
      // that is down, and be told nothing of when to retry. Anything else fails closed as a 401.
      throw new Error(isProviderOutage(error) ? PROVIDER_UNAVAILABLE : 'Unauthorized');
    }
    // Outside the try on purpose: a malformed methodArn is a gateway misconfiguration, and failing
    // as an authorizer error (a 503, and the authorizer-failures alarm) says so where a 401 would
    // send the client chasing a token problem it does not have.
    const answer = policyFor(event.methodArn, verified.sub, verified.scopes);
    // API Gateway reuses this answer for its cache TTL whatever the token's `exp`: the functions
    // refuse a request after it themselves (shared/http/handler.ts).
    return { ...answer, context: { ...answer.context, exp: verified.exp } };
  };
}
