import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { createInboundMarker } from './inbound-marker.ts';
import { createLedgerCommit, sideEntry, stateOf, type WalletTableAccess } from './ledger-commit.ts';
import {
  addressOfAccount,
  CLEARING_ACCOUNT,
  creditKey,
  postingLeaseKey,
  walletAccount,
  walletKey,
} from './ledger-keys.ts';
import { createPendingCredits } from './pending-credits.ts';
import type {
  CreditInTransit,
  CreditLedger,
  LeaseHolder,
  PostingPlan,
  PostingResult,
} from './post-credits.ts';

/** How many of each `pending` shard's oldest credits one look for others' credits takes: 32 shards, so up to 256. */
const OLDEST_PER_SHARD = 8;

/** A lease item outlives its last holder by a day, then DynamoDB's TTL deletes it. */
const LEASE_KEPT_S = 86_400;

const refused = (error: unknown) =>
  (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';

/**
 * A credit in transit as its item holds it (read from the table, or from the stream's image of its
 * insert), with its recipient's address; `undefined` for an item without its transfer, accounts,
 * amount or time.
 */
export function creditOfItem(
  item: Record<string, unknown>,
): { address: string; credit: CreditInTransit } | undefined {
  const address = addressOfAccount(String(item.toAccount ?? ''));
  const { transferId, fromAccount, fromSeq, amountMinor, currency, createdAt, postedSeq } = item;
  const texts = [transferId, fromAccount, currency, createdAt];
  if (address === undefined || !texts.every((value) => typeof value === 'string' && value !== '')) return;
  if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(amountMinor)) return;
  return {
    address,
    credit: {
      transferId,
      fromAccount,
      fromSeq,
      amountMinor,
      currency,
      createdAt,
      postedSeq: postedSeq as number | undefined,
    } as CreditInTransit,
  };
}

/** The credits in transit of the wallet ledger on its DynamoDB table: what the credit poster needs. */
export function createCreditLedger(access: WalletTableAccess): CreditLedger {
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

  async function post({ address, wallet, credits, postedAt }: PostingPlan): Promise<PostingResult> {
    const account = walletAccount(address);
    const items: Record<
      string,
      ReturnType<typeof ledger.put> | ReturnType<typeof ledger.accountUpdate> | ReturnType<typeof creditMark>
    > = {};
    let state = wallet;
    credits.forEach((credit, i) => {
      const entry = {
        ...sideEntry({ ...credit, transferKind: 'transfer' }, { account, state }, 'in', {
          account: CLEARING_ACCOUNT,
          seq: credit.fromSeq,
          address: addressOfAccount(credit.fromAccount),
        }),
        postedAt,
      };
      items[`entry${i}`] = ledger.entryPut(entry, true);
      items[`credit${i}`] = creditMark(credit.transferId, entry.seq, postedAt);
      state = { exists: true, balance: BigInt(entry.balanceAfter), seq: entry.seq };
    });
    items.wallet = ledger.accountUpdate(
      account,
      wallet,
      state.balance - wallet.balance,
      postedAt,
      credits.length,
    );
    // Never a transfer id: the payer's transaction used it as its token.
    const result = await ledger.commit(items, randomUUID());
    if (result.committed) return { kind: 'posted' };
    return Object.keys(result.refused).some((name) => name.startsWith('credit'))
      ? { kind: 'credit-taken' }
      : { kind: 'wallet-moved' };
  }

  /** Marks a credit posted at the recipient's entry `seq`, and takes it out of the pending index. */
  function creditMark(transferId: string, seq: number, postedAt: string) {
    return {
      Update: {
        TableName: access.tableName,
        Key: { pk: creditKey(transferId) },
        UpdateExpression: 'SET postedSeq = :seq, postedAt = :at REMOVE pendingFor',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(postedSeq)',
        ExpressionAttributeValues: { ':seq': seq, ':at': postedAt },
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
      const read = creditOfItem(item);
      if (read?.address === address && read.credit.postedSeq === undefined) credits.push(read.credit);
    }
    return credits;
  }

  return {
    read,
    post,
    markHot: createInboundMarker(access),
    takeLease,
    renewLease,
    waitFor,
    releaseLease,
    oldestCredits,
  };
}
