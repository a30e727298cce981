/**
 * Why a replay asked just after an endpoint was enabled or registered misses no event: the deriver
 * reads a wallet's endpoints, then commits the events with a task for each one it read. An event
 * whose read came before the endpoint was enabled, and whose commit came after the replay had
 * looked for events, got neither a live task nor the replay's (review helper-36). Each side now
 * waits for the other:
 * - a deriver whose read and commit were further apart than DERIVE_COMMIT_WITHIN_MS reads the
 *   endpoints again after its commit, and writes the live tasks it left out; so does one that finds
 *   its events stored (the batch given again after that failed, or after a commit that landed once
 *   its tries had given up);
 * - a replay starts looking REPLAY_SETTLE_MS after it was asked: by then any commit read before it
 *   within DERIVE_COMMIT_WITHIN_MS has landed. The margin between the two is for the clocks of two
 *   functions, and for the `events` index, which DynamoDB updates a moment after the commit.
 */
export const DERIVE_COMMIT_WITHIN_MS = 1_000;

/** See DERIVE_COMMIT_WITHIN_MS. */
export const REPLAY_SETTLE_MS = 2_000;
