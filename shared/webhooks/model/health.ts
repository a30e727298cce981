import type { AttemptOutcome } from './delivery.ts';
import { type DisabledReason, type EndpointStatus, FAILING_DISABLES_AFTER_MS } from './endpoint.ts';

/** What an endpoint's health is made of. */
export interface HealthState {
  readonly status: EndpointStatus;
  readonly disabledReason?: DisabledReason | undefined;
  readonly failingSince?: string | undefined;
  /**
   * RFC 3339: when its owner last enabled it again or moved it to another URL. An attempt made
   * before changes nothing: its record lands after its answer, and a 410 answered just before the
   * owner enabled it disabled it again (review helper-35), one from the URL left disabled the new
   * (review helper-37).
   */
  readonly healthFrom?: string | undefined;
}

/**
 * An endpoint's health after an attempt at `attemptedAt`: a success clears `failingSince`; a
 * failure starts it, and disables the endpoint (`failing`) once it is 5 days old; a 410 disables it
 * at once (`gone`). A disabled endpoint stays so until its owner enables it again, and an attempt
 * made before that changes nothing; `undefined` when nothing changes (so the store writes nothing).
 */
export function healthAfter(
  state: HealthState,
  outcome: AttemptOutcome,
  attemptedAt: string,
): HealthState | undefined {
  if (state.status === 'disabled') return undefined;
  if (state.healthFrom !== undefined && Date.parse(attemptedAt) < Date.parse(state.healthFrom))
    return undefined;
  if (outcome === 'delivered') {
    return state.failingSince === undefined ? undefined : { status: 'enabled' };
  }
  const failingSince = state.failingSince ?? attemptedAt;
  if (outcome === 'gone') return { status: 'disabled', disabledReason: 'gone', failingSince };
  if (Date.parse(attemptedAt) - Date.parse(failingSince) >= FAILING_DISABLES_AFTER_MS) {
    return { status: 'disabled', disabledReason: 'failing', failingSince };
  }
  return state.failingSince === undefined ? { status: 'enabled', failingSince } : undefined;
}
