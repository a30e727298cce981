import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../../dynamodb/retry.ts';
import type { CreditInTransit } from '../hot-wallet/credit-batch.ts';
import { type BatchPosting, batchSum, type CreditBatch } from '../hot-wallet/credit-batch.ts';
import type {
  BatchPostingPlan,
  BatchPostingResult,
  BatchSweepStore,
  CreditStore,
  LeaseHolder,
  PostingPlan,
  PostingResult,
} from '../hot-wallet/ports.ts';
import { walletAccount } from '../model/accounts.ts';
import { batchItem, entriesOfBatch, postedEntries } from './batch-items.ts';
import { batchOfItem } from './batch-reader.ts';
import { creditOfItem } from './credit-reader.ts';
import { createHotMarkerStore } from './hot-marker-store.ts';
import {
  batchKey,
  completingShardKey,
  creditKey,
  historyShardOf,
  postingLeaseKey,
  walletKey,
} from './keys.ts';
import { createLedgerCommit, exact, stateOf } from './ledger-commit.ts';
import { createPendingCredits } from './pending-index.ts';
import type { WalletTableAccess } from './table-access.ts';

/**
 * How many of each `pending` shard's oldest items one look for others' credits takes: 32 shards, so
 * up to 256 credits or batches (of up to 49 credits each).
 */
const OLDEST_PER_SHARD = 8;

/** A lease item outlives its last holder by a day, then DynamoDB's TTL deletes it. */
const LEASE_KEPT_S = 86_400;

