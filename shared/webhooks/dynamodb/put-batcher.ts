/**
 * Unconditional puts of the webhooks table, gathered for a few milliseconds and sent 25 to a
 * BatchWriteItem: the dispatcher's records of its attempts (the delivery log, and the task of a
 * delivered event ended). They cost the write units they cost one by one, in a request per 25
 * items instead of one each. Locally every request waits in DynamoDB Local's one queue, where the
 * dispatcher's requests are served one per round of the callers: two writes per delivery in their
 * own requests held its next claims back and made them the events' latency (issue 46).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type RetryPolicy, UnprocessedKeysError, withRetries } from '../../dynamodb/retry.ts';

/** BatchWriteItem takes at most 25 puts. */
const PUTS_PER_REQUEST = 25;

/**
 * How long the first put of a request waits for others: a delivery's two records are put at once,
 * and the attempts of one poll end within milliseconds of each other. Nothing waits on these
 * writes but the task's end (its endpoint's slot is free already).
 */
export const PUT_WINDOW_MS = 10;

export interface PutBatcher {
  /** Resolves once the item is written; rejects when its request failed after the retries. */
  put(item: Record<string, unknown> & { readonly pk: string }): Promise<void>;
}

export function createPutBatcher({
  client,
  tableName,
  windowMs = PUT_WINDOW_MS,
  policy,
}: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly windowMs?: number;
  readonly policy: RetryPolicy;
}): PutBatcher {
  /** By key: a request may not name an item twice, and the later put of a key is the one meant. */
  let pending = new Map<string, { item: Record<string, unknown>; done: PromiseWithResolvers<void>[] }>();
  let timer: NodeJS.Timeout | undefined;

  async function send(batch: typeof pending): Promise<void> {
    let requests = [...batch.values()].map(({ item }) => ({ PutRequest: { Item: item } }));
    try {
      await withRetries(async () => {
        const { UnprocessedItems } = await client.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[tableName] as typeof requests | undefined) ?? [];
        if (requests.length > 0) throw new UnprocessedKeysError(`${requests.length} puts unprocessed`);
      }, policy);
      for (const { done } of batch.values()) for (const waiter of done) waiter.resolve();
    } catch (error) {
      for (const { done } of batch.values()) for (const waiter of done) waiter.reject(error);
    }
  }

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    void send(batch);
  }

  return {
    put(item) {
      const done = Promise.withResolvers<void>();
      const known = pending.get(item.pk);
      pending.set(item.pk, { item, done: [...(known?.done ?? []), done] });
      if (pending.size >= PUTS_PER_REQUEST) flush();
      else timer ??= setTimeout(flush, windowMs);
      return done.promise;
    },
  };
}
