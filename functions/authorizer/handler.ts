import { createAccessTokenVerifier } from './access-token.ts';
import { createAuthorizer } from './authorizer.ts';
import { createJwksCache } from './jwks-cache.ts';
import { loadAuthorizerSettings } from './settings.ts';

export { type AuthorizerHandler, createAuthorizer } from './authorizer.ts';

/**
 * The composition root of the authorizer, built once per container: the settings read from the
 * environment, the JWKS cache (and the keys it fetches) and the verifier's memos kept for every
 * invocation. Tests build their own through the same factories.
 */
export const handler = createAuthorizer({
  verify: createAccessTokenVerifier(loadAuthorizerSettings(), createJwksCache()),
});
