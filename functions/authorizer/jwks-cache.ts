import { FetchError } from 'aws-jwt-verify/error';
import { type Jwks, type JwkWithKid, SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { AUTHORIZER_ROUTE, logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';

const metrics = routeMetrics(AUTHORIZER_ROUTE);

/** Stays well inside the authorizer's own timeout, so a hung identity provider costs a 401, not a 500. */
const JWKS_TIMEOUT_MS = 3_000;
/** A key the identity provider withdraws stops being accepted at the latest this long after. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** How long a failed refresh waits before the next try (one fetch, not one per request). */
const JWKS_RETRY_MS = 30_000;

/**
 * aws-jwt-verify's own fetcher speaks only HTTPS; the local gateway's issuer is plain HTTP on
 * loopback, and deployed stages only accept an https `auth:jwksUrl` (`infra/app.ts`).
 */
const fetcher = {
  async fetch(uri: string): Promise<ArrayBuffer> {
    try {
      const response = await fetch(uri, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new FetchError(uri, `status code is ${response.status}, expected 200`);
      return await response.arrayBuffer();
    } catch (error) {
      if (error instanceof FetchError) throw error;
      // fetch says only "fetch failed"; what failed (ECONNREFUSED, a timeout, …) is in its cause.
      const { name, cause } = error as { name?: unknown; cause?: { code?: unknown } };
      throw new FetchError(uri, String(cause?.code ?? name));
    }
  },
};

/**
 * The JWKS as aws-jwt-verify caches it (fetched on first use, again for an unknown `kid`, at most
 * once per 10 s per kid), but also refreshed once it is {@link JWKS_MAX_AGE_MS} old: the library
 * alone would trust a withdrawn key for as long as the Lambda environment lives. A refresh that
 * fails keeps the keys already held and is tried again {@link JWKS_RETRY_MS} later: an identity
 * provider that is down must not lock out every caller whose token it signed with a key we have.
 */
export class ExpiringJwksCache extends SimpleJwksCache {
  /** 0 until a JWKS was fetched: until then there are no keys to fall back on. */
  #refreshAt = 0;

  override async getJwks(uri: string): Promise<Jwks> {
    const jwks = await super.getJwks(uri);
    this.#refreshAt = Date.now() + JWKS_MAX_AGE_MS;
    return jwks;
  }

  override async getJwk(uri: string, jwt: DecomposedJwt): Promise<JwkWithKid> {
    if (Date.now() >= this.#refreshAt) {
      try {
        await this.getJwks(uri);
      } catch (error) {
        if (this.#refreshAt === 0) throw error;
        this.#refreshAt = Date.now() + JWKS_RETRY_MS;
        // Counted, not just logged: while refreshes fail, a key the provider withdrew stays trusted
        // and a key it rotated in stays unknown, so a lasting failure raises an alarm.
        logger.warn('JWKS refresh failed; the keys already held stay in use', {
          route: AUTHORIZER_ROUTE,
          outcome: 'jwks-stale',
          reason: 'jwks-refresh',
          detail: error instanceof Error ? error.message : String(error),
        });
        publish(metrics, [['JwksRefreshFailures', 1]]);
      }
    }
    return super.getJwk(uri, jwt);
  }
}

/** The identity provider's keys, fetched once per container and kept as {@link ExpiringJwksCache} says. */
export const createJwksCache = (): ExpiringJwksCache => new ExpiringJwksCache({ fetcher });
