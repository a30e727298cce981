/**
 * The identifier profile of wallet addresses (and so of a token's `sub`), applied by the
 * `x-identifier-profile` keyword of the address schema (`wallet.ts`, compiled by
 * `scripts/ajv-instance.ts` into the one validator the authorizer and the send body share):
 *
 * - RFC 8265 UsernameCasePreserved: RFC 8264's IdentifierClass (letters, marks and digits of any
 *   script, ASCII punctuation and symbols; no white space, no other symbol or punctuation, nothing
 *   default-ignorable, no compatibility form), NFC, and the Bidi Rule of RFC 5893 for text with
 *   right-to-left characters. Where the profile would map (fullwidth to halfwidth), the address is
 *   refused instead: a person must not be able to type one address in two ways.
 * - UTS #39 restriction level Highly Restrictive: one script (Common and Inherited go with any), or
 *   Latin with Han and Japanese kana, Bopomofo or Hangul. Latin with Cyrillic (`dаve` with a
 *   Cyrillic `а`) is refused.
 *
 * The per-code-point data is the checked-in, generated `identifier-table.generated.ts`; what it cannot say
 * (context rules, the Bidi Rule, scripts mixed) is decided here. docs/decisions/address-profile.md
 * says why and what the profile does not catch.
 */

import {
  BIDI_CLASSES,
  CONTEXTUAL,
  COVERED_SCRIPTS,
  RUNS,
  SCRIPT_SETS,
} from './identifier-table.generated.ts';
import { decodeNumbers } from './identifier-table-codec.ts';
import { HIGHLY_RESTRICTIVE_COVERS } from './restriction-level.ts';

const BIDI_COUNT = BIDI_CLASSES.length;
const bidiIndex = (name: (typeof BIDI_CLASSES)[number]) => BIDI_CLASSES.indexOf(name);
// A left-to-right identifier is not held to the Bidi Rule: RFC 8265 applies it to text with RTL characters.
const [R, AL, AN, EN, NSM] = (['R', 'AL', 'AN', 'EN', 'NSM'] as const).map(bidiIndex) as [
  number,
  number,
  number,
  number,
  number,
];
/** Bidi classes allowed in a right-to-left identifier (RFC 5893 §2, rule 2). */
const RTL_ALLOWED = new Set(
  (['R', 'AL', 'AN', 'EN', 'ES', 'CS', 'ET', 'ON', 'BN', 'NSM'] as const).map(bidiIndex),
);

/** UTS #39 §5.2's covers, as the numbers the script sets give their scripts. */
const COVERS = HIGHLY_RESTRICTIVE_COVERS.map((cover) => cover.map((name) => COVERED_SCRIPTS[name] as number));

interface Table {
  /** The first code point of each run, ascending from 0. */
  readonly starts: Uint32Array;
  readonly values: Uint16Array;
  /** Each set's scripts, by number. */
  readonly scriptSets: readonly (readonly number[])[];
}

/** The table, decoded on first use: a visible-ASCII identifier (the usual `sub`) never needs it. */
let decoded: Table | undefined;
function table(): Table {
  if (decoded) return decoded;
  const runs = decodeNumbers(RUNS);
  const starts = new Uint32Array(runs.length / 2);
  const values = new Uint16Array(runs.length / 2);
  for (let i = 0, start = 0; i < starts.length; i++) {
    start += runs[2 * i] as number;
    starts[i] = start;
    values[i] = runs[2 * i + 1] as number;
  }
  const sets = decodeNumbers(SCRIPT_SETS);
  const scriptSets: number[][] = [];
  for (let i = 0; i < sets.length; i += 1 + (sets[i] as number)) {
    scriptSets.push(sets.slice(i + 1, i + 1 + (sets[i] as number)));
  }
  decoded = { starts, values, scriptSets };
  return decoded;
}

/** The table's value for a code point: that of the last run starting at or before it. */
function tableValue({ starts, values }: Table, codePoint: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= codePoint) low = middle;
    else high = middle - 1;
  }
  return values[low] as number;
}

