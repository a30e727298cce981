/**
 * Configuration is read once, at cold start, by each function's module scope. A missing setting
 * fails the init (and so the deployment's smoke test) instead of the first request.
 */

/** Reads a required environment variable; throws when it is missing or empty. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

/** Reads an optional environment variable; `undefined` when unset or empty. */
export function optionalEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Reads a required environment variable holding a non-negative safe integer. */
export function requireIntegerEnv(name: string): number {
  const raw = requireEnv(name);
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}
