/**
 * What a runner process (an "execution environment", `bootstrap.ts`) and the pool that owns it
 * say to each other over the IPC channel, and the limits and error shapes Lambda itself uses.
 * Kept free of imports so that the bootstrap loads nothing of the project besides this file.
 */

/** Lambda's error payload, as an invocation that failed returns it. */
export interface LambdaError {
  readonly errorType: string;
  readonly errorMessage: string;
  readonly trace?: readonly string[];
}

/** Pool → environment: run one invocation. */
export interface InvokeMessage {
  readonly type: 'invoke';
  readonly requestId: string;
  /** The event as JSON text, exactly the bytes Lambda would hand the runtime. */
  readonly event: string;
  /** Epoch milliseconds at which the function times out (`getRemainingTimeInMillis`). */
  readonly deadlineMs: number;
  readonly invokedFunctionArn: string;
  readonly traceId?: string;
}

/** Environment → pool. */
export type EnvironmentMessage =
  /** The handler module loaded; `initDurationMs` counts from process start, as Lambda's Init Duration does. */
  | { readonly type: 'ready'; readonly initDurationMs: number }
  | { readonly type: 'init-error'; readonly error: LambdaError; readonly initDurationMs: number }
  /** `payload` is the JSON text of the handler's result. */
  | {
      readonly type: 'result';
      readonly requestId: string;
      readonly payload: string;
      readonly maxRssKb: number;
    }
  | {
      readonly type: 'error';
      readonly requestId: string;
      readonly error: LambdaError;
      readonly maxRssKb: number;
      /** The environment is ending (an uncaught error): it takes no further invocation. */
      readonly fatal?: boolean;
    };

/**
 * Synchronous invocation payload limits (Lambda quotas). The request limit is checked by the
 * Invoke API before any function runs; the response limit by the runtime API after it ran.
 */
export const MAX_REQUEST_BYTES = 6_291_456;
export const MAX_RESPONSE_BYTES = 6_291_556;

/** Lambda's error payload for any thrown value, as the Node.js runtime builds it. */
export function toLambdaError(error: unknown): LambdaError {
  if (error instanceof Error) {
    return {
      errorType: error.name,
      errorMessage: error.message,
      trace: (error.stack ?? '').split('\n'),
    };
  }
  return { errorType: typeof error, errorMessage: String(error), trace: [] };
}
