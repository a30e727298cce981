import { describe, expect, it } from 'vitest';
import { healthAfter } from '#shared/webhooks/model/health.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const DAY = 86_400_000;

describe("an endpoint's health", () => {
  it('starts failing at its first failure and recovers at its next success', () => {
    const failing = healthAfter({ status: 'enabled' }, 'retry', T0);
    expect(failing).toEqual({ status: 'enabled', failingSince: T0 });
    expect(healthAfter({ status: 'enabled', failingSince: T0 }, 'retry', at(DAY))).toBeUndefined();
    expect(healthAfter({ status: 'enabled', failingSince: T0 }, 'delivered', at(DAY))).toEqual({
      status: 'enabled',
    });
  });

  it('is disabled once it has failed for 5 days without a success, and not a moment before', () => {
    const state = { status: 'enabled' as const, failingSince: T0 };
    expect(healthAfter(state, 'refused-address', at(5 * DAY - 1))).toBeUndefined();
    expect(healthAfter(state, 'refused-address', at(5 * DAY))).toEqual({
      status: 'disabled',
      disabledReason: 'failing',
      failingSince: T0,
    });
  });

  it('is disabled at once by a 410 Gone', () => {
    expect(healthAfter({ status: 'enabled' }, 'gone', T0)).toEqual({
      status: 'disabled',
      disabledReason: 'gone',
      failingSince: T0,
    });
  });

  it('stays disabled whatever an attempt in flight brings', () => {
    expect(healthAfter({ status: 'disabled', disabledReason: 'manual' }, 'delivered', T0)).toBeUndefined();
  });

  it('takes no attempt made before its owner enabled it again, whatever it answered', () => {
    const enabled = { status: 'enabled' as const, healthFrom: at(1) };
    for (const outcome of ['gone', 'retry', 'refused-address'] as const) {
      expect(healthAfter(enabled, outcome, T0)).toBeUndefined();
    }
    expect(healthAfter(enabled, 'gone', at(1))).toEqual({
      status: 'disabled',
      disabledReason: 'gone',
      failingSince: at(1),
    });
  });

  it('writes nothing while healthy', () => {
    expect(healthAfter({ status: 'enabled' }, 'delivered', T0)).toBeUndefined();
  });
});
