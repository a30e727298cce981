import { describe, expect, it } from 'vitest';
import { recentEntries } from '#shared/util/recent-entries.ts';

describe('recent entries', () => {
  it('forgets the entry set longest ago once past its limit, setting a key again making it the newest', () => {
    const entries = recentEntries<number>(2);
    entries.set('a', 1);
    entries.set('b', 2);
    entries.set('a', 3);
    entries.set('c', 4);
    expect([entries.get('a'), entries.get('b'), entries.get('c')]).toEqual([3, undefined, 4]);
    entries.delete('a');
    expect(entries.get('a')).toBeUndefined();
  });
});
