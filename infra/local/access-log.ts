/** One line per answered request, as `npm start` prints it. */

export interface AccessLogEntry {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The operation served; absent when the gateway answered on its own before any function. */
  readonly operationId?: string;
  readonly durationMs: number;
}

/** `METHOD path status operation duration requestId`, newline-terminated. */
export function formatAccessLog(entry: AccessLogEntry): string {
  const operation = entry.operationId ?? 'gateway';
  return `${entry.method} ${entry.path} ${entry.status} ${operation} ${entry.durationMs} ms ${entry.requestId}\n`;
}
