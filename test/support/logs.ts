import { vi } from 'vitest';

/**
 * The JSON lines the functions write while `action` runs, parsed (`worker-env.ts` routes them
 * through console in tests).
 */
export async function linesWrittenBy(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const spy = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await action();
    return spy.mock.calls.map(([line]) => JSON.parse(String(line)));
  } finally {
    spy.mockRestore();
  }
}
