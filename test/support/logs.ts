import { vi } from 'vitest';

/**
 * The JSON lines the functions write to stdout while `action` runs (log lines and EMF lines,
 * `shared/observability/telemetry.ts`), parsed, in the order written. Nothing reaches the terminal
 * meanwhile.
 */
export async function linesWrittenBy(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
    return true;
  });
  try {
    await action();
    return lines;
  } finally {
    spy.mockRestore();
  }
}

/** The EMF lines among `lines`: those carrying CloudWatch metric directives (a request's log line does). */
export const metricLines = (lines: readonly Record<string, unknown>[]) =>
  lines.filter((line) => '_aws' in line);

/** The log lines among `lines`: those with a level (a request's carries its metrics too). */
export const logLines = (lines: readonly Record<string, unknown>[]) =>
  lines.filter((line) => 'level' in line);
