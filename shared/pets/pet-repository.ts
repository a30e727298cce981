import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetries } from '../dynamodb/retry.ts';
import { TemporarilyUnavailableError } from '../errors.ts';
import { ANSWER_MARGIN_MS, requestDeadline } from '../request-deadline.ts';
import type { Pet, PetInput } from './pet.ts';
import { keyEntryId, statusShardOf, tagEntry, tagEntryId, tagNamesOf } from './pet-index.ts';
import type { AddKey, Inserted, KeyUse, PetRepository, StoredPet } from './pets.ts';

export interface PetTable {
  readonly client: DynamoDBDocumentClient;
  /** The physical name of the pets table (`tables.pets`: one item per pet, keyed by `id`). */
  readonly tableName: string;
}

/**
 * The revision of a pet stored before pets had revisions: no new revision is ever this short, and
 * a write conditional on it demands that the stored item still has none.
 */
export const LEGACY_REVISION = '0';

/** A new revision: 96 random bits, never reused by any pet. */
const newRevision = (): string => randomBytes(12).toString('base64url');

/** The stored item of a pet: its members, its revision and, with a status, its status shard. */
function itemOf(pet: Pet, revision: string): Record<string, unknown> {
  const statusShard = statusShardOf(pet);
  return { ...pet, revision, ...(statusShard === undefined ? {} : { statusShard }) };
}

/** A pet item as the use cases see it: the pet without the table's own attributes, and its revision. */
export function storedPetOf(item: Record<string, unknown>): StoredPet {
  const { revision, statusShard: _, ...pet } = item;
  return { pet: pet as Pet, revision: typeof revision === 'string' ? revision : LEGACY_REVISION };
}

/** The condition that the stored pet is still at `revision`. */
function atRevision(revision: string) {
  return revision === LEGACY_REVISION
    ? { ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(revision)' }
    : {
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: { ':revision': revision },
      };
}

/**
 * How a conditional write ended when it did not apply: its condition failed (`stored`: the item as
 * it then was, if any), or another transaction had the item in flight. Either way an
 * answer, not a fault: the use case reads the pet again and decides.
 */
type Outcome =
  | { readonly written: true }
  | {
      readonly written: false;
      readonly stored?: Record<string, unknown>;
      /** The add's key record as stored, when that record's condition failed (a key used before). */
      readonly keyRecord?: Record<string, unknown>;
    };

function lost(error: unknown, keyed: boolean): Outcome | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const reasons = error.CancellationReasons ?? [];
  const codes = reasons.map((reason) => reason.Code);
  if (!codes.includes('ConditionalCheckFailed') && !codes.includes('TransactionConflict')) return undefined;
  const item = reasons[0]?.Code === 'ConditionalCheckFailed' ? reasons[0].Item : undefined;
  // The key record is the transaction's last item.
  const last = reasons.at(-1);
  const keyRecord = keyed && last?.Code === 'ConditionalCheckFailed' ? last.Item : undefined;
  return {
    written: false,
    ...(item ? { stored: unmarshall(item) } : {}),
    ...(keyRecord ? { keyRecord: unmarshall(keyRecord) } : {}),
  };
}

/**
 * The record of an add's Idempotency-Key, beside the pet in the same transaction: the request as
 * sent, and what it added. A record past its `expiresAt` (DynamoDB's TTL deletes it within days)
 * counts as absent and is written over.
 */
function keyRecordPut(tableName: string, key: AddKey, petId: number, revision: string) {
  return {
    Put: {
      TableName: tableName,
      Item: {
        id: keyEntryId(key.owner, key.key),
        request: key.request,
        addedPetId: petId,
        revision,
        expiresAt: key.expiresAt,
      },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
      ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    },
  };
}

/** What a key's record says its first add was. */
function keyUseOf(record: Record<string, unknown>): KeyUse {
  const request = record.request as PetInput;
  return {
    request,
    added: { pet: { ...request, id: Number(record.addedPetId) }, revision: String(record.revision) },
  };
}

/** Pauses before trying a write that met another in flight again. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The pets table: one item per pet, its attributes the pet's members, its `revision` and its
 * `statusShard` (the `status` index); and one tag entry per distinct tag name of a pet (the `tags`
 * index), written and removed in the same transaction as the pet (shared/pets/pet-index.ts). It
 * stores pets as they are; what a pet may hold is the edge's business (the JSON Schema).
 */
