/**
 * Configuration is read once, at cold start, by each function's composition root. A missing
 * setting fails the init (and so the deployment's smoke test) instead of the first request.
 * `env` is the process's environment unless a test hands a composition root its own.
 */

/** The environment variables configuration is read from. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Reads a required environment variable; throws when it is missing or empty. */
export function requireEnv(name: string, env: Environment = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

/** Reads an optional environment variable; `undefined` when unset or empty. */
export function optionalEnv(name: string, env: Environment = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Reads a required environment variable holding a non-negative safe integer. */
export function requireIntegerEnv(name: string, env: Environment = process.env): number {
  const raw = requireEnv(name, env);
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}
