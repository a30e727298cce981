import type { BalanceStore, WalletRecord } from '#shared/wallet/balance/ports.ts';
import type { DirectClaimStore, DirectCreditClaim, HotMarkerStore } from '#shared/wallet/hot-wallet/ports.ts';
import type { HotRecipient } from '#shared/wallet/hot-wallet/router.ts';
import type { AccountState } from '#shared/wallet/model/accounts.ts';
import type { TransferRecord } from '#shared/wallet/model/transfer.ts';
import type {
  TransferCommit,
  TransferPlan,
  TransferState,
  TransferStore,
} from '#shared/wallet/send/ports.ts';

interface Wallet {
  balanceMinor: bigint;
  seq: number;
  updatedAt?: string;
  /** The claim of the last payment that credited it directly. */
  directClaim?: string;
}

/**
 * The wallet ledger in memory, with the repository's contract (all or nothing per commit, each
 * account on condition that it is as read, a key claimed once, credits to a hot wallet held in
 * transit): for unit tests of the use cases. The repository itself is tested against DynamoDB
 * Local (test/integration/wallet-repository.test.ts). `contend` makes the next commits meet
 * another transaction on the recipient, as DynamoDB answers when a wallet is paid by many at once.
 */
export class InMemoryWallets implements TransferStore, DirectClaimStore, HotMarkerStore, BalanceStore {
  readonly wallets = new Map<string, Wallet>();
  readonly transfers: TransferRecord[] = [];
  readonly claims = new Map<string, { transfer: TransferRecord; expiresAt: number }>();
  /** Credits in transit, by transfer id, and whether posted. */
  readonly credits = new Map<string, { transfer: TransferRecord; posted: boolean }>();
  readonly hotUntil = new Map<string, number>();
  /** The last direct-credit claim made of each wallet. */
  readonly directClaims = new Map<string, { claimId: string; claimedAt: number }>();
  readonly commits: TransferPlan[] = [];
  /** How many times the ledger was read, and how many of those read the recipient. */
  reads = 0;
  recipientReads = 0;
  /** How many of the next commits find the recipient in another transaction. */
  contend = 0;
  /** How many of the next commits find the payer moved on since it was read. */
  movePayer = 0;
  readonly longestCommitMs = 1_000;

  async readWallet(address: string): Promise<WalletRecord | undefined> {
    const wallet = this.wallets.get(address);
    if (!wallet) return undefined;
    let pendingMinor = 0n;
    for (const { transfer, posted } of this.credits.values()) {
      if (!posted && transfer.toAddress === address) pendingMinor += BigInt(transfer.amountMinor);
    }
    return {
      balanceMinor: wallet.balanceMinor,
      pendingMinor,
      ...(wallet.updatedAt ? { updatedAt: wallet.updatedAt } : {}),
    };
  }

  /** Addresses whose skeleton another wallet holds, as a test sets them. */
  readonly lookalikes = new Set<string>();

  async openWallet(address: string): Promise<'open' | 'lookalike'> {
    if (this.lookalikes.has(address)) return 'lookalike';
    if (!this.wallets.has(address)) this.wallets.set(address, { balanceMinor: 0n, seq: 0 });
    return 'open';
  }

  async read(
    transfer: TransferRecord,
    claim?: { sub: string; key: string },
    known?: HotRecipient,
  ): Promise<TransferState> {
    this.reads++;
    if (!known) this.recipientReads++;
    const claimed = claim && this.claims.get(JSON.stringify([claim.sub, claim.key]));
    return {
      payer: this.state(transfer.fromAddress),
      ...(known ?? {
        recipient: this.state(transfer.toAddress),
        recipientHotUntil: this.hotUntil.get(transfer.toAddress) ?? 0,
        recipientDirectClaim: this.wallets.get(transfer.toAddress)?.directClaim,
      }),
      ...(claimed ? { claimed } : {}),
    };
  }

  async commit(plan: TransferPlan): Promise<TransferCommit> {
    this.commits.push(plan);
    const { transfer, claim, payer, route } = plan;
    const claimKey = claim && JSON.stringify([claim.sub, claim.key]);
    const claimed = claimKey === undefined ? undefined : this.claims.get(claimKey);
    if (claimed) return { kind: 'key-claimed', transfer: claimed.transfer };
    if (this.movePayer > 0) {
      this.movePayer--;
      return { kind: 'payer-moved', inFlight: true };
    }
    if (!sameState(this.state(transfer.fromAddress), payer)) return { kind: 'payer-moved', inFlight: false };
    if (route.kind === 'direct') {
      if (this.contend > 0) {
        this.contend--;
        return { kind: 'recipient-busy', payerMoved: false };
      }
      if (!sameState(this.state(transfer.toAddress), route.recipient)) {
        return { kind: 'recipient-busy', payerMoved: false };
      }
    }
    const amount = BigInt(transfer.amountMinor);
    const from = this.wallets.get(transfer.fromAddress) as Wallet;
    from.balanceMinor -= amount;
    from.seq++;
    from.updatedAt = transfer.createdAt;
    if (route.kind === 'direct') {
      const to = this.wallets.get(transfer.toAddress) as Wallet;
      to.balanceMinor += amount;
      to.seq++;
      to.updatedAt = transfer.createdAt;
      to.directClaim = transfer.transferId;
    } else {
      this.credits.set(transfer.transferId, { transfer, posted: false });
    }
    this.transfers.push(transfer);
    if (claim && claimKey !== undefined) this.claims.set(claimKey, { transfer, expiresAt: claim.expiresAt });
    return { kind: 'committed' };
  }

  async claimDirectCredit(
    address: string,
    claimId: string,
    now: number,
  ): Promise<DirectCreditClaim | undefined> {
    const previous = this.directClaims.get(address);
    this.directClaims.set(address, { claimId, claimedAt: now });
    return previous ? { previous } : {};
  }

  async releaseDirectCredit(
    address: string,
    claimId: string,
    { previous }: DirectCreditClaim,
  ): Promise<void> {
    if (this.directClaims.get(address)?.claimId !== claimId) return;
    this.directClaims.set(address, previous ?? { claimId, claimedAt: 0 });
  }

  async markHot(address: string, until: number): Promise<number> {
    this.hotUntil.set(address, Math.max(until, this.hotUntil.get(address) ?? 0));
    return this.hotUntil.get(address) as number;
  }

  async creditPosted(transferId: string): Promise<boolean> {
    return this.credits.get(transferId)?.posted ?? false;
  }

  private state(address: string): AccountState {
    const wallet = this.wallets.get(address);
    return { exists: !!wallet, balance: wallet?.balanceMinor ?? 0n, seq: wallet?.seq ?? 0 };
  }
}

const sameState = (a: AccountState, b: AccountState) =>
  a.exists === b.exists && a.balance === b.balance && a.seq === b.seq;
