/** Custom epoch (2025-01-01T00:00:00Z): 41 bits of milliseconds from here last until 2094. */
const EPOCH_MS = 1_735_689_600_000;
const SEQUENCE_BITS = 12;
const SEQUENCE_SIZE = 2 ** SEQUENCE_BITS;

/** Where a pet id generator gets its time and its random start; the real ones unless given. */
export interface PetIdSources {
  readonly now?: () => number;
  readonly random?: () => number;
}

/**
 * A generator of new pet ids: milliseconds since 2025 in the high 41 bits, a per-container
 * sequence in the low 12, started at random so that concurrent containers rarely share a
 * (millisecond, sequence) pair. Always a positive safe integer (below 2^53), time-ordered, and
 * made without any DynamoDB round trip; the conditional put catches the rare collision.
 */
export function createPetIds({ now = Date.now, random = Math.random }: PetIdSources = {}): () => number {
  let sequence = Math.floor(random() * SEQUENCE_SIZE);
  return () => {
    sequence = (sequence + 1) % SEQUENCE_SIZE;
    return (now() - EPOCH_MS) * SEQUENCE_SIZE + sequence;
  };
}
