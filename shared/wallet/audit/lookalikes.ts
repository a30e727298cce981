import { skeleton } from '../../schemas/confusable-skeleton.ts';
import type { Broken } from './breaks.ts';

/**
 * Wallets whose addresses share a UTS #39 skeleton: a payer cannot tell them apart. An opening
 * claims its skeleton (shared/wallet/dynamodb/wallet-opening.ts), so two can only be there from
 * before the claims, or written around them; the first seen of each skeleton is kept, one string
 * per wallet, like the audit's other state per account.
 */
export class LookalikeWallets {
  readonly #bySkeleton = new Map<string, string>();
  readonly #pairs: [string, string][] = [];

  consider(address: string): void {
    const key = skeleton(address);
    const first = this.#bySkeleton.get(key);
    if (first === undefined) this.#bySkeleton.set(key, address);
    else this.#pairs.push([first, address]);
  }

  report(broken: Broken): void {
    for (const [first, second] of this.#pairs) {
      broken(
        'lookalike-wallets',
        `WALLET#${second}`,
        `its address looks like the wallet ${JSON.stringify(first)}'s: the same UTS #39 skeleton ${JSON.stringify(skeleton(first))}`,
      );
    }
    this.#bySkeleton.clear();
  }
}