const contextual = new Set(CONTEXTUAL);
const VISIBLE_ASCII = /^[!-~]+$/;
const ARABIC_INDIC = /[\u0660-\u0669]/;
const EXTENDED_ARABIC_INDIC = /[\u06F0-\u06F9]/;
/** Script tests for the rare context rules, made on first use: no cold start pays for them. */
let scriptTests: { greek: RegExp; hebrew: RegExp; kanaOrHan: RegExp } | undefined;
const scriptTestsNow = () => {
  scriptTests ??= {
    greek: /^\p{Script=Greek}$/u,
    hebrew: /^\p{Script=Hebrew}$/u,
    kanaOrHan: /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u,
  };
  return scriptTests;
};

/** RFC 5892 Appendix A: whether the CONTEXTO code point at `i` is where its rule allows it. */
function contextHolds(chars: readonly string[], i: number, text: string): boolean {
  const codePoint = (chars[i] as string).codePointAt(0) as number;
  const before = chars[i - 1] ?? '';
  const after = chars[i + 1] ?? '';
  if (codePoint === 0x00b7) return before === 'l' && after === 'l';
  if (codePoint === 0x0375) return scriptTestsNow().greek.test(after);
  if (codePoint === 0x05f3 || codePoint === 0x05f4) return scriptTestsNow().hebrew.test(before);
  if (codePoint === 0x30fb) return scriptTestsNow().kanaOrHan.test(text);
  if (codePoint >= 0x0660 && codePoint <= 0x0669) return !EXTENDED_ARABIC_INDIC.test(text);
  if (codePoint >= 0x06f0 && codePoint <= 0x06f9) return !ARABIC_INDIC.test(text);
  return false;
}

/** RFC 5893 §2, for text with a right-to-left character: rules 1–4 (an LTR start fails rule 5). */
function bidiRuleHolds(classes: readonly number[]): boolean {
  if (classes[0] !== R && classes[0] !== AL) return false;
  if (!classes.every((c) => RTL_ALLOWED.has(c))) return false;
  let end = classes.length - 1;
  while (end > 0 && classes[end] === NSM) end--;
  const last = classes[end];
  if (last !== R && last !== AL && last !== EN && last !== AN) return false;
  return !(classes.includes(EN) && classes.includes(AN));
}

/** UTS #39 §5.2 Highly Restrictive, over the distinct script sets of the text's characters. */
function highlyRestrictive(sets: ReadonlySet<number>, { scriptSets }: Table): boolean {
  let resolved: readonly number[] | undefined;
  for (const set of sets) {
    const scripts = scriptSets[set] as readonly number[];
    resolved = resolved === undefined ? scripts : resolved.filter((script) => scripts.includes(script));
    if (resolved.length === 0) break;
  }
  if (resolved === undefined || resolved.length > 0) return true;
  return COVERS.some((cover) =>
    [...sets].every((set) => (scriptSets[set] as readonly number[]).some((s) => cover.includes(s))),
  );
}

/** Whether the profile allows the code point at all (in some context, with some script): PVALID or CONTEXTO. */
export function isAllowedCodePoint(codePoint: number): boolean {
  return tableValue(table(), codePoint) !== 0;
}

/** Whether `text` is an identifier of the profile: see the module's description. */
export function isProfiledIdentifier(text: string): boolean {
  // Visible ASCII alone is all PVALID, Latin or Common, left-to-right: the usual `sub` (a UUID).
  if (VISIBLE_ASCII.test(text)) return true;
  // RFC 8265 §3.3.3: an empty identifier is none.
  if (text === '' || text.normalize('NFC') !== text) return false;
  const chars = [...text];
  const data = table();
  const classes: number[] = [];
  const sets = new Set<number>();
  let rightToLeft = false;
  let needsContext = false;
  for (const char of chars) {
    const codePoint = char.codePointAt(0) as number;
    const value = tableValue(data, codePoint);
    if (value === 0) return false;
    const bidi = (value - 1) % BIDI_COUNT;
    const set = Math.floor((value - 1) / BIDI_COUNT);
    classes.push(bidi);
    if (set !== 0) sets.add(set);
    if (bidi === R || bidi === AL || bidi === AN) rightToLeft = true;
    if (contextual.has(codePoint)) needsContext = true;
  }
  if (needsContext) {
    for (let i = 0; i < chars.length; i++) {
      if (contextual.has((chars[i] as string).codePointAt(0) as number) && !contextHolds(chars, i, text))
        return false;
    }
  }
  if (rightToLeft && !bidiRuleHolds(classes)) return false;
  return highlyRestrictive(sets, data);
}
