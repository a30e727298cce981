import { type Environment, optionalEnv } from '../../config.ts';
import type { DestinationMode } from './destination.ts';

export const DESTINATION_MODE_ENV = 'WEBHOOK_DESTINATIONS';

/**
 * `WEBHOOK_DESTINATIONS=local` (set by `npm start` only) lets endpoints be `http` to loopback;
 * anything else, or nothing, is the deployed rule: secure unless told otherwise.
 */
export function destinationModeFromEnv(env: Environment = process.env): DestinationMode {
  const value = optionalEnv(DESTINATION_MODE_ENV, env);
  if (value !== undefined && value !== 'local' && value !== 'deployed') {
    throw new Error(`${DESTINATION_MODE_ENV} must be local or deployed, got "${value}"`);
  }
  return value ?? 'deployed';
}
