import { FetchError, JwksValidationError, JwkValidationError } from 'aws-jwt-verify/error';
import { type Jwks, type JwkWithKid, SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { AUTHORIZER_ROUTE, logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';

const metrics = routeMetrics(AUTHORIZER_ROUTE);

/**
 * Stays well inside the authorizer's own timeout, so a hung identity provider costs a 503 with
 * Retry-After (`rejections.ts`), not the authorizer's timeout.
 */
const JWKS_TIMEOUT_MS = 3_000;
/**
 * The most of a JWKS read. Providers publish a few KB (tens with certificate chains); a body past
 * this is no JWKS of theirs, and reading it whole could exhaust the function's memory, so the
 * fetch fails instead, as any other failed fetch does.
 */
export const JWKS_MAX_BYTES = 256 * 1024;
/**
 * How long after a failed fetch the next may start. Meanwhile a token that needs one fails at
 * once, as the last fetch did: a provider that is down or hanging costs one fetch per container
 * every few seconds, not one (of up to {@link JWKS_TIMEOUT_MS}) per token, whatever `kid`s arrive.
 */
export const JWKS_FETCH_BACKOFF_MS = 5_000;
/** How old the JWKS may grow before the next token refreshes it. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** How long a failed refresh waits before the next try (one fetch, not one per request). */
export const JWKS_RETRY_MS = 30_000;
/**
 * The longest the keys of the last good fetch are trusted while refreshes fail: past it, every
 * token gets 503 (the provider's outage, not the token's fault) until the JWKS is fetched again. Longer than {@link JWKS_MAX_AGE_MS} plus the
 * 15 minutes of failed refreshes after which the `authorizer-jwks-stale` alarm pages, so the page
 * comes before callers are locked out.
 */
export const JWKS_MAX_STALENESS_MS = 30 * 60_000;

/**
 * aws-jwt-verify's own fetcher speaks only HTTPS; the local gateway's issuer is plain HTTP on
 * loopback, and deployed stages only accept an https `auth:jwksUrl` (`infra/app.ts`).
 */
const fetcher = {
  async fetch(uri: string): Promise<ArrayBuffer> {
    try {
      const response = await fetch(uri, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new FetchError(uri, `status code is ${response.status}, expected 200`);
      return await bodyOfAtMost(uri, response, JWKS_MAX_BYTES);
    } catch (error) {
      if (error instanceof FetchError) throw error;
      // fetch says only "fetch failed"; what failed (ECONNREFUSED, a timeout, …) is in its cause.
      const { name, cause } = error as { name?: unknown; cause?: { code?: unknown } };
      throw new FetchError(uri, String(cause?.code ?? name));
    }
  },
};

/** The body of `response`, read until it passes `limit` bytes at most: then a {@link FetchError}. */
async function bodyOfAtMost(uri: string, response: Response, limit: number): Promise<ArrayBuffer> {
  const tooLarge = () => new FetchError(uri, `the response is larger than ${limit} bytes`);
  if (Number(response.headers.get('content-length')) > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const body = new Uint8Array(limit);
  let length = 0;
  // Leaving the loop by a throw cancels the stream: the rest is never read.
  for await (const chunk of response.body ?? []) {
    if (length + chunk.byteLength > limit) throw tooLarge();
    body.set(chunk, length);
    length += chunk.byteLength;
  }
  return body.buffer.slice(0, length);
}

/** The keys held are older than {@link JWKS_MAX_STALENESS_MS}, and no refresh is due yet to replace them. */
export class JwksStaleError extends Error {}

/**
 * The JWKS as aws-jwt-verify caches it (fetched on first use, again for an unknown `kid`, at most
 * once per 10 s after a JWKS without it, whichever kids arrive), but also refreshed once it is
 * {@link JWKS_MAX_AGE_MS} old: the library alone would trust a withdrawn key for as long as the
 * Lambda environment lives.
 *
 * A key the identity provider withdraws is refused by the authorizer at the latest
 * {@link JWKS_MAX_AGE_MS} (10 min) after it left the JWKS while the provider answers, and
 * {@link JWKS_MAX_STALENESS_MS} (30 min) whatever happens: the keys held were all in the JWKS at
 * their last good fetch, which was no earlier than the withdrawal minus that much. Between the two,
 * a refresh that fails keeps the keys already held (an identity provider that is down must not lock
 * out every caller whose token it signed with a key we have) and is tried again
 * {@link JWKS_RETRY_MS} later; past the staleness bound a failed or not-yet-due refresh is a 503 for
 * every token, counted as the provider's fault (`AuthErrors`). API Gateway's cache of an answer
 * (`auth:cacheTtlSeconds`) adds its TTL to both bounds.
 */
export class ExpiringJwksCache extends SimpleJwksCache {
  /** When the next token refreshes the JWKS; 0 until a JWKS was fetched: every token tries then. */
  #refreshAt = 0;
  /** When a JWKS was last fetched: what the keys held were confirmed at. */
  #confirmedAt = Number.NEGATIVE_INFINITY;
  /** Before this, no fetch starts: the last one failed ({@link JWKS_FETCH_BACKOFF_MS}). */
  #nextFetchAt = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;

  constructor(props: ConstructorParameters<typeof SimpleJwksCache>[0] & { readonly now?: () => number }) {
    super(props);
    this.#now = props?.now ?? (() => Date.now());
  }

  override async getJwks(uri: string): Promise<Jwks> {
    if (this.#now() < this.#nextFetchAt) {
      throw new FetchError(uri, `the last fetch failed less than ${JWKS_FETCH_BACKOFF_MS} ms ago`);
    }
    let jwks: Jwks;
    try {
      jwks = await super.getJwks(uri);
    } catch (error) {
      this.#nextFetchAt = this.#now() + JWKS_FETCH_BACKOFF_MS;
      // aws-jwt-verify rejects a document with one malformed key as JwkValidationError, the class
      // of a bad single key a token names: told apart, since only the document's is an outage.
      if (error instanceof JwkValidationError) {
        throw new JwksValidationError(`The JWKS is invalid: ${error.message}`, { cause: error });
      }
      throw error;
    }
    const now = this.#now();
    this.#confirmedAt = now;
    this.#refreshAt = now + JWKS_MAX_AGE_MS;
    return jwks;
  }

  override async getJwk(uri: string, jwt: DecomposedJwt): Promise<JwkWithKid> {
    const now = this.#now();
    const stale = now >= this.#confirmedAt + JWKS_MAX_STALENESS_MS;
    if (now >= this.#refreshAt) {
      try {
        await this.getJwks(uri);
      } catch (error) {
        if (this.#refreshAt === 0) throw error;
        this.#refreshAt = now + JWKS_RETRY_MS;
        if (stale) throw error;
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
    } else if (stale) {
      throw new JwksStaleError(
        `The JWKS was last fetched ${Math.round((now - this.#confirmedAt) / 60_000)} min ago, longer than the keys are trusted`,
      );
    }
    return super.getJwk(uri, jwt);
  }
}

/** The identity provider's keys, fetched once per container and kept as {@link ExpiringJwksCache} says. */
export const createJwksCache = (options: { readonly now?: () => number } = {}): ExpiringJwksCache =>
  new ExpiringJwksCache({ fetcher, ...options });
