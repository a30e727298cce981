import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isProfiledIdentifier } from '#shared/schemas/identifier-profile.ts';
import { validateAddress } from '#shared/schemas/validators.generated.js';
import { buildIdentifierTable, identifierTableModule } from '../../scripts/identifier-table.ts';

/** Every code point matching `property` (a regular expression property escape, Node's own data). */
function codePointsOf(property: RegExp): number[] {
  const out: number[] = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (property.test(String.fromCodePoint(cp))) out.push(cp);
  }
  return out;
}

describe('the address profile (PRECIS UsernameCasePreserved + UTS #39 Highly Restrictive)', () => {
  it('is the table the generator writes from the Unicode data package, as checked in', async () => {
    const checkedIn = readFileSync(
      new URL('../../shared/schemas/identifier-table.generated.ts', import.meta.url),
      'utf8',
    );
    expect(identifierTableModule(await buildIdentifierTable())).toBe(checkedIn);
  }, 60_000);

  it.each([
    ['white space, no-break and ideographic spaces included', /^\p{White_Space}$/u],
    [
      'default-ignorable code points (ZWJ, CGJ, the Hangul fillers, Khmer inherent vowels…)',
      /^\p{Default_Ignorable_Code_Point}$/u,
    ],
    ['variation selectors', /^\p{Variation_Selector}$/u],
    ['separators, controls and format characters (bidi controls, zero-width)', /^[\p{Z}\p{Cc}\p{Cf}]$/u],
    ['symbols beyond ASCII (emoji, braille)', /^[^\0-\x7F]$/u],
  ])('refuses every one of the %s, wherever it stands', (_label, property) => {
    const refused = property.source.includes('^\\0')
      ? codePointsOf(/^\p{S}$/u).filter((cp) => cp > 0x7f)
      : codePointsOf(property);
    expect(refused.length).toBeGreaterThan(0);
    const accepted = refused.filter(
      (cp) =>
        isProfiledIdentifier(`dave${String.fromCodePoint(cp)}`) ||
        isProfiledIdentifier(`da${String.fromCodePoint(cp)}ve`),
    );
    expect(accepted.map((cp) => `U+${cp.toString(16).toUpperCase()}`)).toEqual([]);
  });

  it('refuses every compatibility form (what NFKC changes: fullwidth, ligatures, circled letters)', () => {
    const accepted: string[] = [];
    for (let cp = 0x80; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      if (char.normalize('NFKC') !== char && isProfiledIdentifier(char)) accepted.push(cp.toString(16));
    }
    expect(accepted).toEqual([]);
  });

  it.each([
    ['the Hangul filler U+3164', 'dave\u3164'],
    ['the Hangul choseong filler U+115F', '\u115Fdave'],
    ['the Hangul jungseong filler U+1160', 'dave\u1160'],
    ['the halfwidth Hangul filler U+FFA0', 'dave\uFFA0'],
    ['the braille blank U+2800', 'dave\u2800'],
    ['a Cyrillic а in Latin', 'd\u0430ve'],
    ['a Greek ο in Latin', 'b\u03BFb'],
    ['fullwidth ｄａｖｅ', '\uFF44\uFF41\uFF56\uFF45'],
    ['decomposed é (not NFC)', 'cafe\u0301'],
    ['Hebrew ending in a neutral (the Bidi Rule)', '\u05D3\u05D5\u05D3.'],
    ['Latin with Hebrew (the Bidi Rule, and two scripts)', 'dave\u05D3'],
    ['Arabic-Indic with extended Arabic-Indic digits (RFC 5892 context)', '\u062F\u0661\u06F1'],
    ['a middle dot outside l·l (RFC 5892 context)', 'da\u00B7ve'],
    ['the empty string', ''],
  ])('refuses %s', (_label, text) => {
    expect(isProfiledIdentifier(text)).toBe(false);
  });

  it.each([
    ['a Cognito sub (UUID)', '3f1c2a6e-8d4b-4c7e-9a51-2b7d9e0f6a13'],
    ['an e-mail address', 'dave@example.com'],
    ['an Auth0 sub', 'auth0|5f7c8ec7c33c6c004bbafe82'],
    ['a composed é', 'caf\u00E9'],
    ['Cyrillic alone', '\u0434\u0430\u0432\u0435'],
    ['Japanese with Latin', 'dave\u6771\u4EAC\u3072\u3089\u30AB\u30BF'],
    ['Korean with Latin', 'dave\uD55C\uAE00'],
    ['Hebrew', '\u05D3\u05D5\u05D3'],
    ['Arabic with Arabic-Indic digits', '\u062F\u0627\u0648\u062F\u0661'],
    ['Catalan l·l (RFC 5892 context)', 'col\u00B7lega'],
    ['Greek with its numeral sign before a Greek letter', '\u0375\u03B1'],
  ])('accepts %s', (_label, text) => {
    expect(isProfiledIdentifier(text)).toBe(true);
    expect(validateAddress(text)).toBe(true);
  });
});
