/**
 * The faults the DynamoDB proxy (./dynamodb-proxy.ts) injects beneath the SDK, and how a test
 * picks the requests that get one: the vocabulary the fault tests speak.
 */

/** What the proxy does with one request instead of passing it through. */
export type Fault =
  /**
   * Waits, then forwards, even if its client has left meanwhile (timed out, or died): a request
   * that has left its client may still be applied, as on AWS. To keep one from DynamoDB, `stall`.
   */
  | { readonly kind: 'delay'; readonly ms: number }
  /**
   * Waits until `until` settles, then forwards (its client gone or not, as `delay`): DynamoDB sees
   * the request after what the test did meanwhile.
   */
  | { readonly kind: 'hold'; readonly until: Promise<unknown> }
  /**
   * Forwards at once, then keeps DynamoDB's answer from the client until `until` settles
   * (`answered` is called when DynamoDB has answered): what the client reads is older than what
   * the test did meanwhile, as a Scan page is on AWS when writes commit while it travels.
   */
  | {
      readonly kind: 'hold-answer';
      readonly until: Promise<unknown>;
      readonly answered?: () => void;
    }
  /**
   * Admits the request past the conflict check (its items, and a transaction's token, in flight),
   * then waits until `until` settles before DynamoDB gets it: a transaction DynamoDB is slow to
   * run, as one queued behind others is. Without the conflict check, as `hold`.
   */
  | { readonly kind: 'hold-in-flight'; readonly until: Promise<unknown> }
  /** Resets the connection before forwarding: DynamoDB never sees the request. */
  | { readonly kind: 'reset' }
  /** Accepts the request and never answers (until the proxy closes). */
  | { readonly kind: 'stall' }
  /** Answers 400 ThrottlingException, as DynamoDB does over the table's throughput. */
  | { readonly kind: 'throttle' }
  /** Answers 500 InternalServerError. */
  | { readonly kind: 'server-error' }
  /** Answers 400 TransactionCanceledException, every item cancelled by a TransactionConflict. */
  | { readonly kind: 'transaction-conflict' }
  /** Answers 400 TransactionCanceledException, the first item cancelled by a ThrottlingError. */
  | { readonly kind: 'transaction-throttled' }
  /** Answers a BatchGetItem with no item and every key unprocessed, as DynamoDB under throttling may. */
  | { readonly kind: 'unprocessed' }
  /**
   * Forwards, lets DynamoDB apply it, then resets the connection: the answer is lost. With `until`,
   * the reset waits for it (`answered` is called when DynamoDB has answered): the client's retry
   * then comes after what the test wrote meanwhile.
   */
  | { readonly kind: 'lose-response'; readonly until?: Promise<unknown>; readonly answered?: () => void }
  /** Forwards `rewrite(body)` instead of the body received (a request DynamoDB sees differently). */
  | {
      readonly kind: 'rewrite';
      readonly rewrite: (body: Record<string, unknown>) => Record<string, unknown>;
    };

/** The faults that answer in DynamoDB's place (or never): DynamoDB does not see the request. */
export const ANSWERED_IN_PLACE: ReadonlySet<Fault['kind']> = new Set([
  'reset',
  'stall',
  'throttle',
  'server-error',
  'transaction-conflict',
  'transaction-throttled',
  'unprocessed',
]);

/** One request as the proxy received it. */
export interface ProxiedRequest {
  /** The DynamoDB operation, from the X-Amz-Target header (e.g. `TransactWriteItems`). */
  readonly operation: string;
  readonly body: string;
  /**
   * Set once its caller left before the answer: its request timeout fired (and the SDK sent it
   * again, a request more that a slow DynamoDB Local, not the code, made), or a fault cut it.
   */
  abandoned?: true;
}

export interface FaultRule {
  /** Only requests for this operation. */
  readonly operation?: string;
  /** Only requests this predicate accepts (e.g. those naming one test's keys). */
  readonly when?: (request: ProxiedRequest) => boolean;
  /** How many matching requests get the fault; every one when unset. */
  readonly times?: number;
}
