import type { Broken } from './breaks.ts';
import type { KeyReader } from './key-reader.ts';
import type { Item } from './records.ts';

/**
 * How long a credit may stay in transit before the audit names it: the poster posts within
 * seconds, its stream retries and failure queue take minutes, and the stream keeps its records for
 * 24 h only. Past this, nothing will post it unless someone re-drives it (runbook, docs/operations.md).
 */
export const CREDIT_STUCK_MS = 6 * 3_600_000;

/**
 * Credits long in transit: their money is safe in the clearing account, but no one has it, and
 * every alarm of the poster is silent. Each is read again before it is named: a Scan is no
 * snapshot, and it may have been posted since.
 */
export class StuckCredits {
  readonly #before: number;
  readonly #keys: string[] = [];

  /** `startedAt`: epoch ms, when the audit started. */
  constructor(startedAt = Date.now()) {
    this.#before = startedAt - CREDIT_STUCK_MS;
  }

  /** The keys noted, for a partial result; and those another child noted. */
  save(): string[] {
    return [...this.#keys];
  }

  absorb(keys: readonly string[]): void {
    this.#keys.push(...keys);
  }

  /** Notes an unposted credit the scan found, if it was paid long enough ago. */
  consider(credit: Item): void {
    if (Date.parse(credit.createdAt as string) < this.#before) this.#keys.push(credit.pk as string);
  }

  async name(reader: KeyReader, broken: Broken): Promise<void> {
    const now = await reader.read(this.#keys);
    for (const key of this.#keys) {
      const credit = now.get(key);
      if (credit && credit.postedSeq === undefined) {
        broken(
          'credit-stuck',
          key,
          `in transit since ${credit.createdAt as string}: the poster has not posted it; re-drive it (runbook, docs/operations.md)`,
        );
      }
    }
  }
}
