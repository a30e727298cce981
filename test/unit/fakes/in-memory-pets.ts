import { isDeepStrictEqual } from 'node:util';
import type { IdPage, PetIndex } from '#shared/pets/find-pets.ts';
import type { Pet } from '#shared/pets/pet.ts';
import { shardOf, tagNamesOf } from '#shared/pets/pet-index.ts';
import type { KeyUse, PetRepository, StoredPet } from '#shared/pets/pets.ts';

/**
 * The pets table as a map: what the use cases need of a repository and of the indexes, and
 * nothing of DynamoDB. Revisions count up from 1 (`r1`, `r2`, …); `beforeWrite` runs before each
 * conditional write checks its revision, so a test can change the pet under a writer.
 */
export function inMemoryPets(initial: readonly Pet[] = []) {
  let revisions = 0;
  const nextRevision = () => `r${++revisions}`;
  const stored = new Map<number, StoredPet>(
    initial.map((pet) => [pet.id, { pet, revision: nextRevision() }]),
  );
  const hooks: { beforeWrite?: (id: number) => void } = {};
  /** Add keys by `[owner, key]`, never expiring. */
  const keys = new Map<string, KeyUse>();
  let queries = 0;

  const repository: PetRepository = {
    insert: async (pet, key) => {
      const used = key === undefined ? undefined : keys.get(JSON.stringify([key.owner, key.key]));
      if (used !== undefined) return { keyUsed: used };
      const found = stored.get(pet.id);
      if (found !== undefined && !isDeepStrictEqual(found.pet, pet)) return {};
      const added = found ?? { pet, revision: nextRevision() };
      stored.set(pet.id, added);
      if (key !== undefined) keys.set(JSON.stringify([key.owner, key.key]), { request: key.request, added });
      return { revision: added.revision };
    },
    find: async (id) => stored.get(id),
    replace: async (current, pet) => {
      hooks.beforeWrite?.(pet.id);
      if (stored.get(pet.id)?.revision !== current.revision) return undefined;
      const revision = nextRevision();
      stored.set(pet.id, { pet, revision });
      return revision;
    },
    remove: async (current) => {
      hooks.beforeWrite?.(current.pet.id);
      if (stored.get(current.pet.id)?.revision !== current.revision) return false;
      stored.delete(current.pet.id);
      return true;
    },
  };

  const idsAfter = (ids: number[], after: number | undefined, limit: number): IdPage => {
    queries++;
    const sorted = ids.filter((id) => after === undefined || id > after).sort((a, b) => a - b);
    return { ids: sorted.slice(0, limit), more: sorted.length > limit };
  };
  const index: PetIndex = {
    statusIds: async (status, shard, after, limit) =>
      idsAfter(
        [...stored.values()]
          .filter(({ pet }) => pet.status === status && shardOf(pet.id) === shard)
          .map(({ pet }) => pet.id),
        after,
        limit,
      ),
    tagIds: async (tag, after, limit) =>
      idsAfter(
        [...stored.values()].filter(({ pet }) => tagNamesOf(pet).includes(tag)).map(({ pet }) => pet.id),
        after,
        limit,
      ),
    read: async (ids) =>
      new Map(ids.flatMap((id) => (stored.has(id) ? [[id, stored.get(id) as StoredPet]] : []))),
  };

  return { repository, index, stored, hooks, queries: () => queries };
}
