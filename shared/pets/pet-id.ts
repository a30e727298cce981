/** Custom epoch (2025-01-01T00:00:00Z): 41 bits of milliseconds from here last until 2094. */
const EPOCH_MS = 1_735_689_600_000;
const SEQUENCE_BITS = 12;
const SEQUENCE_SIZE = 2 ** SEQUENCE_BITS;

// Random start per container, so concurrent containers rarely share a (millisecond, sequence) pair.
let sequence = Math.floor(Math.random() * SEQUENCE_SIZE);

/**
 * A new pet id: milliseconds since 2025 in the high 41 bits, a per-container sequence with a
 * random start in the low 12. Always a positive safe integer (below 2^53), time-ordered, and
 * made without any DynamoDB round trip; the conditional put catches the rare collision.
 */
export function nextPetId(now: number = Date.now()): number {
  sequence = (sequence + 1) % SEQUENCE_SIZE;
  return (now - EPOCH_MS) * SEQUENCE_SIZE + sequence;
}