const refused = (error: unknown) =>
  (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';

/** The credits in transit of the wallet ledger on its DynamoDB table: what the credit poster needs. */
export function createCreditStore(access: WalletTableAccess): CreditStore & BatchSweepStore {
  const ledger = createLedgerCommit(access);

  async function read(address: string, transferIds: readonly string[]) {
    const found = await ledger.readMany([walletKey(address), ...transferIds.map(creditKey)]);
    const credits: CreditInTransit[] = [];
    for (const id of transferIds) {
      const item = found.get(creditKey(id));
      const read = item && creditOfItem(item);
      if (read?.address === address) credits.push(read.credit);
    }
    return { wallet: stateOf(found.get(walletKey(address))), credits };
  }

  async function post({
    address,
    wallet,
    credits,
    postedAt,
    postingId,
  }: PostingPlan): Promise<PostingResult> {
    const account = walletAccount(address);
    const items: Record<
      string,
      ReturnType<typeof ledger.put> | ReturnType<typeof ledger.accountUpdate> | ReturnType<typeof creditMark>
    > = {};
    postedEntries(address, wallet, credits, postedAt).forEach((entry, i) => {
      items[`entry${i}`] = ledger.entryPut(entry, true);
      items[`credit${i}`] = creditMark(entry.transferId, entry.seq, postedAt, postingId);
    });
    items.wallet = ledger.accountUpdate(account, wallet, batchSum({ credits }), postedAt, credits.length);
    // Never a transfer id: the payer's transaction used it as its token.
    const result = await ledger.commit(items, randomUUID());
    if (result.committed) return { kind: 'posted' };
    return Object.keys(result.refused).some((name) => name.startsWith('credit'))
      ? { kind: 'credit-taken' }
      : { kind: 'wallet-moved' };
  }

  /**
   * Claims `batch`'s credits for it: ONE transaction puts the batch, in the pending index in their
   * place, and marks each credit batched, on condition that no batch has it, it is not posted, and
   * it is the credit the batch lists (recipient, amount, payer's entry).
   */
  async function batch(batch: CreditBatch, batchedAt: string): Promise<'batched' | 'credit-taken'> {
    const items: Record<string, ReturnType<typeof ledger.put> | ReturnType<typeof update>> = {
      batch: ledger.put(batchItem(batch, batchedAt)),
    };
    batch.credits.forEach((credit, i) => {
      items[`credit${i}`] = update(
        creditKey(credit.transferId),
        'SET batchId = :batch REMOVE pendingFor',
        // As the batch lists it: its entry is written from that listing.
        'attribute_not_exists(batchId) AND attribute_not_exists(postedSeq) AND toAccount = :to AND amountMinor = :amount AND fromAccount = :from AND fromSeq = :fromSeq',
        {
          ':batch': batch.batchId,
          ':to': walletAccount(batch.address),
          ':amount': credit.amountMinor,
          ':from': credit.fromAccount,
          ':fromSeq': credit.fromSeq,
        },
      );
    });
    const result = await ledger.commit(items, randomUUID());
    return result.committed ? 'batched' : 'credit-taken';
  }

  /**
   * Posts whole batches: ONE transaction writes the wallet once (balance + their sums, seq + their
   * credits) on condition that it is as read, and marks each batch posted where its credits go in
   * the wallet (and out of the pending index: the money is the wallet's; into the wallet's
   * `history-shards` index at its first seq, which the history reads as its credits' entries), on
   * condition that no posting took it before. Their entries follow (`complete`).
   */
  async function postBatches({
    address,
    wallet,
    batches,
    postedAt,
  }: BatchPostingPlan): Promise<BatchPostingResult> {
    const items: Record<string, ReturnType<typeof ledger.accountUpdate> | ReturnType<typeof update>> = {};
    const postings: BatchPosting[] = [];
    let state = wallet;
    batches.forEach((each, i) => {
      const posting = { firstSeq: state.seq + 1, balanceBefore: state.balance, postedAt };
      postings.push(posting);
      items[`batch${i}`] = update(
        batchKey(each.batchId),
        // Out of its wallet's pending shard (the money is the wallet's), into the completing one;
        // and into its wallet's history until its entries are written, or its credits would be
        // in neither `pending` nor the history while the balance holds them (history-store.ts).
        'SET firstSeq = :first, balanceBefore = :before, postedAt = :at, pendingFor = :completing, historyShard = :shard, seq = :first',
        // The sum the wallet is credited with is the batch's as stored.
        'attribute_not_exists(firstSeq) AND amountMinor = :sum AND toAccount = :to',
        {
          ':first': posting.firstSeq,
          ':before': exact(posting.balanceBefore),
          ':at': postedAt,
          ':sum': exact(batchSum(each)),
          ':to': walletAccount(address),
          ':completing': completingShardKey(each.batchId),
          ':shard': historyShardOf(walletAccount(address), posting.firstSeq),
        },
      );
      state = { exists: true, balance: state.balance + batchSum(each), seq: state.seq + each.credits.length };
    });
    items.wallet = ledger.accountUpdate(
      walletAccount(address),
      wallet,
      state.balance - wallet.balance,
      postedAt,
      state.seq - wallet.seq,
    );
    const result = await ledger.commit(items, randomUUID());
    if (result.committed) return { kind: 'posted', postings };
    return Object.keys(result.refused).some((name) => name.startsWith('batch'))
      ? { kind: 'batch-taken' }
      : { kind: 'wallet-moved' };
  }

  /**
   * Completes a posted batch: ONE transaction writes its entries (./credit-batch-items.ts) and marks each
   * credit posted at its entry, and the batch completed by `completer`, on condition that it was
   * not: `already` when another completer did, `busy` when another transaction held one of its
   * items.
   */
  async function complete(
    batch: CreditBatch,
    completedAt: string,
    completer: string,
  ): Promise<'completed' | 'already' | 'busy'> {
    const { posting } = batch;
    if (!posting) throw new Error(`Batch ${batch.batchId} is not posted: nothing to complete`);
    const items: Record<string, ReturnType<typeof ledger.put> | ReturnType<typeof update>> = {
      // Whose completion it was, when refused: this one's, when its answer was lost and it asks again.
      batch: update(
        batchKey(batch.batchId),
        // Out of the history with the transaction that writes its entries: the history lists
        // each credit once, as the batch or as its entry.
        'SET completedAt = :at, completedBy = :by REMOVE pendingFor, historyShard, seq',
        'attribute_exists(firstSeq) AND attribute_not_exists(completedAt)',
        { ':at': completedAt, ':by': completer },
        true,
      ),
    };
    // Dated at the posting, when the money became the wallet's (a completion may be the sweep's, a
    // minute later): a credit's entry dates its transfer.completed event.
    entriesOfBatch(batch, posting, posting.postedAt).forEach((entry, i) => {
      items[`entry${i}`] = ledger.entryPut({ ...entry, batchId: batch.batchId }, true);
      items[`credit${i}`] = update(
        creditKey(entry.transferId),
        'SET postedSeq = :seq, postedAt = :at',
        'batchId = :batch AND attribute_not_exists(postedSeq)',
        { ':seq': entry.seq, ':at': posting.postedAt, ':batch': batch.batchId },
      );
    });
    const result = await ledger.commit(items, randomUUID());
    if (result.committed) return 'completed';
    // Another transaction in flight on one of its items (on AWS, another call completing it).
    if (Object.values(result.refused).some(({ code }) => code === 'TransactionConflict')) return 'busy';
    const done = result.refused.batch;
    if (done) return done.item?.completedBy?.S === completer ? 'completed' : 'already';
    // The batch was not completed, yet an entry or credit refused: the ledger is not as its
    // posting left it. Nothing is written; retrying would only be refused again.
    throw new Error(
      `Batch ${batch.batchId} cannot complete: ${Object.keys(result.refused).join(', ')} refused`,
    );
  }

  async function readBatches(batchIds: readonly string[]): Promise<CreditBatch[]> {
    const batches: CreditBatch[] = [];
    for (let start = 0; start < batchIds.length; start += 100) {
      const keys = batchIds.slice(start, start + 100).map(batchKey);
      const found = await ledger.readMany(keys);
      for (const key of keys) {
        const read = batchOfItem(found.get(key));
        if (read) batches.push(read);
      }
    }
    return batches;
  }

  /** A conditional update of one item, as a transaction item. */
  function update(
    pk: string,
    expression: string,
    condition: string,
    values: Record<string, unknown>,
    returnOld = false,
  ) {
    return {
      Update: {
        TableName: access.tableName,
        Key: { pk },
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
        ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      },
    };
  }

  /**
   * Marks a credit posted at the recipient's entry `seq` by posting `postingId` (whose answer may
   * be lost: its next try finds the credit posted by it), and takes it out of the pending index.
   */
  function creditMark(transferId: string, seq: number, postedAt: string, postingId: string) {
    return {
      Update: {
        TableName: access.tableName,
        Key: { pk: creditKey(transferId) },
        UpdateExpression: 'SET postedSeq = :seq, postedAt = :at, postedBy = :by REMOVE pendingFor',
        // A credit a batch holds is posted with its batch only: posted here too, it would be twice.
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(postedSeq) AND attribute_not_exists(batchId)',
        ExpressionAttributeValues: { ':seq': seq, ':at': postedAt, ':by': postingId },
      },
    };
  }

  const pending = createPendingCredits(access);
  const { client, tableName } = access;
  const leaseKey = (address: string) => ({ pk: postingLeaseKey(address) });

  async function takeLease(address: string, holder: LeaseHolder, now: number, until: number) {
    try {
      const { Attributes } = await withRetries(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...leaseKey(address),
              kind: 'posting-lease',
              holder: holder.call,
              poster: holder.poster,
              leasedUntil: until,
              expiresAt: Math.ceil(until / 1000) + LEASE_KEPT_S,
            },
            // Its own: a take retried after a lost answer.
            ConditionExpression: 'attribute_not_exists(pk) OR leasedUntil < :now OR holder = :holder',
            ExpressionAttributeValues: { ':now': now, ':holder': holder.call },
            ReturnValues: 'ALL_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { taken: true, othersPosted: Attributes?.poster !== holder.poster, othersWait: false };
    } catch (error) {
      if (!refused(error)) throw error;
      // The lease as it stands: a poller need not say again that it waits.
      const held = (error as { Item?: { waiting?: { BOOL?: boolean } } }).Item;
      return { taken: false, othersPosted: true, othersWait: held?.waiting?.BOOL === true };
    }
  }

  /** Writes `expression` on the lease if `condition` holds; whether it did. */
  async function updateLease(
    address: string,
    expression: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await withRetries(() =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: leaseKey(address),
            UpdateExpression: expression,
            ConditionExpression: condition,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (refused(error)) return false;
      throw error;
    }
  }

  async function renewLease(address: string, holder: LeaseHolder, until: number) {
    // An update, not the take's put: a poller's `waiting` stays.
    await updateLease(address, 'SET leasedUntil = :until, expiresAt = :expires', 'holder = :holder', {
      ':holder': holder.call,
      ':until': until,
      ':expires': Math.ceil(until / 1000) + LEASE_KEPT_S,
    });
  }

  const waitFor = (address: string, now: number) =>
    updateLease(address, 'SET waiting = :yes', 'leasedUntil >= :now', { ':yes': true, ':now': now });

  async function releaseLease(address: string, holder: LeaseHolder, force: boolean) {
    const own = { ':holder': holder.call };
    const free = await updateLease(
      address,
      'SET leasedUntil = :free REMOVE waiting',
      force ? 'holder = :holder' : 'holder = :holder AND attribute_not_exists(waiting)',
      { ...own, ':free': 0 },
    );
    // Forced and refused: no longer this holder's, nothing to release.
    if (free || force) return 'released' as const;
    // Still held, with others waiting (or no longer this holder's: nothing to release).
    return (await updateLease(address, 'REMOVE waiting', 'holder = :holder', own))
      ? ('others-waiting' as const)
      : ('released' as const);
  }

  async function oldestCredits(address: string) {
    const credits: CreditInTransit[] = [];
    for (const item of await pending.oldestItems(address, OLDEST_PER_SHARD)) {
      const batch = batchOfItem(item);
      if (batch) {
        if (batch.address === address)
          credits.push(...batch.credits.map((credit) => ({ ...credit, batchId: batch.batchId })));
        continue;
      }
      const read = creditOfItem(item);
      if (read?.address === address && read.credit.postedSeq === undefined) credits.push(read.credit);
    }
    return credits;
  }

  return {
    read,
    post,
    batch,
    postBatches,
    complete,
    readBatches,
    ...createHotMarkerStore(access),
    takeLease,
    renewLease,
    waitFor,
    releaseLease,
    oldestCredits,
    postedUncompleted: pending.postedUncompleted,
  };
}