export function createPetRepository({ client, tableName }: PetTable): PetRepository {
  /**
   * The pet's write and its tag entries' puts and deletes, in one TransactWriteItems for its
   * ClientRequestToken, a pet without tags to change included: a try whose answer was lost (it was
   * applied) and the retry by {@link withRetries} are one write, and the retry answers success
   * whatever was written between (DynamoDB keeps a token 10 minutes). As single writes, a retry
   * told its own applied write only by the item being as it wrote it: a delete answered 404, and,
   * with another client's change between, an add 409 and a change 412 or applied twice. A
   * transaction costs 2 write units where a single write costs 1. A failed condition or a
   * transaction conflict comes back as an outcome, not retried here.
   */
  async function write(
    pet: { readonly Put: object } | { readonly Delete: object },
    putTags: readonly string[],
    deleteTags: readonly string[],
    petId: number,
    keyRecord?: { readonly Put: object },
  ): Promise<Outcome> {
    const command = new TransactWriteCommand({
      ClientRequestToken: randomUUID(),
      TransactItems: [
        pet as never,
        ...putTags.map((tag) => ({ Put: { TableName: tableName, Item: tagEntry(petId, tag) } })),
        ...deleteTags.map((tag) => ({
          Delete: { TableName: tableName, Key: { id: tagEntryId(petId, tag) } },
        })),
        ...(keyRecord ? [keyRecord as never] : []),
      ],
    });
    return withRetries(async () => {
      try {
        await client.send(command);
        return { written: true };
      } catch (error) {
        const outcome = lost(error, keyRecord !== undefined);
        if (outcome === undefined) throw error;
        return outcome;
      }
    });
  }

  /**
   * Writes an add's key record alone: `undefined` once written, the key's first use when it was
   * used before, or `conflict` when another add's transaction had the record in flight (the
   * caller tries again, as for its own transaction).
   */
  async function recordKey({
    Put,
  }: ReturnType<typeof keyRecordPut>): Promise<Inserted | 'conflict' | undefined> {
    return withRetries(async () => {
      try {
        await client.send(new PutCommand(Put));
        return undefined;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException && error.Item !== undefined) {
          return { keyUsed: keyUseOf(unmarshall(error.Item)) };
        }
        if (error instanceof TransactionConflictException) return 'conflict';
        throw error;
      }
    });
  }

  return {
    /**
     * The condition's failure returns what is stored, and the very same pet counts as stored, with
     * the revision it has: a client's retry of an add whose answer it lost is answered as the add
     * was, not 409. A conflict with another transaction (an add of the same id in flight) is tried
     * again.
     */
    async insert(pet: Pet, key?: AddKey): Promise<Inserted> {
      const revision = newRevision();
      const item = itemOf(pet, revision);
      const put = {
        Put: {
          TableName: tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(id)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
      const deadline = requestDeadline();
      for (let round = 1; ; round++) {
        const outcome = await write(
          put,
          tagNamesOf(pet),
          [],
          pet.id,
          key === undefined ? undefined : keyRecordPut(tableName, key, pet.id, revision),
        );
        if (outcome.written) return { revision };
        if (outcome.keyRecord !== undefined) return { keyUsed: keyUseOf(outcome.keyRecord) };
        if (outcome.stored !== undefined) {
          // Deep equality ignores the order of members, which DynamoDB does not keep.
          const found = storedPetOf(outcome.stored);
          if (!isDeepStrictEqual(found.pet, pet)) return {};
          if (key === undefined) return { revision: found.revision };
          // The key still records this answer, the pet as found: its retry after the pet changed
          // is a replay of it, not a 409.
          const recorded = await recordKey(keyRecordPut(tableName, key, pet.id, found.revision));
          if (recorded !== 'conflict') return recorded ?? { revision: found.revision };
        }
        const pause = Math.random() * Math.min(400, 5 * 2 ** round);
        if (round >= 50 || (deadline !== undefined && Date.now() + pause > deadline - 2 * ANSWER_MARGIN_MS)) {
          throw new TemporarilyUnavailableError(`The pet id ${pet.id} is busy; retry in a moment`, 1);
        }
        await sleep(pause);
      }
    },

    /** A strongly consistent read, so a pet just added or changed is always found as it is. */
    async find(id: number): Promise<StoredPet | undefined> {
      const { Item } = await withRetries(() =>
        client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true })),
      );
      return Item === undefined ? undefined : storedPetOf(Item);
    },

    async replace(current: StoredPet, pet: Pet): Promise<string | undefined> {
      const revision = newRevision();
      const before = new Set(tagNamesOf(current.pet));
      const after = tagNamesOf(pet);
      const outcome = await write(
        {
          Put: {
            TableName: tableName,
            Item: itemOf(pet, revision),
            ...atRevision(current.revision),
          },
        },
        after.filter((tag) => !before.has(tag)),
        [...before].filter((tag) => !after.includes(tag)),
        pet.id,
      );
      return outcome.written ? revision : undefined;
    },

    async remove(current: StoredPet): Promise<boolean> {
      const outcome = await write(
        { Delete: { TableName: tableName, Key: { id: current.pet.id }, ...atRevision(current.revision) } },
        [],
        tagNamesOf(current.pet),
        current.pet.id,
      );
      return outcome.written;
    },
  };
}
