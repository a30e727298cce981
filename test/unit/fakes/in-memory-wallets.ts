import { MAX_BALANCE_MINOR } from '#shared/wallet/money.ts';
import type { WalletRecord } from '#shared/wallet/wallet-reader.ts';
import type { CommitOutcome, IdempotencyClaim, TransferRecord } from '#shared/wallet/wallet-repository.ts';

/**
 * The wallet ledger in memory, with the repository's contract (all or nothing per commit, open
 * wallets only, never overdrawn, never past the cap, a key claimed once): for unit tests of the use
 * cases. The repository itself is tested against DynamoDB Local (test/integration/wallet-repository.test.ts).
 */
export class InMemoryWallets {
  readonly wallets = new Map<string, { balanceMinor: bigint; updatedAt?: string }>();
  readonly transfers: TransferRecord[] = [];
  readonly claims = new Map<string, TransferRecord>();

  async readWallet(address: string): Promise<WalletRecord | undefined> {
    const wallet = this.wallets.get(address);
    return wallet && { ...wallet };
  }

  async openWallet(address: string): Promise<void> {
    if (!this.wallets.has(address)) this.wallets.set(address, { balanceMinor: 0n });
  }

  async commitTransfer(transfer: TransferRecord, claim?: IdempotencyClaim): Promise<CommitOutcome> {
    const claimKey = claim && JSON.stringify([claim.sub, claim.key]);
    const claimed = claimKey === undefined ? undefined : this.claims.get(claimKey);
    if (claimed) return { kind: 'key-used', transfer: claimed };
    const amount = BigInt(transfer.amountMinor);
    const from = this.wallets.get(transfer.fromAddress);
    if (!from || from.balanceMinor < amount) return { kind: 'insufficient-funds', senderHasWallet: !!from };
    const to = this.wallets.get(transfer.toAddress);
    if (!to) return { kind: 'unknown-recipient' };
    if (to.balanceMinor + amount > BigInt(MAX_BALANCE_MINOR)) return { kind: 'recipient-limit' };
    from.balanceMinor -= amount;
    to.balanceMinor += amount;
    from.updatedAt = to.updatedAt = transfer.createdAt;
    this.transfers.push(transfer);
    if (claimKey !== undefined) this.claims.set(claimKey, transfer);
    return { kind: 'committed' };
  }
}
