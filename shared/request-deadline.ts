import { AsyncLocalStorage } from 'node:async_hooks';

/** Time kept after the last DynamoDB call could end, to answer (and log) before the function times out. */
export const ANSWER_MARGIN_MS = 500;

/**
 * When the request in flight must be answered: its function's timeout. Kept in the request's own
 * async scope (the local gateway and the tests serve several requests in one process), so that a
 * DynamoDB call deep in a use case sees it without every port passing it on; outside a request
 * (the credit poster, the audit, scripts) there is none.
 */
const answerBy = new AsyncLocalStorage<number>();

/** Runs one request's work with its deadline (epoch ms) in scope. */
export function answeringBy<T>(deadline: number, run: () => Promise<T>): Promise<T> {
  return answerBy.run(deadline, run);
}

/** The deadline of the request in flight, if any. */
export const requestDeadline = (): number | undefined => answerBy.getStore();
