import { createHash } from 'node:crypto';
/*
 * Single-table layout of the wallet ledger (partition key `pk`; the `history` index on
 * `account` + `seq` and the `history-shards` index on `historyShard` + `seq` hold the entries
 * only, and the latter the batches between their posting and completion, so both are sparse):
 *   WALLET#<address>           balance, seq, updatedAt     one account per wallet; exists once the
 *                                                          wallet is open: money only goes to one
 *   ACCOUNT#ISSUANCE           balance, seq                 the issuance account: minus all ever issued
 *   ENTRY#["<account>",<seq>]  one side of a movement       immutable; account, seq (1, 2, …), transferId,
 *                                                          direction, amountMinor, balanceAfter, the
 *                                                          counterparty's account and seq; a
 *                                                          posted credit's entry holds historyShard
 *                                                          in place of account (see entryItem)
 *   TRANSFER#<transferId>      the movement                 immutable; fromSeq, and toSeq for a direct
 *                                                          movement or via: 'clearing' for one through
 *                                                          the clearing account (its credit's postedSeq
 *                                                          then names the recipient's entry); transfers
 *                                                          and deposits alike (transferKind)
 *   DEPOSIT#<depositId>        a deposit's claim on its id  immutable; names its transferId
 *   IDEMPOTENCY#["sub","key"]  the transfer the key made    expiresAt (DynamoDB TTL)
 *   CREDIT#<transferId>        a credit in transit          the clearing account's side of a payment to
 *                                                          a hot wallet: written by the payer's
 *                                                          transaction, posted later by the credit
 *                                                          poster (postedSeq names its entry); until
 *                                                          then `pendingFor` puts it in the `pending`
 *                                                          index, sharded so no key runs hot; batchId
 *                                                          once a batch has claimed it
 *   BATCH#<batchId>            credits claimed together     up to 49 credits in transit to one wallet
 *                                                          (./credit-batch.ts), in the `pending` index
 *                                                          in their place until a posting takes it into
 *                                                          the wallet (firstSeq, balanceBefore), then
 *                                                          under a COMPLETING#<n> key of that index
 *                                                          and in its wallet's history-shards index
 *                                                          (historyShard, seq: its first seq), read
 *                                                          as its credits' entries, until completedAt,
 *                                                          once its entries are written
 *   INBOUND#<address>          a hot wallet's marker        hotUntil: payments to it go through the
 *                                                          clearing account until then; its presence
 *                                                          also says credits may be in transit
 *   DIRECT#<address>           the last direct-credit claim claimId, claimedAt: written beside the
 *                                                          read of each payment to a recipient the
 *                                                          container does not know hot (one known hot
 *                                                          goes through the clearing account unclaimed);
 *                                                          the wallet item's directClaim names the last
 *                                                          one settled; expiresAt (TTL)
 *                                                          CLAIM_KEPT_SECONDS after its last use
 *   SKELETON#<sha256>          an address's lookalikes      address, skeleton: the one wallet that holds the UTS #39
 *                                                          skeleton (shared/schemas/confusable-skeleton.ts),
 *                                                          claimed in the transaction that opens it, so no
 *                                                          second wallet opens at an address that looks
 *                                                          like its own; immutable
 *   POSTING#<address>          a hot wallet's posting lease holder, leasedUntil, waiting: the one
 *                                                          poller posting to the wallet, and whether
 *                                                          others wait for it; expiresAt (TTL)
 * An account's `seq` counts its entries: each movement's one transaction advances every account
 * it writes by the number of entries it writes there (one; a posting, one per credit of its batch),
 * on condition that the account still holds the balance and seq read, so the entries of an account
 * are numbered 1..seq without gaps. A payment to a hot wallet touches only the payer's account: its
 * entry's counterparty is the clearing account, which has no item and no entries of its own; its
 * credit holds the money until the poster credits the wallet in a batch.
 */

import { ISSUANCE_ACCOUNT, walletAccount } from '../model/accounts.ts';
import type { EntryRecord } from '../model/entry.ts';

/** The item key of an account (wallet or issuance). */
export const accountKey = (account: string): string =>
  account === ISSUANCE_ACCOUNT ? 'ACCOUNT#ISSUANCE' : `WALLET#${account.slice(2)}`;

export const walletKey = (address: string): string => `WALLET#${address}`;
export const entryKey = (account: string, seq: number): string => `ENTRY#${JSON.stringify([account, seq])}`;
export const transferKey = (transferId: string): string => `TRANSFER#${transferId}`;
export const depositKey = (depositId: string): string => `DEPOSIT#${depositId}`;
export const creditKey = (transferId: string): string => `CREDIT#${transferId}`;
export const batchKey = (batchId: string): string => `BATCH#${batchId}`;
export const inboundKey = (address: string): string => `INBOUND#${address}`;
export const directClaimKey = (address: string): string => `DIRECT#${address}`;
export const postingLeaseKey = (address: string): string => `POSTING#${address}`;
/**
 * The key of a skeleton's claim: its SHA-256, as a skeleton can outgrow a key (an address's 256 code
 * points in NFD, each replaced by a prototype of up to 15 bytes of UTF-8, past DynamoDB's 2,048).
 */
