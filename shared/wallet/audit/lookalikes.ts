import { skeleton } from '../../schemas/confusable-skeleton.ts';
import type { Broken } from './breaks.ts';

/**
 * Wallets whose addresses share a UTS #39 skeleton: a payer cannot tell them apart. An opening
 * claims its skeleton (shared/wallet/dynamodb/wallet-opening.ts), so two can only be there from
 * before the claims, or written around them; the first seen of each skeleton is kept, one string
 * per wallet, like the audit's other state per account, and the others in a list of their own.
 * Each is named against the least address of its skeleton, whatever order the Scan segments came
 * in: a segmented audit names the same wallets as a single one.
 */
export class LookalikeWallets {
  readonly #bySkeleton = new Map<string, string>();
  readonly #others = new Map<string, string[]>();

  consider(address: string): void {
    this.#file(skeleton(address), address);
  }

  #file(key: string, address: string): void {
    if (!this.#bySkeleton.has(key)) {
      this.#bySkeleton.set(key, address);
      return;
    }
    const others = this.#others.get(key);
    if (others) others.push(address);
    else this.#others.set(key, [address]);
  }

  /** The addresses by skeleton, for a partial result (shared/wallet/audit/partial.ts). */
  save(): SavedLookalikes {
    return { first: [...this.#bySkeleton], others: [...this.#others] };
  }

  /** Files the addresses another child saw. */
  absorb({ first, others }: SavedLookalikes): void {
    for (const [key, address] of first) this.#file(key, address);
    for (const [key, addresses] of others) for (const address of addresses) this.#file(key, address);
  }

  report(broken: Broken): void {
    for (const [key, others] of this.#others) {
      const [least, ...rest] = [this.#bySkeleton.get(key) as string, ...others].sort();
      for (const address of rest) {
        broken(
          'lookalike-wallets',
          `WALLET#${address}`,
          `its address looks like the wallet ${JSON.stringify(least)}'s: the same UTS #39 skeleton ${JSON.stringify(skeleton(least as string))}`,
        );
      }
    }
    this.#bySkeleton.clear();
  }
}

/** What a child of a segmented audit saw of wallets' skeletons. */
export interface SavedLookalikes {
  readonly first: readonly (readonly [string, string])[];
  readonly others: readonly (readonly [string, readonly string[]])[];
}
