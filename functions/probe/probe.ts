/**
 * The synthetic probe's checks, apart from where its credentials come from and where its results
 * go, so that a test can run them against local servers. Each check is one HTTP exchange; a check
 * that fails stops the ones that depend on it.
 */

/** The route dimension of the probe's metrics, which its alarm watches. */
export const PROBE_ROUTE = 'probe';

/** What the probe needs to know. */
export interface ProbeTarget {
  /** Base URL of the API stage, ending in `/`. */
  readonly apiUrl: string;
  /** OAuth 2.0 token endpoint of the identity provider. */
  readonly tokenUrl: string;
  /** Scopes to ask for, space separated. */
  readonly scope: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Per request; the whole probe stays well inside the function's timeout. */
  readonly timeoutMs: number;
}

/** One check and how it went; `detail` never holds a token or secret. */
export interface CheckResult {
  readonly check: 'openapi' | 'token' | 'authorized-read';
  readonly ok: boolean;
  readonly status?: number;
  readonly detail?: string;
}

/** The public route (no token) and the authorized read (the probe identity's own balance). */
export const PROBE_PATHS = { openapi: 'api/openapi.json', authorizedRead: 'api/wallet/balance' } as const;

async function exchange(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
}

const failure = (check: CheckResult['check'], error: unknown): CheckResult => ({
  check,
  ok: false,
  detail: error instanceof Error ? error.name : 'error',
});

/** Runs the checks in order and returns each one's result. */
export async function runProbe(target: ProbeTarget): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  try {
    const response = await exchange(new URL(PROBE_PATHS.openapi, target.apiUrl).href, {}, target.timeoutMs);
    const body = (await response.json().catch(() => undefined)) as { openapi?: unknown } | undefined;
    const ok = response.status === 200 && typeof body?.openapi === 'string';
    results.push({ check: 'openapi', ok, status: response.status });
  } catch (error) {
    results.push(failure('openapi', error));
  }

  let token: string | undefined;
  try {
    const basic = Buffer.from(
      `${encodeURIComponent(target.clientId)}:${encodeURIComponent(target.clientSecret)}`,
    ).toString('base64');
    const response = await exchange(
      target.tokenUrl,
      {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: target.scope }).toString(),
      },
      target.timeoutMs,
    );
    const body = (await response.json().catch(() => undefined)) as { access_token?: unknown } | undefined;
    token = response.status === 200 && typeof body?.access_token === 'string' ? body.access_token : undefined;
    results.push({ check: 'token', ok: token !== undefined, status: response.status });
  } catch (error) {
    results.push(failure('token', error));
  }
  if (token === undefined) return [...results, { check: 'authorized-read', ok: false, detail: 'no token' }];

  try {
    const response = await exchange(
      new URL(PROBE_PATHS.authorizedRead, target.apiUrl).href,
      { headers: { authorization: `Bearer ${token}` } },
      target.timeoutMs,
    );
    await response.body?.cancel();
    results.push({ check: 'authorized-read', ok: response.status === 200, status: response.status });
  } catch (error) {
    results.push(failure('authorized-read', error));
  }
  return results;
}
