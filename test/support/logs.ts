import { vi } from 'vitest';

/**
 * The JSON lines the functions write while `action` runs, parsed: Powertools' log lines (through
 * `console.info`, `warn`, `error` in its development mode, `worker-env.ts`) and its EMF lines
 * (`console.log`), in the order written.
 */
export async function linesWrittenBy(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const record = (line: unknown) => void lines.push(JSON.parse(String(line)));
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation(record),
  );
  try {
    await action();
    return lines;
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

/** The EMF lines among `lines`: those carrying CloudWatch metric directives. */
export const metricLines = (lines: readonly Record<string, unknown>[]) =>
  lines.filter((line) => '_aws' in line);

/** The log lines among `lines`: everything but EMF. */
export const logLines = (lines: readonly Record<string, unknown>[]) =>
  lines.filter((line) => !('_aws' in line));
