/** One line per answered request, as `npm start` prints it. */

export interface AccessLogEntry {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The operation served; absent when the gateway answered on its own before any function. */
  readonly operationId?: string;
  readonly durationMs: number;
  /** Bundled mode: the functions that started an execution environment for this request (cold starts). */
  readonly coldStarts?: readonly string[];
}

/** `METHOD path status operation duration requestId [cold: functions]`, newline-terminated. */
export function formatAccessLog(entry: AccessLogEntry): string {
  const operation = entry.operationId ?? 'gateway';
  const cold = entry.coldStarts?.length ? ` cold: ${entry.coldStarts.join(',')}` : '';
  return `${entry.method} ${entry.path} ${entry.status} ${operation} ${entry.durationMs} ms ${entry.requestId}${cold}\n`;
}