export const skeletonKey = (skeleton: string): string =>
  `SKELETON#${createHash('sha256').update(skeleton).digest('base64url')}`;
// JSON keeps (sub, key) unambiguous whatever characters either holds.
export const idempotencyKey = (sub: string, key: string): string =>
  `IDEMPOTENCY#${JSON.stringify([sub, key])}`;

/** The name of the index of entries by account, newest first by `seq`. */
export const HISTORY_INDEX = 'history';

/**
 * The name of the index of posted credits' entries by account shard, newest first by `seq`: a hot
 * wallet's history is this index's shards and its `history` key, merged by `seq`.
 */
export const HISTORY_SHARD_INDEX = 'history-shards';

/**
 * How many keys of the `history-shards` index the entries the credit poster writes for one wallet
 * are spread over. One index write per credit: at 10,000 payments/s into one wallet, 16 keys take
 * 625 writes/s each, under a partition's 1,000, where one key would take all 10,000
 * (docs/decisions/hot-wallets.md, "Limits on AWS"). A wallet's entries are numbered without gaps
 * across its keys, so a reader merges them by `seq`.
 */
export const HISTORY_SHARDS = 16;

/** The `history-shards` key of `account`'s entry at `seq`: consecutive entries go to different keys. */
export const historyShardOf = (account: string, seq: number): string =>
  historyShardKey(account, seq % HISTORY_SHARDS);

export const historyShardKey = (account: string, shard: number): string => `${account}#${shard}`;

/**
 * An entry as its item stores it. A posted credit's entry names its account only through its
 * `historyShard`: an item with `account` is in the `history` index, under the one key of the wallet
 * its poster may be writing thousands of entries a second to.
 */
export function entryItem(entry: EntryRecord, posted: boolean): Record<string, unknown> {
  const item: Record<string, unknown> = { pk: entryKey(entry.account, entry.seq), kind: 'entry', ...entry };
  if (posted) {
    item.historyShard = historyShardOf(entry.account, entry.seq);
    delete item.account;
  }
  return item;
}

/** The account of an entry's item, whichever index holds it. */
export function accountOfEntryItem(item: Record<string, unknown>): string {
  if (typeof item.account === 'string') return item.account;
  const shard = String(item.historyShard ?? '');
  const at = shard.lastIndexOf('#');
  return at < 0 ? shard : shard.slice(0, at);
}

/** An entry read from the table or one of its indexes. */
export const entryOfItem = (item: Record<string, unknown>): EntryRecord =>
  ({ ...item, account: accountOfEntryItem(item) }) as unknown as EntryRecord;

/** The name of the sparse index of credits in transit, by recipient shard, oldest first. */
export const PENDING_INDEX = 'pending';

/**
 * How many keys of the `pending` index a hot wallet's credits are spread over. Each credit is two
 * index writes (in, then out when posted): at 10,000 payments/s into one wallet, 20,000 writes/s,
 * which 32 keys keep at about 0.6 of a partition's write limit (docs/decisions/hot-wallets.md,
 * "Limits on AWS"). Readers query every shard at once; raising the count only adds shards to read,
 * so credits written under a lower count are still found.
 */
export const PENDING_SHARDS = 32;

/** The `pending` index key of a credit to `address`: a shard picked by the transfer id. */
export function pendingShardKey(address: string, transferId: string): string {
  let hash = 0;
  for (let i = 0; i < transferId.length; i++) hash = (hash * 31 + transferId.charCodeAt(i)) >>> 0;
  return pendingShardOf(address, hash % PENDING_SHARDS);
}

export const pendingShardOf = (address: string, shard: number): string =>
  `${walletAccount(address)}#${shard}`;

/**
 * How many keys of the `pending` index hold the batches posted and not yet completed: a posting
 * moves a batch there from its wallet's shard, its completion takes it out, so they hold only the
 * few between the two (or those whose poster died between them, which the sweep completes:
 * shared/wallet/hot-wallet/sweep-batches.ts). Never a wallet's key: those start with `W#`.
 */
export const COMPLETING_SHARDS = 8;

/** The `pending` index key of a posted batch awaiting its completion: a shard picked by its id. */
export function completingShardKey(batchId: string): string {
  let hash = 0;
  for (let i = 0; i < batchId.length; i++) hash = (hash * 31 + batchId.charCodeAt(i)) >>> 0;
  return completingShardOf(hash % COMPLETING_SHARDS);
}

export const completingShardOf = (shard: number): string => `COMPLETING#${shard}`;
