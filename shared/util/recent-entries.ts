/**
 * A map held for the life of an execution environment, of at most `limit` entries: setting a key
 * makes it the newest, and past the limit the oldest set is forgotten. For state a container
 * keeps between requests (a poster's wallets, a sender's hot recipients) that must not grow
 * without bound.
 */
export function recentEntries<V>(limit: number) {
  const entries = new Map<string, V>();
  return {
    get: (key: string): V | undefined => entries.get(key),
    delete: (key: string): void => void entries.delete(key),
    set(key: string, value: V): void {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > limit) entries.delete(entries.keys().next().value as string);
    },
  };
}
