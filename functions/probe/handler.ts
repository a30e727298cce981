import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type CheckResult, PROBE_ROUTE, runProbe } from '#functions/probe/probe.ts';
import { requireEnv } from '#shared/config.ts';
import { logger, publish, routeMetrics } from '#shared/observability/telemetry.ts';

const apiUrl = requireEnv('PROBE_API_URL');
const tokenUrl = requireEnv('PROBE_TOKEN_URL');
const scope = requireEnv('PROBE_SCOPE');
const secretId = requireEnv('PROBE_CREDENTIALS_SECRET');

const secrets = new SecretsManagerClient({});
const metrics = routeMetrics(PROBE_ROUTE);

/** Three requests of at most 2.5 s each, and the secret, stay inside the function's 10 s timeout. */
const PROBE_REQUEST_TIMEOUT_MS = 2_500;

/**
 * Runs on a schedule: checks the public OpenAPI route and one authorized read with the probe's own
 * OAuth client, and writes `ProbeSuccess` (1 or 0) as EMF. The alarm on it also fires when the
 * metric stops arriving, so a probe that cannot run is noticed too. The client secret is read on
 * every run (once every few minutes), so a rotated secret is picked up without a redeploy.
 */
export async function handler(): Promise<{ ok: boolean; checks: CheckResult[] }> {
  let checks: CheckResult[];
  try {
    const secret = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
    const { clientId, clientSecret } = JSON.parse(secret.SecretString ?? '{}') as Record<string, unknown>;
    if (typeof clientId !== 'string' || typeof clientSecret !== 'string') {
      throw new TypeError('the secret must hold clientId and clientSecret strings');
    }
    checks = await runProbe({
      apiUrl,
      tokenUrl,
      scope,
      clientId,
      clientSecret,
      timeoutMs: PROBE_REQUEST_TIMEOUT_MS,
    });
  } catch (error) {
    checks = [
      {
        check: 'token',
        ok: false,
        detail: error instanceof Error ? `credentials: ${error.name}` : 'credentials',
      },
    ];
  }
  const ok = checks.every((check) => check.ok);
  const failed = checks.find((check) => !check.ok)?.check;
  const fields = { route: PROBE_ROUTE, outcome: failed ?? 'ok', checks };
  if (ok) logger.info('probe passed', fields);
  else logger.error('probe failed', fields);
  publish(metrics, [['ProbeSuccess', ok ? 1 : 0]]);
  return { ok, checks };
}
